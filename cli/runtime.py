"""The command runtime: global options, settings with trust applied, servers selected and
started. Every command and the chat (:mod:`cli.chat_runtime`) build on it; it calls into none
of them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from codebot_mcp.cli.signals import (
    sigint_cancels as sigint_cancels,
)  # re-exported: chat and the REPL
from codebot_mcp.core.errors import SettingsError, UsageError

if TYPE_CHECKING:
    # Settings and trust load only when a command runs: `codebot --help` stays light.

    from codebot_mcp.core.agent.sampling import Sampler
    from codebot_mcp.core.config import trust
    from codebot_mcp.core.config.effective import Effective
    from codebot_mcp.core.config.servers import ServerConfig
    from codebot_mcp.core.config.settings import Settings
    from codebot_mcp.core.tools.useragent import UserAgent
    from codebot_mcp.mcpbridge.auth import LoginOptions
    from codebot_mcp.mcpbridge.connection.features import ProgressHook
    from codebot_mcp.mcpbridge.connection.manager import Manager
    from codebot_mcp.mcpbridge.connection.taskpolicy import TaskJournal
    from codebot_mcp.mcpbridge.tools.tool_pins import Pins
    from codebot_mcp.mcpbridge.transport.process import Prelaunched

    TrustPrompt = Callable[[trust.TrustCheck], Awaitable[bool]]
    """Asks the user whether to trust the project's servers (the REPL supplies one)."""


@dataclass(frozen=True, slots=True)
class Globals:
    """Options of the root command, shared by every subcommand."""

    cwd: Path
    debug: bool = False
    trust_project: bool = False
    model: str | None = None
    """``--model`` given as a global option (``chat --model`` beats it)."""
    base_url: str | None = None
    """``--base-url`` given as a global option (``chat --base-url`` beats it)."""


def load_unfiltered_settings(globals_: Globals) -> Settings:
    """The settings as the files write them, **before trust** (raises ``SettingsError``).

    Only for showing what trust holds back (``mcp get``, doctor's report, the trust review,
    the chat's extensions review) and for editing the files; everything that runs or connects
    uses :func:`load_effective`. Every secret the settings name (header and env values, the
    API key) is handed to the process-wide redactor, so no log line or message can print it;
    warnings are printed once.
    """
    from codebot_mcp.cli import render
    from codebot_mcp.core.config import effective
    from codebot_mcp.core.config import settings as settings_mod

    settings = settings_mod.load_unfiltered(globals_.cwd)
    render.REDACTOR.add(effective.secrets_of(settings))
    for warning in effective.warnings_of(settings):
        render.warn_once(warning)
    return settings


def load_effective(globals_: Globals, *, warn: bool = True) -> Effective:
    """The settings every command runs with: trust applied once, by
    :func:`core.config.effective.apply` (raises ``SettingsError``).

    With ``warn``, an untrusted project's skipped servers and settings are named on stderr
    with the fixes (non-interactive use; the REPL asks instead).
    """
    return apply_trust(globals_, load_unfiltered_settings(globals_), warn=warn)


def apply_trust(globals_: Globals, settings: Settings, *, warn: bool = True) -> Effective:
    """Trust applied to settings read with :func:`load_unfiltered_settings`, with a warning
    naming what is skipped and the fixes (non-interactive use)."""
    from codebot_mcp.core.config import effective

    result = effective.apply(settings, assume_trusted=globals_.trust_project)
    if result.policy_warnings:
        from codebot_mcp.cli import render

        for line in result.policy_warnings:
            render.warn_once(line)
    if warn and result.settings.policy_removed:
        from codebot_mcp.cli import render

        for name, reason in result.settings.policy_removed.items():
            render.warn_once(f"server '{name}' is left out by the managed settings: {reason}")
    if warn and result.trust.needs_trust:
        from codebot_mcp.cli import render
        from codebot_mcp.core.config import trust

        render.warn(trust.untrusted_message(result.trust))
    return result


def require_trusted(name: str, result: trust.TrustCheck, settings: Settings) -> None:
    """:func:`core.config.effective.require_trusted`, imported when a command runs (the
    commands import this module for ``--help`` too)."""
    from codebot_mcp.core.config.effective import require_trusted as check

    check(name, result, settings)


def session_pins(settings: Settings, *, allow_drift: bool = False) -> Pins | None:
    """The lock every server of this run is checked against as it connects (``chat``, ``mcp
    call``, ``mcp list``, ``mcp serve``); None: no lock (and none required), or
    ``--allow-drift``. Raises ``LockfileError`` (exit 3) for a lock that cannot be read."""
    from codebot_mcp.mcpbridge.tools.tool_pins import settings_pins

    return settings_pins(settings, allow_drift=allow_drift)


def require_allowed(name: str, settings: Settings) -> None:
    """A server named on the command line that the managed settings removed is an error
    naming the managed file and the rule (exit 3)."""
    reason = settings.policy_removed.get(name)
    if reason is not None:
        raise SettingsError(
            f"server '{name}' is not allowed by the managed settings: {reason}",
            hint=f"{settings.managed_file} is set by whoever manages this machine; ask them "
            "to allow the server.",
        )


