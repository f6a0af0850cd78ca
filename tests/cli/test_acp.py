"""``codebot acp`` driven by the official ACP client library (``agent-client-protocol``'s
client side) over a real subprocess's stdio, with the real ``openai`` client inside codebot
talking to the loopback model server: approvals, modes, the editor's fs, a cancellation
mid-turn, a server the client supplies, a session loaded again."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import acp
import pytest
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    EnvVariable,
    FileSystemCapabilities,
    HttpHeader,
    HttpMcpServer,
    McpServerStdio,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
)

from tests.fakes import openai_turns as fo
from tests.fakes import zygote
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import server_entry, write_settings
from tests.servers.util import REPO_ROOT, run_http_server, server_command

pytestmark = pytest.mark.timeout(240)  # each test is a codebot process and a conversation
TIMEOUT = 120.0
"""One test's whole conversation (a loaded machine imports the SDK slowly)."""


class Editor:
    """An ACP client as an editor is: it records every update, answers approvals with
    ``answer`` (an option id, or None: cancelled), and holds file buffers (``buffers``)."""

    def __init__(self, answer: str | None = "allow_once") -> None:
        self.answer = answer
        self.updates: list[Any] = []
        self.permissions: list[Any] = []
        self.buffers: dict[str, str] = {}
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []
        self.first_update = asyncio.Event()
        self.terminals: dict[str, Terminal] = {}
        self.killed: list[str] = []
        self.released: list[str] = []
        self.environ: dict[str, str] = dict(os.environ)
        """The editor's own environment (a terminal's ``env`` is added to it)."""

    async def request_permission(
        self, session_id: str, tool_call: Any, options: Any, **kw: Any
    ) -> Any:
        self.permissions.append((tool_call, options))
        if self.answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        ids = [o.option_id for o in options]
        if self.answer in ids:
            chosen = self.answer
        else:  # a question with options of its own (trust): the first of the answer's kind
            allow = self.answer.startswith("allow")
            chosen = next(o.option_id for o in options if o.kind.startswith("allow") == allow)
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=chosen)
        )

    async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
        self.updates.append(update)
        self.first_update.set()

    async def read_text_file(self, session_id: str, path: str, **kw: Any) -> Any:
        self.reads.append(path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        return ReadTextFileResponse(content=Path(path).read_text())  # noqa: ASYNC240 (a test editor: small files)

    async def write_text_file(self, session_id: str, path: str, content: str, **kw: Any) -> None:
        self.writes.append((path, content))
        self.buffers[path] = content
        return None

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[Any] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kw: Any,
    ) -> Any:
        """Really runs the command (as an editor's terminal would, in its own environment
        plus ``env``), and records what it was given."""
        given = {e.name: e.value for e in env or []}
        process = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd,
            env={**self.environ, **given},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        terminal = Terminal(command, list(args or []), given, cwd, output_byte_limit, process)
        terminal.pump = asyncio.create_task(terminal.read())
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = terminal
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kw: Any) -> Any:
        terminal = self.terminals[terminal_id]
        await terminal.process.wait()
        return WaitForTerminalExitResponse(**terminal.status())

    async def terminal_output(self, session_id: str, terminal_id: str, **kw: Any) -> Any:
        terminal = self.terminals[terminal_id]
        if terminal.process.returncode is not None:
            await asyncio.wait_for(terminal.pump, 5)
        status = TerminalExitStatus(**terminal.status()) if terminal.status() else None
        data = bytes(terminal.output)
        limit = terminal.limit or len(data)
        return TerminalOutputResponse(
            output=data[-limit:].decode(errors="replace"),
            truncated=len(data) > limit,
            exit_status=status,
        )

    async def kill_terminal(self, session_id: str, terminal_id: str, **kw: Any) -> None:
        self.killed.append(terminal_id)
        self.terminals[terminal_id].kill()

    async def release_terminal(self, session_id: str, terminal_id: str, **kw: Any) -> None:
        self.released.append(terminal_id)
        self.terminals[terminal_id].kill()

    def on_connect(self, conn: Any) -> None:
        pass

    def kinds(self) -> list[str]:
        return [u.session_update for u in self.updates]

    def calls(self, call_id: str) -> list[Any]:
        return [u for u in self.updates if getattr(u, "tool_call_id", None) == call_id]

    def call_ids(self) -> list[str]:
        """The ids of the calls shown, in order (the Responses API names them its own way)."""
        return [u.tool_call_id for u in self.updates if u.session_update == "tool_call"]

    def text(self) -> str:
        return "".join(
            u.content.text for u in self.updates if u.session_update == "agent_message_chunk"
        )


