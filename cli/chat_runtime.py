"""The composition root of ``codebot chat``: settings → manager → session → gate → agent.

:func:`open_runtime` wires a chat (the REPL and ``-p`` alike) from the command runtime of
:mod:`cli.runtime`; :class:`ChatRuntime` holds it and follows ``/mcp reload``.

Size: one composition (trust, the model, the sandbox, hooks and their background task group,
servers, skills, the gate) and the runtime that follows it through reloads; it is long
because the parts are wired by assignment after construction, which issue 30 (item 4: build
it finished) replaces with one function returning finished objects.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codebot_mcp.cli.runtime import (
    Globals,
    apply_trust,
    load_unfiltered_settings,
    open_manager,
    session_pins,
)
from codebot_mcp.core.errors import ModelError

if TYPE_CHECKING:
    from codebot_mcp.cli.extensions import Extensions
    from codebot_mcp.core.agent.checkpoints import Checkpoints
    from codebot_mcp.core.agent.history import SessionLog
    from codebot_mcp.core.agent.loop import Agent
    from codebot_mcp.core.agent.outputschema import OutputSchema
    from codebot_mcp.core.agent.permissions import Approver, PermissionGate
    from codebot_mcp.core.agent.sampling import Sampler
    from codebot_mcp.core.agent.session import Session
    from codebot_mcp.core.config import trust
    from codebot_mcp.core.config.servers import ServerConfig
    from codebot_mcp.core.config.settings import Settings
    from codebot_mcp.core.config.trustwatch import TurnWatch
    from codebot_mcp.core.model.config import ModelConfig
    from codebot_mcp.core.security.sandbox import Sandbox
    from codebot_mcp.core.telemetry.otel import Telemetry
    from codebot_mcp.core.tools.base import Tool
    from codebot_mcp.core.tools.jobs import JobTable
    from codebot_mcp.core.tools.skillload import SkillLoader
    from codebot_mcp.core.tools.skills import SkillCatalog
    from codebot_mcp.core.tools.useragent import UserAgent
    from codebot_mcp.mcpbridge.connection.manager import Manager

    TrustPrompt = Callable[[trust.TrustCheck], Awaitable[bool]]
    """Asks the user whether to trust the project's servers (the REPL supplies one)."""


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
    sandbox: str | None = None
    """``--sandbox MODE`` for this run (None: the ``sandbox`` setting)."""
    allow_drift: bool = False
    """``--allow-drift``: servers whose tools drifted from the lock are used for this run."""
    output_format: str = "text"
    """``--output-format``: text, json (``--json``) or stream-json (one-shot)."""
    input_format: str = "text"
    """``--input-format``: text, or stream-json (user messages as JSON lines on stdin)."""
    include_partial: bool = False
    """``--include-partial``: stream-json also carries the text as it streams."""
    output_schema: OutputSchema | None = None
    """``--output-schema FILE``, read and checked: the answer must validate against it."""
    api: str | None = None
    """``--api``: chat_completions or responses (None: the ``api`` setting, or the default)."""
    effort: str | None = None
    """``--effort``: low, medium or high (None: the ``reasoning_effort`` setting)."""

    def model_config(self, settings: Settings) -> ModelConfig:
        """The model these flags and ``settings`` name (``core.model.config.resolve_config``)."""
        from codebot_mcp.core.model.config import resolve_config

        model, url, api, effort = self.model, self.base_url, self.api, self.effort
        return resolve_config(settings, model=model, base_url=url, api=api, effort=effort)

    verbose: bool = False
    """``--verbose``: with ``-p``, a preview of each tool result on stderr."""
    images: list[str] = field(default_factory=list[str])
    """``--image PATH`` (repeatable): image files that go with the first prompt."""


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
    checkpoints: Checkpoints | None = None
    """The session's checkpoints (None: ``checkpoints.enabled`` is off)."""
    ext: Extensions | None = None
    """Hooks, subagents and custom commands (``cli.extensions``)."""
    sandbox: Sandbox | None = None
    """How ``bash`` runs confined in this chat (``core.security.sandbox``)."""
    skills: SkillCatalog | None = None
    """The skills the model may load (``/skills``)."""
    skill_loader: SkillLoader | None = None
    resolved: ModelConfig | None = None
    """The model as the settings and flags name it, before the endpoint was asked which
    model it serves (:func:`core.model.discovery.settle_model`): unchanged, nothing is asked."""
    pending_tasks: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    """Server-side tasks (SEP-2663) the resumed session started and never saw end."""
    end_reason: str = "other"
    """``SessionEnd``'s reason when the chat ends: the REPL says ``prompt_input_exit``."""
    watch: TurnWatch | None = None
    """The project files that need trust: a prompt that changed one says so at its end."""
    sampler: Sampler | None = None
    """Answers the servers' sampling requests with the agent's model (the manager holds it
    as a ``Sampling``; the agent counts its usage with the turn's)."""
    telemetry: Telemetry | None = None
    """OpenTelemetry export (``core.telemetry``); None: off, nothing of it imported."""

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
        from codebot_mcp.core.model.discovery import settle_model

        self.settings = settings
        self.gate.rules = settings.permissions
        self.session.set_tool_search(settings.tool_search)
        if self.log is not None:
            self.attach_checkpoints()
        if self.agent is not None:
            self.agent.configure(settings)
        options = self.options
        try:
            resolved = options.model_config(settings)
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
        self.agent.sampler = self.sampler
        self.agent.checkpoints = self.checkpoints
        self.agent.hooks = self.ext.hooks if self.ext else None
        self.agent.watch = self.watch
        self.agent.observer = self.telemetry

    def start_log(self, session_id: str | None = None) -> None:
        """Save this conversation; with --continue/--resume (or ``session_id``) resume one
        first. The resumed history meets the current tool set.

        Raises:
            UsageError: the session to resume does not exist.
        """
        from codebot_mcp.cli import render
        from codebot_mcp.core.agent import history as sessions

        project = self.project
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
            self.session.todos.restore(sessions.todos(saved.path))
            log.adopt(self.session)
            self.pending_tasks = sessions.pending_tasks(saved.path)
        self.session.recorder = log
        self.log = log
        self.manager.tasks.journal = log  # tasks are remembered with the session
        self.checkpoints = None  # a resumed session has checkpoints of its own
        self.attach_checkpoints()
        self.follow_hooks()

    @property
    def project(self) -> Path:
        """The project root (or the working directory): sessions and checkpoints key on it."""
        return self.settings.project_root or self.globals.cwd

    def attach_checkpoints(self) -> None:
        """Give the agent the checkpoints of the current session, as the settings say."""
        from codebot_mcp.cli import render
        from codebot_mcp.core.agent.checkpoints import follow

        log = self.log
        self.checkpoints = follow(
            self.checkpoints,
            self.settings.checkpoints,
            self.project,
            log.id if log else None,
            scrub=render.REDACTOR,
            conversation=log.size if log else lambda: None,
            warn=render.warn,
        )
        if self.agent is not None:
            self.agent.checkpoints = self.checkpoints

    def follow_hooks(self) -> None:
        """Tell the hooks (new after ``/mcp reload`` too) about this session and its mode."""
        hooks = self.ext.hooks if self.ext else None
        if hooks is None:
            return
        hooks.mode_of = _mode_of(self.session, self.options)
        if self.log is not None:
            hooks.session_id, hooks.transcript_path = self.log.id, str(self.log.path)
        if self.agent is not None:
            self.agent.hooks = hooks

    async def session_started(self, source: str) -> None:
        """``SessionStart`` hooks (``source``: startup, resume, clear); warnings shown."""
        from codebot_mcp.core.agent.hookpoints import session_start

        hooks = self.ext.hooks if self.ext else None
        for warning in await session_start(hooks, source):
            from codebot_mcp.cli import render

            render.warn(warning)

    async def session_ended(self, reason: str) -> None:
        """``SessionEnd`` hooks (``reason``: clear, resume, prompt_input_exit, other)."""
        from codebot_mcp.core.agent.hookpoints import session_end

        hooks = self.ext.hooks if self.ext else None
        for warning in await session_end(hooks, reason):
            from codebot_mcp.cli import render

            render.warn(warning)

    def reload_extensions(self, settings: Settings, raw: Settings) -> None:
        """Read hooks, agents and commands again (``/mcp reload``)."""
        from codebot_mcp.cli import extensions

        if self.ext is not None:
            extensions.reload(self.ext, settings, raw, self.globals.cwd)
            self.follow_hooks()
            self.session.set_plan_mode(self.session.plan_mode)  # task lists the new agents

    async def resume_tasks(self) -> list[str]:
        """Follow the tasks the resumed session left running to their end (after the servers
        started); each result joins the history as the call it was. One line per task."""
        pending, self.pending_tasks = self.pending_tasks, []
        if not pending:
            return []
        from codebot_mcp.core.agent.toolcalls import finished_elsewhere
        from codebot_mcp.core.model.stream import ToolCall
        from codebot_mcp.mcpbridge.calls.resume import resume_tasks  # loads the SDK

        lines = []
        for done in await resume_tasks(self.manager, pending):
            lines.append(done.describe())
            if done.result is not None:  # the two messages its turn would have added
                call = ToolCall(done.call_id, done.name, done.arguments)
                self.session.history.extend(finished_elsewhere(call, done.result))
        self.session.checkpoint()
        return lines

    async def aclose(self) -> None:
        """Wait for the last checkpoint, close the model's HTTP client (shielded: runs during
        cancellation too), remove the sandbox's temp directory."""
        import anyio

        if self.sandbox is not None:
            self.sandbox.close()
        if self.ext is not None and self.ext.confine is not None:
            self.ext.confine.close()
        with anyio.CancelScope(shield=True):
            if self.checkpoints is not None and (problem := await self.checkpoints.settle()):
                from codebot_mcp.cli import render

                render.warn(problem)
            if self.agent is not None:
                await self.agent.model.aclose()
        if self.telemetry is not None:  # the session's span ends; export flushed (bounded)
            import anyio.to_thread

            self.telemetry.end_session()
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(self.telemetry.flush)


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


