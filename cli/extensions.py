"""Hooks, subagents, custom commands and skills, wired into a chat from trust-filtered
settings, and what ``/hooks``, ``/agents`` and ``/help`` show of them.

Everything read here comes after trust: the project's hooks, agents and commands are in the
settings only once the project is trusted (``Settings.project_extensions``); yours always.
"""

from __future__ import annotations

import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codebot_mcp.cli import render
from codebot_mcp.core.agent.events import AgentEvents

if TYPE_CHECKING:
    from codebot_mcp.core.agent.loop import Agent
    from codebot_mcp.core.agent.permissions import Decision
    from codebot_mcp.core.config.hooks import HookCommand
    from codebot_mcp.core.config.settings import Settings
    from codebot_mcp.core.hooks.runner import Hooks
    from codebot_mcp.core.model.stream import ToolCall
    from codebot_mcp.core.skills.skillcatalog import SkillCatalog
    from codebot_mcp.core.skills.skillload import SkillLoader
    from codebot_mcp.core.slashcommands.templates import CommandCatalog, CustomCommand
    from codebot_mcp.core.subagents.delegation import AgentCatalog, SubagentRun, Subagents
    from codebot_mcp.core.tools.base import Tool, ToolResult
    from codebot_mcp.core.tools.sources import SkillSource

RESERVED = (
    *("exit", "quit", "help", "clear", "plan", "tools", "context", "usage", "compact"),
    *("resume", "mcp", "hooks", "agents", "skills", "memory", "init", "rewind"),
    *("todos", "export"),
)
"""The REPL's own command names: a custom command of the same name is not used."""


@dataclass
class Extensions:
    """A chat's hooks, subagents and custom commands."""

    root: Path | None
    """Where the project's ``.codebot/`` and ``.claude/`` folders are."""
    hooks: Hooks | None
    """None when no hook is configured."""
    subagents: Subagents
    commands: CommandCatalog
    skipped_hooks: tuple[HookCommand, ...] = ()
    """The project's hooks, not run: the project is not trusted."""
    untrusted_files: int = 0
    """Project definition files not read: the project is not trusted."""
    spawn: dict[str, Any] = field(default_factory=dict[str, Any])
    """More options for starting hook processes (``core.proc.spawn.open_process``). Hooks
    run as you, unconfined; an entry with ``"sandbox": MODE`` runs in :attr:`confine`'s."""
    confine: HookSandboxes | None = None
    """The sandboxes of hooks that ask for one (made on first use, closed with the chat)."""
    context: HookContext = field(default_factory=lambda: HookContext())
    """What the hooks are told about the chat (hooks made by ``/mcp reload`` too)."""


@dataclass(frozen=True)
class HookContext:
    """What the chat's hooks know about it: the session (its id and transcript, new on
    ``/resume``), the permission mode, and where ``async`` hooks run."""

    session_id: str = ""
    transcript_path: str = ""
    mode_of: Callable[[], str] = lambda: "default"
    background: Callable[[], Any] = lambda: None
    """The chat's task group while it is open (an ``anyio.abc.TaskGroup``), else None."""


class HookSandboxes:
    """The sandboxes of hook entries that say ``"sandbox": MODE``: one per mode, made on
    first use, writing where ``bash``'s would (the project, ``roots``, ``writable``)."""

    def __init__(self, settings: Settings, workspace: Path) -> None:
        self.settings = settings
        self.workspace = workspace
        self._made: dict[str, Any] = {}

    def __call__(self, mode: str) -> tuple[dict[str, Any], dict[str, str]]:
        """Spawn options and environment for a hook confined in ``mode``.

        Raises:
            CodebotError: the machine cannot confine commands in that mode.
        """
        from codebot_mcp.core.errors import CodebotError
        from codebot_mcp.core.sandbox.confinement import Sandbox

        sandbox = self._made.get(mode)
        if sandbox is None:
            from codebot_mcp.core.sandbox import sandboxsettings
            from codebot_mcp.core.sandbox.hiding import settings_secrets

            config = sandboxsettings.of(self.settings)
            sandbox = self._made[mode] = Sandbox(
                mode,
                network=config.network,
                domains=config.domains,
                workspace=self.workspace,
                roots=self.settings.roots,
                writable=config.writable,
                source="the hook's entry",
                deny_read=(*config.deny_read, *settings_secrets(self.settings)),
            )
        if not sandbox.active:
            missing = "; ".join(sandbox.missing)
            raise CodebotError(
                f'it asks for "sandbox": "{mode}", which this machine cannot give ({missing}); '
                "it did not run"
            )
        return {"confine": sandbox.confinement()}, sandbox.environment({})

    def close(self) -> None:
        """Remove the sandboxes' temp directories."""
        for sandbox in self._made.values():
            sandbox.close()