class Terminal:
    """A command the test editor runs for the agent (``terminal/create``): what it was
    given, and its output."""

    def __init__(
        self,
        command: str,
        args: list[str],
        env: dict[str, str],
        cwd: str | None,
        limit: int | None,
        process: asyncio.subprocess.Process,
    ) -> None:
        self.command, self.args, self.env, self.cwd, self.limit = command, args, env, cwd, limit
        self.process = process
        self.output = bytearray()
        self.pump: asyncio.Task[None] | None = None

    async def read(self) -> None:
        assert self.process.stdout is not None
        while data := await self.process.stdout.read(65536):
            self.output += data

    def status(self) -> dict[str, Any]:
        code = self.process.returncode
        if code is None:
            return {}
        return {"exit_code": code} if code >= 0 else {"signal": f"SIG{-code}"}

    def kill(self) -> None:
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)


KEY = "sk-acp-secret-0123456789abcdef"


def _env(fake: FakeOpenAI) -> dict[str, str]:
    return {**os.environ, "OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": KEY}


async def _drive(
    project: Path,
    fake: FakeOpenAI,
    editor: Editor,
    body: Callable[[Any, Any], Any],
    *,
    fs: bool = False,
    terminal: bool = False,
) -> None:
    """Start ``codebot acp`` in ``project``, initialize, and run ``body(conn, process)``;
    its stderr goes to ``project/acp-stderr.log`` (a pipe nobody reads would fill)."""
    editor.environ = _env(fake)  # codebot's environment came from the editor's
    with (project / "acp-stderr.log").open("ab") as log:
        program, *prefix = zygote.command()  # a fork: the SDK and openai already imported
        async with acp.spawn_agent_process(
            editor,
            program,
            *prefix,
            "acp",
            env=_env(fake),
            cwd=str(project),
            transport_kwargs={"stderr": log.fileno()},
        ) as (conn, process):
            await _initialized(conn, process, body, fs=fs, terminal=terminal)


async def _initialized(
    conn: Any, process: Any, body: Callable[[Any, Any], Any], *, fs: bool, terminal: bool = False
) -> None:
    caps = ClientCapabilities(
        fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs), terminal=terminal
    )
    init = await asyncio.wait_for(
        conn.initialize(protocol_version=acp.PROTOCOL_VERSION, client_capabilities=caps),
        TIMEOUT,
    )
    assert init.agent_capabilities.load_session is True
    assert init.agent_capabilities.prompt_capabilities.embedded_context is True
    assert init.agent_capabilities.prompt_capabilities.image is True
    assert init.agent_capabilities.mcp_capabilities.http is True
    await asyncio.wait_for(body(conn, process), TIMEOUT)


