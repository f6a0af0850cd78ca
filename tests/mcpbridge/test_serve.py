"""``codebot mcp serve`` through the MCP SDK's own ``mcp.Client``, in both protocol eras (the
SDK's auto mode negotiates 2026-07-28 with us, with approvals as input rounds; ``mode="legacy"``
does the ``initialize`` handshake, with approvals as ``elicitation/create``), in two tiers.

**In this process** (``serving``, :mod:`tests.mcpbridge.serve_inproc`): the server the command
composes (``compose``, then ``build_server``), run as ``serve_stdio`` runs it, over memory
streams that carry every JSON-RPC message as a line of JSON. These prove what the server does
with a call: chat's permission rules with approvals asked of the client (both eras, checked
on the wire) or refused with the reason when it cannot be asked; "always", the denials,
``--yes`` and ``--allow`` with deny rules beating them, the project-root boundary, chat's
sandbox around ``bash``, progress, cancelling ``bash`` (both eras), chat's hooks, ``ask``
asking the client about its session's calls, and ``ask`` without a model.

**The real process** (``serving_process``: ``codebot mcp serve`` on stdio; each start costs
about a second of CPU): what is about the process. The tool listing and its truthful hints
in both eras, a stdout that carries nothing but the protocol, a cancelled ``bash`` killed
with its process group, a cancelled ``ask`` stopping its session's servers (the process's
children), and one ``ask`` end to end against the loopback model."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from tests.fakes import openai_turns as fo
from tests.fakes import zygote
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.procs import alive
from tests.helpers import children_of, server_entry, write_settings
from tests.mcpbridge.serve_inproc import MODERN, WAIT, Wire, serving

pytestmark = pytest.mark.anyio


class Asked:
    """An elicitation callback that answers ``decision`` and records each question."""

    def __init__(self, decision: str | None = "once", action: str = "accept") -> None:
        self.decision = decision
        self.action = action
        self.questions: list[types.ElicitRequestParams] = []

    async def __call__(
        self, ctx: Any, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        self.questions.append(params)
        if self.action != "accept":
            return types.ElicitResult(action=self.action)  # type: ignore[arg-type]
        content = {"decision": self.decision} if self.decision else {}
        return types.ElicitResult(action="accept", content=content)


@asynccontextmanager
async def serving_process(
    project: Path,
    *flags: str,
    mode: str = "auto",
    asked: Asked | None = None,
    forked: bool = True,
) -> AsyncIterator[Client]:
    """The SDK client connected to ``codebot --cwd PROJECT mcp serve FLAGS`` (``--sandbox
    off`` unless FLAGS say otherwise: a confined ``bash`` runs without asking, as in chat):
    a fork of :mod:`tests.fakes.zygote`, or with ``forked=False`` (a test that finds the
    process in the process table) the console script itself."""
    if "--sandbox" not in flags:
        flags = (*flags, "--sandbox", "off")
    program, *prefix = zygote.command() if forked else [str(zygote.CODEBOT)]
    params = StdioServerParameters(
        command=program,
        args=[*prefix, "--cwd", str(project), "mcp", "serve", *flags],
        env=dict(os.environ),  # CODEBOT_HOME and the trust flag of the test
        cwd=project,
    )
    with anyio.fail_after(WAIT):
        client = Client(params, mode=mode, elicitation_callback=asked)  # type: ignore[arg-type]
        async with client:
            yield client


def text(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.txt").write_text("codebot notes\n")
    write_settings(root, {})
    return root


@pytest.fixture(params=["auto", "legacy"])
def mode(request: pytest.FixtureRequest) -> str:
    """2026-07-28 (the SDK's auto mode negotiates it with us) and the initialize handshake."""
    return str(request.param)


async def test_tools_and_truthful_annotations(project: Path, mode: str) -> None:
    """The real process, both eras: what a client lists, and a read that needs no approval."""
    async with serving_process(project, mode=mode) as client:
        if mode == "legacy":
            assert client.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
            assert client.server_info is not None and client.server_info.name == "codebot"
        else:
            assert client.protocol_version == MODERN
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert list(listed) == ["read", "edit", "write", "glob", "grep", "bash", "ask"]
        for name in ("read", "glob", "grep"):
            hints = listed[name].annotations
            assert hints is not None
            assert (hints.read_only_hint, hints.destructive_hint) == (True, False), name
        for name in ("edit", "write", "bash", "ask"):
            hints = listed[name].annotations
            assert hints is not None
            assert (hints.read_only_hint, hints.destructive_hint) == (False, True), name
        assert listed["bash"].annotations.open_world_hint is True  # type: ignore[union-attr]
        assert listed["read"].annotations.open_world_hint is False  # type: ignore[union-attr]
        assert listed["ask"].input_schema["required"] == ["prompt"]
        assert client.session.instructions is not None
        assert str(project) in client.session.instructions
        # Reading needs no approval, in chat or here.
        result = await client.call_tool("read", {"path": "notes.txt"})
        assert (text(result), result.is_error) == ("     1\tcodebot notes", False)
        with pytest.raises(Exception, match="unknown tool 'nope'"):
            await client.call_tool("nope", {})


async def test_a_call_that_would_ask_asks_the_client(project: Path, mode: str) -> None:
    asked = Asked("once")
    wires: list[Wire] = []
    async with serving(project, mode=mode, asked=asked, wire=wires) as client:
        result = await client.call_tool("write", {"path": "new.txt", "content": "made\n"})
        assert not result.is_error, text(result)
        [wire] = wires
        if mode == "legacy":  # asked in the middle of the call
            assert wire.requests("server") == ["elicitation/create"]
            assert wire.requests("client").count("tools/call") == 1
        else:  # an input round: the call answers with the question, the client calls again
            assert wire.requests("server") == []
            assert wire.requests("client").count("tools/call") == 2
            assert any(
                m.get("result", {}).get("resultType") == "input_required"
                for m in wire.sent("server")
            )
        assert (project / "new.txt").read_text() == "made\n"
        [question] = asked.questions
        assert isinstance(question, types.ElicitRequestFormParams)
        assert question.message.startswith("codebot asks: may 'write' run?")
        assert "new.txt" in question.message and "(new file" in question.message  # the preview
        schema = question.requested_schema
        assert schema["required"] == ["decision"]
        choices = [o["const"] for o in schema["properties"]["decision"]["oneOf"]]
        assert choices == ["once", "always", "no"]
        assert "default" not in schema["properties"]["decision"]  # defaults must not approve
        # "once" covers one call: the next write asks again.
        await client.call_tool("write", {"path": "again.txt", "content": "x"})
        assert len(asked.questions) == 2


async def test_always_covers_the_rest_of_the_session(project: Path, mode: str) -> None:
    asked = Asked("always")
    async with serving(project, mode=mode, asked=asked) as client:
        for n in range(3):
            result = await client.call_tool("bash", {"command": f"echo run {n}"})
            assert text(result) == f"run {n}"
        assert len(asked.questions) == 1


@pytest.mark.parametrize(
    ("decision", "action"), [("no", "accept"), ("once", "decline"), (None, "accept")]
)
async def test_a_denial_runs_nothing(
    project: Path, mode: str, decision: str | None, action: str
) -> None:
    answer = Asked(decision, action)  # "no", declined, or accepted without a decision
    async with serving(project, mode=mode, asked=answer) as client:
        result = await client.call_tool("bash", {"command": "touch ran.txt"})
        assert result.is_error
        assert "Permission denied: the call to 'bash' did not run (the user denied it)" in text(
            result
        )
        assert not (project / "ran.txt").exists()
        assert len(answer.questions) == 1


async def test_refused_with_the_reason_when_the_client_cannot_be_asked(
    project: Path, mode: str
) -> None:
    async with serving(project, mode=mode) as client:  # no elicitation callback: none declared
        result = await client.call_tool("bash", {"command": "touch ran.txt"})
        assert result.is_error
        assert text(result) == (
            "codebot refused 'bash': it needs approval (execute: built-in bash: runs arbitrary "
            "shell commands), and this MCP client declared no elicitation, so it cannot be "
            "asked. Start `codebot mcp serve` with --allow 'bash' (or --yes), or add \"bash\" "
            'to "permissions": {"allow": [...]} in the settings, to let it run without asking.'
        )
        assert not (project / "ran.txt").exists()
        assert not (await client.call_tool("glob", {"pattern": "*.txt"})).is_error


async def test_yes_and_allow_work_as_in_chat(project: Path) -> None:
    async with serving(project, allow=["bash"]) as client:
        assert text(await client.call_tool("bash", {"command": "echo allowed"})) == "allowed"
        refused = await client.call_tool("write", {"path": "w.txt", "content": "x"})
        assert refused.is_error and "codebot refused 'write'" in text(refused)
    write_settings(project, {"permissions": {"deny": ["edit"]}})
    async with serving(project, yes=True) as client:
        assert not (await client.call_tool("write", {"path": "w.txt", "content": "x"})).is_error
        (project / "e.txt").write_text("old\n")
        denied = await client.call_tool(
            "edit", {"path": "e.txt", "old_string": "old", "new_string": "new"}
        )
        assert denied.is_error
        assert "denied by the settings rule 'edit'" in text(denied)  # deny beats --yes
        assert (project / "e.txt").read_text() == "old\n"


async def test_the_project_root_boundary_asks_even_for_reads(project: Path, tmp_path: Path) -> None:
    secret = tmp_path / "outside.txt"
    secret.write_text("not the project's\n")
    asked = Asked("no")
    async with serving(project, asked=asked) as client:
        result = await client.call_tool("read", {"path": str(secret)})
        assert result.is_error and "the user denied it" in text(result)
        [question] = asked.questions
        assert "outside the project root" in question.message
    async with serving(project) as client:  # nobody to ask: refused, never read
        result = await client.call_tool("read", {"path": "../outside.txt"})
        assert result.is_error and "codebot refused 'read'" in text(result)
        assert "not the project's" not in text(result)


async def test_bash_runs_in_chats_sandbox(project: Path, tmp_path: Path) -> None:
    """The served ``bash`` is chat's: confined by default (workspace-write here), it runs
    without asking and cannot write outside the project; leaving the sandbox asks."""
    outside = tmp_path / "escaped.txt"
    async with serving(project, sandbox="workspace-write") as client:
        inside = await client.call_tool("bash", {"command": "echo in > inside.txt; echo ok"})
        assert (text(inside), inside.is_error) == ("ok", False)
        assert (project / "inside.txt").read_text() == "in\n"
        escaped = await client.call_tool("bash", {"command": f"echo out > {outside}"})
        assert escaped.is_error
        assert not outside.exists()
        unconfined = await client.call_tool("bash", {"command": "true", "sandbox": False})
        assert unconfined.is_error and "codebot refused 'bash'" in text(unconfined)


async def test_bash_reports_progress(project: Path) -> None:
    seen: list[tuple[float, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, message))

    async with serving(project, yes=True) as client:
        result = await client.call_tool(
            "bash", {"command": "sleep 2.5; echo slept"}, progress_callback=progress
        )
    assert text(result) == "slept"
    assert [m for _, m in seen][:2] == ["bash: running for 1 s", "bash: running for 2 s"]
    values = [v for v, _ in seen]
    assert values == sorted(values) and len(set(values)) == len(values)  # increasing


async def _wait_until(check: Callable[[], bool], what: str, seconds: float = 20) -> None:
    with anyio.fail_after(seconds):
        while not check():  # noqa: ASYNC110 - a file or a process of another program
            await anyio.sleep(0.05)
    assert check(), what


async def test_cancelling_bash_kills_the_command(project: Path, mode: str) -> None:
    async with serving(project, yes=True, mode=mode) as client:
        await _cancel_bash(client, project)
    assert not (project / "finished").exists()


async def test_cancelling_bash_kills_the_command_of_the_process(project: Path) -> None:
    """The same over stdio: the real process gets the cancellation and kills the group."""
    async with serving_process(project, "--yes") as client:
        await _cancel_bash(client, project)
    assert not (project / "finished").exists()


async def _cancel_bash(client: Client, project: Path) -> None:
    """Cancel a running ``bash``: its command dies, and the server goes on serving."""
    pidfile = project / "pid"
    command = f"echo $$ > {pidfile}; sleep 30; touch finished"
    with anyio.move_on_after(WAIT) as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, "bash", {"command": command})
            await _wait_until(
                lambda: pidfile.exists() and pidfile.read_text().endswith("\n"), "it started"
            )
            pid = int(pidfile.read_text())
            await _wait_until(lambda: bool(children_of(pid)), "its sleep runs")
            group = [pid, *children_of(pid)]
            tg.cancel_scope.cancel()  # the SDK tells the server the call is cancelled
    assert not scope.cancelled_caught
    await _wait_until(
        lambda: not any(map(alive, group)), "the cancelled command and its sleep were killed"
    )
    # The server goes on serving.
    assert text(await client.call_tool("bash", {"command": "echo still here"})) == "still here"


