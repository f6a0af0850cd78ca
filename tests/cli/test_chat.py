"""`codebot chat` end to end: the real entry point, the fake model server, real MCP servers."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from cli.app import run
from cli.repl import Repl
from cli.runtime import ChatOptions, Globals
from tests.fakes import openai_server as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import server_entry as entry
from tests.helpers import write_settings
from tests.servers.util import REPO_ROOT


@pytest.fixture
def project(tmp_path: Path, fake: FakeOpenAI) -> Path:
    write_settings(tmp_path, {"base_url": fake.base_url, "mcp_servers": {"echo": entry("echo")}})
    (tmp_path / "notes.txt").write_text("codebot notes\n")
    return tmp_path


def chat(capsys: pytest.CaptureFixture[str], cwd: Path, *argv: str) -> tuple[int, str, str]:
    code = run(["--cwd", str(cwd), "chat", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def tools_of(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


def test_one_shot_with_mcp_tool_and_read(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(
        fo.tool_calls(("mcp__echo__echo", {"text": "hi there"}), ("read", {"path": "notes.txt"})),
        fo.text("Echoed, and the notes say codebot notes."),
    )
    code, out, err = chat(capsys, project, "-p", "echo and read")
    assert code == 0, err
    assert out == "Echoed, and the notes say codebot notes.\n"
    assert "→ mcp__echo__echo" in err and "→ read" in err
    first, follow = fake.bodies
    assert "mcp__echo__echo" in tools_of(first)
    assert "## echo" in first["messages"][0]["content"]
    results = {m["tool_call_id"]: m["content"] for m in follow["messages"] if m["role"] == "tool"}
    ids = [c["id"] for c in follow["messages"][-3]["tool_calls"]]
    assert results == {ids[0]: "hi there", ids[1]: "     1\tcodebot notes"}
    assert json.dumps(first["tools"]) == json.dumps(follow["tools"])
    assert first["messages"][0] == follow["messages"][0]


def test_denied_without_yes_and_allowed_with_allow(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(fo.tool_calls(("mcp__echo__delete_note", {"id": "1"})), fo.text("could not"))
    code, out, err = chat(capsys, project, "-p", "delete note 1")
    assert code == 0 and out == "could not\n"
    assert "mcp__echo__delete_note denied" in err and "--yes" in err
    tool_msg = fake.bodies[1]["messages"][-1]
    assert tool_msg["content"].startswith("Error: Permission denied")
    fake.queue(fo.tool_calls(("mcp__echo__delete_note", {"id": "1"})), fo.text("deleted"))
    code, out, err = chat(capsys, project, "-p", "delete", "--allow", "mcp__echo__delete_*")
    assert code == 0 and "denied" not in err
    assert not fake.bodies[3]["messages"][-1]["content"].startswith("Error")


def test_json_transcript(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(fo.tool_calls(("read", '{"path": ')), fo.text("sorry"))
    code, out, _ = chat(capsys, project, "-p", "read", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["answer"] == "sorry" and data["turns"] == 2
    usage = data["usage"]
    assert (usage["prompt_tokens"], usage["completion_tokens"], usage["turns_reported"]) == (
        20,
        10,
        2,
    )
    assert usage["last_turn"]["prompt_tokens"] == 10 and usage["session"]["total_tokens"] == 30
    assert data["outcome"] == "answer" and data["error"] is None
    (call,) = data["tool_calls"]
    assert call["name"] == "read" and call["is_error"] and "not valid JSON" in call["result"]
    assert call["rejected"]
    assert [m["role"] for m in data["messages"]] == ["user", "assistant", "tool", "assistant"]


def test_plan_mode_offers_only_read_tools(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(fo.text("a plan"))
    code, _, err = chat(capsys, project, "-p", "plan", "--plan")
    assert code == 0, err
    tools = tools_of(fake.bodies[0])
    assert tools[0] == "read" and "mcp__echo__read_notes" in tools
    assert not {"write", "bash", "mcp__echo__delete_note", "mcp__echo__fetch_url"} & set(tools)


def test_list_changed_puts_the_new_tool_in_the_next_request(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(tmp_path, {"base_url": fake.base_url, "mcp_servers": {"mut": entry("mutating")}})
    fake.queue(
        fo.tool_calls(("mcp__mut__add_tool", {"name": "extra"})),
        fo.tool_calls(("mcp__mut__ping_tool", {}), delay=0.5),
        fo.tool_calls(("mcp__mut__extra", {})),
        fo.text("done"),
    )
    code, _, err = chat(capsys, tmp_path, "-p", "grow", "--yes")
    assert code == 0, err
    assert "mcp__mut__extra" not in tools_of(fake.bodies[0])
    assert "mcp__mut__extra" in tools_of(fake.bodies[2])
    assert fake.bodies[3]["messages"][-1]["content"] == "extra called"


def test_truncation_notice_reaches_the_model(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = project / ".codebot" / "settings.json"
    data = json.loads(settings.read_text())
    settings.write_text(json.dumps({**data, "tool_result_max_tokens": 100}))
    fake.queue(fo.tool_calls(("mcp__echo__big", {"size": 1000})), fo.text("big"))
    code, _, err = chat(capsys, project, "-p", "big", "--yes")
    assert code == 0, err
    content = fake.bodies[1]["messages"][-1]["content"]
    assert content.startswith("x" * 400 + "\n\n[codebot: this result was cut")
    assert "600 characters" in content


@pytest.mark.parametrize(
    ("status", "text"),
    [(401, "rejected the API key"), (429, "rate limited"), (500, "failed (500)")],
)
def test_api_errors_exit_5(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str], status: int, text: str
) -> None:
    fake.queue(fo.error(status))
    code, out, err = chat(capsys, project, "-p", "hi")
    assert code == 5 and out == ""
    assert text in err and "hint:" in err


def test_connection_refused_and_missing_config_exit_5(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    code, _, err = chat(capsys, tmp_path, "-p", "hi", "--base-url", url)
    assert code == 5 and f"cannot connect to the model API at {url}" in err
    code, _, err = chat(capsys, tmp_path, "-p", "hi")
    assert code == 5 and "OPENAI_API_KEY is not set" in err


def test_turn_limit_exits_6(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = project / ".codebot" / "settings.json"
    settings.write_text(json.dumps({"base_url": fake.base_url, "max_turns": 1}))
    fake.queue(fo.tool_calls(("read", {"path": "notes.txt"})))
    code, _, err = chat(capsys, project, "-p", "loop")
    assert code == 6 and "after 1 model turns" in err


def test_help_and_import_cost() -> None:
    probe = (
        "import sys\nfrom cli.app import run\nrc = run(['chat', '--help'])\n"
        "print(rc, 'openai' in sys.modules, 'prompt_toolkit' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO_ROOT, check=True
    ).stdout
    assert "--base-url" in out and out.strip().endswith("0 False False")


# --- the REPL through prompt-toolkit's pipe input ------------------------------------------


@pytest.mark.anyio
async def test_repl_turn_approval_and_slash_commands(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    fake.queue(
        fo.tool_calls(("write", {"path": "out.txt", "content": "hey"})), fo.text("Wrote it.")
    )
    with create_pipe_input() as inp:
        repl = Repl(inp, DummyOutput())

        async def typist() -> None:
            for keys in ["/tools\r", "/plan\r", "/plan\r", "write it\r", "y\r", "/mcp\r", "\x04"]:
                await anyio.sleep(0.4)
                if keys == "/mcp\r":  # the server connects in the background: wait for it
                    await until(
                        lambda: repl.runtime is not None and bool(repl.runtime.manager.connected())
                    )
                inp.send_text(keys)

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(typist)
                code = await repl.main(Globals(cwd=project), ChatOptions())
    out, err = capsys.readouterr()
    assert code == 0
    assert (project / "out.txt").read_text() == "hey"
    assert "Wrote it." in out
    assert re.search(r"^ *bash +execute +Run a bash command", out, re.M)
    assert "(plan mode on: read-only tools; " in out and "(plan mode off; " in out
    assert "echo: connected" in out
    assert "allow? " not in out  # the question goes to the terminal, not stdout
    assert "? write" in err and "capability: write (built-in write" in err
    assert "asks because: no permission rule matches, and write tools ask by default" in err
    assert history_mode() == 0o600


def history_mode() -> int:
    from cli.repl import history_file

    return history_file().stat().st_mode & 0o777


# --- trust, approval reasons and /mcp reload -------------------------------------------------


async def until(condition: Callable[[], bool], seconds: float = 15) -> None:
    with anyio.fail_after(seconds):
        while not condition():  # noqa: ASYNC110 - polling another task's state
            await anyio.sleep(0.02)


async def drive(project: Path, steps: Callable[[Repl, Any], Awaitable[None]]) -> int:
    """Run the REPL on pipe input while ``steps`` types into it."""
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    with create_pipe_input() as inp:
        repl = Repl(inp, DummyOutput())
        code = -1

        async def main() -> None:
            nonlocal code
            code = await repl.main(Globals(cwd=project), ChatOptions())

        with anyio.fail_after(45):
            async with anyio.create_task_group() as tg:
                tg.start_soon(main)
                await steps(repl, inp)
    return code


def connected(repl: Repl) -> list[str]:
    runtime = repl.runtime
    return [c.name for c in runtime.manager.connected()] if runtime else []


@pytest.mark.anyio
async def test_repl_asks_for_trust_once_and_reload_picks_up_recorded_trust(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from core import trust
    from core.settings import load

    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")

    async def steps(repl: Repl, inp: Any) -> None:
        await anyio.sleep(0.3)
        inp.send_text("n\r")  # do not trust: the project's servers stay off
        await until(lambda: repl.runtime is not None)
        await anyio.sleep(0.3)
        inp.send_text("/mcp\r")
        await anyio.sleep(0.3)
        inp.send_text("/mcp reload\r")  # declined this session: not asked again
        await anyio.sleep(0.5)
        assert connected(repl) == []
        trust.record(trust.check(load(project)))  # `codebot trust` in another terminal
        inp.send_text("/mcp reload\r")
        await until(lambda: connected(repl) == ["echo"])
        inp.send_text("/mcp\r")
        await anyio.sleep(0.3)
        inp.send_text("\x04")

    code = await drive(project, steps)
    out, err = capsys.readouterr()
    assert code == 0
    assert err.count("would start or set:") == 1
    assert "  echo: " in err and "tests.servers.echo" in err
    assert "skipping project servers (echo)" in err and "codebot trust" in err
    assert "echo: not trusted (skipped)" in out
    assert "echo: connected" in out


@pytest.mark.anyio
async def test_repl_trust_yes_records_it(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from core import trust
    from core.settings import load

    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")

    async def steps(repl: Repl, inp: Any) -> None:
        await anyio.sleep(0.3)
        inp.send_text("y\r")
        await until(lambda: connected(repl) == ["echo"])
        await anyio.sleep(0.3)
        inp.send_text("\x04")

    assert await drive(project, steps) == 0
    assert trust.check(load(project)).reason is trust.TrustReason.RECORDED
    assert "skipping" not in capsys.readouterr().err


def test_one_shot_skips_untrusted_project_servers_with_the_warning(
    project: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")
    # The project's base_url is gated by trust too, so the endpoint comes from the environment.
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    fake.queue(fo.text("no echo here"))
    code, out, err = chat(capsys, project, "-p", "hi")
    assert code == 0 and out == "no echo here\n"
    assert "skipping project servers (echo) and project settings (base_url)" in err
    assert "--trust-project" in err
    assert not [t for t in tools_of(fake.bodies[0]) if t.startswith("mcp__")]
    fake.queue(fo.text("with echo"))
    code, _, err = run_chat(capsys, project, "--trust-project", "-p", "hi")
    assert code == 0 and "skipping" not in err
    assert "mcp__echo__echo" in tools_of(fake.bodies[1])


def run_chat(capsys: pytest.CaptureFixture[str], cwd: Path, *argv: str) -> tuple[int, str, str]:
    """Like chat(), with global options before the subcommand."""
    globals_ = [a for a in argv if a == "--trust-project"]
    rest = [a for a in argv if a != "--trust-project"]
    code = run(["--cwd", str(cwd), *globals_, "chat", *rest])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.anyio
async def test_mcp_reload_applies_new_servers_and_permission_rules(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(tmp_path, {"base_url": fake.base_url})
    (tmp_path / "notes.txt").write_text("hello\n")
    fake.queue(
        fo.tool_calls(("mcp__echo__delete_note", {"id": "1"}), ("read", {"path": "notes.txt"})),
        fo.text("one denied, one read"),
    )

    async def steps(repl: Repl, inp: Any) -> None:
        await until(lambda: repl.runtime is not None)
        write_settings(
            tmp_path,
            {
                "base_url": fake.base_url,
                "mcp_servers": {"echo": entry("echo")},
                "permissions": {"deny": ["mcp__echo__delete_*"], "ask": ["read"]},
            },
        )
        await anyio.sleep(0.3)
        inp.send_text("/mcp reload\r")
        await until(lambda: connected(repl) == ["echo"])
        await anyio.sleep(0.3)
        inp.send_text("delete note 1 and read notes\r")
        await until(lambda: len(fake.bodies) == 1)
        await anyio.sleep(0.5)
        inp.send_text("y\r")  # the read approval
        await until(lambda: len(fake.bodies) == 2)
        await anyio.sleep(0.3)
        inp.send_text("\x04")

    assert await drive(tmp_path, steps) == 0
    out, err = capsys.readouterr()
    assert "mcp__echo__echo" in tools_of(fake.bodies[0])  # the first turn after reload
    assert "mcp__echo__delete_note denied: denied by the settings rule 'mcp__echo__delete_*'" in err
    assert "capability: read (built-in read: only reads files)" in err
    assert "asks because: the settings rule permissions.ask 'read' asks first" in err
    tool_messages = [m for m in fake.bodies[1]["messages"] if m["role"] == "tool"]
    assert tool_messages[0]["content"].startswith("Error: Permission denied")
    assert tool_messages[1]["content"] == "     1\thello"
    assert "one denied, one read" in out


@pytest.mark.anyio
async def test_repl_history_never_holds_a_secret(
    project: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cli.repl import history_file

    canary = "sk-canary-history-5e6f7a8b"
    monkeypatch.setenv("OPENAI_API_KEY", canary)
    fake.queue(fo.text("Noted."))

    async def steps(repl: Repl, inp: Any) -> None:
        await until(lambda: bool(connected(repl)))
        inp.send_text(f"my key is {canary}, keep it\r")
        await until(lambda: fake.remaining == 0)
        await anyio.sleep(0.3)
        inp.send_text("\x04")

    assert await drive(project, steps) == 0
    assert {r.headers.get("authorization") for r in fake.requests} == {f"Bearer {canary}"}
    text = history_file().read_text()
    assert "my key is ***, keep it" in text
    assert canary not in text


@pytest.mark.anyio
async def test_mcp_reload_follows_a_changed_model_and_endpoint(
    project: Path, fake: FakeOpenAI
) -> None:
    with FakeOpenAI() as other:
        other.queue(fo.text("from the other endpoint"))

        async def steps(repl: Repl, inp: Any) -> None:
            await until(lambda: bool(connected(repl)))
            write_settings(
                project,
                {
                    "base_url": other.base_url,
                    "model": "other-model",
                    "mcp_servers": {"echo": entry("echo")},
                },
            )
            inp.send_text("/mcp reload\r")
            await until(
                lambda: (
                    repl.runtime is not None
                    and repl.runtime.agent is not None
                    and repl.runtime.agent.model.config.model == "other-model"
                )
            )
            inp.send_text("hello\r")
            await until(lambda: other.remaining == 0)
            await anyio.sleep(0.3)
            inp.send_text("\x04")

        assert await drive(project, steps) == 0
        assert fake.requests == []
        [request] = other.bodies
        assert request["model"] == "other-model"
        assert "mcp__echo__echo" in tools_of(request)  # the session kept its tools