def test_prompt_with_approvals_modes_and_a_diff(tmp_path: Path) -> None:
    """A session/new in a relative cwd, or one whose settings are broken, is a JSON-RPC error
    saying so. A write asks the editor (allow once: written, a diff shown; reject: not written, the
    call failed); in acceptEdits the next write asks nothing; in plan the model is offered
    only the read tools. The project's custom commands are announced, and ``/name args``
    runs one."""
    (tmp_path / "a.txt").write_text("old\n")
    turns = [
        fo.tool_calls(("write", {"path": "a.txt", "content": "new\n"})),
        fo.text("wrote it"),
        fo.tool_calls(("write", {"path": "b.txt", "content": "no\n"})),
        fo.text("was denied"),
        fo.tool_calls(("write", {"path": "c.txt", "content": "auto\n"})),
        fo.text("accepted"),
        fo.text("a plan"),
    ]
    editor = Editor()

    commands = tmp_path / ".codebot" / "commands"
    commands.mkdir(parents=True)
    (commands / "shout.md").write_text(
        "---\ndescription: Say it loud\nargument-hint: [words]\n---\nSay $1 LOUDLY.\n"
    )
    broken = tmp_path / "broken"
    (broken / ".codebot").mkdir(parents=True)
    (broken / ".codebot" / "settings.json").write_text("{not json")

    async def body(conn: Any, _process: Any) -> None:
        with pytest.raises(acp.RequestError) as bad_cwd:
            await conn.new_session(cwd="relative/dir", mcp_servers=[])
        assert "absolute path" in str(bad_cwd.value.data)
        with pytest.raises(acp.RequestError) as bad_settings:
            await conn.new_session(cwd=str(broken), mcp_servers=[])
        assert "settings.json" in str(bad_settings.value)
        assert bad_settings.value.data == {"exitCode": 3}  # chat's: settings error
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        assert session.modes.current_mode_id == "default"
        assert {m.id for m in session.modes.available_modes} == {"default", "acceptEdits", "plan"}
        sid = session.session_id
        first = await conn.prompt(session_id=sid, prompt=[acp.text_block("write a")])
        assert first.stop_reason == "end_turn"
        assert (tmp_path / "a.txt").read_text() == "new\n"
        assert len(editor.permissions) == 1
        asked, options = editor.permissions[0]
        assert asked.tool_call_id == "call_1"
        assert {o.kind for o in options} == {"allow_once", "allow_always", "reject_once"}
        updates = editor.calls("call_1")
        assert [u.status for u in updates] == ["pending", "in_progress", "completed"]
        assert updates[0].session_update == "tool_call" and updates[0].kind == "edit"
        assert updates[0].locations[0].path == str(tmp_path / "a.txt")
        assert updates[0].raw_input == {"path": "a.txt", "content": "new\n"}
        diff = [c for c in updates[-1].content if c.type == "diff"]
        assert diff and diff[0].old_text == "old\n" and diff[0].new_text == "new\n"
        assert "wrote it" in editor.text()

        editor.answer = "reject"
        second = await conn.prompt(session_id=sid, prompt=[acp.text_block("write b")])
        assert second.stop_reason == "end_turn"
        assert not (tmp_path / "b.txt").exists()
        denied = editor.calls("call_2")
        assert denied[-1].status == "failed"
        assert "denied" in denied[-1].content[-1].content.text

        await conn.set_session_mode(session_id=sid, mode_id="acceptEdits")
        asked_before = len(editor.permissions)
        third = await conn.prompt(session_id=sid, prompt=[acp.text_block("write c")])
        assert third.stop_reason == "end_turn"
        assert (tmp_path / "c.txt").read_text() == "auto\n"
        assert len(editor.permissions) == asked_before  # acceptEdits: no question
        assert "current_mode_update" in editor.kinds()
        # the commands are announced once session/new's response is out, by a task of their
        # own: three quick prompts may all end before it, so wait for it (bounded)
        for _ in range(200):
            if "available_commands_update" in editor.kinds():
                break
            await asyncio.sleep(0.05)
        (announced,) = [
            u for u in editor.updates if u.session_update == "available_commands_update"
        ]
        (shout,) = announced.available_commands
        assert (shout.name, shout.description, shout.input.root.hint) == (
            "shout",
            "Say it loud",
            "[words]",
        )

        await conn.set_session_mode(session_id=sid, mode_id="plan")
        await conn.prompt(session_id=sid, prompt=[acp.text_block("/shout hello")])

    with FakeOpenAI(turns) as fake:
        asyncio.run(_drive(tmp_path, fake, editor, body))
        assert fake.bodies[-1]["messages"][-1]["content"].startswith("Say hello LOUDLY.")
        offered = [{t["function"]["name"] for t in b["tools"]} for b in fake.bodies]
        assert {"write", "edit", "bash"} <= offered[0]
        assert "read" in offered[-1] and not {"write", "edit", "bash"} & offered[-1]


