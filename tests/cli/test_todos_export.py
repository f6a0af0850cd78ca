"""Issue 32 items 7 and 8: ``todo_write`` (the visible plan) and ``codebot export`` / ``/export``.

The model is the fake OpenAI server; ``chat -p`` and ``codebot export`` run through the real
CLI in this process, the REPL through prompt-toolkit's pipe input; bash runs for real; the
sessions are the real files under the (isolated) state directory.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from codebot_mcp.cli.chat_runtime import ChatOptions
from codebot_mcp.cli.repl.repl_loop import Repl
from codebot_mcp.core.agent import history
from tests.cli.repl_driver import drive, until
from tests.cli.test_stream_json import events, of
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import cli_in_process, write_settings

KEY = "sk-todo-export-key-0123456789"
LATE = "zebra-canary-8f7e6d5c4b3a2918"
"""Printed by bash in the chat while nobody knows it is a secret; the key of the export run."""

PLAN = [
    {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
    {"content": "Fix the \x1b[31mbug", "status": "in_progress"},
    {"content": "Run the tests", "status": "pending"},
]


@pytest.fixture
def project(tmp_path: Path, fake: FakeOpenAI) -> Path:
    write_settings(tmp_path, {"base_url": fake.base_url})
    return tmp_path


def cli(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    cwd: Path,
    *argv: str,
    key: str = KEY,
) -> tuple[int, str, str]:
    return cli_in_process(
        capsys, monkeypatch, "--cwd", str(cwd), *argv, env={"OPENAI_API_KEY": key}
    )


def tools_of(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


def test_todo_write_in_print_mode_is_saved_and_resumed(
    project: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake.queue(fo.tool_calls(("todo_write", {"todos": PLAN})), fo.text("Planned."))
    code, out, err = cli(capsys, monkeypatch, project, "chat", "-p", "plan it", "--json", "--plan")
    assert code == 0, err
    result = json.loads(out)
    (call,) = result["tool_calls"]
    assert call["name"] == "todo_write", call
    assert not call["is_error"] and not call["denied"], call  # no approval asked
    # Plan mode offers it, and its prompt says to use it.
    assert "todo_write" in tools_of(fake.bodies[0])
    assert "write" not in tools_of(fake.bodies[0])
    assert "todo_write" in fake.bodies[0]["messages"][0]["content"]
    # The tool result repeats the list for the model.
    tool_message = fake.bodies[1]["messages"][-1]
    assert "1/3 completed" in tool_message["content"]
    assert "[~] Fix the" in tool_message["content"]
    # Saved with the session ...
    (saved,) = history.list_sessions(project)
    assert history.todos(saved.path) == PLAN
    # ... and a bad list is an error result the model reads; the plan stays as it was.
    fake.queue(
        fo.tool_calls(("todo_write", {"todos": [{"content": "x", "status": "done"}]})),
        fo.text("Oops."),
    )
    code, out, err = cli(capsys, monkeypatch, project, "chat", "-p", "again", "--continue")
    assert code == 0, err
    assert "status must be one of pending, in_progress, completed" in str(fake.bodies[3])
    assert history.todos(saved.path) == PLAN
    # -p runs /todos like the other reports: the plan of the session it continues.
    code, out, err = cli(capsys, monkeypatch, project, "chat", "-p", "/todos", "--continue")
    assert code == 0, err
    assert "todo list: 1/3 completed" in out and "◐ Fix the \\x1b[31mbug" in out


def test_stream_json_emits_a_todos_event(
    project: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake.queue(
        fo.tool_calls(("todo_write", {"todos": PLAN})),
        fo.tool_calls(("todo_write", {"todos": PLAN})),  # the same list: not a change
        fo.text("Planned."),
    )
    code, out, err = cli(
        capsys, monkeypatch, project, "chat", "-p", "plan", "--output-format", "stream-json"
    )
    assert code == 0, err
    found = events(out)  # every event valid against docs/stream-json.schema.json
    (todos,) = of(found, "todos")
    assert todos["todos"] == json.loads(json.dumps(PLAN))
    first_call = of(found, "tool_call")[0]
    assert todos["tool_call_id"] == first_call["id"]
    assert found.index(todos) > found.index(of(found, "tool_result")[0])


@pytest.mark.anyio
async def test_repl_shows_the_checklist_todos_export_and_resume(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(fo.tool_calls(("todo_write", {"todos": PLAN})), fo.text("Planned."))

    async def steps(repl: Repl, inp: Any) -> None:
        inp.send_text("plan it\r")
        await until(lambda: fake.remaining == 0)
        await anyio.sleep(0.4)
        inp.send_text("/todos\r")
        await anyio.sleep(0.3)
        inp.send_text("/export\r")
        await anyio.sleep(0.3)
        inp.send_text("\x04")

    code, repl = await drive(project, steps, seconds=45)
    out, err = capsys.readouterr()
    assert code == 0
    # Shown as a checklist when it changed, the model's control characters escaped.
    assert "☑ Read the code" in err and "◐ Fix the \\x1b[31mbug" in err and "☐ Run the" in err
    assert "\x1b[31mbug" not in out + err
    # /todos
    assert "todo list: 1/3 completed" in out
    assert "◐ Fix the \\x1b[31mbug" in out
    # /export without FILE: codebot-<session>.md in the working directory, said where.
    assert repl.runtime is not None and repl.runtime.log is not None
    session_id = repl.runtime.log.id
    exported = project / f"codebot-{session_id}.md"
    assert f"(exported session {session_id} to {exported})" in out
    text = exported.read_text()
    assert "## User\n\nplan it" in text
    assert "### Tool call `todo_write`" in text
    assert "- [~] Fix the \\x1b[31mbug" in text and "\x1b" not in text

    # --continue: the plan comes back with the session.
    async def resumed(repl: Repl, inp: Any) -> None:
        await anyio.sleep(0.5)
        inp.send_text("/todos\r")
        await anyio.sleep(0.3)
        inp.send_text("/clear\r")
        await anyio.sleep(0.3)
        inp.send_text("/todos\r")
        await anyio.sleep(0.3)
        inp.send_text("\x04")

    code, _ = await drive(project, resumed, options=ChatOptions(resume_latest=True), seconds=45)
    out = capsys.readouterr().out
    assert code == 0
    assert "todo list: 1/3 completed" in out and "☐ Run the tests" in out
    # /clear drops the plan with the conversation, and the session log says so.
    assert "(no todo list in this session" in out
    (saved,) = history.list_sessions(project)
    assert history.todos(saved.path) == []


def test_export_both_formats_masks_secrets(
    project: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    command = f"echo {LATE}; printf 'bell\\007 ```fence'"
    fake.queue(fo.tool_calls(("bash", {"command": command})), fo.text("Echoed."))
    code, _, err = cli(capsys, monkeypatch, project, "chat", "-p", "echo it", "-y")
    assert code == 0, err
    (saved,) = history.list_sessions(project)
    assert LATE in saved.path.read_text()  # not known as a secret while the chat ran
    # The export run knows it (it is this run's API key): masked in both formats.
    code, out, err = cli(capsys, monkeypatch, project, "export", key=LATE)
    assert code == 0, err
    assert LATE not in out and "***" in out
    assert f"# codebot session {saved.id}" in out
    assert "## User\n\necho it" in out
    assert "### Tool call `bash`" in out and '"command": "echo ***;' in out
    assert "### Result of `bash`" in out
    assert "bell\\x07 ```fence" in out and "\x07" not in out
    assert "\n````\n" in out  # a fence longer than the backticks inside
    assert "## Assistant\n\nEchoed." in out

    target = project / "out" / "s.json"
    target.parent.mkdir()
    code, out, err = cli(
        capsys,
        monkeypatch,
        project,
        "export",
        "--format",
        "json",
        "--output",
        "out/s.json",
        key=LATE,
    )
    assert code == 0, err
    assert f"exported session {saved.id} to {target}" in err
    data = json.loads(target.read_text())
    assert LATE not in target.read_text()
    assert data["session"]["id"] == saved.id and data["session"]["model"]
    roles = [m["role"] for m in data["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert data["messages"][1]["tool_calls"][0]["function"]["name"] == "bash"
    assert "***" in data["messages"][2]["content"]

    # --session picks one by prefix; an unknown one is exit 2, named, with how to list.
    code, out, _ = cli(capsys, monkeypatch, project, "export", "--session", saved.id[:12])
    assert code == 0 and saved.id in out
    code, out, err = cli(capsys, monkeypatch, project, "export", "--session", "nope-123")
    assert code == 2 and out == ""
    assert "'nope-123' is not a saved session of this project" in err
    assert "codebot chat --resume" in err


def test_the_checklist_falls_back_to_ascii_marks() -> None:
    import io

    from codebot_mcp.cli.repl.reports import todo_checklist

    ascii_stream = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    lines = todo_checklist(PLAN, ascii_stream).splitlines()
    assert lines == ["  [x] Read the code", "  [~] Fix the \\x1b[31mbug", "  [ ] Run the tests"]


def test_hooks_know_todo_write_by_its_claude_code_name() -> None:
    from codebot_mcp.core.config.hookcontract import CODEBOT_NAMES, claude_input, claude_name

    assert claude_name("todo_write") == "TodoWrite"
    assert CODEBOT_NAMES["TodoWrite"] == "todo_write"
    assert claude_input("todo_write", {"todos": PLAN}, Path("/")) == {"todos": PLAN}
