"""The ACP agent: the methods an editor calls, and :func:`serve`, which runs them on stdio.

Sessions live in one task group for the life of the process; each is an
:class:`~codebot_mcp.cli.acp.acp_session.AcpSession`. stdout carries only protocol messages: the
protocol gets its own copies of stdin and stdout, and fd 1 then points at stderr, so nothing
printed (a warning, a child process's output) can break a message.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from typing import TYPE_CHECKING, Any

import anyio
from acp import PROTOCOL_VERSION, RequestError
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SetSessionModeResponse,
)

from codebot_mcp.cli.acp.acp_session import (
    AcpSession,
    Capabilities,
    mode_state,
    request_error,
    session_globals,
    session_options,
)
from codebot_mcp.cli.acp.bridge import client_servers
from codebot_mcp.core import __version__

if TYPE_CHECKING:
    from codebot_mcp.cli.chat_runtime import ChatOptions
    from codebot_mcp.cli.runtime import Globals

STDIO_LIMIT_BYTES = 50 * 1024 * 1024
"""One protocol message may be this long (the library's default: prompts carry files)."""
AFTER_RESPONSE_SECONDS = 0.1
"""How long after ``session/new`` returns its updates (the commands) are sent."""
LISTED_SESSIONS = 200
"""``session/list`` answers with the newest sessions, this many at most (no paging)."""
IMAGES = True
"""``promptCapabilities.image``: a prompt's image blocks reach the model as image parts (the
same limits as ``chat --image``: ``images.max_bytes``, checked by content, downscaled)."""
_log = logging.getLogger("codebot_mcp.acp")


class CodebotAgent:
    """codebot behind ACP's agent methods (``acp.Agent``)."""

    def __init__(self, globals_: Globals, options: ChatOptions) -> None:
        self.globals = globals_
        self.options = options
        self.conn: Any = None
        self.client = Capabilities()
        self.sessions: dict[str, AcpSession] = {}
        self.tg: Any = None

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        """Capabilities: loadSession, embedded context, MCP over stdio and Streamable HTTP."""
        if client_capabilities is not None:
            fs = client_capabilities.fs
            self.client = Capabilities(
                read=bool(fs and fs.read_text_file),
                write=bool(fs and fs.write_text_file),
                terminal=bool(client_capabilities.terminal),
            )
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=IMAGES, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            agent_info=Implementation(name="codebot", title="codebot", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        """No authentication: the model's key comes from the settings or the environment."""
        return None

    async def _open(self, cwd: str, mcp_servers: Any, resume: str | None) -> AcpSession:
        globals_ = session_globals(self.globals, cwd)
        session = AcpSession(
            self.conn,
            globals_,
            session_options(self.options, resume),
            servers=client_servers(mcp_servers, globals_.cwd),
            client=self.client,
        )
        await session.open(self.tg)
        self.sessions[session.session_id] = session
        return session

    async def new_session(
        self, cwd: str, mcp_servers: Any = None, **kwargs: Any
    ) -> NewSessionResponse:
        """A new codebot session for ``cwd``; the client's servers join the settings'."""
        session = await self._open(cwd, mcp_servers, None)
        self.tg.start_soon(_after_response, session.announce_commands)
        return NewSessionResponse(session_id=session.session_id, modes=mode_state(session.mode))

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: Any = None, **kwargs: Any
    ) -> LoadSessionResponse:
        """A saved codebot session, its conversation replayed as updates first."""
        old = self.sessions.pop(session_id, None)
        if old is not None:
            await old.close()
        session = await self._open(cwd, mcp_servers, session_id)
        await session.replay()
        return LoadSessionResponse(modes=mode_state(session.mode))

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """``session/list``: codebot's saved sessions of the project of ``cwd`` (default: the
        directory ``codebot acp`` started in), newest first, at most :data:`LISTED_SESSIONS`."""
        from datetime import UTC, datetime

        from codebot_mcp.cli.runtime import load_unfiltered_settings
        from codebot_mcp.core.agent import history
        from codebot_mcp.core.errors import CodebotError

        globals_ = session_globals(self.globals, cwd) if cwd else self.globals
        try:
            settings = load_unfiltered_settings(globals_)
        except CodebotError as exc:
            raise request_error(exc) from None
        project = settings.project_root or globals_.cwd
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=saved.id,
                    cwd=str(project),
                    title=saved.title or None,
                    updated_at=datetime.fromtimestamp(saved.updated, UTC).isoformat(),
                )
                for saved in history.list_sessions(project)[:LISTED_SESSIONS]
            ]
        )

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        self._session(session_id).set_mode(mode_id)
        return SetSessionModeResponse()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        """One turn: updates stream while it runs; the stop reason ends it."""
        session = self._session(session_id)
        stop = await session.prompt(prompt_text(prompt), prompt_images(prompt))
        return PromptResponse(stop_reason=stop)  # type: ignore[arg-type]

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """``session/cancel`` (a notification): the running turn stops."""
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel()

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"message": f"no session '{session_id}'"})
        return session

    async def close_all(self) -> None:
        for session in list(self.sessions.values()):
            await session.close()
        self.sessions.clear()