def test_reads_and_edits_go_through_the_editors_buffers(tmp_path: Path) -> None:
    """With the client's fs, ``read`` sees the unsaved buffer (not the disk) and ``edit``
    writes through the editor; the disk is left to the editor. On the Responses API the
    reasoning summary streams as ``agent_thought_chunk``."""
    path = tmp_path / "notes.txt"
    path.write_text("on disk\n")
    turns = [
        fo.tool_calls(("read", {"path": "notes.txt"})),
        fo.reasoned(fo.text("read"), "Thinking about the buffer."),
        fo.tool_calls(
            ("edit", {"path": "notes.txt", "old_string": "unsaved", "new_string": "edited"})
        ),
        fo.text("edited"),
    ]
    editor = Editor(answer="allow_once")
    editor.buffers[str(path)] = "unsaved buffer\n"
    write_settings(tmp_path, {"api": "responses", "model": "o4-mini"})

    async def body(conn: Any, _process: Any) -> None:
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[acp.text_block("read it")])
        result = editor.calls(editor.call_ids()[0])[-1]
        assert result.status == "completed"
        assert "unsaved buffer" in result.content[-1].content.text
        assert "on disk" not in result.content[-1].content.text
        assert str(path) in editor.reads
        thoughts = [
            u.content.text for u in editor.updates if u.session_update == "agent_thought_chunk"
        ]
        assert "".join(thoughts) == "Thinking about the buffer."
        await conn.prompt(session_id=sid, prompt=[acp.text_block("edit it")])
        assert editor.writes == [(str(path), "edited buffer\n")]
        assert path.read_text() == "on disk\n"  # the editor owns the file
        diff = [c for c in editor.calls(editor.call_ids()[1])[-1].content if c.type == "diff"]
        assert diff[0].old_text == "unsaved buffer\n" and diff[0].new_text == "edited buffer\n"

    with FakeOpenAI(turns) as fake:
        asyncio.run(_drive(tmp_path, fake, editor, body, fs=True))


def test_an_image_in_the_prompt_reaches_the_model(tmp_path: Path) -> None:
    """An editor's image block reaches the model as an image part of the user message (its
    bytes unchanged); a block whose bytes are not an image is the prompt's error, naming it,
    and the session goes on."""
    import base64

    from tests.cli.test_images import images_in
    from tests.fakes.pngs import png

    picture = png(16, 9)
    editor = Editor()

    async def body(conn: Any, _process: Any) -> None:
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        encoded = base64.b64encode(picture).decode()
        blocks = [acp.text_block("what is this?"), acp.image_block(encoded, "image/png")]
        await conn.prompt(session_id=sid, prompt=blocks)
        with pytest.raises(acp.RequestError) as refused:
            fake_png = base64.b64encode(b"not a picture at all").decode()
            await conn.prompt(
                session_id=sid,
                prompt=[acp.image_block(fake_png, "image/png", uri="file:///shot.png")],
            )
        assert "file:///shot.png is not a PNG, JPEG, GIF or WebP image" in str(refused.value.data)
        again = await conn.prompt(session_id=sid, prompt=[acp.text_block("still there?")])
        assert again.stop_reason == "end_turn"

    with FakeOpenAI([fo.text("a small picture"), fo.text("yes")]) as fake:
        asyncio.run(_drive(tmp_path, fake, editor, body))
        user = [m for m in fake.bodies[0]["messages"] if m["role"] == "user"][-1]
        assert images_in(user) == [picture]
        assert "what is this?" in json.dumps(user)
        assert len(fake.bodies) == 2  # the refused prompt never reached the model


