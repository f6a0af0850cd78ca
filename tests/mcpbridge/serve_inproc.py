"""``codebot mcp serve`` served in the test's own process, to the SDK's own ``mcp.Client``.

The server is the command's: :func:`cli.commands.mcp.serve.compose` (settings with trust, the
gate, chat's sandbox, the tools, ``ask`` with its chat sessions, the hooks), then
``build_server``, run with ``server.run(read, write, server.create_initialization_options())``
as ``serve_stdio`` runs it. Between it and the client is :class:`Wire`, a ``Transport``: two
anyio memory object streams of ``SessionMessage`` each way, and every message crosses as one
line of JSON, written and read with the SDK's own calls exactly as its stdio transports write
and read a line. So both ends run their real JSON-RPC sessions (the ``initialize`` handshake
in ``mode="legacy"``, ``server/discover`` and 2026-07-28 requests in ``mode="auto"``), and
the tests can read what went over the wire. What is about the process (stdio, start-up,
exiting, its children) stays with the tests of the real ``codebot mcp serve``.

The ``Server`` is never handed to ``Client`` itself: in auto mode the SDK then dispatches to
it directly, without JSON-RPC, which no real client does.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import Client
from mcp.client.session import ElicitationFnT
from mcp.server.lowlevel import Server
from mcp.shared.message import SessionMessage
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from codebot_mcp.cli.commands.mcp.serve import compose
from codebot_mcp.cli.runtime import Globals
from codebot_mcp.mcpbridge._sdk import TransportStreams
from codebot_mcp.mcpbridge.serve import build_server

WAIT = 60  # seconds any one exchange may take on a loaded machine
MODERN = "2026-07-28"


@dataclass
class Wire:
    """A ``Transport`` to ``server`` run in this process; :attr:`lines` is what crossed it."""

    server: Server[Any]
    lines: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """Each message as ``("client" | "server", the JSON object sent)``, in order."""

    def sent(self, by: str) -> list[dict[str, Any]]:
        """The messages ``by`` ("client" or "server") sent."""
        return [message for sender, message in self.lines if sender == by]

    def requests(self, by: str) -> list[str]:
        """The methods of the requests ``by`` sent, in order."""
        return [m["method"] for m in self.sent(by) if "method" in m and "id" in m]

    def __call__(self) -> AbstractAsyncContextManager[TransportStreams]:
        """A fresh ``Transport``: the server runs while the client is connected."""
        return self._connect()

    @asynccontextmanager
    async def _connect(self) -> AsyncIterator[TransportStreams]:
        to_server, server_reads = _pipe()
        server_writes, from_server = _pipe()
        client_writes, to_carry_up = _pipe()
        to_carry_down, client_reads = _pipe()

        served = anyio.Event()

        async def serve() -> None:
            try:
                async with server_reads, server_writes:  # closing its end ends the client's
                    await self.server.run(
                        server_reads, server_writes, self.server.create_initialization_options()
                    )
            finally:
                served.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(self._carry, "client", to_carry_up, to_server)
            tg.start_soon(self._carry, "server", from_server, to_carry_down)
            tg.start_soon(serve)
            try:
                yield client_reads, client_writes
            finally:
                # The client leaves as it leaves stdio: it closes its end, and the server
                # ends on that end of input, as ``codebot mcp serve`` does.
                await client_writes.aclose()
                with anyio.fail_after(WAIT):
                    await _drained(client_reads)
                    await served.wait()

    async def _carry(
        self,
        sender: str,
        source: MemoryObjectReceiveStream[Any],
        sink: MemoryObjectSendStream[Any],
    ) -> None:
        """Move messages one way, each as a line of JSON (the stdio transports' calls)."""
        async with source, sink:
            async for message in source:
                line = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                self.lines.append((sender, json.loads(line)))
                try:
                    parsed = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except Exception as exc:  # as stdio hands a line it cannot read to the session
                    await sink.send(exc)
                    continue
                try:
                    await sink.send(SessionMessage(parsed))
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    return  # the other side has left: like a write to a closed pipe


def _pipe() -> tuple[MemoryObjectSendStream[Any], MemoryObjectReceiveStream[Any]]:
    return anyio.create_memory_object_stream[Any](0)


async def _drained(stream: MemoryObjectReceiveStream[Any]) -> None:
    """Read what the server still sends until it closes its end (the session has ended)."""
    try:
        async with stream:
            async for _ in stream:
                pass
    except anyio.ClosedResourceError:
        pass  # the client's session closed it first


@asynccontextmanager
async def serving(
    project: Path,
    *,
    mode: str = "auto",
    asked: ElicitationFnT | None = None,
    wire: list[Wire] | None = None,
    yes: bool = False,
    allow: list[str] | None = None,
    sandbox: str = "off",
) -> AsyncIterator[Client]:
    """The SDK client connected to what ``codebot --cwd PROJECT mcp serve`` serves, with the
    command's options (``--sandbox off`` unless ``sandbox`` says otherwise, as the process
    tier starts it). The connection's era is checked: 2026-07-28 in auto mode, a handshake
    version after ``initialize`` in legacy mode. ``wire`` gets the :class:`Wire` used."""
    cwd = Path(await anyio.Path(project).resolve())  # as the root command takes --cwd
    served, confined = compose(Globals(cwd=cwd), yes=yes, allow=allow, sandbox=sandbox)
    try:
        transport = Wire(build_server(served))
        if wire is not None:
            wire.append(transport)
        with anyio.fail_after(WAIT):
            client = Client(transport(), mode=mode, elicitation_callback=asked)
            async with client:
                first = transport.requests("client")[0]
                if mode == "legacy":
                    assert first == "initialize"
                    assert client.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
                else:
                    assert first == "server/discover"
                    assert client.protocol_version == MODERN
                yield client
    finally:
        confined.close()