@dataclass(frozen=True)
class Definitions:
    """The agents and custom commands of a chat, read from their files."""

    root: Path | None
    """Where the project's ``.codebot/`` and ``.claude/`` folders are."""
    agents: AgentCatalog
    commands: CommandCatalog


def definitions(settings: Settings, root: Path | None) -> Definitions:
    """Read the agents and commands under ``root`` (the project's only once it is trusted);
    problems in definition files are warnings naming each file."""
    from codebot_mcp.core.slashcommands.templates import load_commands
    from codebot_mcp.core.subagents.delegation import load_agents

    project = settings.project_extensions
    aliases = settings.model_aliases
    claude = settings.claude_files
    agents = load_agents(root, include_project=project, model_aliases=aliases, claude=claude)
    commands = load_commands(
        root, include_project=project, reserved=RESERVED, model_aliases=aliases, claude=claude
    )
    for problem in [*agents.problems, *commands.problems]:
        render.warn_once(f"skipping {problem}")
    for note in [*agents.notes, *commands.notes]:
        render.warn_once(note)
    return Definitions(root, agents, commands)


def read(settings: Settings, cwd: Path) -> Definitions:
    """:func:`definitions` of the project ``cwd`` is in."""
    from codebot_mcp.core.config import discovery

    return definitions(settings, discovery.project_root(cwd, settings.project_root))


def subagents(settings: Settings, cwd: Path, found: Definitions) -> Subagents:
    """The chat's subagents (``task``) over the agents ``found``."""
    from codebot_mcp.core.subagents.delegation import Subagents

    return Subagents(
        found.agents,
        cwd=cwd,
        project_root=settings.project_root,
        max_depth=settings.subagent_depth,
        events_for=SubagentView,
    )


def build(
    settings: Settings,
    raw: Settings,
    cwd: Path,
    found: Definitions,
    subagents: Subagents,
    context: HookContext,
) -> Extensions:
    """The chat's hooks (``raw``: the settings before trust, to say what was skipped), its
    ``subagents`` and the commands ``found``."""
    confine = HookSandboxes(settings, settings.project_root or cwd)
    spawn: dict[str, Any] = {}
    return Extensions(
        found.root,
        _hooks(settings, cwd, found.root, confine, spawn, context),
        subagents,
        found.commands,
        skipped_hooks=_skipped(settings, raw),
        untrusted_files=_untrusted(settings, found.root, settings.claude_files),
        spawn=spawn,
        confine=confine,
        context=context,
    )


def reload(ext: Extensions, settings: Settings, raw: Settings, cwd: Path) -> None:
    """Read them again (``/mcp reload``), in place: the session keeps its ``task`` tool."""
    found = definitions(settings, ext.root)
    ext.subagents.catalog = found.agents
    ext.commands = found.commands
    ext.skipped_hooks = _skipped(settings, raw)
    ext.untrusted_files = _untrusted(settings, ext.root, settings.claude_files)
    from codebot_mcp.core.hooks import hooksection

    configured = hooksection.of(settings)
    if not configured:
        if ext.hooks is not None:
            ext.hooks.commands = ()
        return
    if ext.hooks is None:
        ext.hooks = _hooks(settings, cwd, ext.root, ext.confine, ext.spawn, ext.context)
    else:
        ext.hooks.commands = configured


def _skipped(settings: Settings, raw: Settings) -> tuple[HookCommand, ...]:
    """The hooks of ``raw`` (the settings before trust) that ``settings`` does not run."""
    from codebot_mcp.core.hooks import hooksection

    run = hooksection.of(settings)
    return tuple(h for h in hooksection.of(raw) if h not in run)


def _untrusted(settings: Settings, root: Path | None, claude: bool) -> int:
    from codebot_mcp.core.config import discovery

    if settings.project_extensions:
        return 0
    return len(discovery.definition_files(root, claude=claude))


