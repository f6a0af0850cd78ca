"""Bound the SDK's ``server/discover`` probe on stdio.

In ``mode="auto"`` the SDK first sends ``server/discover`` and waits up to 10 s for an answer
before falling back to ``initialize``. A server that silently ignores unknown methods makes
every start cost those 10 s. We cannot shorten the SDK's wait without touching its internals,
so this transport wrapper gives the probe positive evidence instead, decided by the order of
the server's answers and never by a clock: :class:`.wire.EraProbe`, the rule the hot path
(:mod:`mcpbridge.calls.lite_wire`) follows too. Right after the ``server/discover`` request it
sends the probe's two requests of its own; when the server turns out to drop requests it does
not know, it answers the probe itself with ``-32601 Method not found`` at once, and the SDK
falls back to ``initialize`` on the same connection.

Neither answer to our own two requests ever reaches the SDK.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from codebot_mcp.mcpbridge._sdk import Transport, TransportStreams
from codebot_mcp.mcpbridge.transport.wire import DISCOVER_METHOD, EraProbe


def _message(data: dict[str, Any]) -> SessionMessage:
    return SessionMessage(types.jsonrpc_message_adapter.validate_python(data, by_name=False))


class _GuardedWriter:
    """Forwards messages; sends the probe's two requests right after ``server/discover``."""

    def __init__(self, inner: Any, probe: EraProbe) -> None:
        self._inner = inner
        self._probe = probe
        self._sent = False

    async def send(self, item: SessionMessage, /) -> None:
        await self._inner.send(item)
        message = item.message
        if (
            not self._sent
            and isinstance(message, types.JSONRPCRequest)
            and message.method == DISCOVER_METHOD
        ):
            self._sent = True
            for request in self._probe.sent(message.id):
                await self._inner.send(_message(request))

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _GuardedWriter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


async def _pump(
    source: Any,
    sink: MemoryObjectSendStream[SessionMessage | Exception],
    probe: EraProbe,
) -> None:
    """Copy server messages to the SDK, as the probe's verdict on each answer says."""
    async with sink:
        async for item in source:
            if isinstance(item, SessionMessage):
                message = item.message
                if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
                    verdict = probe.seen(message.id)
                    if verdict == "answer_probe":
                        await sink.send(_message(probe.ignored_answer()))
                    if verdict != "pass":
                        continue
            await sink.send(item)


@asynccontextmanager
async def guard_discover(transport: Transport) -> AsyncIterator[TransportStreams]:
    """Wrap a stdio transport so an ignored ``server/discover`` costs milliseconds, not 10 s."""
    probe = EraProbe()
    send: MemoryObjectSendStream[SessionMessage | Exception]
    receive: MemoryObjectReceiveStream[SessionMessage | Exception]
    send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    async with transport as (read, write), anyio.create_task_group() as tg:
        tg.start_soon(_pump, read, send, probe)
        try:
            async with receive:
                yield receive, _GuardedWriter(write, probe)
        finally:
            tg.cancel_scope.cancel()