@pytest.fixture
def model_project(project: Path, fake: FakeOpenAI) -> Path:
    write_settings(project, {"base_url": fake.base_url})
    return project


async def test_ask_runs_a_chat_session_and_summarizes_it(
    model_project: Path, fake: FakeOpenAI
) -> None:
    fake.queue(
        fo.tool_calls(("read", {"path": "notes.txt"})),
        fo.tool_calls(("write", {"path": "nested.txt", "content": "x"})),
        fo.text("The notes say codebot notes."),
    )
    seen: list[str] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(message or "")

    async with serving_process(model_project) as client:  # no elicitation: write is denied
        result = await client.call_tool(
            "ask", {"prompt": "what do the notes say?"}, progress_callback=progress
        )
    assert not result.is_error, text(result)
    answer, summary = text(result).split("\n\n---\n")
    assert answer == "The notes say codebot notes."
    lines = summary.splitlines()
    assert lines[0].startswith("codebot's session: 3 turns, 2 tool calls; session ")
    assert lines[1] == '- read {"path": "notes.txt"}: ok'
    assert lines[2].startswith(
        '- write {"path": "nested.txt", "content": "x"}: denied (needs approval'
    )
    assert not (model_project / "nested.txt").exists()
    structured = result.structured_content
    assert structured is not None
    assert structured["answer"] == "The notes say codebot notes."
    assert [c["outcome"] for c in structured["tool_calls"]] == ["ok", "denied"]
    assert structured["tool_calls"][0]["arguments"] == {"path": "notes.txt"}
    # The session is saved like any chat (`codebot chat --resume ID` continues it).
    sessions = Path(os.environ["CODEBOT_HOME"]) / "state" / "sessions"
    assert [p.stem for p in sessions.glob("*/*.jsonl")] == [structured["session_id"]]
    # The prompt went to the model as a chat prompt, with chat's tools.
    first = fake.bodies[0]
    assert first["messages"][-1] == {"role": "user", "content": "what do the notes say?"}
    assert {"read", "write", "bash"} <= {t["function"]["name"] for t in first["tools"]}
    assert "ask: turn 1: waiting for the model" in seen
    assert 'ask: running read {"path": "notes.txt"}' in seen