def _hooks(
    settings: Settings,
    cwd: Path,
    root: Path | None,
    confine: HookSandboxes | None,
    spawn: dict[str, Any],
    context: HookContext,
) -> Hooks | None:
    """The chat's hooks (None: none configured)."""
    from codebot_mcp.core.hooks import hooksection

    configured = hooksection.of(settings)
    if not configured:
        return None
    from codebot_mcp.core.hooks.runner import Hooks

    return Hooks(
        configured,
        cwd=cwd,
        project_dir=root or cwd,
        session_id=context.session_id,
        transcript_path=context.transcript_path,
        mode_of=context.mode_of,
        spawn=spawn,
        confine=confine,
        background=context.background,
    )


def skill_catalog(
    settings: Settings, source: SkillSource | None
) -> tuple[SkillCatalog, SkillLoader]:
    """The skills of this run: the local folders (the project's only once it is trusted,
    ``Settings.project_extensions``, each file then held to what trust hashed) and those
    ``source`` serves, with the loader that reads them. Served skills are listed later
    (``SkillCatalog.refresh``); nothing here reads a file beyond each ``SKILL.md``."""
    from codebot_mcp.core.config import discovery, trust
    from codebot_mcp.core.config.skills import discover
    from codebot_mcp.core.skills.skillcatalog import SkillCatalog
    from codebot_mcp.core.skills.skillload import SkillLoader

    root = discovery.project_root(settings.cwd, settings.project_root)
    include = settings.project_extensions
    claude = settings.claude_files
    files = tuple(discovery.definition_files(root, claude=claude))
    held = trust.held_digests(files) if include else {}
    local = discover(root, include_project=include, claude=claude)
    for skill in local.skills:
        if skill.note:
            render.warn_once(f"{skill.skill_file}: {skill.note}")
    return SkillCatalog(local, source), SkillLoader(source, held)


# -- -p and the REPL: running a custom command -------------------------------------------------


def command_for(ext: Extensions | None, line: str) -> tuple[CustomCommand, str] | None:
    """The custom command ``line`` runs (``/name args``), with its prompt; None for none."""
    if ext is None or not line.lstrip().startswith("/"):
        return None
    found = ext.commands.find(line)
    if found is None:
        return None
    from codebot_mcp.core.slashcommands.templates import expand

    command, arguments = found
    for entry, why in command.ignored_tools:
        render.warn_once(
            f"/{command.name}: allowed-tools entry '{entry}' is not honoured: {why}; that tool "
            f"still asks ({command.path})"
        )
    return command, expand(command, arguments)


@asynccontextmanager
async def running(
    ext: Extensions | None, agent: Agent, command: CustomCommand | None, prompt: str
) -> AsyncIterator[str]:
    """The command's ``allowed-tools`` and ``model`` while its prompt runs; yields the prompt,
    its ``!`cmd``` lines run and its ``@path`` files inlined (as written for None)."""
    if command is None:
        yield prompt
        return
    from codebot_mcp.core.slashcommands.templates import applied, prepare

    root = ext.root if ext is not None and ext.root is not None else Path.cwd()
    async with applied(agent, command):
        prepared = await prepare(agent, command, prompt, root)
        for note in prepared.notes:
            render.warn(note)
        yield prepared.text


# -- what the REPL shows -------------------------------------------------------------------------


def hooks_report(ext: Extensions | None) -> str:
    """``/hooks``: every hook by event: matcher, command, timeout, the file it comes from
    (``~/.claude/settings.json``, ``.claude/settings.local.json``, ``.codebot/settings.json``)."""
    from codebot_mcp.core.config.claudefiles import origin
    from codebot_mcp.core.config.hooks import EVENTS

    root = ext.root if ext is not None else None
    hooks = ext.hooks.commands if ext and ext.hooks else ()
    lines: list[str] = []
    for event in EVENTS:
        mine = [h for h in hooks if h.event == event]
        if not mine:
            continue
        lines.append(f"{event}:")
        rows = [
            [h.matcher or "*", h.command, f"{h.timeout:g}s", f"{origin(h.source, root)} ({h.key})"]
            for h in mine
        ]
        lines.append(render.table(rows, indent="  "))
    if not lines:
        lines.append('(no hooks configured: add them under "hooks" in settings.json)')
    if ext and ext.skipped_hooks:
        files = sorted({origin(h.source, root) for h in ext.skipped_hooks})
        lines.append(
            f"not run: {len(ext.skipped_hooks)} project hook(s) from {', '.join(files)}: the "
            "project is not trusted (`codebot trust`)"
        )
    runs = ext.hooks.runs[-10:] if ext and ext.hooks else []
    if runs:
        lines.append("latest runs:")
        rows = [
            [
                r.hook.event,
                r.hook.command,
                "timed out" if r.timed_out else f"exit {r.code}",
                f"{r.seconds:.2f}s",
            ]
            for r in runs
        ]
        lines.append(render.table(rows, indent="  "))
    return "\n".join(lines)


