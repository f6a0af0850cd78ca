"""`codebot chat` as a coding agent: transcripts on every exit, sessions, usage, tool search."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import server_entry as entry
from tests.helpers import write_settings


@pytest.fixture
def project(tmp_path: Path, fake: FakeOpenAI) -> Path:
    write_settings(tmp_path, {"base_url": fake.base_url})
    return tmp_path


def chat(capsys: pytest.CaptureFixture[str], cwd: Path, *argv: str) -> tuple[int, str, str]:
    code = run(["--cwd", str(cwd), "chat", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def as_json(out: str) -> dict[str, Any]:
    return json.loads(out)


def test_json_transcript_on_model_error_keeps_calls_that_ran(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(
        fo.tool_calls(("write", {"path": "made.txt", "content": "x"})),
        fo.error(401, "bad key"),
    )
    code, out, err = chat(capsys, project, "-p", "make it", "--json", "--yes")
    assert code == 5, err
    data = as_json(out)
    assert data["outcome"] == "error" and data["error"]["exit_code"] == 5
    assert "rejected the API key" in data["error"]["message"]
    assert [c["name"] for c in data["tool_calls"]] == ["write"]
    assert (project / "made.txt").read_text() == "x"
    assert "error:" in err  # the error is still on stderr


def test_json_transcript_on_turn_limit(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(project, {"base_url": fake.base_url, "max_turns": 2})
    fake.queue(
        fo.tool_calls(("glob", {"pattern": "*"})), fo.tool_calls(("glob", {"pattern": "**"}))
    )
    code, out, _ = chat(capsys, project, "-p", "list", "--json")
    assert code == 6
    data = as_json(out)
    assert data["error"]["exit_code"] == 6 and len(data["tool_calls"]) == 2


def test_empty_answer_exits_7_and_says_so(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(fo.text(""))
    code, out, err = chat(capsys, project, "-p", "hi")
    assert code == 7 and out == ""
    assert "empty answer" in err
    fake.queue(fo.text(""))
    code, out, _ = chat(capsys, project, "-p", "hi", "--json")
    assert code == 7 and as_json(out)["outcome"] == "empty_answer"
    assert as_json(out)["exit_code"] == 7 and as_json(out)["error"] is None


def test_dropped_stream_prints_the_partial_answer(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(fo.drop(after_text="the first half"))
    code, out, err = chat(capsys, project, "-p", "hi")
    assert code == 5
    assert out == "the first half\n"
    assert "dropped mid-answer" in err and "cannot connect" not in err


# --- sessions ---------------------------------------------------------------------------------


def session_files(home: Path) -> list[Path]:
    return sorted((home / "state" / "sessions").glob("*/*.jsonl"))


def test_sessions_are_saved_private_and_scrubbed(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = "s3cret-token-value-42"
    write_settings(
        tmp_path,
        {
            "base_url": fake.base_url,
            "mcp_servers": {"echo": entry("echo", env={"ECHO_TOKEN": secret})},
        },
    )
    fake.queue(fo.text(f"the token is {secret}"))
    code, out, err = chat(capsys, tmp_path, "-p", f"remember {secret}", "--json")
    assert code == 0, err
    assert secret not in out and "remember ***" in out
    (path,) = session_files(tmp_path / "home")
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    text = path.read_text()
    assert secret not in text and "***" in text
    kinds = [json.loads(line)["type"] for line in text.splitlines()]
    assert kinds == ["session", "message", "message"]


def test_continue_and_resume_with_the_current_tools(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(fo.text("first answer"))
    assert chat(capsys, project, "-p", "first question", "--json")[0] == 0
    # The tool set changes between the runs: the resumed session gets the new one.
    write_settings(project, {"base_url": fake.base_url, "mcp_servers": {"echo": entry("echo")}})
    fake.queue(fo.text("second answer"))
    code, out, err = chat(capsys, project, "-p", "and now?", "--continue", "--json")
    assert code == 0, err
    body = fake.bodies[1]
    assert [m.get("content") for m in body["messages"][1:]] == [
        "first question",
        "first answer",
        "and now?",
    ]
    assert "mcp__echo__echo" in [t["function"]["name"] for t in body["tools"]]
    (path,) = session_files(project / "home")
    session_id = as_json(out)["session_id"]
    assert path.stem == session_id
    fake.queue(fo.text("third"))
    code, _, _ = chat(capsys, project, "-p", "again", "--resume", session_id[:10])
    assert code == 0 and len(fake.bodies[2]["messages"]) == 6
    code, _, err = chat(capsys, project, "-p", "x", "--resume", "nope")
    assert code == 2 and "not a saved session" in err and session_id in err
    code, _, err = chat(capsys, project, "-p", "x", "--resume")
    assert code == 2 and session_id in err and "first question" in err


def test_continue_without_sessions_is_a_clear_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = chat(capsys, project, "-p", "x", "--continue")
    assert code == 2 and "no saved sessions" in err


# --- tool search --------------------------------------------------------------------------------


def names_of(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


BUILTINS = ["read", "edit", "write", "glob", "grep", "bash"]
LOCAL = [
    *BUILTINS,
    *("task", "list_mcp_resources", "read_mcp_resource", "todo_write", "bash_output", "bash_kill"),
]
"""The local layer when any server is configured: the built-ins, ``task`` and the resource
tools."""


def test_tool_search_defers_and_loads_real_mcp_tools(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(
        tmp_path,
        {
            "base_url": fake.base_url,
            "tool_search": True,
            "mcp_servers": {"many": entry("many_tools", "--count", "40")},
        },
    )
    fake.queue(
        fo.tool_calls(("search_tools", {"query": "tool_0007"})),
        fo.tool_calls(("mcp__many__tool_0007", {"value": "v"})),
        fo.text("done"),
    )
    code, out, err = chat(capsys, tmp_path, "-p", "use tool 7", "--json")
    assert code == 0, err
    first, second, third = fake.bodies
    assert names_of(first) == [*LOCAL, "search_tools"]
    system = first["messages"][0]["content"]
    assert "# Deferred MCP tools" in system and "- many: tool_0000, tool_0001" in system
    assert names_of(second) == [*LOCAL, "search_tools", "mcp__many__tool_0007"]
    assert json.dumps(second["tools"]) == json.dumps(third["tools"])
    assert second["messages"][0] == third["messages"][0]
    assert "tool_0007" not in second["messages"][0]["content"].split("- many:")[1]
    data = as_json(out)
    assert '"tool": "tool_0007"' in data["tool_calls"][1]["result"]


def test_tool_search_auto_follows_the_catalog_size(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(
        tmp_path,
        {
            "base_url": fake.base_url,
            "context_window": 8000,
            "mcp_servers": {"many": entry("many_tools", "--count", "30")},
        },
    )
    fake.queue(fo.text("a"))
    assert chat(capsys, tmp_path, "-p", "x")[0] == 0
    assert names_of(fake.bodies[0]) == [*LOCAL, "search_tools"]
    write_settings(
        tmp_path,
        {"base_url": fake.base_url, "mcp_servers": {"many": entry("many_tools", "--count", "30")}},
    )
    fake.queue(fo.text("b"))
    assert chat(capsys, tmp_path, "-p", "x")[0] == 0
    assert len(names_of(fake.bodies[1])) == len(LOCAL) + 30


# --- the REPL -----------------------------------------------------------------------------------


async def run_repl(project: Path, keys: list[str], options: Any = None) -> tuple[int, str, str]:
    from tests.cli.repl_driver import drive

    code, _ = await drive(project, [(0.4, key) for key in keys], options=options, seconds=60)
    return code, "", ""


@pytest.mark.anyio
async def test_repl_usage_context_compact_and_resume(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(project, {"base_url": fake.base_url, "usage_line_after": 0})
    fake.queue(fo.text("**hello** there"), fo.text("the summary"))
    keys = ["hi\r", "/usage\r", "/context\r", "/compact keep the greeting\r", "/tools\r", "\x04"]
    code, _, _ = await run_repl(project, keys)
    out, err = capsys.readouterr()
    assert code == 0
    assert "hello there" in out or "**hello** there" in out
    assert "tokens this answer: 10 prompt" in err  # usage line past usage_line_after (0)
    assert "last turn: 10 prompt (0 cached (0%)), 5 completion" in out
    assert "session:   10 prompt" in out
    assert re.search(r"^  history +\d+", out, re.M) and re.search(r"^  free +[\d,]+", out, re.M)
    assert "context window: 128,000 tokens" in out
    assert "older message(s) summarised" in out
    summary = fake.bodies[1]
    assert "keep the greeting" in summary["messages"][0]["content"]
    assert "loaded (10, in the request):" in out and "tool search: off" in out
    # A second REPL resumes it by picking from the list.
    fake.queue(fo.text("welcome back"))
    from codebot_mcp.cli.chat_runtime import ChatOptions

    code, _, _ = await run_repl(project, ["1\r", "and?\r", "\x04"], ChatOptions(resume=""))
    out, _ = capsys.readouterr()
    assert "(resumed session " in out
    last = fake.bodies[-1]["messages"]
    assert last[1]["role"] == "user" and last[2]["role"] == "assistant"  # note, then summary
    assert "the summary" in last[2]["content"] and last[-1] == {"role": "user", "content": "and?"}


def test_markdown_stream_renders_code_and_plain_text_stays_plain(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io

    from rich.console import Console

    from codebot_mcp.cli.repl.chatview import TurnView
    from codebot_mcp.cli.repl.markdown import MarkdownStream

    sink = io.StringIO()
    stream = MarkdownStream(
        Console(file=sink, force_terminal=True, width=60, color_system="standard")
    )
    # Whole blocks only: nothing stays open, so the transient live view never shows.
    stream.feed("# Title\n\nSome **bold** text.\n\n")
    stream.feed("```python\nprint('hi')\n```\n")
    stream.close()
    text = sink.getvalue()
    assert "\x1b[" in text and "**" not in text and "```" not in text
    assert "print" in text and "Title" in text and "bold" in text
    stream.feed("open para")  # an open block is shown live, then rendered on close
    stream.close()
    assert sink.getvalue().rstrip().endswith("open para")
    monkeypatch.setenv("NO_COLOR", "1")
    assert TurnView(markdown=True)._markdown is None  # plain text under NO_COLOR


def test_approval_diff_is_coloured_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from codebot_mcp.cli.repl.reports import color_diff

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\x1b[2J"
    coloured = color_diff(diff, Tty())
    assert "\x1b[31m    -old" not in coloured and "\x1b[31m-old\x1b[0m" in coloured
    assert "\x1b[32m+new\\x1b[2J\x1b[0m" in coloured  # the file's own escape is shown, not run
    plain = color_diff(diff, io.StringIO())
    assert "\x1b[3" not in plain and "    +new\\x1b[2J" in plain
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[3" not in color_diff(diff, Tty())


def test_bare_resume_gets_an_empty_value() -> None:
    from codebot_mcp.cli._typer import optional_values

    assert optional_values(["chat", "--resume"]) == ["chat", "--resume", ""]
    assert optional_values(["chat", "--resume", "-p", "x"]) == ["chat", "--resume", "", "-p", "x"]
    assert optional_values(["chat", "--resume", "abc"]) == ["chat", "--resume", "abc"]
    assert optional_values(["chat", "-p", "--", "--resume"]) == ["chat", "-p", "--", "--resume"]