async def test_ask_asks_the_client_about_its_own_calls_when_it_can(
    model_project: Path, fake: FakeOpenAI
) -> None:
    """On a handshake-era connection the client can be asked mid-call: the nested session's
    write is asked of the MCP client, approved, and made."""
    fake.queue(
        fo.tool_calls(("write", {"path": "from_ask.txt", "content": "hi\n"})),
        fo.text("Written."),
    )
    asked = Asked("once")
    async with serving(model_project, mode="legacy", asked=asked) as client:
        result = await client.call_tool("ask", {"prompt": "write a file"})
    assert not result.is_error, text(result)
    assert (model_project / "from_ask.txt").read_text() == "hi\n"
    [question] = asked.questions
    assert question.message.startswith("codebot asks: may 'write' run?")
    assert result.structured_content is not None
    assert [c["outcome"] for c in result.structured_content["tool_calls"]] == ["ok"]


async def test_ask_without_a_model_is_a_clear_error(project: Path) -> None:
    async with serving(project) as client:
        result = await client.call_tool("ask", {"prompt": "hello"})
    assert result.is_error
    assert text(result).startswith("ask failed: ")
    assert "model" in text(result).lower()


async def test_cancelling_ask_stops_its_session_and_servers(
    model_project: Path, fake: FakeOpenAI
) -> None:
    """The model never answers; the client cancels: the nested session's MCP server (a child
    of the serve process) is stopped and the server serves on."""
    settings = json.loads((model_project / ".codebot" / "settings.json").read_text())
    settings["mcp_servers"] = {"echo": server_entry("echo")}
    write_settings(model_project, settings)
    fake.queue(fo.hang(60))
    started: list[str] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        started.append(message or "")

    async with serving_process(model_project, forked=False) as client:
        serve_pid = _server_pid(model_project)
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                lambda: client.call_tool("ask", {"prompt": "hang"}, progress_callback=progress)
            )
            await _wait_until(lambda: bool(started), "the session reached the model", WAIT)
            assert children_of(serve_pid), "the nested session started its MCP server"
            tg.cancel_scope.cancel()
        await _wait_until(lambda: not children_of(serve_pid), "the nested servers stopped")
        assert not (await client.call_tool("read", {"path": "notes.txt"})).is_error