def agents_report(ext: Extensions | None, parent: Agent | None) -> str:
    """``/agents``: the agents ``task`` can start (under ``parent``, the chat's agent), then
    this session's runs."""
    if ext is None:
        return "(no agents)"
    from codebot_mcp.core.config.claudefiles import origin
    from codebot_mcp.core.subagents.delegation import AgentSpec, granted

    subagents = ext.subagents
    nests = subagents.depth + 1 < subagents.max_depth  # a subagent gets `task` too

    def tools_of(spec: AgentSpec) -> str:
        """The tools the agent really gets: its lists over this session's tools."""
        if spec.tools is None and not spec.disallowed:
            return "(all of yours)"
        if parent is not None:
            tools = parent.session.active_tools
            names = [t.name for t in granted(spec, tools)]
            if nests and any(t.name == "task" and spec.gets(t) for t in tools):
                names.append("task")
            return ", ".join(names) or "(none)"
        given = ", ".join(spec.tools) if spec.tools is not None else "all of yours"
        return given + "".join(f", not {d}" for d in spec.disallowed)

    rows = [
        [
            s.name,
            origin(s.path, ext.root) if s.path else s.origin,
            tools_of(s),
            s.model or "(yours)",
            render.first_line(s.description, 60),
        ]
        for s in subagents.catalog.specs.values()
    ]
    lines = ["agents (task's `agent`):", render.table(rows, indent="  ")]
    if subagents.max_depth < 1:
        lines.append("the task tool is off ('subagent_depth' is 0)")
    for spec in subagents.catalog.shadowed:
        lines.append(f"  (not used: {spec.path}, shadowed by another '{spec.name}')")
    if ext.untrusted_files:
        lines.append(
            f"not read: {ext.untrusted_files} project definition file(s): the project is not "
            "trusted (`codebot trust`)"
        )
    if not subagents.runs:
        lines.append("no subagent has run in this session")
        return "\n".join(lines)
    lines.append("runs in this session:")
    runs = [
        [
            r.id,
            r.agent,
            r.description,
            r.status,
            f"{r.turns} turn" + ("" if r.turns == 1 else "s"),
            f"{r.usage.total:,} tokens" if r.usage.known else "usage unknown",
            f"{r.seconds:.1f}s",
            str(r.transcript) if r.transcript else "(not saved)",
        ]
        for r in subagents.runs
    ]
    lines.append(render.table(runs, indent="  "))
    return "\n".join(lines)


def commands_help(ext: Extensions | None) -> str:
    """The custom commands, for ``/help``."""
    if ext is None or not ext.commands.commands:
        return "custom commands: none (add .codebot/commands/NAME.md)"
    rows = [
        [
            f"/{c.name}" + (f" {c.argument_hint}" if c.argument_hint else ""),
            render.first_line(c.description, 60),
            f"({c.origin})",
        ]
        for c in ext.commands.commands.values()
    ]
    return "custom commands:\n" + render.table(rows, indent="  ")


class SubagentView(AgentEvents):
    """A subagent's tool calls, indented under the ``task`` call that started it."""

    def __init__(self, run: SubagentRun) -> None:
        self.run = run
        self.began = time.monotonic()

    def _line(self, text: str) -> None:
        prefix = f"    ↳ {render.safe(self.run.agent, one_line=True)}"
        print(render.style(f"{prefix} {text}", "2", sys.stderr), file=sys.stderr)

    def tool_started(self, call: ToolCall, tool: Tool) -> None:
        """``↳ agent → name``."""
        self._line(f"→ {render.safe(call.name, one_line=True)}")

    def tool_finished(self, call: ToolCall, result: ToolResult, seconds: float) -> None:
        """Only failures: a subagent's successes would drown the parent's lines."""
        if result.is_error:
            name = render.safe(call.name, one_line=True)
            self._line(f"✗ {name}: {render.first_line(render.safe(result.text))}")

    def tool_denied(self, call: ToolCall, decision: Decision) -> None:
        """``↳ agent ⊘ name denied``."""
        name = render.safe(call.name, one_line=True)
        self._line(f"⊘ {name} denied: {render.safe(decision.reason)}")

    def notice(self, text: str) -> None:
        """A note from the subagent's run (a hook's warning)."""
        self._line(f"note: {render.safe(text)}")