def select_servers(settings: Settings, names: list[str] | None) -> dict[str, ServerConfig]:
    """The named servers (all when ``names`` is empty), or a usage error naming the known ones."""
    if not names:
        return dict(settings.servers)
    for name in names:
        require_allowed(name, settings)
    unknown = [n for n in names if n not in settings.servers]
    if unknown:
        known = ", ".join(settings.servers) or "none"
        raise UsageError(
            f"unknown server '{unknown[0]}' (configured: {known})",
            hint=describe_settings_files(settings),
        )
    return {n: settings.servers[n] for n in dict.fromkeys(names)}


def with_timeout(
    servers: Mapping[str, ServerConfig], timeout: float | None
) -> dict[str, ServerConfig]:
    """Override every server's handshake and tool timeout (``--timeout``)."""
    if timeout is None:
        return dict(servers)
    check_timeout(timeout)
    return {n: replace(c, timeout=timeout, tool_timeout=timeout) for n, c in servers.items()}


def check_timeout(timeout: float) -> None:
    """``--timeout`` must be a positive, finite number of seconds (a usage error otherwise)."""
    import math

    if not math.isfinite(timeout) or timeout <= 0:
        raise UsageError(
            f"--timeout {timeout:g}: must be a positive number of seconds",
            hint="Pass e.g. --timeout 30 (seconds, not milliseconds).",
        )


def describe_settings_files(settings: Settings) -> str:
    """Where servers are configured, for hints."""
    files = [str(p) for p in (settings.global_file, settings.project_file) if p is not None]
    if not files:
        from codebot_mcp.core.config import paths

        return (
            f"No settings file found: add servers to {paths.global_settings_path()} (yours) or "
            f"{settings.cwd / paths.PROJECT_DIR / paths.SETTINGS_FILE} (the project's), e.g. "
            "with `codebot mcp add NAME -- COMMAND [ARGS]...` (--scope project for the latter)."
        )
    return (
        "Servers are configured in "
        + " and ".join(files)
        + "; `codebot mcp add NAME -- COMMAND [ARGS]...` adds one."
    )


@asynccontextmanager
async def prelaunched(
    servers: Mapping[str, ServerConfig], handed: Prelaunched | None = None
) -> AsyncIterator[Prelaunched]:
    """The stdio servers of ``servers`` launched now, before the MCP SDK is imported (they boot
    while Python imports it, and whatever else the caller prepares); pass them to
    :func:`open_manager` as ``launched``. What no client took over is stopped on exit.
    ``handed``: processes ``mcp call``'s hot path launched and handed over (not launched
    again)."""
    from codebot_mcp.mcpbridge.transport import process  # no SDK import

    async with process.prelaunch(servers, handed) as launched:
        yield launched


@asynccontextmanager
async def open_manager(
    servers: Mapping[str, ServerConfig],
    *,
    agent: UserAgent,
    prelaunch: bool | Collection[str] = True,
    login: LoginOptions | None = None,
    sampler: Sampler | None = None,
    pins: Pins | None = None,
    launched: Prelaunched | None = None,
    journal: TaskJournal | None = None,
    on_progress: ProgressHook | None = None,
    handed: Prelaunched | None = None,
) -> AsyncIterator[Manager]:
    """A manager over ``servers`` (not yet started); every server is stopped on exit.
    ``agent`` (and ``sampler``) answer the servers' requests: required, so every command
    declares the same client capabilities (servers show some tools only to clients that
    declare elicitation, sampling or roots), and sees the same tools as chat and doctor.

    With ``prelaunch`` the stdio servers' processes are launched *before* the MCP SDK is
    imported, so they boot while Python imports it (about a second of CPU each way). Without
    it, servers launch when ``start_all`` names them; given names, only those are launched early
    (``--batch``: the servers its waiting requests name). ``launched``: servers the caller
    launched already (:func:`prelaunched`; ``prelaunch`` is then not used). With ``login`` a
    server that needs authorization runs the browser flow (``--login``); without, it fails as
    "needs login". ``journal`` remembers the servers' running tasks (the chat's session log);
    ``on_progress`` is told the progress notifications of running calls. ``handed``: processes
    ``mcp call``'s hot path launched and handed over (not launched again).
    """
    if launched is not None:
        async with _managed(
            servers, launched, agent, login, sampler, pins, journal, on_progress
        ) as manager:
            yield manager
        return
    early = (
        servers
        if prelaunch is True
        else {name: c for name, c in servers.items() if prelaunch and name in prelaunch}
    )
    async with prelaunched(early, handed) as launched_now:
        async with _managed(
            servers, launched_now, agent, login, sampler, pins, journal, on_progress
        ) as manager:
            yield manager


@asynccontextmanager
async def _managed(
    servers: Mapping[str, ServerConfig],
    launched: Prelaunched,
    agent: UserAgent,
    login: LoginOptions | None,
    sampler: Sampler | None,
    pins: Pins | None,
    journal: TaskJournal | None,
    on_progress: ProgressHook | None,
) -> AsyncIterator[Manager]:
    from codebot_mcp.cli.signals import terminating
    from codebot_mcp.mcpbridge.connection.manager import (
        Manager,
    )  # imports the SDK while the servers boot
    from codebot_mcp.mcpbridge.connection.taskpolicy import TaskPolicy

    # Ctrl-C cancels a call's task (tasks/cancel); SIGTERM/SIGHUP leave it running.
    tasks = TaskPolicy(journal=journal, cancel_on_interrupt=lambda: not terminating())
    async with Manager(
        servers,
        prelaunched=launched,
        login=login,
        agent=agent,
        sampler=sampler,
        pins=pins,
        tasks=tasks,
        on_progress=on_progress,
    ) as manager:
        yield manager
