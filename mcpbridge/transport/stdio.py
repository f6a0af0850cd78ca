"""The stdio transport over a :class:`~mcpbridge.transport.process.ServerProcess`.

Like the SDK's ``stdio_client`` (newline-delimited JSON-RPC on stdin/stdout), but over a process
we launched ourselves, which lets the launch overlap the SDK import, caps the server's stderr
log, and bounds the size of one message: the framing of :mod:`.wire` (the hot path's too)
drops a line over ``MAX_MESSAGE_BYTES`` and, when its request id can be read from its start,
answers it with an error so the call fails at once instead of filling memory.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from codebot_mcp.mcpbridge._sdk import TransportStreams
from codebot_mcp.mcpbridge.transport import wire
from codebot_mcp.mcpbridge.transport.process import ServerProcess
from codebot_mcp.mcpbridge.transport.wire import MAX_MESSAGE_BYTES

__all__ = ["MAX_MESSAGE_BYTES", "stdio_transport"]

logger = logging.getLogger(__name__)


def _error(request_id: wire.RequestId, message: str) -> SessionMessage:
    answer = types.JSONRPCError.model_validate(wire.error_answer(request_id, message))
    return SessionMessage(answer)


def _parse(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except (ValidationError, ValueError) as exc:
        # An answer we cannot read (not UTF-8, broken JSON) would leave its request waiting
        # until the timeout: answer it with an error when its id can be found.
        request_id = wire.answer_id(line)
        if request_id is not None:
            return _error(request_id, wire.UNREADABLE)
        logger.debug("ignoring a line that is not JSON-RPC: %.200r", line)
        return exc


def _messages(lines: wire.LineFramer, chunk: bytes) -> list[SessionMessage | Exception]:
    out: list[SessionMessage | Exception] = []
    for line in lines.feed(chunk):
        if isinstance(line, wire.Oversized):
            if line.request_id is not None:
                out.append(_error(line.request_id, line.message))
        else:
            out.append(_parse(line))
    return out


@asynccontextmanager
async def stdio_transport(server: ServerProcess) -> AsyncIterator[TransportStreams]:
    """Streams of ``SessionMessage`` to and from a launched server; stops it on exit."""
    process = server.process
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    to_session, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, from_session = anyio.create_memory_object_stream[SessionMessage](0)

    async def read_stdout() -> None:
        lines = wire.LineFramer()
        async with to_session:
            try:
                with suppress(
                    anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError
                ):
                    while True:
                        for message in _messages(lines, await stdout.receive()):
                            await to_session.send(message)
            finally:
                server.closed.set()

    async def write_stdin() -> None:
        async with from_session:
            try:
                async for message in from_session:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await stdin.send(data.encode() + b"\n")
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                await to_session.aclose()

    async with anyio.create_task_group() as tg:
        tg.start_soon(server.pump_stderr)
        tg.start_soon(read_stdout)
        tg.start_soon(write_stdin)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await read_stream.aclose()
                await write_stream.aclose()
                await server.stop()
            tg.cancel_scope.cancel()
