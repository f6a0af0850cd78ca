"""The composition root of ``codebot chat``: settings → model → manager → session → gate → agent.

:func:`open_runtime` builds a chat (the REPL, ``-p`` and ACP alike) from the command runtime of
:mod:`cli.runtime`, each part given its collaborators when it is made, in an order where
everything a part uses exists before it: the model is settled while the stdio servers boot, so
the sampler and the session's log are there for the manager. Two cycles are broken without a
forward reference: the parent of a subagent is the agent running its ``task`` call
(:func:`core.agent.loop.running_agent`), and the agent and sampler share the chat's model
through a :class:`core.agent.sampling.ModelRef`. :class:`ChatRuntime` holds the finished
parts; ``/mcp reload``, ``/model`` and ``/resume`` make new parts and swap them in.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codebot_mcp.cli.chat_parts import (
    Background,
    chat_agent,
    chat_checkpoints,
    chat_hooks,
    chat_mode,
    chat_model,
    chat_sandbox,
    chat_tools,
    close_parts,
    new_log,
    restore,
    settle_trust,
    settled_config,
    start_telemetry,
)
from codebot_mcp.cli.runtime import (
    Globals,
    load_unfiltered_settings,
    open_manager,
    prelaunched,
    session_pins,
)
from codebot_mcp.core.errors import ModelError

if TYPE_CHECKING:
    from codebot_mcp.cli.chat_parts import EditorTools, TrustPrompt
    from codebot_mcp.cli.extensions import Extensions
    from codebot_mcp.core.agent.history import SessionLog
    from codebot_mcp.core.agent.loop import Agent
    from codebot_mcp.core.agent.outputschema import OutputSchema
    from codebot_mcp.core.agent.permissions import Approver, PermissionGate
    from codebot_mcp.core.agent.protocols import TurnCheckpoints
    from codebot_mcp.core.agent.sampling import ModelRef, Sampler
    from codebot_mcp.core.agent.session import Session
    from codebot_mcp.core.config.servers import ServerConfig
    from codebot_mcp.core.config.settings import Settings
    from codebot_mcp.core.config.trustwatch import TurnWatch
    from codebot_mcp.core.jobs.jobtable import JobTable
    from codebot_mcp.core.model.config import ModelConfig
    from codebot_mcp.core.sandbox.confinement import Sandbox
    from codebot_mcp.core.skills.skillcatalog import SkillCatalog
    from codebot_mcp.core.skills.skillload import SkillLoader
    from codebot_mcp.core.telemetry.otel import Telemetry
    from codebot_mcp.core.tools.useragent import UserAgent
    from codebot_mcp.mcpbridge.connection.features import ProgressHook
    from codebot_mcp.mcpbridge.connection.manager import Manager


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
    """Everything a chat needs, finished: settings → model → manager → session → agent.

    :meth:`apply` is the one place that turns settings into the gate's rules, the agent's
    limits and its model after ``/mcp reload``; :meth:`start_log` swaps in a resumed session.
    """

    globals: Globals
    options: ChatOptions
    settings: Settings
    manager: Manager
    session: Session
    gate: PermissionGate
    models: ModelRef
    """The chat's model, shared by the agent and the sampler."""
    sampler: Sampler
    """Answers the servers' sampling requests with the agent's model (the manager holds it
    as a ``Sampling``; the agent counts its usage with the turn's)."""
    log: SessionLog
    """Where this conversation is saved (``core.sessions``)."""
    ext: Extensions
    """Hooks, subagents and custom commands (``cli.extensions``)."""
    sandbox: Sandbox
    """How ``bash`` runs confined in this chat (``core.security.sandbox``)."""
    skills: SkillCatalog
    """The skills the model may load (``/skills``)."""
    skill_loader: SkillLoader
    watch: TurnWatch
    """The project files that need trust: a prompt that changed one says so at its end."""
    agent: Agent | None = None
    model_error: ModelError | None = None
    """Why there is no agent (no key, no base URL); the REPL still starts and shows it."""
    resolved: ModelConfig | None = None
    """The model as the settings and flags name it, before the endpoint was asked which
    model it serves (:func:`core.model.discovery.settle_model`): unchanged, nothing is asked."""
    untrusted: tuple[str, ...] = ()
    """Project servers skipped for this session because the project is not trusted."""
    checkpoints: TurnCheckpoints | None = None
    """The session's checkpoints (None: ``checkpoints.enabled`` is off), from the feature
    registered for the loop's ``TurnCheckpoints`` (``core.agent.loopparts``)."""
    pending_tasks: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    """Server-side tasks (SEP-2663) the resumed session started and never saw end."""
    end_reason: str = "other"
    """``SessionEnd``'s reason when the chat ends: the REPL says ``prompt_input_exit``."""
    telemetry: Telemetry | None = None
    """OpenTelemetry export (``core.telemetry``); None: off, nothing of it imported."""
    jobs: JobTable | None = None
    """The background jobs (``/jobs``, the end of ``-p``; the session's, as the kernel's)."""

    async def apply(self, settings: Settings) -> None:
        """Follow ``settings`` (``/mcp reload``, ``/model``): permission rules, limits, and
        the model.

        A changed model, endpoint or key gets a new client (the conversation is kept);
        settings whose model no longer resolves keep the current agent; a model that resolves
        at last makes the agent. Servers are not touched here (``Manager.start_all`` /
        ``reconfigure`` do that).

        Raises:
            ModelError: the model does not resolve; ``model_error`` keeps it when there is
                no agent yet.
        """
        self.settings = settings
        self.gate.rules = settings.permissions
        self.session.set_tool_search(settings.tool_search)
        self._swap_checkpoints(self.checkpoints)
        if self.agent is not None:
            self.agent.configure(settings)
        options = self.options
        try:
            resolved = options.model_config(settings)
            if self.agent is not None and self.resolved == resolved:
                return
            config = await settled_config(resolved, quiet=options.prompt is not None)
        except ModelError as exc:
            if self.agent is None:
                self.model_error = exc
            raise
        self.model_error = None
        self.resolved = resolved
        if self.agent is not None and self.agent.model.config == config:
            return
        model = chat_model(config, options.output_schema)
        if self.agent is not None:
            previous, self.agent.model = self.agent.model, model
            self.agent.follow_model()
            await previous.aclose()
            return
        self.models.model = model
        self.agent = chat_agent(
            self.session,
            self.models,
            self.gate,
            settings,
            sampler=self.sampler,
            checkpoints=self.checkpoints,
            hooks=chat_hooks(self.ext.hooks, settings, self.project),
            watch=self.watch,
            telemetry=self.telemetry,
        )

    def start_log(self, session_id: str) -> None:
        """``/resume ID``: continue that saved session: its log, checkpoints and the hooks'
        session are swapped in. The resumed history meets the current tool set.

        Raises:
            UsageError: the session to resume does not exist.
        """
        from codebot_mcp.core.agent import history as sessions

        saved = sessions.find(self.project, session_id)
        model = self.agent.model.config.model if self.agent else None
        log = new_log(self.globals, self.project, saved, model)
        self.pending_tasks = restore(self.session, log, saved)
        self.session.recorder = log
        self.log = log
        self.manager.tasks.journal = log  # tasks are remembered with the session
        context = replace(self.ext.context, session_id=log.id, transcript_path=str(log.path))
        self.ext.context = context
        if (hooks := self.ext.hooks) is not None:
            hooks.session_id, hooks.transcript_path = context.session_id, context.transcript_path
        self._swap_checkpoints(None)  # a resumed session has checkpoints of its own

    @property
    def project(self) -> Path:
        """The project root (or the working directory): sessions and checkpoints key on it."""
        return self.settings.project_root or self.globals.cwd

    def _swap_checkpoints(self, current: TurnCheckpoints | None) -> None:
        """The checkpoints of the current session, as the settings say, swapped in."""
        self.checkpoints = chat_checkpoints(current, self.settings, self.project, self.log)
        if self.agent is not None:
            self.agent.checkpoints = self.checkpoints

    async def session_started(self, source: str) -> None:
        """``SessionStart`` hooks (``source``: startup, resume, clear); warnings shown."""
        from codebot_mcp.core.hooks.points import session_start

        for warning in await session_start(self.ext.hooks, source):
            from codebot_mcp.cli import render

            render.warn(warning)

    async def session_ended(self, reason: str) -> None:
        """``SessionEnd`` hooks (``reason``: clear, resume, prompt_input_exit, other)."""
        from codebot_mcp.core.hooks.points import session_end

        for warning in await session_end(self.ext.hooks, reason):
            from codebot_mcp.cli import render

            render.warn(warning)

    async def reload(self, settings: Settings, raw: Settings, untrusted: tuple[str, ...]) -> None:
        """Follow re-read settings (``/mcp reload``, trust granted), trust settled
        (``untrusted``: the project servers still skipped): hooks, agents and commands read
        again, the servers reconfigured, the next turn's tools listed. :meth:`apply` follows
        for the rules, limits and model.
        """
        from codebot_mcp.cli import extensions

        self.untrusted = untrusted
        extensions.reload(self.ext, settings, raw, self.globals.cwd)
        if self.agent is not None:
            self.agent.hooks = chat_hooks(self.ext.hooks, settings, self.project)
        self.session.set_plan_mode(self.session.plan_mode)  # task lists the new agents
        await self.manager.reconfigure(settings.servers)
        await self.session.before_prompt()  # the next turn sees the new tools

    async def resume_tasks(self) -> list[str]:
        """Follow the tasks the resumed session left running to their end (after the servers
        started); each result joins the history as the call it was. One line per task."""
        from codebot_mcp.cli.chat_parts import resume_into

        pending, self.pending_tasks = self.pending_tasks, []
        return await resume_into(self.session, self.manager, pending) if pending else []

    async def aclose(self) -> None:
        """Wait for the last checkpoint, close the model's HTTP client (shielded: runs during
        cancellation too), remove the sandbox's temp directory."""
        import anyio

        with anyio.CancelScope(shield=True):
            if self.checkpoints is not None and (problem := await self.checkpoints.settle()):
                from codebot_mcp.cli import render

                render.warn(problem)
        await close_parts(self.sandbox, self.ext.confine, self.models, self.telemetry)


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
    on_progress: ProgressHook | None = None,
    mode_of: Callable[[], str] | None = None,
    editor: Callable[[str], EditorTools] | None = None,
) -> AsyncIterator[ChatRuntime]:
    """Build the runtime, each part finished when made; MCP servers are not started here (the
    caller decides when).

    ``extra_servers`` join the settings' servers before trust and the managed policy apply
    (an ACP client's ``mcpServers``; one of the same name replaces the settings' entry).
    ``on_progress`` is told the servers' progress notifications (the REPL's spinner);
    ``mode_of`` tells hooks the permission mode (ACP's session modes; else the chat's own);
    ``editor`` lends the built-in tools an ACP editor's files and terminals, given the
    session's id.

    Trust is settled first (see :func:`settle_trust`): an untrusted project server is not even
    launched, and stdio servers are launched ahead of ``start_all`` only once trusted.

    Raises:
        SettingsError: the settings cannot be read.
        UsageError: the session to resume (--continue, --resume ID) does not exist.
        ModelError: ``need_model`` and no model endpoint is configured.
    """
    from codebot_mcp.cli import extensions, render
    from codebot_mcp.cli.answers import policy
    from codebot_mcp.core.agent import history as sessions
    from codebot_mcp.core.agent.permissions import PermissionGate
    from codebot_mcp.core.agent.sampling import ModelRef, Sampler
    from codebot_mcp.core.agent.session import Session

    raw = load_unfiltered_settings(globals_)  # what the extensions' review shows; runs nothing
    if extra_servers:
        raw = replace(raw, servers={**raw.servers, **extra_servers})
    saved = None
    if options.resume_latest or options.resume:  # no such session: say so before anything runs
        saved = sessions.find(raw.project_root or globals_.cwd, options.resume or None)
    settings, untrusted = await settle_trust(globals_, raw, ask_trust)
    project = settings.project_root or globals_.cwd
    if need_model:  # fail before any server is launched
        options.model_config(settings)
    answers = user_agent or policy(settings, options.elicit, options.allow_sampling)
    found = extensions.read(settings, globals_.cwd)  # agents and commands; problems said
    subagents = extensions.subagents(settings, globals_.cwd, found)
    sandbox = chat_sandbox(globals_, settings, options.sandbox)
    telemetry = start_telemetry(settings)  # before the servers: their handshakes are traced
    locked = session_pins(settings, allow_drift=options.allow_drift)  # checked as they connect
    models = ModelRef()
    ext: Extensions | None = None
    runtime: ChatRuntime | None = None
    try:
        async with prelaunched(settings.servers) as launched:  # they boot while the model settles
            resolved, model_error = None, None
            try:
                resolved = options.model_config(settings)
                quiet = options.prompt is not None  # the REPL says which model; -p does not
                config = await settled_config(resolved, quiet=quiet)
                models = ModelRef(chat_model(config, options.output_schema))
            except ModelError as exc:
                if need_model:
                    raise
                resolved, model_error = None, exc
            model = models.model.config.model if models.model else None
            log = new_log(globals_, project, saved, model)
            sampler = Sampler(models)
            async with open_manager(
                settings.servers,
                agent=answers,
                sampler=sampler,
                pins=locked,
                launched=launched,
                journal=log,  # tasks are remembered with the session
                on_progress=on_progress,
            ) as manager:
                from codebot_mcp.core.config.trustwatch import TurnWatch
                from codebot_mcp.core.jobs.jobtable import JobTable
                from codebot_mcp.core.tools.featuretools import Place, ToolContext, feature_tools
                from codebot_mcp.mcpbridge.tools.tool_pins import pins

                catalog, loader = extensions.skill_catalog(settings, manager)
                jobs = JobTable()  # bash's background jobs: entered below, killed at the end
                # the features' tools come from the kernel's registry, made over these objects
                made = ToolContext(
                    globals_.cwd, settings.project_root, (subagents, jobs, catalog, loader)
                )
                session = Session(
                    chat_tools(
                        globals_.cwd,
                        settings,
                        manager,
                        feature_tools(made, Place.AFTER_BUILTINS),
                        sandbox,
                        jobs,
                        editor(log.id) if editor else None,
                    ),
                    manager,
                    cwd=globals_.cwd,
                    project_root=settings.project_root,
                    plan_mode=options.plan,
                    skills=catalog,
                    skill_tool=next(iter(feature_tools(made, Place.WHILE_SKILLS)), None),
                    project_notes=settings.project_extensions,
                    todos=True,
                    claude_notes=settings.claude_files,
                    jobs=jobs,
                    feature_tools=feature_tools(made, Place.AFTER_SESSION),
                    recorder=log,
                    tool_search=settings.tool_search,
                )
                pending = restore(session, log, saved)
                background = Background()
                context = extensions.HookContext(
                    session_id=log.id,
                    transcript_path=str(log.path),
                    mode_of=mode_of or chat_mode(session, yes=options.yes),
                    background=background.group,
                )
                ext = extensions.build(settings, raw, globals_.cwd, found, subagents, context)
                if approver is not None:  # hooks may come with /mcp reload: looked up when asking
                    from codebot_mcp.core.hooks.points import notifying

                    approver = notifying(lambda: ext.hooks, approver, render.warn)
                gate = PermissionGate(
                    settings.permissions,
                    approver=approver,
                    assume_yes=options.yes,
                    allow=options.allow,
                    pinned=pins(settings.project_root, settings.cwd),
                    cwd=settings.cwd,  # where `read(./secrets/**)`-style rules start
                    skills=catalog.activity,
                )
                checkpoints = chat_checkpoints(None, settings, project, log)
                watch = TurnWatch(raw)
                agent = None
                if models.model is not None:
                    agent = chat_agent(
                        session,
                        models,
                        gate,
                        settings,
                        sampler=sampler,
                        checkpoints=checkpoints,
                        hooks=chat_hooks(ext.hooks, settings, project),
                        watch=watch,
                        telemetry=telemetry,
                    )
                runtime = ChatRuntime(
                    globals_,
                    options,
                    settings,
                    manager,
                    session,
                    gate,
                    models,
                    sampler,
                    log,
                    ext,
                    sandbox,
                    catalog,
                    loader,
                    watch,
                    agent=agent,
                    model_error=model_error,
                    resolved=resolved,
                    untrusted=untrusted,
                    checkpoints=checkpoints,
                    pending_tasks=pending,
                    telemetry=telemetry,
                    jobs=jobs,
                )
                try:
                    if telemetry is not None:
                        telemetry.name_conversation(log.id)
                    await runtime.session_started("resume" if session.history else "startup")
                    async with background.open(), jobs:
                        yield runtime
                finally:
                    await runtime.session_ended(runtime.end_reason)
                    await runtime.aclose()
    except BaseException:
        if runtime is None:  # made before it: closed here
            confine = ext.confine if ext is not None else None
            await close_parts(sandbox, confine, models, telemetry)
        raise
