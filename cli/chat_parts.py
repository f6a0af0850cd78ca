"""The parts a chat is built from (:func:`cli.chat_runtime.open_runtime` puts them together),
each made finished: trust settled, the sandbox, telemetry, the model (settled with its
endpoint), the session's log and what a resumed one brings back, the checkpoints, the local
tools, the task group of async hooks, and the agent; and how they are closed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codebot_mcp.cli.runtime import Globals, apply_trust

if TYPE_CHECKING:
    import anyio.abc

    from codebot_mcp.cli.extensions import HookSandboxes
    from codebot_mcp.core.agent.history import SavedSession, SessionLog
    from codebot_mcp.core.agent.loop import Agent
    from codebot_mcp.core.agent.outputschema import OutputSchema
    from codebot_mcp.core.agent.permissions import PermissionGate
    from codebot_mcp.core.agent.protocols import TurnCheckpoints, TurnHooks
    from codebot_mcp.core.agent.sampling import ModelRef, Sampler
    from codebot_mcp.core.agent.session import Session
    from codebot_mcp.core.config import trust
    from codebot_mcp.core.config.settings import Settings
    from codebot_mcp.core.config.trustwatch import TurnWatch
    from codebot_mcp.core.hooks.runner import Hooks
    from codebot_mcp.core.model.client import ChatModel
    from codebot_mcp.core.model.config import ModelConfig
    from codebot_mcp.core.sandbox.confinement import Sandbox
    from codebot_mcp.core.telemetry.otel import Telemetry
    from codebot_mcp.core.tools.background import BackgroundJobs
    from codebot_mcp.core.tools.base import Tool
    from codebot_mcp.core.tools.builtin._files import TextFiles
    from codebot_mcp.core.tools.builtin.bash import Terminals
    from codebot_mcp.mcpbridge.connection.manager import Manager

    TrustPrompt = Callable[[trust.TrustCheck], Awaitable[bool]]
    """Asks the user whether to trust the project's servers (the REPL supplies one)."""


async def close_parts(
    sandbox: Sandbox | None,
    confine: HookSandboxes | None,
    models: ModelRef | None,
    telemetry: Telemetry | None,
) -> None:
    """Remove the sandboxes' temp directories, close the model's HTTP client (shielded: runs
    during cancellation too), end the session's span and flush the export (bounded)."""
    import anyio

    if sandbox is not None:
        sandbox.close()
    if confine is not None:
        confine.close()
    with anyio.CancelScope(shield=True):
        if models is not None and models.model is not None:
            await models.model.aclose()
    if telemetry is not None:
        import anyio.to_thread

        telemetry.end_session()
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(telemetry.flush)


async def settled_config(resolved: ModelConfig, *, quiet: bool) -> ModelConfig:
    """The model ``resolved`` names, once the endpoint said which it serves (said, unless
    ``quiet``: ``-p`` stays quiet, the REPL says which).

    Raises:
        ModelError: the endpoint cannot be asked, or names no model.
    """
    import anyio.to_thread

    from codebot_mcp.core.model.localservers import settle_model

    config, note = await anyio.to_thread.run_sync(settle_model, resolved)
    if note is not None and not quiet:
        from codebot_mcp.cli import render

        render.note(note)
    return config


def chat_model(config: ModelConfig, schema: OutputSchema | None = None) -> ChatModel:
    """A client for ``config``'s endpoint and model; with ``schema`` (``--output-schema``) it
    asks for structured output of that shape."""
    from codebot_mcp.core.model.client import ChatModel, create_client

    response_format = schema.response_format() if schema is not None else None
    return ChatModel(create_client(config), config, response_format=response_format)


def chat_agent(
    session: Session,
    models: ModelRef,
    gate: PermissionGate,
    settings: Settings,
    *,
    sampler: Sampler,
    checkpoints: TurnCheckpoints | None,
    hooks: TurnHooks | None,
    watch: TurnWatch,
    telemetry: Telemetry | None,
) -> Agent:
    """The agent of a chat whose model resolved (at start, or at last after a reload), with
    the loop parts :func:`chat_checkpoints` and :func:`chat_hooks` made."""
    from codebot_mcp.core.agent.loop import Agent

    return Agent(
        session,
        models,
        gate,
        settings=settings,
        sampler=sampler,
        checkpoints=checkpoints,
        hooks=hooks,
        watch=watch,
        observer=telemetry,
    )


