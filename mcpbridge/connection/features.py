"""What one connection does beyond tools: the requests it declares and answers, its server
log, progress, and change flags for resources and prompts.

:class:`Features` is a helper object that each :class:`~mcpbridge.connection.mcp_client.Client`
owns (``client.features``): it holds that connection's state beyond tools, and knows nothing
of the client's lifecycle. The client hands it what it needs when it makes it.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

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

from codebot_mcp.core.secrets.redact import Redactor
from codebot_mcp.core.secrets.streamscrub import StreamScrubber
from codebot_mcp.mcpbridge.transport.runlog import ServerLog, message_scrubber

if TYPE_CHECKING:
    from pathlib import Path

    from mcp import Client as SDKClient

    from codebot_mcp.core.config.servers import ServerConfig
    from codebot_mcp.core.tools.useragent import Sampling, UserAgent
    from codebot_mcp.mcpbridge.connection.contract import ServerInfo
    from codebot_mcp.mcpbridge.transport.process import ServerProcess

logger = logging.getLogger(__name__)

ProgressHook = Callable[[str, float, float | None, str | None], None]
"""Called with (server, progress, total, message) for each progress notification of a call."""
MAX_UPDATED = 1000
"""URIs remembered as updated; a server flooding updates must not grow memory."""
LISTEN_RETRY_SECONDS = (0.1, 0.5, 1.0, 2.0, 5.0)
"""Pauses before reopening a listen stream that ended, growing while it keeps ending soon
after it opened (a server closing every stream must not get a busy loop)."""
STABLE_SECONDS = 5.0
"""A stream that stayed open this long ended for a reason of its own: reopen at once."""
LISTEN_GIVE_UP = 5
"""Attempts in a row that the server refused (no acknowledgment) before codebot stops."""


class Features:
    """One connection's requests, log, progress and change flags (no lifecycle)."""

    def __init__(
        self,
        config: ServerConfig,
        redact: Redactor,
        *,
        agent: UserAgent | None,
        sampler: Sampling | None,
        process: Callable[[], ServerProcess | None],
        info: Callable[[], ServerInfo | None],
    ) -> None:
        self.config = config
        self.name = config.name
        self.redact = redact
        self.agent = agent
        """Answers elicitation, sampling and roots requests; None declares none of them."""
        self.sampler = sampler
        self._process = process
        self._info = info
        self.on_progress: ProgressHook | None = None
        self.resources_stale = False
        """``resources/list_changed`` arrived: the next resource listing is fresh."""
        self.prompts_stale = False
        self.updated: set[str] = set()
        """URIs whose ``notifications/resources/updated`` arrived since they were last read."""
        self.subscribed: set[str] = set()
        self.log_file: Path | None = None
        """The log of an HTTP server's messages (a stdio server's is its process's)."""
        self._scrubbers: dict[str, StreamScrubber] = {}
        self._resubscribe: anyio.Event | None = None
        """Set when a new resource subscription needs a new listen stream (2026-07-28)."""
        self._stream_scope: anyio.CancelScope | None = None
        """The open stream's scope: cancelled to reopen it with new subscriptions."""

    def progress_callback(self) -> Any:
        """The SDK progress callback for one call, feeding ``on_progress`` (None: none)."""
        hook = self.on_progress
        if hook is None:
            return None
        scrub = self.scrubber("progress")
        name = self.name

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            hook(name, progress, total, scrub.feed(message) if message else message)

        return progress

    def scrubber(self, stream: str) -> StreamScrubber:
        """One scrubber per stream of messages (progress, log): a secret split across two
        messages is masked too. Its secrets: the server's own and every secret of the run."""
        if stream not in self._scrubbers:
            self._scrubbers[stream] = message_scrubber(self.redact)
        return self._scrubbers[stream]

    def write_log(self, line: str) -> None:
        """One line into the server's log file (stdio: beside its stderr)."""
        process = self._process()
        if process is not None:
            process.note(line)
            return
        if self.log_file is None:  # this connection's own log, made at its first line
            from codebot_mcp.mcpbridge.transport.runlog import server_log

            self.log_file, created = server_log(self.name)
            created.close()
        with self.log_file.open("a", encoding="utf-8") as log:
            log.write(line + "\n")

    def sdk_callbacks(self) -> dict[str, Any]:
        """The SDK ``Client`` keyword arguments that declare and answer servers' requests."""
        if self.agent is None:
            return {}
        from codebot_mcp.mcpbridge.connection.requests import ServerRequests

        log = ServerLog(self.write_log, self.redact, self.config.log_level)
        requests = ServerRequests(self.name, self.agent, self.sampler, log)
        return {
            **requests.callbacks(),
            "log_level": self.config.log_level,  # 2026-07-28: the request meta asks for logs
        }

    async def set_log_level(self, session: SDKClient) -> None:
        """Handshake-era servers get ``logging/setLevel`` (2026-07-28 ones the request meta)."""
        level = self.config.log_level
        if level is None or session.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecated in 2026-07-28, current before it
            try:
                await session.session.set_logging_level(level)  # type: ignore[arg-type]
            except MCPError as exc:
                logger.debug("server %s: logging/setLevel failed: %s", self.name, exc)

    def note(self, message: Any) -> bool:
        """Mark resource and prompt changes (no I/O); True when ``message`` was one of them."""
        if isinstance(message, types.ResourceListChangedNotification):
            self.resources_stale = True
        elif isinstance(message, types.PromptListChangedNotification):
            self.prompts_stale = True
        elif isinstance(message, types.ResourceUpdatedNotification):
            self._mark_updated(message.params.uri)
        else:
            return False
        return True

    def _mark_updated(self, uri: str) -> None:
        if len(self.updated) < MAX_UPDATED:
            self.updated.add(uri)

    def resubscribe(self) -> None:
        """Reopen the listen stream with the current ``subscribed`` URIs (2026-07-28)."""
        if self._resubscribe is not None:
            self._resubscribe.set()
        if self._stream_scope is not None:
            self._stream_scope.cancel()  # the open stream ends; listen() opens the new one

    def can_subscribe(self) -> bool:
        """The server offers resource subscriptions (``resources.subscribe``)."""
        info = self._info()
        caps: dict[str, Any] = (info.capabilities if info else {}).get("resources") or {}
        return bool(caps.get("subscribe"))

    async def listen(self, session: SDKClient, on_tools: Callable[[], None]) -> None:
        """On 2026-07-28 connections, change notifications and resource updates come only on
        a listen stream. It is reopened whenever a resource is newly subscribed to, and
        whenever it ends (closed by the server or lost): the spec has no replay, so what may
        have changed meanwhile is marked stale. A server that refuses the stream
        :data:`LISTEN_GIVE_UP` times in a row is left alone."""
        if session.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return
        caps = session.server_capabilities
        wanted = {
            "tools_list_changed": bool(caps.tools and caps.tools.list_changed),
            "resources_list_changed": bool(caps.resources and caps.resources.list_changed),
            "prompts_list_changed": bool(caps.prompts and caps.prompts.list_changed),
        }
        refused = 0  # attempts in a row that never opened
        quick = 0  # streams in a row that ended soon after opening
        reopening = False
        while True:
            restart = self._resubscribe = anyio.Event()
            uris = tuple(sorted(self.subscribed)) if self.can_subscribe() else ()
            if not any(wanted.values()) and not uris:
                await restart.wait()  # nothing to listen for until something is subscribed
                continue
            opened_at: float | None = None
            try:
                with anyio.CancelScope() as self._stream_scope:
                    async with session.listen(**wanted, resource_subscriptions=uris) as sub:  # type: ignore[arg-type]
                        opened_at = anyio.current_time()
                        if reopening:
                            self._missed(wanted, uris, on_tools)
                        async for event in sub:
                            self._on_event(event, on_tools)
            except ListenNotSupportedError:
                return
            except Exception as exc:  # boundary: a lost stream never ends the connection
                logger.debug("server %s: listen stream ended: %s", self.name, exc)
            finally:
                self._stream_scope = None
            if restart.is_set():
                reopening = opened_at is not None or reopening
                continue  # a new subscription: reopen at once with it
            refused = 0 if opened_at is not None else refused + 1
            if refused >= LISTEN_GIVE_UP:
                logger.debug("server %s: listen refused %d times; not reopened", self.name, refused)
                return
            stable = opened_at is not None and anyio.current_time() - opened_at >= STABLE_SECONDS
            quick = 0 if stable else quick + 1
            reopening = reopening or opened_at is not None
            pause = LISTEN_RETRY_SECONDS[min(quick, len(LISTEN_RETRY_SECONDS) - 1)]
            with anyio.move_on_after(pause):
                await restart.wait()

    def _missed(
        self, wanted: dict[str, bool], uris: tuple[str, ...], on_tools: Callable[[], None]
    ) -> None:
        """After a reopened stream: whatever it would have said meanwhile may have happened."""
        if wanted["tools_list_changed"]:
            on_tools()
        if wanted["resources_list_changed"]:
            self.resources_stale = True
        if wanted["prompts_list_changed"]:
            self.prompts_stale = True
        for uri in uris:
            self._mark_updated(uri)

    def _on_event(self, event: Any, on_tools: Callable[[], None]) -> None:
        """Mark state for one listen event (no I/O)."""
        if isinstance(event, ResourcesListChanged):
            self.resources_stale = True
        elif isinstance(event, PromptsListChanged):
            self.prompts_stale = True
        elif isinstance(event, ResourceUpdated):
            self._mark_updated(event.uri)
        else:
            on_tools()


async def roots_changed(sessions: list[tuple[str, SDKClient]]) -> None:
    """Send ``notifications/roots/list_changed`` to the handshake-era servers among
    ``sessions`` (2026-07-28 servers ask for the roots with each request that needs them)."""
    for name, session in sessions:
        if session.protocol_version in MODERN_PROTOCOL_VERSIONS:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecated in 2026-07-28, current before it
            try:
                await session.session.send_roots_list_changed()
            except Exception as exc:  # boundary: a notification is best-effort
                logger.debug("server %s: roots/list_changed not sent: %s", name, exc)