def test_cancel_stops_the_turn_mid_stream(tmp_path: Path) -> None:
    """``session/cancel`` while the model's stream hangs: the prompt answers ``cancelled``
    at once (not after the 30 s hang), and the session takes the next prompt (the API key
    the model echoes is masked). A cancel while ``bash`` runs a 30 s command ends the turn at
    once, the call failed. A model API error is the prompt's JSON-RPC error with
    ``chat``'s exit code; closing stdin ends the agent with 0."""
    editor = Editor()

    async def body(conn: Any, _process: Any) -> None:
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        turn = asyncio.create_task(
            conn.prompt(session_id=sid, prompt=[acp.text_block("take your time")])
        )
        await asyncio.sleep(1.0)  # the request is out, its stream hangs
        assert not turn.done()
        started = time.monotonic()
        await conn.cancel(session_id=sid)
        response = await asyncio.wait_for(turn, 10)
        assert response.stop_reason == "cancelled"
        assert time.monotonic() - started < 10
        again = await conn.prompt(session_id=sid, prompt=[acp.text_block("again")])
        assert again.stop_reason == "end_turn"
        assert "fine" in editor.text()
        assert KEY not in editor.text()  # the key the model echoed is masked

        turn = asyncio.create_task(
            conn.prompt(session_id=sid, prompt=[acp.text_block("run something long")])
        )
        while not [u for u in editor.calls("call_1") if u.status == "in_progress"]:  # noqa: ASYNC110
            await asyncio.sleep(0.05)  # bounded by the test's TIMEOUT
        started = time.monotonic()
        await conn.cancel(session_id=sid)
        response = await asyncio.wait_for(turn, 10)
        assert response.stop_reason == "cancelled"
        assert time.monotonic() - started < 10  # the 30 s command was killed
        assert editor.calls("call_1")[-1].status == "failed"
        assert not editor.terminals  # no terminal capability: bash ran in codebot's process
        with pytest.raises(acp.RequestError) as failed:
            await conn.prompt(session_id=sid, prompt=[acp.text_block("fail")])
        assert "401" in str(failed.value) or "authentication" in str(failed.value).lower()
        assert failed.value.data == {"exitCode": 5}  # chat's exit code: model API error
        codes.append(_process)

    codes: list[Any] = []
    turns = [
        fo.hang(30),
        fo.text(f"fine {KEY}"),
        fo.tool_calls(("bash", {"command": "sleep 30"})),
        fo.error(401, "bad key"),
    ]
    with FakeOpenAI(turns) as fake:
        asyncio.run(_drive(tmp_path, fake, editor, body))
    assert codes[0].returncode == 0  # the editor closed stdin: exit 0


def _sandbox_works() -> bool:
    from codebot_mcp.core.sandbox.confinement import support

    return sys.platform.startswith("linux") and not support().missing(network=False)


