"""The composition root: settings → manager, and for chat → session → gate → agent.

Commands (``cli/commands/``) and the REPL (``cli/repl/``) call into this module; it calls into
none of them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from codebot_mcp.cli.signals import (
    sigint_cancels as sigint_cancels,
)  # re-exported: chat and the REPL
from codebot_mcp.core.errors import ModelError, SettingsError, UsageError

if TYPE_CHECKING:
    # Settings and trust load only when a command runs: `codebot --help` stays light.

    from codebot_mcp.core.agent.history import SessionLog
    from codebot_mcp.core.agent.loop import Agent
    from codebot_mcp.core.agent.permissions import Approver, PermissionGate
    from codebot_mcp.core.agent.sampling import Sampler
    from codebot_mcp.core.agent.session import Session
    from codebot_mcp.core.config import trust
    from codebot_mcp.core.config.servers import ServerConfig
    from codebot_mcp.core.config.settings import Settings
    from codebot_mcp.core.model.config import ModelConfig
    from codebot_mcp.core.tools.base import Tool
    from codebot_mcp.core.tools.useragent import UserAgent
    from codebot_mcp.mcpbridge.auth import LoginOptions
    from codebot_mcp.mcpbridge.connection.manager import Manager

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


def load_settings(globals_: Globals) -> Settings:
    """Read the settings for the working directory (raises ``SettingsError``).

    Every secret the settings name (header and env values, the API key) is handed to the
    process-wide redactor, so no log line or message can print it.
    """
    import os

    from codebot_mcp.cli import render
    from codebot_mcp.core.config import settings as settings_mod
    from codebot_mcp.core.secrets.redact import entry_secrets

    settings = settings_mod.load(globals_.cwd)
    for config in settings.servers.values():
        render.REDACTOR.add(entry_secrets(config))
        render.REDACTOR.add(config.oauth.secrets)
    for warning in settings.warnings:
        render.warn_once(str(warning))
    for config in settings.servers.values():
        for entry_warning in config.warnings:
            render.warn_once(f"server '{config.name}' in {config.source}: {entry_warning}")
    for name in (
        settings.api_key_env,
        settings.untrusted_fallback.get("api_key_env"),
        "OPENAI_API_KEY",
    ):
        if name and os.environ.get(name):
            render.REDACTOR.add([os.environ[name]])
    return settings


def apply_trust(globals_: Globals, settings: Settings) -> tuple[Settings, trust.TrustCheck]:
    """Drop untrusted project servers, with a warning naming the fix (non-interactive use)."""
    from codebot_mcp.core.config import trust

    result = trust.check(settings, assume_trusted=globals_.trust_project)
    if result.needs_trust:
        from codebot_mcp.cli import render

        render.warn(trust.untrusted_message(result))
    return trust.without_untrusted(settings, result), result


def require_trusted(name: str, result: trust.TrustCheck, settings: Settings) -> None:
    """A server named on the command line that the project defines, untrusted, is an error
    (unless a global entry of the same name stands in for it)."""
    if name in settings.shadowed:
        return
    if result.needs_trust and any(c.name == name for c in result.servers):
        raise SettingsError(
            f"server '{name}' is defined by {result.project_file}, "
            f"and the project is {result.state}",
            hint="Review it and run `codebot trust`, or pass --trust-project "
            "(or set CODEBOT_TRUST_PROJECT=1).",
        )


def select_servers(settings: Settings, names: list[str] | None) -> dict[str, ServerConfig]:
    """The named servers (all when ``names`` is empty), or a usage error naming the known ones."""
    if not names:
        return dict(settings.servers)
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
async def open_manager(
    servers: Mapping[str, ServerConfig],
    *,
    agent: UserAgent,
    prelaunch: bool = True,
    login: LoginOptions | None = None,
    sampler: Sampler | None = None,
) -> AsyncIterator[Manager]:
    """A manager over ``servers`` (not yet started); every server is stopped on exit.
    ``agent`` (and ``sampler``) answer the servers' requests: required, so every command
    declares the same client capabilities (servers show some tools only to clients that
    declare elicitation, sampling or roots), and sees the same tools as chat and doctor.

    With ``prelaunch`` the stdio servers' processes are launched *before* the MCP SDK is
    imported, so they boot while Python imports it (about a second of CPU each way). Without
    it, servers launch when ``start_all`` names them. With ``login`` a server that needs
    authorization runs the browser flow (``--login``); without, it fails as "needs login".
    """
    from codebot_mcp.mcpbridge.transport import process  # no SDK import

    async with process.prelaunch(servers if prelaunch else {}) as launched:
        from codebot_mcp.mcpbridge.connection.manager import (
            Manager,
        )  # imports the SDK while the servers boot

        async with Manager(
            servers, prelaunched=launched, login=login, agent=agent, sampler=sampler
        ) as manager:
            yield manager


# -- chat: settings → manager → session → gate → agent --------------------------------------


@dataclass
class ChatOptions:
    """The command line of ``chat``."""

    prompt: str | None = None
    as_json: bool = False
    yes: bool = False
    allow: list[str] = field(default_factory=list[str])
    plan: bool = False
    model: str | None = None
    base_url: str | None = None
    elicit: str | None = None  # --elicit: servers' requests for input, without a terminal
    allow_sampling: list[str] = field(default_factory=list[str])  # --allow-sampling
    resume_latest: bool = False
    """``--continue``: resume the latest session of this project."""
    resume: str | None = None
    """``--resume ID``; ``""`` when ID was left out (pick from a list)."""


@dataclass
class ChatRuntime:
    """Everything a chat needs, wired: settings → manager → session → agent.

    :meth:`apply` is the one place that turns settings into the gate's rules, the agent's
    limits and its model; it runs at start-up and after every ``/mcp reload``.
    """

    globals: Globals
    options: ChatOptions
    settings: Settings
    manager: Manager
    session: Session
    gate: PermissionGate
    agent: Agent | None = None
    model_error: ModelError | None = None
    """Why there is no agent (no key, no base URL); the REPL still starts and shows it."""
    untrusted: tuple[str, ...] = ()
    """Project servers skipped for this session because the project is not trusted."""
    log: SessionLog | None = None
    """Where this conversation is saved (``core.sessions``)."""
    resolved: ModelConfig | None = None
    """The model as the settings and flags name it, before the endpoint was asked which
    model it serves (:func:`core.model.discovery.settle_model`): unchanged, nothing is asked."""

    async def apply(self, settings: Settings) -> None:
        """Follow ``settings``: permission rules, limits, and the model.

        A changed model, endpoint or key gets a new client (the conversation is kept);
        settings whose model no longer resolves keep the current agent. Servers are not
        touched here (``Manager.start_all`` / ``reconfigure`` do that).

        Raises:
            ModelError: the model does not resolve; ``model_error`` keeps it when there is
                no agent yet.
        """
        import anyio.to_thread

        from codebot_mcp.core.agent.loop import Agent
        from codebot_mcp.core.model.client import ChatModel, create_client
        from codebot_mcp.core.model.config import resolve_config
        from codebot_mcp.core.model.discovery import settle_model

        self.settings = settings
        self.gate.rules = settings.permissions
        self.session.set_tool_search(settings.tool_search)
        if self.agent is not None:
            self.agent.configure(settings)
        options = self.options
        try:
            resolved = resolve_config(settings, model=options.model, base_url=options.base_url)
            if self.agent is not None and self.resolved == resolved:
                return
            config, note = await anyio.to_thread.run_sync(settle_model, resolved)
        except ModelError as exc:
            if self.agent is None:
                self.model_error = exc
            raise
        self.model_error = None
        self.resolved = resolved
        if note is not None and options.prompt is None:  # the REPL says which; -p stays quiet
            from codebot_mcp.cli import render

            render.note(note)
        if self.agent is not None and self.agent.model.config == config:
            return
        model = ChatModel(create_client(config), config)
        if self.agent is not None:
            previous, self.agent.model = self.agent.model, model
            self.agent.follow_model()
            await previous.aclose()
            return
        self.agent = Agent(self.session, model, self.gate)
        self.agent.configure(settings)
        self.agent.sampler = self.manager.sampler

    def start_log(self, session_id: str | None = None) -> None:
        """Save this conversation; with --continue/--resume (or ``session_id``) resume one
        first. The resumed history meets the current tool set.

        Raises:
            UsageError: the session to resume does not exist.
        """
        from codebot_mcp.cli import render
        from codebot_mcp.core.agent import history as sessions

        project = self.settings.project_root or self.globals.cwd
        options = self.options
        saved = None
        if session_id is not None:
            saved = sessions.find(project, session_id)
        elif options.resume_latest:
            saved = sessions.find(project, None)
        elif options.resume:
            saved = sessions.find(project, options.resume)
        model = self.agent.model.config.model if self.agent else None
        log = sessions.SessionLog(
            project,
            session_id=saved.id if saved else None,
            scrub=render.REDACTOR,
            meta={"cwd": str(self.globals.cwd), "model": model},
        )
        if saved is not None:
            self.session.replace_history(sessions.replay(saved.path))
            self.session.restore_loaded(sessions.loaded_tools(saved.path))
            log.adopt(self.session)
        self.session.recorder = log
        self.log = log

    async def aclose(self) -> None:
        """Close the model's HTTP client (shielded: runs during cancellation too)."""
        import anyio

        if self.agent is not None:
            with anyio.CancelScope(shield=True):
                await self.agent.model.aclose()