def new_log(
    globals_: Globals, project: Path, saved: SavedSession | None, model: str | None
) -> SessionLog:
    """The session's log: a new one, or ``saved``'s continued."""
    from codebot_mcp.cli import render
    from codebot_mcp.core.agent import history as sessions

    return sessions.SessionLog(
        project,
        session_id=saved.id if saved else None,
        scrub=render.REDACTOR,
        meta={"cwd": str(globals_.cwd), "model": model},
    )


def restore(session: Session, log: SessionLog, saved: SavedSession | None) -> list[dict[str, Any]]:
    """``saved``'s history, loaded tools and plan, into ``session`` (which ``log`` then holds as
    written); returns the server-side tasks it left running."""
    if saved is None:
        return []
    from codebot_mcp.core.agent import history as sessions

    session.replace_history(sessions.replay(saved.path))
    session.restore_loaded(sessions.loaded_tools(saved.path))
    session.todos.restore(sessions.todos(saved.path))
    log.adopt(session)
    return sessions.pending_tasks(saved.path)


def chat_checkpoints(
    current: TurnCheckpoints | None, settings: Settings, project: Path, log: SessionLog
) -> TurnCheckpoints | None:
    """The checkpoints of ``log``'s session as the settings say (``current`` kept when they
    still fit), from the feature registered for the loop's ``TurnCheckpoints``."""
    from codebot_mcp.cli import render
    from codebot_mcp.core.agent.loopparts import PartContext, turn_checkpoints

    context = PartContext(
        settings, project, (log,), current, warn=render.warn, scrub=render.REDACTOR
    )
    return turn_checkpoints(context)


def chat_hooks(hooks: Hooks | None, settings: Settings, project: Path) -> TurnHooks | None:
    """The chat's ``hooks`` as the loop calls them (None: none configured), from the feature
    registered for the loop's ``TurnHooks``."""
    from codebot_mcp.cli import render
    from codebot_mcp.core.agent.loopparts import PartContext, turn_hooks

    provided = () if hooks is None else (hooks,)
    return turn_hooks(PartContext(settings, project, provided, warn=render.warn))


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

    loaded = apply_trust(globals_, settings, warn=ask is None)  # trust applied once, here
    result = loaded.trust
    if not result.needs_trust:
        return loaded.settings, ()
    skipped = tuple(c.name for c in result.servers)
    if ask is None:
        return loaded.settings, skipped
    if await ask(result):
        trust.record(result)
        again = apply_trust(globals_, settings, warn=False)
        if not again.trust.needs_trust:
            return again.settings, ()
    render.warn(trust.untrusted_message(result))
    return loaded.settings, skipped


def start_telemetry(settings: Settings) -> Telemetry | None:
    """The process's OpenTelemetry export with its session span begun, when the setting
    ``telemetry`` turns it on (``core.telemetry``); else None, and nothing of OpenTelemetry
    is imported."""
    from codebot_mcp.core.telemetry import exportsettings

    wanted = exportsettings.of(settings)
    if not wanted.enabled:
        return None
    from codebot_mcp.cli import render
    from codebot_mcp.core.telemetry import start

    telemetry = start(wanted, render.warn)
    if telemetry is not None:
        telemetry.begin_session()
    return telemetry


class Background:
    """The chat's task group, where ``async`` hooks run, while :meth:`open` holds it open
    (before and after: None, and such hooks run inline). Made before the hooks, which ask
    :meth:`group` each time."""

    def __init__(self) -> None:
        self._group: anyio.abc.TaskGroup | None = None

    def group(self) -> anyio.abc.TaskGroup | None:
        """The open task group, or None."""
        return self._group

    @asynccontextmanager
    async def open(self) -> AsyncIterator[None]:
        """Hold the task group open; a hook still running when the chat ends is stopped (as
        Claude Code's ``-p`` does). An error of the chat itself comes out as it is, not
        wrapped in the task group's exception group."""
        import anyio

        try:
            async with anyio.create_task_group() as background:
                self._group = background
                try:
                    yield
                finally:
                    self._group = None
                    background.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            if len(group.exceptions) == 1:
                raise group.exceptions[0]  # noqa: B904 (the chat's own error, as it was raised)
            raise


