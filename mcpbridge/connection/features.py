"""What one connection does beyond tools: the requests it declares and answers, its server
log, progress, and change flags for resources and prompts.

Kept apart from :mod:`mcpbridge.client` (the connection's lifecycle) so each stays small.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

import anyio
import mcp_types as types
from mcp import MCPError
from mcp.client.subscriptions import (
    ListenNotSupportedError,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from codebot_mcp.core.secrets.redact import SECRETS, Redactor
from codebot_mcp.core.secrets.stream import StreamScrubber

if TYPE_CHECKING:
    from mcp import Client as SDKClient

    from codebot_mcp.mcpbridge.connection.client import Client

logger = logging.getLogger(__name__)

ProgressHook = Callable[[str, float, float | None, str | None], None]
"""Called with (server, progress, total, message) for each progress notification of a call."""
MAX_UPDATED = 1000
"""URIs remembered as updated; a server flooding updates must not grow memory."""


def progress_callback(client: Client) -> Any:
    """The SDK progress callback for one call, feeding ``client.on_progress`` (None: none)."""
    hook = client.on_progress
    if hook is None:
        return None

    scrub = scrubber(client, "progress")

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        hook(client.name, progress, total, scrub.feed(message) if message else message)

    return progress


_SCRUBBERS: WeakKeyDictionary[Client, dict[str, StreamScrubber]] = WeakKeyDictionary()


def scrubber(client: Client, stream: str) -> StreamScrubber:
    """One scrubber per server and stream of messages (progress, log): a secret split across
    two messages is masked too. Its secrets: the server's own and every secret of the run."""
    streams = _SCRUBBERS.setdefault(client, {})
    if stream not in streams:
        redactor = Redactor([*client.redact.values(), *SECRETS.values()])
        streams[stream] = StreamScrubber(redactor, urls=False, extra=client.redact)
    return streams[stream]


def write_log(client: Client, line: str) -> None:
    """One line into the server's log file (stdio: beside its stderr)."""
    process = client.process
    if process is not None:
        process.note(line)
        return
    from codebot_mcp.core.config import paths

    path = paths.private_dir(paths.log_dir()) / f"{client.name}.log"
    with path.open("a", encoding="utf-8") as log:
        log.write(line + "\n")
    path.chmod(0o600)
    client.log_file = path


def sdk_callbacks(client: Client) -> dict[str, Any]:
    """The SDK ``Client`` keyword arguments that declare and answer servers' requests."""
    if client.agent is None:
        return {}
    from codebot_mcp.mcpbridge.connection.requests import ServerRequests

    requests = ServerRequests(
        client.name,
        client.agent,
        client.sampler,
        lambda line: write_log(client, line),
        client.config.log_level,
    )
    requests.scrub_log = scrubber(client, "log").feed
    return {
        **requests.callbacks(),
        "log_level": client.config.log_level,  # 2026-07-28: the request meta asks for logs
    }


async def set_log_level(client: Client, session: SDKClient) -> None:
    """Handshake-era servers get ``logging/setLevel`` (2026-07-28 ones the request meta)."""
    level = client.config.log_level
    if level is None or session.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated in 2026-07-28, current before it
        try:
            await session.session.set_logging_level(level)  # type: ignore[arg-type]
        except MCPError as exc:
            logger.debug("server %s: logging/setLevel failed: %s", client.name, exc)


async def roots_changed(clients: list[Client]) -> None:
    """Send ``notifications/roots/list_changed`` to the handshake-era servers among
    ``clients`` (2026-07-28 servers ask for the roots with each request that needs them)."""
    for client in clients:
        session = client._session if client.connected else None  # pyright: ignore[reportPrivateUsage]
        if session is None or session.protocol_version in MODERN_PROTOCOL_VERSIONS:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecated in 2026-07-28, current before it
            try:
                await session.session.send_roots_list_changed()
            except Exception as exc:  # boundary: a notification is best-effort
                logger.debug("server %s: roots/list_changed not sent: %s", client.name, exc)


def note(client: Client, message: Any) -> bool:
    """Mark resource and prompt changes (no I/O); True when ``message`` was one of them."""
    if isinstance(message, types.ResourceListChangedNotification):
        client.resources_stale = True
    elif isinstance(message, types.PromptListChangedNotification):
        client.prompts_stale = True
    elif isinstance(message, types.ResourceUpdatedNotification):
        if len(client.updated) < MAX_UPDATED:
            client.updated.add(message.params.uri)
    else:
        return False
    return True


_RESUBSCRIBE: WeakKeyDictionary[Client, anyio.Event] = WeakKeyDictionary()
"""Per 2026-07-28 connection: set when a new resource subscription needs a new listen stream."""


def resubscribe(client: Client) -> None:
    """Reopen ``client``'s listen stream with its current ``subscribed`` URIs (2026-07-28)."""
    event = _RESUBSCRIBE.get(client)
    if event is not None:
        event.set()


def can_subscribe(client: Client) -> bool:
    """The server offers resource subscriptions (``resources.subscribe``)."""
    caps: dict[str, Any] = (client.info.capabilities if client.info else {}).get("resources") or {}
    return bool(caps.get("subscribe"))


async def listen(client: Client, session: SDKClient, on_tools: Callable[[], None]) -> None:
    """On 2026-07-28 connections, change notifications and resource updates come only on a
    listen stream; it is reopened whenever a resource is newly subscribed to."""
    if session.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return
    caps = session.server_capabilities
    wanted = {
        "tools_list_changed": bool(caps.tools and caps.tools.list_changed),
        "resources_list_changed": bool(caps.resources and caps.resources.list_changed),
        "prompts_list_changed": bool(caps.prompts and caps.prompts.list_changed),
    }
    while True:
        restart = _RESUBSCRIBE[client] = anyio.Event()
        uris = tuple(sorted(client.subscribed)) if can_subscribe(client) else ()
        if not any(wanted.values()) and not uris:
            await restart.wait()  # nothing to listen for until something is subscribed
            continue
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_cancel_on, restart, tg.cancel_scope)
                async with session.listen(**wanted, resource_subscriptions=uris) as subscription:  # type: ignore[arg-type]
                    async for event in subscription:
                        _on_event(client, event, on_tools)
                tg.cancel_scope.cancel()
        except (ListenNotSupportedError, MCPError, RuntimeError) as exc:
            logger.debug("server %s: listen stream ended: %s", client.name, exc)
            return
        if not restart.is_set():
            return  # the server closed the stream


async def _cancel_on(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


def _on_event(client: Client, event: Any, on_tools: Callable[[], None]) -> None:
    """Mark state for one listen event (no I/O)."""
    if isinstance(event, ResourcesListChanged):
        client.resources_stale = True
    elif isinstance(event, PromptsListChanged):
        client.prompts_stale = True
    elif isinstance(event, ResourceUpdated):
        if len(client.updated) < MAX_UPDATED:
            client.updated.add(event.uri)
    else:
        on_tools()
