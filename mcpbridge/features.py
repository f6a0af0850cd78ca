"""What one connection does beyond tools: the requests it declares and answers, its server
log, progress, and change flags for resources and prompts.

Kept apart from :mod:`mcpbridge.client` (the connection's lifecycle) so each stays small.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp import MCPError
from mcp.client.subscriptions import (
    ListenNotSupportedError,
    PromptsListChanged,
    ResourcesListChanged,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

if TYPE_CHECKING:
    from mcp import Client as SDKClient

    from mcpbridge.client import Client

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

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        hook(client.name, progress, total, message)

    return progress


def write_log(client: Client, line: str) -> None:
    """One line into the server's log file (stdio: beside its stderr)."""
    process = client.process
    if process is not None:
        process.note(line)
        return
    from core import paths

    path = paths.private_dir(paths.log_dir()) / f"{client.name}.log"
    with path.open("a", encoding="utf-8") as log:
        log.write(line + "\n")
    path.chmod(0o600)
    client.log_file = path


def sdk_callbacks(client: Client) -> dict[str, Any]:
    """The SDK ``Client`` keyword arguments that declare and answer servers' requests."""
    if client.agent is None:
        return {}
    from mcpbridge.requests import ServerRequests

    requests = ServerRequests(
        client.name,
        client.agent,
        client.sampler,
        lambda line: write_log(client, line),
        client.config.log_level,
    )
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


async def listen(client: Client, session: SDKClient, on_tools: Callable[[], None]) -> None:
    """On 2026-07-28 connections, change notifications come only on a listen stream."""
    if session.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return
    caps = session.server_capabilities
    wanted = {
        "tools_list_changed": bool(caps.tools and caps.tools.list_changed),
        "resources_list_changed": bool(caps.resources and caps.resources.list_changed),
        "prompts_list_changed": bool(caps.prompts and caps.prompts.list_changed),
    }
    if not any(wanted.values()):
        return
    try:
        async with session.listen(**wanted) as subscription:  # type: ignore[arg-type]
            async for event in subscription:
                if isinstance(event, ResourcesListChanged):
                    client.resources_stale = True
                elif isinstance(event, PromptsListChanged):
                    client.prompts_stale = True
                else:
                    on_tools()
    except (ListenNotSupportedError, MCPError, RuntimeError) as exc:
        logger.debug("server %s: listen stream ended: %s", client.name, exc)