@asynccontextmanager
async def open_runtime(
    globals_: Globals,
    options: ChatOptions,
    approver: Approver | None,
    *,
    need_model: bool,
    ask_trust: TrustPrompt | None = None,
    user_agent: UserAgent | None = None,
    extra_servers: Mapping[str, ServerConfig] | None = None,
) -> AsyncIterator[ChatRuntime]:
    """Build the runtime; MCP servers are not started here (the caller decides when).

    ``extra_servers`` join the settings' servers before trust and the managed policy apply
    (an ACP client's ``mcpServers``; one of the same name replaces the settings' entry).

    Trust is settled first (see :func:`settle_trust`): an untrusted project server is not even
    launched, and stdio servers are launched ahead of ``start_all`` only once trusted.

    Raises:
        SettingsError: the settings cannot be read.
        UsageError: the session to resume (--continue, --resume ID) does not exist.
        ModelError: ``need_model`` and no model endpoint is configured.
    """
    from codebot_mcp.cli import extensions
    from codebot_mcp.core.agent.permissions import PermissionGate
    from codebot_mcp.core.agent.session import Session

    raw = load_unfiltered_settings(globals_)  # what the extensions' review shows; runs nothing
    if extra_servers:
        from dataclasses import replace

        raw = replace(raw, servers={**raw.servers, **extra_servers})
    if options.resume_latest or options.resume:  # no such session: say so before anything runs
        from codebot_mcp.core.agent import history as sessions

        sessions.find(raw.project_root or globals_.cwd, options.resume or None)
    settings, untrusted = await settle_trust(globals_, raw, ask_trust)
    if need_model:  # fail before any server is launched
        options.model_config(settings)

    held: list[ChatRuntime] = []  # the runtime, once made: the sampler uses its model
    answers, sampler = chat_answers(settings, options, user_agent, held)
    ext = extensions.build(
        settings,
        raw,
        globals_.cwd,
        lambda: held[0].agent if held else None,
        lambda: held[0].log if held else None,
    )
    if approver is not None:  # hooks may come with /mcp reload: looked up when asking
        from codebot_mcp.cli import render
        from codebot_mcp.core.agent.hookpoints import notifying

        approver = notifying(lambda: ext.hooks, approver, render.warn)
    sandbox = chat_sandbox(globals_, settings, options)
    telemetry = start_telemetry(settings)  # before the servers: their handshakes are traced
    locked = session_pins(settings, allow_drift=options.allow_drift)  # checked as they connect
    async with open_manager(
        settings.servers, agent=answers, sampler=sampler, pins=locked
    ) as manager:
        task = ext.subagents.tool()
        from codebot_mcp.core.tools.builtin.skill import SkillTool

        catalog, loader = extensions.skill_catalog(settings, manager)
        from codebot_mcp.core.tools.jobs import JobTable

        jobs = JobTable()  # bash's background jobs: entered below, killed when the chat ends
        session = Session(
            chat_tools(globals_.cwd, settings, manager, [task] if task else [], sandbox, jobs),
            manager,
            cwd=globals_.cwd,
            project_root=settings.project_root,
            plan_mode=options.plan,
            skills=catalog,
            skill_tool=SkillTool(catalog, loader),
            project_notes=settings.project_extensions,
            todos=True,
            claude_notes=settings.claude_files,
            jobs=jobs,
        )
        gate = PermissionGate(
            settings.permissions, approver=approver, assume_yes=options.yes, allow=options.allow
        )
        gate.skills = catalog.activity
        gate.cwd = settings.cwd  # where `read(./secrets/**)`-style rules start
        from codebot_mcp.mcpbridge.tools.pinning import pins

        gate.pinned = pins(settings.project_root, settings.cwd)
        runtime = ChatRuntime(globals_, options, settings, manager, session, gate)
        runtime.untrusted = untrusted
        runtime.sampler = sampler
        runtime.telemetry = telemetry
        from codebot_mcp.core.config.trustwatch import TurnWatch

        runtime.watch = TurnWatch(raw)
        runtime.skills, runtime.skill_loader = catalog, loader
        runtime.sandbox = sandbox
        runtime.ext = ext
        runtime.follow_hooks()
        held.append(runtime)
        try:
            try:
                await runtime.apply(settings)
            except ModelError:
                if need_model:
                    raise
            runtime.start_log()
            if telemetry is not None and runtime.log is not None:
                telemetry.name_conversation(runtime.log.id)
            await runtime.session_started("resume" if session.history else "startup")
            async with _background(ext), jobs:
                yield runtime
        finally:
            await runtime.session_ended(runtime.end_reason)
            await runtime.aclose()