async def settle_trust(
    globals_: Globals, settings: Settings, ask: TrustPrompt | None
) -> tuple[Settings, tuple[str, ...]]:
    """Decide about the project's own servers before any of them starts.

    Without ``ask`` (one-shot, stdin not a terminal) untrusted project servers are skipped
    with a warning naming the fixes. With it the user is asked once: yes records trust (for
    this project file and its current server entries), no skips them for this session.

    Returns:
        The settings to run with, and the names of the skipped servers.
    """
    from codebot_mcp.cli import render
    from codebot_mcp.core.config import (
        trust,
    )  # deferred: `codebot --help` does not load settings or trust

    result = trust.check(settings, assume_trusted=globals_.trust_project)
    if not result.needs_trust:
        return settings, ()
    skipped = tuple(c.name for c in result.servers)
    if ask is None:
        return apply_trust(globals_, settings)[0], skipped
    if await ask(result):
        trust.record(result)
        return settings, ()
    render.warn(trust.untrusted_message(result))
    return trust.without_untrusted(settings, result), skipped


@asynccontextmanager
async def open_runtime(
    globals_: Globals,
    options: ChatOptions,
    approver: Approver | None,
    *,
    need_model: bool,
    ask_trust: TrustPrompt | None = None,
    user_agent: UserAgent | None = None,
) -> AsyncIterator[ChatRuntime]:
    """Build the runtime; MCP servers are not started here (the caller decides when).

    Trust is settled first (see :func:`settle_trust`): an untrusted project server is not even
    launched, and stdio servers are launched ahead of ``start_all`` only once trusted.

    Raises:
        SettingsError: the settings cannot be read.
        UsageError: the session to resume (--continue, --resume ID) does not exist.
        ModelError: ``need_model`` and no model endpoint is configured.
    """
    from codebot_mcp.core.agent.permissions import PermissionGate
    from codebot_mcp.core.agent.session import Session
    from codebot_mcp.core.model.config import resolve_config

    loaded = load_settings(globals_)
    if options.resume_latest or options.resume:  # no such session: say so before anything runs
        from codebot_mcp.core.agent import history as sessions

        sessions.find(loaded.project_root or globals_.cwd, options.resume or None)
    settings, untrusted = await settle_trust(globals_, loaded, ask_trust)
    if need_model:  # fail before any server is launched
        resolve_config(settings, model=options.model, base_url=options.base_url)

    held: list[ChatRuntime] = []  # the runtime, once made: the sampler uses its model
    answers, sampler = chat_answers(settings, options, user_agent, held)
    async with open_manager(settings.servers, agent=answers, sampler=sampler) as manager:
        session = Session(
            chat_tools(globals_.cwd, settings, manager),
            manager,
            cwd=globals_.cwd,
            project_root=settings.project_root,
            plan_mode=options.plan,
        )
        gate = PermissionGate(
            settings.permissions, approver=approver, assume_yes=options.yes, allow=options.allow
        )
        from codebot_mcp.mcpbridge.tools.pinning import pins

        gate.pinned = pins(settings.project_root, settings.cwd)
        runtime = ChatRuntime(globals_, options, settings, manager, session, gate)
        runtime.untrusted = untrusted
        held.append(runtime)
        try:
            try:
                await runtime.apply(settings)
            except ModelError:
                if need_model:
                    raise
            runtime.start_log()
            yield runtime
        finally:
            await runtime.aclose()


def chat_answers(
    settings: Settings,
    options: ChatOptions,
    user_agent: UserAgent | None,
    held: list[ChatRuntime],
) -> tuple[UserAgent, Sampler]:
    """Who answers the servers in a chat (the REPL, else the policy of the command line), and
    the sampler that uses the runtime's model (``held[0]``, once it exists)."""
    from codebot_mcp.core.agent.sampling import Sampler

    sampler = Sampler(lambda: held[0].agent.model if held and held[0].agent else None)
    from codebot_mcp.cli.answers import policy

    return user_agent or policy(settings, options.elicit, options.allow_sampling), sampler


def chat_tools(cwd: Path, settings: Settings, manager: Manager) -> list[Tool]:
    """The local layer: the built-ins, and the servers' resources for the model (read
    capability) when any server is configured."""
    from codebot_mcp.core.tools.builtin import builtin_tools
    from codebot_mcp.core.tools.resources import resource_tools

    local = builtin_tools(cwd, settings.project_root)
    return local + resource_tools(manager) if settings.servers else local