def _server_pid(project: Path) -> int:
    """The pid of the ``codebot mcp serve`` process serving ``project``."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and str(project).encode() in argv and b"mcp" in argv:
            return int(entry.name)
    raise AssertionError("no codebot mcp serve process found")


async def test_stdout_carries_nothing_but_the_protocol(project: Path) -> None:
    """A command that writes to the terminal cannot break the stream: bash's output is the
    tool's result, and a server warning goes to stderr."""
    async with serving_process(project, "--yes") as client:
        result = await client.call_tool("bash", {"command": "echo to-stdout; echo to-stderr >&2"})
        assert text(result) == "to-stdout\nto-stderr"
        assert text(await client.call_tool("bash", {"command": "echo ok"})) == "ok"


async def test_chats_hooks_run_around_served_calls(project: Path) -> None:
    """A PreToolUse hook that blocks `write` blocks it here too, even with --yes; the hook is
    told the call as chat tells it."""
    guard = project / "guard.sh"
    guard.write_text(
        '#!/bin/sh\ncat > "$CLAUDE_PROJECT_DIR/guard.json"\necho "no writes today" >&2\nexit 2\n'
    )
    guard.chmod(0o755)
    hooks = {
        "PreToolUse": [{"matcher": "write", "hooks": [{"type": "command", "command": str(guard)}]}]
    }
    write_settings(project, {"hooks": hooks})
    async with serving(project, yes=True) as client:
        blocked = await client.call_tool("write", {"path": "w.txt", "content": "x"})
        assert blocked.is_error
        assert "blocked by a PreToolUse hook: no writes today" in text(blocked)
        assert not (project / "w.txt").exists()
        assert not (await client.call_tool("read", {"path": "notes.txt"})).is_error
    given = json.loads((project / "guard.json").read_text())
    assert given["hook_event_name"] == "PreToolUse"
    assert given["tool_name"] == "Write"  # Claude Code's names, as chat tells it
    assert given["tool_input"] == {"file_path": str(project / "w.txt"), "content": "x"}
    assert given["permission_mode"] == "bypassPermissions"  # --yes


def test_the_ask_tool_carries_its_record() -> None:
    from codebot_mcp.core.tools.base import Capability, Origin
    from codebot_mcp.mcpbridge.serve.ask import AskTool

    info = AskTool(None).info  # type: ignore[arg-type]  # the record needs no asker
    assert info.origin is Origin.SUBAGENT and info.permission.capability is Capability.EXECUTE
    assert info.permission.reason.startswith("built-in ask: ")
    assert (info.server, info.reach, info.sandbox, info.preview) == (None, None, None, None)