async def _after_response(send: Any) -> None:
    """``send()`` once the response that names the session is out (the client drops updates
    about a session it does not know yet)."""
    await anyio.sleep(AFTER_RESPONSE_SECONDS)
    send()


def prompt_text(blocks: list[Any]) -> str:
    """The prompt's content blocks as the text the model gets: text as it is, embedded
    resources (the editor's selections, files) as ``<context>`` blocks, links by their URI."""
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if isinstance(text, str):
                parts.append(f'<context uri="{resource.uri}">\n{text}\n</context>')
            else:
                parts.append(f"[attached: {resource.uri} (binary, not shown)]")
        elif kind == "resource_link":
            parts.append(f"[{block.name}]({block.uri})")
        elif kind == "audio":
            parts.append("[an audio clip was attached; codebot cannot pass it to the model]")
    return "\n\n".join(p for p in parts if p)


def prompt_images(blocks: list[Any]) -> list[tuple[str, bytes]]:
    """The prompt's image blocks as (name, bytes); a block whose data is not base64 is a
    ``session/prompt`` error naming it (the bytes are checked as images by the session)."""
    import base64
    import binascii

    found: list[tuple[str, bytes]] = []
    for n, block in enumerate(blocks, start=1):
        if getattr(block, "type", None) != "image":
            continue
        name = getattr(block, "uri", None) or f"image {n} of the prompt"
        try:
            found.append((str(name), base64.b64decode(block.data, validate=True)))
        except (binascii.Error, ValueError, TypeError) as exc:
            raise RequestError.invalid_params(
                {"message": f"{name}: its data is not base64 ({exc})"}
            ) from exc
    return found


async def _stdio() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """The protocol's own stdin and stdout; fd 0 becomes /dev/null and fd 1 stderr.

    Pipes (an editor's) are read and written by the event loop; anything else (a file, a
    terminal the loop cannot watch) by a thread, as the library does on Windows."""
    from acp.stdio import _WritePipeProtocol

    loop = asyncio.get_running_loop()
    proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
    proto_out = os.fdopen(os.dup(1), "wb", buffering=0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdout.flush()
    os.dup2(2, 1)
    reader = asyncio.StreamReader(limit=STDIO_LIMIT_BYTES)
    if _pollable(proto_in):
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), proto_in)
    else:
        _feed_from_thread(loop, reader, proto_in)
    protocol = _WritePipeProtocol()
    transport: Any
    if _pollable(proto_out):
        transport, _ = await loop.connect_write_pipe(lambda: protocol, proto_out)
    else:
        transport = _FileTransport(proto_out)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, writer


def _pollable(stream: Any) -> bool:
    """A pipe or a socket: what the event loop can wait on (not a file, a terminal or
    /dev/null, which ``epoll`` cannot watch)."""
    import stat

    mode = os.fstat(stream.fileno()).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _feed_from_thread(loop: Any, reader: asyncio.StreamReader, source: Any) -> None:
    """Read ``source`` line by line in a daemon thread into ``reader``."""
    import threading

    def pump() -> None:
        try:
            while line := source.readline():
                loop.call_soon_threadsafe(reader.feed_data, line)
        finally:
            loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=pump, name="acp-stdin", daemon=True).start()


class _FileTransport(asyncio.WriteTransport):
    """Writes straight to a file that is not a pipe (each message is one small write)."""

    def __init__(self, target: Any) -> None:
        super().__init__()
        self._target = target
        self._closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._closing:
            self._target.write(bytes(data))

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True

    def can_write_eof(self) -> bool:
        return False


async def serve(globals_: Globals, options: ChatOptions) -> int:
    """Serve ACP on stdin/stdout until the client closes stdin; 0."""
    from acp import run_agent

    reader, writer = await _stdio()
    agent = CodebotAgent(globals_, options)
    async with anyio.create_task_group() as tg:
        agent.tg = tg
        try:
            await run_agent(agent, writer, reader)  # type: ignore[arg-type]  # acp.Agent is a Protocol of every method; codebot implements the ones it advertises
        finally:
            with anyio.CancelScope(shield=True):
                await agent.close_all()
            tg.cancel_scope.cancel()
    return 0