def chat_mode(session: Session, *, yes: bool) -> Callable[[], str]:
    """``permission_mode`` for hooks, as Claude Code names them (``yes``: ``--yes``)."""

    def mode() -> str:
        if session.plan_mode:
            return "plan"
        return "bypassPermissions" if yes else "default"

    return mode


def sandbox_mode(value: str | None) -> str | None:
    """``--sandbox MODE`` (chat, mcp serve), checked (a usage error names the modes)."""
    from codebot_mcp.core.config.sandboxing import MODES

    if value is None or value in MODES:
        return value
    from codebot_mcp.core.errors import UsageError

    raise UsageError(
        f"--sandbox {value}: unknown mode",
        hint=f"Use one of {', '.join(MODES)} (e.g. --sandbox workspace-write).",
    )


def chat_sandbox(globals_: Globals, settings: Settings, flag: str | None) -> Sandbox:
    """The chat's sandbox: ``--sandbox`` (``flag``) over the ``sandbox`` setting; what the
    machine lacks is said once, here."""
    from codebot_mcp.cli import render
    from codebot_mcp.core.sandbox import sandboxsettings
    from codebot_mcp.core.sandbox.confinement import Sandbox
    from codebot_mcp.core.sandbox.hiding import settings_secrets

    config = sandboxsettings.of(settings)
    mode, source = flag, "--sandbox"
    if mode is not None and mode != config.mode and "sandbox.mode" in settings.managed_locked:
        from codebot_mcp.core.errors import SettingsError

        raise SettingsError(
            f"--sandbox {mode}: the managed settings file {settings.managed_file} locks "
            f"sandbox.mode{f' to {config.mode}' if config.mode else ''}",
            hint="Leave out --sandbox; whoever manages this machine sets the sandbox.",
        )
    if mode is None:
        mode = config.mode
        source = "the 'sandbox' setting" if mode is not None else "the default"
    sandbox = Sandbox(
        mode,
        network=config.network,
        domains=config.domains,
        workspace=settings.project_root or globals_.cwd,
        roots=settings.roots,
        writable=config.writable,
        source=source,
        deny_read=(*config.deny_read, *settings_secrets(settings)),
    )
    notice = sandbox.notice()
    if notice is not None:
        render.warn(notice)
    return sandbox


def chat_tools(
    cwd: Path,
    settings: Settings,
    manager: Manager,
    extra: list[Tool] | None = None,
    sandbox: Sandbox | None = None,
    jobs: BackgroundJobs | None = None,
    editor: EditorTools | None = None,
) -> list[Tool]:
    """The local layer: the built-ins (``bash`` in ``sandbox``, its background ``jobs``; the
    file tools asking before they open what the sandbox hides; an ACP ``editor``'s files and
    terminals), ``extra`` (the features' tools of ``Place.AFTER_BUILTINS``: ``task``), and
    the servers' resources for the model (read capability) when any server is configured."""
    from codebot_mcp.core.tools.builtin import builtin_tools
    from codebot_mcp.core.tools.resources import resource_tools

    local = builtin_tools(
        cwd,
        settings.project_root,
        sandbox=sandbox,
        jobs=jobs,
        files=editor.files if editor else None,
        terminals=editor.terminals if editor else None,
    )
    local += list(extra or [])
    return local + resource_tools(manager) if settings.servers else local


@dataclass(frozen=True)
class EditorTools:
    """What an ACP editor lends the session's built-in tools (``cli.acp``): its buffers for
    ``read``, ``edit`` and ``write``, its terminals for ``bash``; None: codebot's own."""

    files: TextFiles | None = None
    terminals: Terminals | None = None


async def resume_into(session: Session, manager: Manager, pending: list[Any]) -> list[str]:
    """Follow the tasks a resumed session left running to their end; each result joins
    ``session``'s history as the call it was. One line per task."""
    from codebot_mcp.core.agent.toolcalls import finished_elsewhere
    from codebot_mcp.core.model.stream import ToolCall
    from codebot_mcp.mcpbridge.calls.resume import resume_tasks  # loads the SDK

    lines = []
    for done in await resume_tasks(manager, pending):
        lines.append(done.describe())
        if done.result is not None:  # the two messages its turn would have added
            call = ToolCall(done.call_id, done.name, done.arguments)
            session.history.extend(finished_elsewhere(call, done.result))
    session.checkpoint()
    return lines
