"""`codebot chat` REPL end to end: prompt-toolkit's pipe input, the fake model, real MCP servers."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from codebot_mcp.cli.repl.repl_loop import Repl
from tests.cli.repl_driver import connected, drive, until
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import server_entry as entry
from tests.helpers import write_settings


@pytest.fixture
def project(tmp_path: Path, fake: FakeOpenAI) -> Path:
    write_settings(tmp_path, {"base_url": fake.base_url, "mcp_servers": {"echo": entry("echo")}})
    (tmp_path / "notes.txt").write_text("codebot notes\n")
    return tmp_path


def tools_of(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


# --- the REPL through prompt-toolkit's pipe input ------------------------------------------


@pytest.mark.anyio
async def test_repl_turn_approval_and_slash_commands(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(
        fo.tool_calls(("write", {"path": "out.txt", "content": "hey"})), fo.text("Wrote it.")
    )

    async def typist(repl: Repl, inp: Any) -> None:
        for keys in ["/tools\r", "/plan\r", "/plan\r", "write it\r", "y\r", "/mcp\r", "\x04"]:
            await anyio.sleep(0.4)
            if keys == "/mcp\r":  # the server connects in the background: wait for it
                await until(
                    lambda: repl.runtime is not None and bool(repl.runtime.manager.connected())
                )
            inp.send_text(keys)

    code, _ = await drive(project, typist, seconds=30)
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
    from codebot_mcp.cli.repl.repl_loop import history_file

    return history_file().stat().st_mode & 0o777


# --- trust, approval reasons and /mcp reload -------------------------------------------------


@pytest.mark.anyio
async def test_repl_asks_for_trust_once_and_reload_picks_up_recorded_trust(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from codebot_mcp.core.config import trust
    from codebot_mcp.core.config.settings import load_unfiltered as load

    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")

    async def steps(repl: Repl, inp: Any) -> None:
        await anyio.sleep(0.3)
        inp.send_text("n")  # do not trust: the project's servers stay off
        await until(lambda: repl.runtime is not None)
        await anyio.sleep(0.3)
        inp.send_text("/mcp\r")
        await anyio.sleep(0.3)
        inp.send_text("/mcp reload\r")  # declined this session: not asked again
        # Lines run one at a time: once /plan has run, the reload (and any server start it
        # would make) is over, so "nothing connected" is a fact, not a guess after a sleep.
        inp.send_text("/plan\r")
        await until(lambda: repl.runtime is not None and repl.runtime.session.plan_mode)
        assert connected(repl) == [] and "echo" not in repl.runtime.manager.clients
        inp.send_text("/plan\r")
        await until(lambda: not repl.runtime.session.plan_mode)
        trust.record(trust.check(load(project)))  # `codebot trust` in another terminal
        inp.send_text("/mcp reload\r")
        await until(lambda: connected(repl) == ["echo"])
        inp.send_text("/mcp\r")
        await anyio.sleep(0.3)
        inp.send_text("\x04")

    code, _ = await drive(project, steps, seconds=45)
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
    from codebot_mcp.core.config import trust
    from codebot_mcp.core.config.settings import load_unfiltered as load

    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")

    async def steps(repl: Repl, inp: Any) -> None:
        await anyio.sleep(0.3)
        inp.send_text("y\r")
        await until(lambda: connected(repl) == ["echo"])
        await anyio.sleep(0.3)
        inp.send_text("\x04")

    assert (await drive(project, steps, seconds=45))[0] == 0
    assert trust.check(load(project)).reason is trust.TrustReason.RECORDED
    assert "skipping" not in capsys.readouterr().err


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
        inp.send_text("y")  # the read approval
        await until(lambda: len(fake.bodies) == 2)
        await anyio.sleep(0.3)
        inp.send_text("\x04")

    assert (await drive(tmp_path, steps, seconds=45))[0] == 0
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
    from codebot_mcp.cli.repl.repl_loop import history_file

    canary = "sk-canary-history-5e6f7a8b"
    monkeypatch.setenv("OPENAI_API_KEY", canary)
    fake.queue(fo.text("Noted."))

    async def steps(repl: Repl, inp: Any) -> None:
        await until(lambda: bool(connected(repl)))
        inp.send_text(f"my key is {canary}, keep it\r")
        await until(lambda: fake.remaining == 0)
        await anyio.sleep(0.3)
        inp.send_text("\x04")

    assert (await drive(project, steps, seconds=45))[0] == 0
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

        assert (await drive(project, steps, seconds=45))[0] == 0
        assert fake.requests == []
        [request] = other.bodies
        assert request["model"] == "other-model"
        assert "mcp__echo__echo" in tools_of(request)  # the session kept its tools