def start_telemetry(settings: Settings) -> Telemetry | None:
    """The process's OpenTelemetry export with its session span begun, when the setting
    ``telemetry`` turns it on (``core.telemetry``); else None, and nothing of OpenTelemetry
    is imported."""
    if not settings.telemetry.enabled:
        return None
    from codebot_mcp.cli import render
    from codebot_mcp.core.telemetry import start

    telemetry = start(settings.telemetry, render.warn)
    if telemetry is not None:
        telemetry.begin_session()
    return telemetry


@asynccontextmanager
async def _background(ext: Extensions) -> AsyncIterator[None]:
    """The chat's task group, where ``async`` hooks run; a hook still running when the
    chat ends is stopped (as Claude Code's ``-p`` does). An error of the chat itself comes
    out as it is, not wrapped in the task group's exception group."""
    import anyio

    try:
        async with anyio.create_task_group() as background:
            ext.background = background
            if ext.hooks is not None:
                ext.hooks.background = background
            try:
                yield
            finally:
                ext.background = None
                if ext.hooks is not None:
                    ext.hooks.background = None
                background.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        if len(group.exceptions) == 1:
            raise group.exceptions[0]  # noqa: B904 (the chat's own error, as it was raised)
        raise


def _mode_of(session: Session, options: ChatOptions) -> Callable[[], str]:
    """``permission_mode`` for hooks, as Claude Code names them."""

    def mode() -> str:
        if session.plan_mode:
            return "plan"
        return "bypassPermissions" if options.yes else "default"

    return mode


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