@pytest.mark.skipif(not _sandbox_works(), reason="the sandbox is unavailable here")
def test_bash_runs_in_the_editors_terminal_still_confined(tmp_path: Path) -> None:
    """With the client's ``terminal``, a ``bash`` call is a ``terminal/create`` whose argv is
    the exec helper with the sandbox's arguments, then ``bash -c``, whose env is the minimal
    one (the API key emptied even though the editor's own environment has it), in the
    project; the call's content carries the terminal and its output reaches the model. A
    confined write outside the project is refused though the editor ran it; with
    ``"sandbox": false`` (approved) the argv is plain ``bash -c``. A timeout and a cancel
    mid-command kill the terminal and release it."""
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    turns = [
        fo.tool_calls(("bash", {"command": 'echo "key:[$OPENAI_API_KEY] at $(pwd)"'})),
        fo.text("ran"),
        fo.tool_calls(("bash", {"command": f"echo x > {outside}"})),
        fo.text("refused"),
        fo.tool_calls(("bash", {"command": "echo plain", "sandbox": False})),
        fo.text("plain"),
        fo.tool_calls(("bash", {"command": "sleep 30", "timeout": 1})),
        fo.text("too slow"),
        fo.tool_calls(("bash", {"command": "sleep 30"})),
    ]
    editor = Editor(answer="allow_once")

    async def body(conn: Any, _process: Any) -> None:
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[acp.text_block("run it")])
        first = editor.terminals["term-1"]
        assert Path(first.command).name.startswith("codebot-exec")
        assert "--sandbox" in first.args and "--parent" not in first.args
        assert first.args[-4:] == ["--", "bash", "-c", 'echo "key:[$OPENAI_API_KEY] at $(pwd)"']
        assert first.cwd == str(tmp_path)
        assert first.limit is not None and 0 < first.limit <= 30_000
        assert first.env["OPENAI_API_KEY"] == "" and KEY not in json.dumps(first.env)
        assert "PATH" in first.env and "TMPDIR" in first.env  # the sandbox's private one
        updates = editor.calls(editor.call_ids()[0])
        shown = [c.terminal_id for u in updates for c in u.content or [] if c.type == "terminal"]
        assert shown and set(shown) == {"term-1"}  # live while it ran, and in the result
        assert updates[-1].status == "completed"
        assert editor.released == ["term-1"] and editor.killed == []

        await conn.prompt(session_id=sid, prompt=[acp.text_block("write outside")])
        assert Path(editor.terminals["term-2"].command).name.startswith("codebot-exec")
        assert not outside.exists()  # the editor ran it, the sandbox refused it
        assert editor.calls(editor.call_ids()[1])[-1].status == "failed"

        await conn.prompt(session_id=sid, prompt=[acp.text_block("unconfined")])
        plain = editor.terminals["term-3"]
        assert [plain.command, *plain.args] == ["bash", "-c", "echo plain"]
        assert len(editor.permissions) == 1  # asked: outside the sandbox

        await conn.prompt(session_id=sid, prompt=[acp.text_block("too slow")])
        assert editor.killed == ["term-4"] and "term-4" in editor.released  # the timeout

        turn = asyncio.create_task(conn.prompt(session_id=sid, prompt=[acp.text_block("long")]))
        while "term-5" not in editor.terminals:  # noqa: ASYNC110
            await asyncio.sleep(0.05)  # bounded by the test's TIMEOUT
        started = time.monotonic()
        await conn.cancel(session_id=sid)
        assert (await asyncio.wait_for(turn, 10)).stop_reason == "cancelled"
        assert time.monotonic() - started < 10
        assert "term-5" in editor.killed and "term-5" in editor.released
        await asyncio.wait_for(editor.terminals["term-5"].process.wait(), 5)

    with FakeOpenAI(turns) as fake:
        asyncio.run(_drive(tmp_path, fake, editor, body, terminal=True))
    tools = [m["content"] for m in fake.bodies[-1]["messages"] if m["role"] == "tool"]
    assert tools[0] == f"key:[] at {tmp_path}"  # the output reached the model
    assert "sandbox refused" in tools[1], tools[1]  # the refusal note, as in chat
    assert tools[2] == "plain"
    assert "[timed out after 1s" in tools[3]


