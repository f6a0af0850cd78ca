"""Subagents: ``task`` runs a fresh session with its own context window and returns only its
final answer (and its usage).

Agents are definition files (:mod:`core.config.definitions`, kind ``agents``):
``.codebot/agents/NAME.md``, ``.claude/agents/NAME.md`` and ``~/.codebot/agents/NAME.md``,
front matter ``name``, ``description``, ``tools`` (globs over tool names, Claude Code's
``Read``/``Bash``... understood), optional ``model``; the body is the system prompt. One agent
is built in: ``general-purpose`` (the parent's tools and identity), which a file may replace.

Rules a subagent lives by:

- its tools are the parent's current tools (its plan mode included) filtered by ``tools``:
  never more than the parent's; ``task`` itself only while ``depth < subagent_depth``;
- every call goes through the parent's gate (the same rules, ``--yes``, approvals; one
  question at a time) and the same ``PreToolUse``/``PostToolUse`` hooks;
- subagents whose tools are all read-only run in parallel; one with any other tool runs
  alone (a readers-writer lock over the subagents one agent starts);
- its transcript is saved beside the session's (``<session>/subagents/<run>.jsonl``) and the
  run is listed by ``/agents``; its tokens count in the parent's usage.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

import anyio

from codebot_mcp.core.agent.events import AgentEvents
from codebot_mcp.core.agent.history import SessionLog, new_id
from codebot_mcp.core.agent.loop import Agent, running_agent
from codebot_mcp.core.agent.session import Session
from codebot_mcp.core.config import definitions, modelnames
from codebot_mcp.core.config.definitions import Kind, codebot_tool_name
from codebot_mcp.core.errors import CodebotError
from codebot_mcp.core.model.client import ChatModel
from codebot_mcp.core.model.stream import Usage
from codebot_mcp.core.subagents.tasktool import TaskTool
from codebot_mcp.core.tools.base import Capability, Tool, ToolResult
from codebot_mcp.core.tools.featuretools import Place, ToolContext, register_tools

GENERAL = "general-purpose"
SUBAGENT_NOTE = """\
# You are a subagent
Another agent gave you one task. Work on it with your tools, then end with a final answer that \
reports what you found or did, completely: that answer is all the other agent will see (not \
your tool calls, not this conversation)."""


PARENT_ONLY = ("todo_write",)
WITH_BASH = ("bash_output", "bash_kill")
"""Tools that act on the jobs ``bash`` starts: an agent that may not run ``bash`` (its
``disallowedTools``, a tools list without it) gets neither."""
"""Tools a subagent never gets, whatever its list says: the plan is the parent's, the one the
user sees."""


def granted(spec: AgentSpec, tools: Sequence[Tool]) -> list[Tool]:
    """The parent's tools an agent of ``spec`` gets, ``task`` aside (its own, by depth): what
    its lists allow, never the parent's plan (:data:`PARENT_ONLY`), the job tools only beside
    ``bash`` (:data:`WITH_BASH`)."""
    given = [t for t in tools if t.name not in ("task", *PARENT_ONLY) and spec.gets(t)]
    if not any(t.name == "bash" for t in given):
        given = [t for t in given if t.name not in WITH_BASH]
    return given


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """One agent ``task`` can start."""

    name: str
    description: str
    prompt: str
    """The system prompt (the file's body); empty: the parent's identity."""
    tools: tuple[str, ...] | None = None
    """Globs over tool names; None: every tool of the parent."""
    model: str | None = None
    path: Path | None = None
    origin: str = "built-in"
    """``built-in``, or the folder it came from (``.codebot/agents``...)."""
    disallowed: tuple[str, ...] = ()
    """``disallowedTools``: never given, whatever ``tools`` says (``Bash(git push:*)`` takes
    the whole ``bash`` away: an agent's tools are whole tools; to refuse only some calls, use
    a ``permissions.deny`` rule such as ``bash(git push:*)``)."""

    def gets(self, tool: Tool) -> bool:
        """Whether this agent gets ``tool`` (of its parent's)."""
        return allows(self.tools, tool) and not (self.disallowed and allows(self.disallowed, tool))


BUILT_IN = AgentSpec(
    GENERAL,
    "A general agent with the same tools as yours, for research and multi-step tasks.",
    "",
)


@dataclass(slots=True)
class AgentCatalog:
    """The agents of a session, and what was skipped reading them."""

    specs: dict[str, AgentSpec] = field(default_factory=dict[str, AgentSpec])
    problems: list[str] = field(default_factory=list[str])
    shadowed: list[AgentSpec] = field(default_factory=list[AgentSpec])
    notes: list[str] = field(default_factory=list[str])
    """Agents that load, with something said once (a tool codebot does not have)."""


def agent_tools(
    entries: Sequence[str] | None,
) -> tuple[tuple[str, ...] | None, tuple[str, ...]]:
    """An agent's ``tools`` as codebot's names (``Read`` → ``read``, ``Task``/``Agent`` →
    ``task``; ``Bash(git:*)`` counts as ``bash``), and the Claude Code names codebot has no
    tool for (``WebFetch``, ``TodoWrite``...). Lower-case names, globs and ``mcp__`` names
    pass as they are (codebot's own and MCP tools)."""
    if entries is None:
        return None, ()
    tools: list[str] = []
    unknown: list[str] = []
    for entry in entries:
        base = entry.split("(", 1)[0].strip()
        name = codebot_tool_name(base)
        if name == base and base[:1].isupper() and not any(c in base for c in "*?["):
            unknown.append(base)
        elif name not in tools:
            tools.append(name)
    return tuple(tools), tuple(unknown)


def load_agents(
    root: Path | None,
    *,
    include_project: bool,
    model_aliases: Mapping[str, str] | None = None,
    claude: bool = True,
) -> AgentCatalog:
    """The built-in agent and every agent file (project ones only when ``include_project``);
    a Claude model name in ``model:`` resolves through ``model_aliases``
    (:mod:`core.config.modelnames`: unmapped, the parent's model, with one note)."""
    aliases = model_aliases or {}
    found = definitions.find(Kind.AGENTS, root, include_project=include_project, claude=claude)
    catalog = AgentCatalog(problems=[str(p) for p in found.problems])

    def spec(item: definitions.Definition) -> AgentSpec:
        description = item.text("description") or (item.body.splitlines() or [""])[0][:200]
        tools, unknown = agent_tools(item.names("tools"))
        disallowed, _ = agent_tools(item.names("disallowedTools") or item.names("disallowed-tools"))
        if unknown:
            catalog.notes.append(
                f"{item.path}: agent '{item.name}' lists {', '.join(unknown)}, which codebot "
                "does not have; it runs without "
                + ("them" if len(unknown) > 1 else "it")
                + ("" if tools else " (so with no tools at all)")
            )
        return AgentSpec(
            item.name,
            description or "(no description)",
            item.body,
            tools,
            modelnames.resolve(item.text("model"), aliases),
            item.path,
            item.folder.label,
            disallowed or (),
        )

    for name, item in found.definitions.items():
        catalog.specs[name] = spec(item)
    catalog.shadowed = [spec(item) for item in found.shadowed]
    uses = [(d.text("model"), str(d.path)) for d in found.definitions.values()]
    catalog.notes += modelnames.notes(uses, aliases)
    catalog.specs.setdefault(GENERAL, BUILT_IN)
    catalog.specs = dict(sorted(catalog.specs.items()))
    return catalog


def allows(patterns: Sequence[str] | None, tool: Tool) -> bool:
    """Whether an agent's ``tools`` globs cover ``tool`` (Claude Code names understood,
    case-insensitively; ``Bash(git:*)`` counts as ``Bash``)."""
    if patterns is None:
        return True
    name = tool.name.lower()
    for pattern in patterns:
        base = codebot_tool_name(pattern.split("(", 1)[0].strip())
        if base == "*" or fnmatchcase(name, base.lower()):
            return True
    return False


@dataclass(slots=True)
class SubagentRun:
    """One ``task`` call of this session (``/agents`` lists them)."""

    id: str
    agent: str
    description: str
    depth: int
    started: float = field(default_factory=time.time)
    status: str = "running"
    """running, done, failed or interrupted."""
    seconds: float = 0.0
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    tools: tuple[str, ...] = ()
    transcript: Path | None = None
    error: str | None = None


class _ReadWrite:
    """Read-only subagents share; one with other tools runs alone."""

    def __init__(self) -> None:
        self._readers = 0
        self._writer = False
        self._changed = anyio.Condition()

    @asynccontextmanager
    async def hold(self, write: bool) -> AsyncIterator[None]:
        async with self._changed:
            while self._writer or (write and self._readers):
                await self._changed.wait()
            if write:
                self._writer = True
            else:
                self._readers += 1
        try:
            yield
        finally:
            with anyio.CancelScope(shield=True):
                async with self._changed:
                    if write:
                        self._writer = False
                    else:
                        self._readers -= 1
                    self._changed.notify_all()


EventsFor = Callable[[SubagentRun], AgentEvents]


class Subagents:
    """Runs ``task`` for one session (a :class:`core.subagents.tasktool.TaskRunner`).

    The parent of a subagent is the agent whose prompt runs the ``task`` call
    (:func:`core.agent.loop.running_agent`), the chat's; a subagent's own ``task`` keeps that
    parent (:attr:`parent`). Transcripts are saved beside the parent session's log (its
    recorder), when there is one.

    Args:
        catalog: The agents.
        cwd: The working directory (subagents work there too).
        project_root: The project root (for project notes).
        max_depth: ``subagent_depth``: subagents at this depth get no ``task``.
        events_for: What a subagent's events go to (the CLI shows them indented).
    """

    def __init__(
        self,
        catalog: AgentCatalog,
        *,
        cwd: Path,
        project_root: Path | None,
        max_depth: int,
        events_for: EventsFor = lambda run: AgentEvents(),
        depth: int = 0,
        runs: list[SubagentRun] | None = None,
        parent: Agent | None = None,
    ) -> None:
        self.catalog = catalog
        self.cwd = cwd
        self.project_root = project_root
        self.max_depth = max_depth
        self.depth = depth
        self.runs: list[SubagentRun] = runs if runs is not None else []
        self.events_for = events_for
        """What a subagent's events go to (the CLI shows them indented)."""
        self.parent = parent
        """The chat's agent, below the top (None: the agent running the ``task`` call)."""
        self._lock = _ReadWrite()

    def agents(self) -> list[tuple[str, str]]:
        """``(name, description)`` of each agent."""
        return [(s.name, s.description) for s in self.catalog.specs.values()]

    def tool(self) -> TaskTool | None:
        """The ``task`` tool for a session at this depth (None past ``subagent_depth``)."""
        return TaskTool(self) if self.depth < self.max_depth else None

    def _child(self, parent: Agent) -> Subagents:
        # Its own lock: siblings below share it, while this level's lock is held by their
        # parent (a writing subagent's children run inside its turn; a read-only one's
        # children are read-only too).
        return Subagents(
            self.catalog,
            cwd=self.cwd,
            project_root=self.project_root,
            max_depth=self.max_depth,
            events_for=self.events_for,
            depth=self.depth + 1,
            runs=self.runs,
            parent=parent,
        )

    def tools_for(self, spec: AgentSpec, parent: Agent) -> list[Tool]:
        """The parent's current tools that ``spec`` allows (no ``task`` past the depth; no
        ``todo_write``: the plan is the parent's, the one the user sees; the job tools only
        beside ``bash``)."""
        tools = granted(spec, parent.session.active_tools)
        child = self._child(parent)
        task = child.tool()
        if task is not None and spec.gets(task):
            tools.append(task)
        return tools

    async def run(self, description: str, prompt: str, agent: str | None) -> ToolResult:
        """Run one subagent to its final answer; failures are error results."""
        parent = self.parent or running_agent()
        spec = self.catalog.specs.get(agent or GENERAL)
        if spec is None:
            names = ", ".join(self.catalog.specs)
            return ToolResult(f"task: there is no agent '{agent}'; agents: {names}", is_error=True)
        if parent is None:
            return ToolResult("task: no model is configured for subagents", is_error=True)
        tools = self.tools_for(spec, parent)
        record = SubagentRun(new_id(), spec.name, description, self.depth + 1)
        record.tools = tuple(t.name for t in tools)
        self.runs.append(record)
        began = time.monotonic()
        read_only = all(t.info.permission.capability is Capability.READ for t in tools)
        try:
            async with self._lock.hold(write=not read_only):
                result = await self._run(spec, prompt, tools, parent, record)
        except BaseException:
            record.status = "interrupted"
            raise
        finally:
            record.seconds = time.monotonic() - began
            parent.usage.add(record.usage)
            if parent.last is not None:
                parent.last.usage.add(record.usage)
        return result

    async def _run(
        self, spec: AgentSpec, prompt: str, tools: list[Tool], parent: Agent, record: SubagentRun
    ) -> ToolResult:
        model = self._model(spec, parent)
        session = Session(
            tools,
            None,
            cwd=self.cwd,
            project_root=self.project_root,
            project_notes=parent.session.project_notes,
            claude_notes=parent.session.claude_notes,
            recorder=self._log(record, spec, model, parent),
        )
        session.set_tool_search(False)
        session.set_identity("\n\n".join([spec.prompt or parent.session.identity, SUBAGENT_NOTE]))
        child = Agent(
            session,
            model,
            parent.gate,
            max_turns=parent.max_turns,
            tool_result_max_tokens=parent.tool_result_max_tokens,
            hooks=parent.hooks.for_subagent() if parent.hooks is not None else None,
            observer=parent.observer,  # telemetry: its run is a span under this call's
            # Its changes belong to the parent's turn: its first write takes that turn's
            # snapshot.
            checkpoints=parent.checkpoints.for_subagent() if parent.checkpoints else None,
        )
        child.context_window = parent.context_window
        child.follow_model()
        events = self.events_for(record)
        if child.hooks is not None:  # SubagentStart now, SubagentStop when it would stop
            transcript = str(record.transcript) if record.transcript else ""
            fields = {
                "agent_id": record.id,
                "agent_type": spec.name,
                "agent_transcript_path": transcript,
            }
            if extra := await child.hooks.subagent_start(fields, events):
                prompt = f"{prompt}\n\n{extra}"
        try:
            result = await child.run(prompt, events)
        except CodebotError as exc:
            record.status, record.error = "failed", exc.message
            partial = child.last.text if child.last is not None else ""
            text = f"subagent '{spec.name}' failed: {exc.message}"
            return ToolResult(
                text + (f"\nWhat it said before:\n{partial}" if partial else ""), True
            )
        finally:
            record.usage = child.usage
            record.turns = child.last.turns if child.last is not None else 0
        record.status = "done"
        answer = result.text.strip() or "(the subagent finished without an answer)"
        usage = child.usage
        tokens = f"{usage.total} tokens" if usage.known else "usage not reported"
        turns = f"{record.turns} turn" + ("" if record.turns == 1 else "s")
        footer = f"[subagent '{spec.name}': {turns}, {tokens}]"
        data = {
            "agent": spec.name,
            "run": record.id,
            "turns": record.turns,
            "usage": usage.as_dict(),
            "transcript": str(record.transcript) if record.transcript else None,
        }
        return ToolResult(f"{answer}\n\n{footer}", data=data)

    @staticmethod
    def _model(spec: AgentSpec, parent: Agent) -> ChatModel:
        """The parent's model, or ``spec.model`` at the same endpoint (same connection)."""
        name = spec.model
        if not name or name == parent.model.config.model:
            return parent.model
        return ChatModel(parent.model.client, parent.model.config.with_model(name))

    def _log(
        self, record: SubagentRun, spec: AgentSpec, model: ChatModel, parent: Agent
    ) -> SessionLog | None:
        parent_log = parent.session.recorder
        if not isinstance(parent_log, SessionLog):
            return None
        log = SessionLog(
            self.project_root or self.cwd,
            session_id=record.id,
            scrub=parent_log.scrub,
            meta={
                "parent": parent_log.id,
                "agent": spec.name,
                "description": record.description,
                "model": model.config.model,
                "cwd": str(self.cwd),
            },
        )
        log.path = parent_log.path.with_suffix("") / "subagents" / f"{record.id}.jsonl"
        record.transcript = log.path
        return log


def task_tools(context: ToolContext) -> list[Tool]:
    """``task`` for the session the composition root made :class:`Subagents` for (none past
    ``subagent_depth``, nor without subagents)."""
    subagents = context.get(Subagents)
    tool = subagents.tool() if subagents is not None else None
    return [tool] if tool is not None else []


register_tools("subagents", task_tools, place=Place.AFTER_BUILTINS)