def chat_sandbox(globals_: Globals, settings: Settings, options: ChatOptions) -> Sandbox:
    """The chat's sandbox: ``--sandbox`` over the ``sandbox`` setting; what the machine
    lacks is said once, here."""
    from codebot_mcp.cli import render
    from codebot_mcp.core.security.hiding import settings_secrets
    from codebot_mcp.core.security.sandbox import Sandbox

    config = settings.sandbox
    mode, source = options.sandbox, "--sandbox"
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


def hide_from_file_tool(tool: Tool, sandbox: Sandbox | None) -> None:
    """A file tool (``read``, ``grep`` …) asks before it opens what ``sandbox`` hides from
    confined commands (credentials, ``sandbox.deny_read``), as for a path outside the root."""
    from codebot_mcp.core.tools.builtin._files import FileTool

    if sandbox is not None and isinstance(tool, FileTool):
        tool.boundary.hidden = sandbox.hidden_reals


def chat_tools(
    cwd: Path,
    settings: Settings,
    manager: Manager,
    extra: list[Tool] | None = None,
    sandbox: Sandbox | None = None,
    jobs: JobTable | None = None,
) -> list[Tool]:
    """The local layer: the built-ins (``bash`` in ``sandbox``, its background ``jobs``),
    ``extra`` (``task``), and the servers' resources for the model (read capability) when
    any server is configured."""
    from codebot_mcp.core.tools.builtin import BashTool, builtin_tools
    from codebot_mcp.core.tools.resources import resource_tools

    local = builtin_tools(cwd, settings.project_root)
    for tool in local:
        if isinstance(tool, BashTool):
            tool.sandbox = sandbox
            tool.jobs = jobs
        hide_from_file_tool(tool, sandbox)
    local += list(extra or [])
    return local + resource_tools(manager) if settings.servers else local