def test_an_mcp_server_the_client_supplies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stdio server in ``session/new``'s ``mcpServers`` is connected like the settings'
    servers, and so is a Streamable HTTP one with its header; the model calls their tools, the
    editor sees the calls and their results. One the
    managed settings deny is left out, as in ``chat``. A settings server that takes 300 s to
    start holds up neither ``session/new`` nor the prompt beyond its 1 s handshake timeout."""
    write_settings(
        tmp_path, {"mcp_servers": {"slow": server_entry("slow_start", "--delay", "300", timeout=1)}}
    )
    managed = tmp_path / "managed-settings.json"
    managed.write_text(json.dumps({"denied_mcp_servers": [{"name": "blocked"}]}))
    monkeypatch.setenv("CODEBOT_MANAGED_SETTINGS", str(managed))
    command, args = server_command("echo")
    path = [EnvVariable(name="PYTHONPATH", value=str(REPO_ROOT))]
    server = McpServerStdio(name="editorecho", command=command, args=args, env=path)
    blocked = McpServerStdio(name="blocked", command=command, args=args, env=path)
    token = "tok-acp-http-0123456789"
    turns = [
        fo.tool_calls(("mcp__editorecho__echo", {"text": "through the editor's server"})),
        fo.tool_calls(("mcp__remote__whoami", {})),
        fo.text("echoed"),
    ]
    editor = Editor(answer="allow_once")

    async def body(conn: Any, _process: Any) -> None:
        started = time.monotonic()
        servers = [server, blocked, remote]
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=servers)).session_id
        assert time.monotonic() - started < 60  # a loaded machine imports slowly
        response = await conn.prompt(session_id=sid, prompt=[acp.text_block("echo")])
        assert time.monotonic() - started < 80  # far from the slow server's 300 s
        assert response.stop_reason == "end_turn"
        updates = editor.calls("call_1")
        assert updates[0].title == "editorecho: echo", updates[0]  # the server's tool
        assert updates[-1].status == "completed"
        assert "through the editor's server" in updates[-1].content[-1].content.text
        over_http = editor.calls("call_2")
        assert over_http[0].title == "remote: whoami" and over_http[-1].status == "completed"
        assert over_http[-1].content[-1].content.text.strip() == "http"

    with FakeOpenAI(turns) as fake, run_http_server("--token", token) as url:
        auth = [HttpHeader(name="Authorization", value=f"Bearer {token}")]
        remote = HttpMcpServer(type="http", name="remote", url=url, headers=auth)
        asyncio.run(_drive(tmp_path, fake, editor, body))
        tools = [t["function"]["name"] for t in fake.bodies[0]["tools"]]
        assert "mcp__editorecho__echo" in tools
        assert not [t for t in tools if t.startswith("mcp__blocked__")]
    log = (tmp_path / "acp-stderr.log").read_text()
    assert "left out by the managed settings" in log and token not in log


def test_a_saved_session_loads_with_its_history_replayed(tmp_path: Path) -> None:
    """``session/load`` of a session a first process saved: the conversation comes back as
    updates before the response (the tool call too), and the next prompt carries it to the
    model; ``session/list`` lists it, an unknown id is an error. The todo list the model
    wrote went to the editor as the ``plan``."""
    editor = Editor()
    saved: list[str] = []

    async def first(conn: Any, _process: Any) -> None:
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[acp.text_block("remember the word kiwi")])
        saved.append(sid)
        plans = [u for u in editor.updates if u.session_update == "plan"]
        assert [(e.content, e.status) for e in plans[-1].entries] == [
            ("remember kiwi", "in_progress"),
            ("answer", "pending"),
        ]

    loader = Editor()

    async def second(conn: Any, _process: Any) -> None:
        listed = await conn.list_sessions(cwd=str(tmp_path))
        assert [(i.session_id, i.title) for i in listed.sessions] == [
            (saved[0], "remember the word kiwi")
        ]
        with pytest.raises(acp.RequestError) as unknown:
            await conn.load_session(cwd=str(tmp_path), session_id="no-such", mcp_servers=[])
        assert unknown.value.data == {"exitCode": 2}
        await conn.load_session(cwd=str(tmp_path), session_id=saved[0], mcp_servers=[])
        kinds = loader.kinds()
        assert kinds[:4] == [
            "user_message_chunk",
            "tool_call",
            "tool_call_update",
            "agent_message_chunk",
        ]
        assert loader.updates[0].content.text == "remember the word kiwi"
        assert loader.updates[1].title == "todo_write" and loader.updates[1].status == "completed"
        assert "noted" in loader.updates[3].content.text
        replayed = len(loader.updates)
        await conn.prompt(session_id=saved[0], prompt=[acp.text_block("which word?")])
        assert len(loader.updates) > replayed

    todos = [
        {"content": "remember kiwi", "status": "in_progress"},
        {"content": "answer", "status": "pending"},
    ]
    turns = [fo.tool_calls(("todo_write", {"todos": todos})), fo.text("noted"), fo.text("kiwi")]
    with FakeOpenAI(turns) as fake:
        asyncio.run(_drive(tmp_path, fake, editor, first))
        asyncio.run(_drive(tmp_path, fake, loader, second))
        last = fake.bodies[-1]["messages"]
        assert any("kiwi" in str(m.get("content")) for m in last if m["role"] == "user")


def test_stdout_carries_only_protocol_messages(tmp_path: Path) -> None:
    """Raw JSON-RPC lines over real pipes: a settings warning printed while a session starts
    goes to stderr, stdout holds nothing but the two responses, and closing stdin ends the
    agent with 0."""
    import subprocess

    write_settings(tmp_path, {"bogus_key": 1})
    requests = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/new",
            "params": {"cwd": str(tmp_path), "mcpServers": []},
        },
    ]
    with FakeOpenAI([]) as fake, (tmp_path / "stderr.log").open("w+") as err:
        proc = subprocess.Popen(
            [*zygote.command(), "acp"],
            cwd=tmp_path,
            env=_env(fake),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b"".join(json.dumps(r).encode() + b"\n" for r in requests))
        proc.stdin.flush()
        first = json.loads(proc.stdout.readline())
        second = json.loads(proc.stdout.readline())
        proc.stdin.close()
        rest = proc.stdout.read()
        proc.stdout.close()
        assert proc.wait(timeout=TIMEOUT) == 0
        err.seek(0)
        stderr = err.read()
    assert first["id"] == 0 and first["result"]["protocolVersion"] == 1
    assert second["id"] == 1 and second["result"]["sessionId"]
    for line in rest.splitlines():  # only notifications may follow (available commands)
        assert json.loads(line)["jsonrpc"] == "2.0"
    assert "bogus_key" in stderr


def test_an_untrusted_project_asks_the_editor_at_the_first_prompt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The project's own server is skipped until trusted: the first prompt of a session asks
    the editor; declined, the model is not offered its tools; trusted (in a second session),
    it starts and the model is offered them."""
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")
    write_settings(tmp_path, {"mcp_servers": {"echo": server_entry("echo")}})
    editor = Editor(answer="reject")

    async def body(conn: Any, _process: Any) -> None:
        first = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        await conn.prompt(session_id=first, prompt=[acp.text_block("hi")])
        asked, options = editor.permissions[-1]
        assert asked.title.startswith("Trust the project")
        assert "echo" in asked.content[0].content.text
        assert {o.option_id for o in options} == {"trust", "skip"}
        await conn.prompt(session_id=first, prompt=[acp.text_block("again")])
        assert len(editor.permissions) == 1  # asked once per session
        editor.answer = "allow_once"
        second = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        await conn.prompt(session_id=second, prompt=[acp.text_block("hi")])
        assert len(editor.permissions) == 2

    with FakeOpenAI([fo.text("one"), fo.text("two"), fo.text("three")]) as fake:
        asyncio.run(_drive(tmp_path, fake, editor, body))
        offered = [{t["function"]["name"] for t in b["tools"]} for b in fake.bodies]
    assert not [n for n in offered[0] | offered[1] if n.startswith("mcp__echo__")]
    assert "mcp__echo__echo" in offered[2]
