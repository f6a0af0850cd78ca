"""The stdio transport over a :class:`~mcpbridge.process.ServerProcess`.

Like the SDK's ``stdio_client`` (newline-delimited JSON-RPC on stdin/stdout), but over a process
we launched ourselves, which lets the launch overlap the SDK import, caps the server's stderr
log, and bounds the size of one message: a line over ``MAX_MESSAGE_BYTES`` is dropped and, when
its request id can be read from its start, answered with an error so the call fails at once
instead of filling memory.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from codebot_mcp.core import jsonutil
from codebot_mcp.mcpbridge._sdk import TransportStreams
from codebot_mcp.mcpbridge.transport.process import ServerProcess

logger = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 32 * 1024 * 1024
"""One message from a server may be this large; a 50 MB tool result is refused, not buffered."""
_ID_PATTERN = re.compile(rb'"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)')


def _error_for(head: bytes, message: str) -> SessionMessage | None:
    """An error answer for the request whose id starts ``head``, if one can be found."""
    if b'"method"' in head[:4096]:
        return None  # a request or notification from the server, not an answer
    match = _ID_PATTERN.search(head[:4096])
    if match is None:
        return None
    try:
        request_id = jsonutil.loads(match.group(1))
    except ValueError:
        return None
    error = types.ErrorData(code=types.INTERNAL_ERROR, message=message)
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


def _parse(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except (ValidationError, ValueError) as exc:
        # An answer we cannot read (not UTF-8, broken JSON) would leave its request waiting
        # until the timeout: answer it with an error when its id can be found.
        reply = _error_for(line, "the server's answer is not valid JSON-RPC (not UTF-8 or JSON)")
        if reply is not None:
            return reply
        logger.debug("ignoring a line that is not JSON-RPC: %.200r", line)
        return exc


class _LineSplitter:
    """Newline-delimited messages from stdout chunks, each at most ``MAX_MESSAGE_BYTES``."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._dropped = 0  # > 0 while skipping the rest of an oversized line

    def feed(self, chunk: bytes) -> list[SessionMessage | Exception]:
        out: list[SessionMessage | Exception] = []
        while chunk:
            newline = chunk.find(b"\n")
            part, chunk = (chunk, b"") if newline < 0 else (chunk[:newline], chunk[newline + 1 :])
            if self._dropped:
                self._dropped += len(part)
            else:
                self._buffer += part
                if len(self._buffer) > MAX_MESSAGE_BYTES:
                    size = len(self._buffer)
                    reply = _error_for(
                        bytes(self._buffer[:4096]),
                        f"the server's answer is larger than {MAX_MESSAGE_BYTES // 2**20} MB "
                        f"(at least {size // 2**20} MB) and was dropped",
                    )
                    if reply is not None:
                        out.append(reply)
                    self._dropped = size
                    self._buffer.clear()
            if newline >= 0:
                if not self._dropped and self._buffer.strip():
                    out.append(_parse(bytes(self._buffer)))
                self._buffer.clear()
                self._dropped = 0
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
        lines = _LineSplitter()
        async with to_session:
            try:
                with suppress(
                    anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError
                ):
                    while True:
                        for message in lines.feed(await stdout.receive()):
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
