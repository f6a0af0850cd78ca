"""`codebot chat -p` end to end: the real entry point, the fake model server, real MCP servers."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run
from tests.fakes import openai_turns as fo
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


def test_a_relist_that_failed_is_retried_before_the_next_request(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    """The server announces a new tool, then fails the re-list once: a later request of the
    same run lists again and offers the tool (it was never retried before)."""
    write_settings(
        tmp_path, {"base_url": fake.base_url, "mcp_servers": {"rl": entry("relist_fail")}}
    )
    fake.queue(
        fo.tool_calls(("mcp__rl__change", {"fails": 1})),
        fo.tool_calls(("mcp__rl__ping", {}), delay=0.5),
        fo.tool_calls(("mcp__rl__ping", {})),
        fo.text("done"),
    )
    code, _, err = chat(capsys, tmp_path, "-p", "grow", "--yes")
    assert code == 0, err
    assert "mcp__rl__added_1" not in tools_of(fake.bodies[1])  # the re-list failed
    assert "mcp__rl__added_1" in tools_of(fake.bodies[3])


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
        "import sys\nfrom codebot_mcp.cli.app import run\nrc = run(['chat', '--help'])\n"
        "print(rc, 'openai' in sys.modules, 'prompt_toolkit' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO_ROOT, check=True
    ).stdout
    assert "--base-url" in out and out.strip().endswith("0 False False")


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
