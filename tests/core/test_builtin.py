from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from codebot_mcp.core.jobs.jobtable import JobTable
from codebot_mcp.core.sandbox.confinement import Sandbox
from codebot_mcp.core.tools.base import Capability, Origin, Tool, ToolInfo
from codebot_mcp.core.tools.builtin import (
    BUILTIN_TOOLS,
    BashTool,
    ReadTool,
    WriteTool,
    builtin_tools,
)
from codebot_mcp.core.tools.builtin._files import FileTool
from codebot_mcp.core.tools.builtin.bash import MAX_OUTPUT_BYTES
from tests.fakes.procs import alive

pytestmark = pytest.mark.anyio


def test_builtins_implement_the_protocol(tmp_path: Path) -> None:
    tools = builtin_tools(tmp_path)
    assert [t.name for t in tools] == ["read", "edit", "write", "glob", "grep", "bash"]
    assert all(isinstance(t, Tool) for t in tools)
    assert [t.info.permission.capability for t in tools] == [
        Capability.READ,
        Capability.WRITE,
        Capability.WRITE,
        Capability.READ,
        Capability.READ,
        Capability.EXECUTE,
    ]
    assert all(t.schema()["type"] == "object" for t in tools)
    assert [type(t) for t in tools] == list(BUILTIN_TOOLS)  # the order the doctor counts


def test_builtins_are_made_with_their_parts(tmp_path: Path) -> None:
    """The sandbox, the jobs and an editor's files and terminals reach the tools through
    their constructors (``builtin_tools``), not by being set on them afterwards."""
    sandbox = Sandbox(None, workspace=tmp_path, deny_read=(tmp_path / "secret",))
    jobs = JobTable()
    files: Any = object()  # stand-ins: only their identity is checked
    terminals: Any = object()
    tools = {
        t.name: t
        for t in builtin_tools(
            tmp_path,
            sandbox=sandbox,
            jobs=jobs,
            files=files,
            terminals=terminals,
        )
    }
    bash = tools["bash"]
    assert isinstance(bash, BashTool)
    assert (bash.sandbox, bash.jobs, bash.terminals) == (sandbox, jobs, terminals)
    for name in ("read", "edit", "write", "glob", "grep"):
        tool = tools[name]
        assert isinstance(tool, FileTool)
        assert tool.boundary.hidden == sandbox.hidden_reals
        assert tool.files is (files if name in ("read", "edit", "write") else None)
    sandbox.close()


def test_every_builtin_tool_carries_its_record(tmp_path: Path) -> None:
    from codebot_mcp.core.jobs.jobtable import JobTable
    from codebot_mcp.core.jobs.jobtools import BashKillTool, BashOutputTool
    from codebot_mcp.core.skills.skilltool import SkillTool
    from codebot_mcp.core.subagents.tasktool import TaskTool
    from codebot_mcp.core.tools.builtin.todo import TodoList, TodoWriteTool
    from codebot_mcp.core.tools.resources import ListResourcesTool, ReadResourceTool
    from codebot_mcp.core.tools.toolsearch import SearchToolsTool, ToolSearch

    jobs = JobTable()
    # the record names no collaborator: the ones these tools take are not needed to read it
    others: list[Tool] = [
        BashOutputTool(jobs),
        BashKillTool(jobs),
        TodoWriteTool(TodoList()),
        SkillTool(None, None),  # type: ignore[arg-type]
        TaskTool(None),  # type: ignore[arg-type]
        ListResourcesTool(None),  # type: ignore[arg-type]
        ReadResourceTool(None),  # type: ignore[arg-type]
        SearchToolsTool(ToolSearch(), str),
    ]
    files = builtin_tools(tmp_path)
    for tool in [*files, *others]:
        info = tool.info
        assert isinstance(info, ToolInfo), tool.name
        assert (info.server, info.original_name, info.fingerprint) == (None, None, None)
        assert info.permission.reason.startswith(f"built-in {tool.name}: "), tool.name
    origins = {t.name: t.info.origin for t in [*files, *others]}
    assert origins.pop("skill") is Origin.SKILL and origins.pop("task") is Origin.SUBAGENT
    assert set(origins.values()) == {Origin.BUILTIN}
    by_name = {t.name: t.info for t in files}
    assert [n for n, i in by_name.items() if i.reach is not None] == [
        "read",
        "edit",
        "write",
        "glob",
        "grep",
    ]
    assert [n for n, i in by_name.items() if i.preview is not None] == ["edit", "write"]
    assert [n for n, i in by_name.items() if i.sandbox is not None] == ["bash"]
    outside = by_name["read"].reach({"path": "../x"})  # type: ignore[misc]
    assert outside is not None and outside.asks
    assert not any(i.sandbox or i.reach or i.preview for i in (t.info for t in others))


