"""Issue 13 through the real CLI, as an acceptance check would drive it: `chat -p`, `--json`,
`--continue` and the REPL, against the loopback model and real MCP servers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run
from tests.cli.repl_driver import connected, drive, until
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


def names_of(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


def calls(out: str) -> list[tuple[str, str, bool]]:
    return [(c["name"], c["result"], c["is_error"]) for c in json.loads(out)["tool_calls"]]


def test_edit_read_glob_grep_through_one_shot(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / ".gitignore").write_text("build/\n")
    (project / "build").mkdir()
    (project / "build" / "gen.py").write_text("def gen(): pass\n")
    (project / "app.py").write_text("x = 1\ndef main():\n    x = 1\n")
    edit = {"path": "app.py", "old_string": "x = 1", "new_string": "x = 2"}
    fake.queue(
        fo.tool_calls(("edit", edit)),
        fo.tool_calls(("edit", {**edit, "replace_all": True})),
        fo.tool_calls(
            ("read", {"path": "app.py", "offset": 2, "limit": 1}),
            ("glob", {"pattern": "**/*.py"}),
            ("grep", {"pattern": r"def \w+", "context": 1}),
        ),
        fo.text("done"),
    )
    code, out, err = chat(capsys, project, "-p", "bump x", "--yes", "--json")
    assert code == 0, err
    assert json.loads(out)["exit_code"] == 0
    assert "✗ edit: " in err and "edit: edit:" not in err  # the reason, named once
    (e1, e2, read, glob, grep) = calls(out)
    assert e1[2] and "occurs 2 times (lines 1, 3)" in e1[1] and "replace_all" in e1[1]
    assert not e2[2] and "replaced 2 occurrences" in e2[1]
    assert (project / "app.py").read_text() == "x = 2\ndef main():\n    x = 2\n"
    assert read[1].startswith("     2\tdef main():\n") and "offset=3" in read[1]
    assert glob[1] == "app.py"  # build/ is ignored
    assert grep[1] == "app.py-1-x = 2\napp.py:2:def main():\napp.py-3-    x = 2"


def test_file_tools_outside_the_project_ask_and_are_denied_one_shot(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(
        fo.tool_calls(
            ("glob", {"pattern": "*", "path": ".."}),
            ("grep", {"pattern": "root", "path": "/etc"}),
            ("read", {"path": "/etc/hostname"}),
        ),
        fo.text("ok"),
    )
    code, out, err = chat(capsys, project, "-p", "look around", "--json")
    assert code == 0, err
    for name, result, is_error in calls(out):
        assert is_error and "outside the project root" in result, (name, result)
    assert err.count("⊘") == 3


def test_resumed_session_keeps_the_tools_search_loaded(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    servers = {"many": entry("many_tools", "--count", "40")}
    write_settings(
        tmp_path, {"base_url": fake.base_url, "tool_search": True, "mcp_servers": servers}
    )
    fake.queue(fo.tool_calls(("search_tools", {"query": "tool_0007"})), fo.text("loaded"))
    assert chat(capsys, tmp_path, "-p", "load tool 7")[0] == 0
    fake.queue(fo.tool_calls(("mcp__many__tool_0007", {"value": "v"})), fo.text("called"))
    code, out, err = chat(capsys, tmp_path, "-p", "call it", "--continue", "--json")
    assert code == 0, err
    assert names_of(fake.bodies[2])[-2:] == ["search_tools", "mcp__many__tool_0007"]
    [(name, result, is_error)] = calls(out)
    assert name == "mcp__many__tool_0007" and not is_error and '"tool_0007"' in result


def test_overflow_of_a_continued_session_is_compacted_and_retried(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "big.txt").write_text("word " * 4000)
    fake.queue(fo.tool_calls(("read", {"path": "big.txt"})), fo.text("read it"))
    assert chat(capsys, project, "-p", "read big.txt")[0] == 0
    fake.queue(fo.overflow(4096), fo.text("the summary"), fo.text("after compaction"))
    code, out, err = chat(capsys, project, "-p", "and now?", "--continue", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["answer"] == "after compaction" and data["error"] is None
    [compaction] = data["compactions"]
    assert compaction["cut_tool_results"] == 1 and compaction["after_tokens"] < 4096
    assert data["usage"]["summary_requests"] == 1
    assert "(context compacted: " in err and "supports chat completions" not in err
    retry = fake.bodies[-1]["messages"]
    assert retry[-1] == {"role": "user", "content": "and now?"}  # the current turn stays whole
    assert "word word" not in json.dumps(retry)


def test_a_request_near_the_window_is_compacted_before_it_is_sent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.txt").write_text("alpha alpha alpha\n" * 300)
    (tmp_path / "b.txt").write_text("bravo bravo bravo\n" * 300)
    with FakeOpenAI(window=8000) as fake:  # rejects what is longer, as a real server does
        write_settings(tmp_path, {"base_url": fake.base_url, "context_window": 8000})
        fake.queue(fo.tool_calls(("read", {"path": "a.txt"})), fo.text("read a"))
        assert chat(capsys, tmp_path, "-p", "read a.txt")[0] == 0
        fake.queue(fo.tool_calls(("read", {"path": "b.txt"})), fo.text("read b"))
        code, out, err = chat(capsys, tmp_path, "-p", "now b.txt", "--continue", "--json")
        assert code == 0, err
        assert fake.rejected == 0
    data = json.loads(out)
    [compaction] = data["compactions"]
    assert compaction["cut_tool_results"] == 1 and compaction["summarised_messages"] == 0
    assert data["usage"]["summary_requests"] == 0  # cutting old results was enough
    last = json.dumps(fake.bodies[-1]["messages"])
    assert last.count("alpha") < 40 and last.count("bravo") == 900  # the current turn is whole


def test_overflow_hints_say_what_was_tried(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(fo.overflow(8192))
    code, out, err = chat(capsys, project, "-p", "hi", "--json")
    assert code == 5 and len(fake.bodies) == 1  # the first prompt: nothing to compact
    error = json.loads(out)["error"]
    assert "context window (8192 tokens)" in error["message"]
    assert "nothing older to compact" in error["hint"] and "supports chat" not in err
    fake.queue(fo.text("first answer " * 40))
    assert chat(capsys, project, "-p", "hi", "--continue")[0] == 0
    fake.queue(fo.overflow(8192), fo.text("the summary"), fo.overflow(8192))
    code, out, err = chat(capsys, project, "-p", "more", "--continue", "--json")
    assert code == 5 and len(fake.bodies) == 5  # the summary is not summarised again
    assert "compacted the conversation and retried" in json.loads(out)["error"]["hint"]


def test_retries_are_visible_off_for_loopback_and_max_tokens_is_sent(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    busy = fo.error(503, "busy", **{"x-should-retry": "true"})
    fake.queue(busy)
    code, _, err = chat(capsys, project, "-p", "hi")
    assert code == 5 and "↻" not in err and len(fake.bodies) == 1  # loopback: no retries
    write_settings(project, {"base_url": fake.base_url, "model_retries": 1, "max_tokens": 300})
    fake.queue(busy, fo.text("second try"))
    code, out, err = chat(capsys, project, "-p", "hi")
    assert code == 0 and out == "second try\n"
    assert "↻ retry 1/1 in 1.0s: the model server at " in err and "(503): busy" in err
    assert [b["max_tokens"] for b in fake.bodies] == [8192, 300, 300]


def test_include_tools_hides_the_instructions_about_hidden_tools(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    servers = {"echo": entry("echo", include_tools=["add"])}
    write_settings(tmp_path, {"base_url": fake.base_url, "mcp_servers": servers})
    fake.queue(fo.text("ok"))
    assert chat(capsys, tmp_path, "-p", "hi")[0] == 0
    system = fake.bodies[0]["messages"][0]["content"]
    assert "## echo" in system and "Use echo to repeat text." not in system
    assert [n for n in names_of(fake.bodies[0]) if n.startswith("mcp__")] == ["mcp__echo__add"]


async def type_keys(
    project: Path, fake: FakeOpenAI, keys: list[str], *, servers: bool = True
) -> int:
    """The REPL on pipe input: once the MCP server is up, type ``keys`` one by one, then wait
    for the script to be used up and leave with Ctrl-D."""
    import anyio

    async def steps(repl: Any, inp: Any) -> None:
        await until(lambda: repl.runtime is not None and (bool(connected(repl)) or not servers))
        for key in keys:
            inp.send_text(key)
            await anyio.sleep(0.4)
        await until(lambda: fake.remaining == 0)
        await anyio.sleep(0.3)
        inp.send_text("\x04")

    code, _ = await drive(project, steps, seconds=45)
    return code


@pytest.mark.anyio
async def test_repl_empty_answer_unknown_usage_tools_and_resume(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    servers = {"many": entry("many_tools", "--count", "12")}
    write_settings(
        tmp_path, {"base_url": fake.base_url, "tool_search": True, "mcp_servers": servers}
    )
    fake.queue(
        fo.text(""),
        fo.no_usage(fo.text("hi")),
        fo.tool_calls(("search_tools", {"query": "tool_0003"})),
        fo.text("loaded"),
    )
    keys = ["first\r", "second\r", "/usage\r", "load three\r", "/tools\r", "/context\r"]
    assert await type_keys(tmp_path, fake, keys) == 0
    out, err = capsys.readouterr()
    assert "empty answer" in err
    # An ordinary empty answer is not the llama.cpp quirk: streaming goes on.
    assert [b["stream"] for b in fake.bodies] == [True, True, True, True]
    assert "last turn: unknown (the server reported no usage)" in out
    assert "loaded (14, in the request):" in out and "mcp__many__tool_0003" in out
    assert "deferred (11, load with search_tools):" in out
    assert "many (11): tool_0000, tool_0001, tool_0002, tool_0004," in out
    assert "  MCP tools: many " in out  # the loaded one is in the request
    assert "tool search: on; 11 MCP tools deferred, ~" in out
    # /resume in a new REPL: the same messages, the tool search loaded still in the request.
    fake.queue(fo.text("again"))
    assert await type_keys(tmp_path, fake, ["/resume\r", "1\r", "more\r"]) == 0
    out, _ = capsys.readouterr()
    assert "(resumed session " in out and "again" in out
    last = fake.bodies[-1]
    assert names_of(last)[-2:] == ["search_tools", "mcp__many__tool_0003"]
    assert [m.get("content") for m in last["messages"]][-2:] == ["loaded", "more"]


@pytest.mark.anyio
async def test_the_agent_commands_tab_complete() -> None:
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from codebot_mcp.cli.repl.repl_completion import SLASH_COMMANDS, MCPCompleter

    completer = MCPCompleter(lambda: None, SLASH_COMMANDS)  # no runtime yet

    async def complete(text: str) -> list[str]:
        found = completer.get_completions_async(Document(text), CompleteEvent())
        return [c.text async for c in found]

    assert await complete("/co") == ["/context", "/compact"]
    assert await complete("/u") == ["/usage"]
    assert await complete("/re") == ["/resume", "/rewind"]


def test_a_learned_window_turns_auto_tool_search_on(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    servers = {"many": entry("many_tools", "--count", "30")}  # ~1,600 tokens of schemas
    write_settings(tmp_path, {"base_url": fake.base_url, "mcp_servers": servers})
    fake.queue(fo.text("first"))
    assert chat(capsys, tmp_path, "-p", "hi")[0] == 0
    assert "mcp__many__tool_0000" in names_of(fake.bodies[0])  # 128k window: all sent
    fake.queue(fo.overflow(8192), fo.text("the summary"), fo.text("fits"))
    code, out, err = chat(capsys, tmp_path, "-p", "more", "--continue")
    assert code == 0 and out == "fits\n", err
    retry = fake.bodies[-1]
    # 1,600 tokens pass 10% of the 8,192 the server named: the schemas are deferred now.
    assert "search_tools" in names_of(retry)
    assert not [n for n in names_of(retry) if n.startswith("mcp__many__")]
    assert "- many: tool_0000, tool_0001" in retry["messages"][0]["content"]


@pytest.mark.anyio
async def test_repl_context_names_where_the_window_comes_from(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.serve_models(["gpt-4o-mini"])  # its only model, so the one used
    fake.queue(fo.overflow(8192), fo.text("ok"))
    keys = ["/context\r", "hi\r", "/context\r", "again\r"]
    assert await type_keys(project, fake, keys, servers=False) == 0
    out, err = capsys.readouterr()
    assert "context window: 128,000 tokens, the known window of gpt-4o-mini" in out
    assert "nothing older to compact" in err
    assert "context window: 8,192 tokens, learned from the server's error" in out
    assert "ok" in out and len(fake.bodies) == 2


def test_continue_and_resume_together_is_a_usage_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = chat(capsys, project, "-p", "x", "--continue", "--resume", "abc")
    assert code == 2 and "--continue and --resume both pick a session" in err


def test_edit_keeps_line_endings_encoding_and_mode(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    script = project / "run.sh"
    script.write_bytes("#!/bin/sh\r\necho caf\xe9\r\nexit 0\r\n".encode("latin-1"))
    script.chmod(0o755)
    edit = {"path": "run.sh", "old_string": "exit 0", "new_string": "exit 3"}
    fake.queue(fo.tool_calls(("edit", edit)), fo.text("done"))
    code, _, err = chat(capsys, project, "-p", "exit 3", "--yes")
    assert code == 0, err
    assert script.read_bytes() == "#!/bin/sh\r\necho caf\xe9\r\nexit 3\r\n".encode("latin-1")
    assert script.stat().st_mode & 0o777 == 0o755


@pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed")
def test_grep_gives_the_same_answer_with_and_without_ripgrep(
    project: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (project / ".gitignore").write_text("skip/\n")
    (project / "skip").mkdir()
    (project / "skip" / "x.py").write_text("TODO hidden\n")
    (project / "src").mkdir()
    (project / "src" / "a.py").write_text("one\nTODO: first\ntwo\n\nthree\ntodo: second\n")
    (project / "b.txt").write_text("TODO in text\n")
    args = {"pattern": "todo", "ignore_case": True, "context": 1, "glob": "*.py"}
    results = []
    for path in (None, str(project / "empty-bin")):  # ripgrep on PATH, then not
        if path is not None:
            monkeypatch.setenv("PATH", path)
        fake.queue(fo.tool_calls(("grep", args)), fo.text("ok"))
        code, out, err = chat(capsys, project, "-p", "find todos", "--json")
        assert code == 0, err
        [(_, result, is_error)] = calls(out)
        assert not is_error
        results.append(result)
    assert results[0] == results[1]
    assert (
        results[0] == "src/a.py-1-one\nsrc/a.py:2:TODO: first\nsrc/a.py-3-two\n--\n"
        "src/a.py-5-three\nsrc/a.py:6:todo: second"
    )