async def test_read_numbers_lines_and_pages(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    result = await ReadTool(tmp_path).execute({"path": "f.txt", "offset": 3, "limit": 2})
    assert not result.is_error
    assert result.text.splitlines() == [
        "     3\tline 3",
        "     4\tline 4",
        "[6 more lines; read again with offset=5]",
    ]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"path": "missing.txt"}, "does not exist"),
        ({"path": "."}, "is a directory"),
        ({"path": "bin.dat"}, "looks binary"),
        ({}, "'path' is required"),
        ({"path": "f.txt", "limit": 0}, "'limit' must be an integer >= 1"),
        ({"path": "f.txt", "offset": 99}, "past the end"),
    ],
)
async def test_read_errors_are_results(
    tmp_path: Path, arguments: dict[str, object], message: str
) -> None:
    (tmp_path / "bin.dat").write_bytes(b"\x00\x01\x02")
    (tmp_path / "f.txt").write_text("one\n")
    result = await ReadTool(tmp_path).execute(arguments)
    assert result.is_error and message in result.text


async def test_write_creates_then_overwrites(tmp_path: Path) -> None:
    tool = WriteTool(tmp_path)
    first = await tool.execute({"path": "a/b/c.txt", "content": "héllo"})
    assert first.text.startswith("Created") and "(6 bytes)" in first.text
    second = await tool.execute({"path": "a/b/c.txt", "content": ""})
    assert second.text.startswith("Overwrote")
    assert (tmp_path / "a/b/c.txt").read_text() == ""
    bad = await tool.execute({"path": "a", "content": "x"})
    assert bad.is_error and "is a directory" in bad.text


async def test_bash_runs_in_cwd_and_reports_exit_codes(tmp_path: Path) -> None:
    tool = BashTool(tmp_path)
    ok = await tool.execute({"command": "pwd; echo err >&2"})
    assert not ok.is_error and ok.text.splitlines() == [_real(tmp_path), "err"]
    failed = await tool.execute({"command": "echo nope; exit 3"})
    assert failed.is_error and failed.text == "nope\n[exit code 3]"


async def test_bash_caps_output_head_and_tail(tmp_path: Path) -> None:
    result = await BashTool(tmp_path).execute(
        {"command": "echo START; head -c 200000 /dev/zero | tr '\\0' x; echo; echo END"}
    )
    assert result.text.startswith("START") and result.text.endswith("END")
    assert "bytes of output cut" in result.text
    assert len(result.text) < MAX_OUTPUT_BYTES + 200


async def test_bash_timeout_kills_the_process_group(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    # The shell waits for a 600 s sleep: only the 1 s timeout can end the call within the
    # test's own time limit, and it must take the sleep with it.
    result = await BashTool(tmp_path).execute(
        {"command": f"sleep 600 & echo $! > {marker}; wait", "timeout": 1}
    )
    assert result.is_error and "timed out after 1s" in result.text
    await _assert_dead(int(marker.read_text()))


async def test_bash_background_child_does_not_hang_the_call(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    # A call that waited for its background child would hang for 600 s (the test's time
    # limit fails it); the default timeout is far beyond that limit too.
    result = await BashTool(tmp_path).execute(
        {"command": f"sleep 600 & echo $! > {marker}; echo hi"}
    )
    assert result.text == "hi" and not result.is_error
    await _assert_dead(int(marker.read_text()))


async def test_bash_cancel_kills_the_process_group(tmp_path: Path) -> None:
    marker = anyio.Path(tmp_path / "pid")
    command = f"sleep 30 & echo $! > {marker}.new; mv {marker}.new {marker}; wait"
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            tg.start_soon(BashTool(tmp_path).execute, {"command": command})
            while not await marker.exists():  # noqa: ASYNC110 - a file the shell writes
                await anyio.sleep(0.05)
            tg.cancel_scope.cancel()  # as Ctrl-C cancels a running tool call
    await _assert_dead(int(await marker.read_text()))


async def _assert_dead(pid: int) -> None:
    """``pid`` ends within 5 s (a killed child of an exited shell may linger as a zombie until
    init reaps it: that counts as dead)."""
    with anyio.fail_after(5):
        while alive(pid):  # noqa: ASYNC110 - another program's process
            await anyio.sleep(0.05)


def _real(path: Path) -> str:
    return str(path.resolve())


@pytest.mark.anyio
async def test_bash_does_not_inherit_credentials_or_codebots_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the model runs cannot read the API key back (``echo $OPENAI_API_KEY``), whatever
    the variable is called, nor credential-named variables; the rest of the user's
    environment (PATH, HOME, an ssh agent) is there."""
    from codebot_mcp.core.secrets.redact import SECRETS

    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-key-0123456789")
    monkeypatch.setenv("MY_LLM", "llm-secret-98765")  # an api_key_env without a telling name
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_abcdefghijklmnop")
    monkeypatch.setenv("DB_PASSWORD", "hunter2-hunter2")
    monkeypatch.setenv("SSH_AUTH_SOCK", "/tmp/agent.sock")
    monkeypatch.setenv("PROJECT_COLOR", "blue")
    SECRETS.add(["llm-secret-98765"])  # what load_settings learns of the model's key
    result = await BashTool(tmp_path).execute({"command": "env", "sandbox": False})
    names = {line.split("=", 1)[0] for line in result.text.splitlines() if "=" in line}
    assert {"PATH", "HOME", "SSH_AUTH_SOCK", "PROJECT_COLOR"} <= names
    assert not names & {"OPENAI_API_KEY", "MY_LLM", "GITHUB_TOKEN", "DB_PASSWORD"}
    for value in ("sk-live-key", "llm-secret", "ghp_abc", "hunter2"):
        assert value not in result.text
