"""The session: tool sets, history, plan mode and the before-prompt hook.

``all_tools`` is the local layer (built-ins, fixed) followed by the MCP layer (replaceable).
Only :meth:`Session.before_prompt` replaces the MCP layer (remote tools are a replaceable
layer), so the tools offered change only between turns. Plan mode is a view over all of them
(read-capability tools only), so a refresh in plan mode stays filtered.

Works with any :class:`core.tools.ToolSource`; this module never imports ``mcp``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from codebot_mcp.core.agent import prompt
from codebot_mcp.core.agent.protocols import SkillSource
from codebot_mcp.core.config.notes import load as load_notes
from codebot_mcp.core.model.tokens import DEFAULT_WINDOW, estimate
from codebot_mcp.core.tools import toolsearch
from codebot_mcp.core.tools.background import BackgroundJobs
from codebot_mcp.core.tools.base import Capability, Tool, ToolSource, is_mcp_tool, tool_schema
from codebot_mcp.core.tools.builtin.todo import TodoList, TodoWriteTool
from codebot_mcp.core.tools.toolsearch import SearchToolsTool, ToolSearch, catalog

Message = dict[str, Any]


class Recorder(Protocol):
    """Saves the conversation as it goes (``core.sessions.SessionLog`` is one)."""

    def sync(self, session: Session) -> None:
        """Write what changed since the last call."""
        ...


class Session:
    """One conversation: what the model may call, what was said, and the system prompt.

    Args:
        local_tools: The built-in layer (fixed for the session).
        source: Where MCP tools come from; None for none.
        cwd: The working directory (named in the prompt; project notes are looked up there).
        project_root: Where ``.codebot/`` was found, also searched for project notes.
        plan_mode: Start in plan mode (``--plan``).
        skills: The skills the model may load (named in the prompt; served ones are listed
            again whenever the servers change).
        skill_tool: The tool that loads them (``skill``): offered, after the local layer,
            while there is at least one skill.
        project_notes: Read the project's notes into the prompt (False while the project
            is not trusted: they are listed as skipped).
        todos: Offer ``todo_write`` (the session's visible plan, :attr:`todos`), after the
            local layer: the chat's session does; a subagent's has none (nobody would see
            its list).
        jobs: The session's background jobs (``bash``'s ``run_in_background``): the loop
            tells them when a turn ends. A subagent's session has none of its own: it gets
            the parent's tools, so its jobs are the top session's.
        feature_tools: The features' tools offered after the session's own (``todo_write``):
            ``core.tools.featuretools.Place.AFTER_SESSION`` (the jobs' ``bash_output`` and
            ``bash_kill``), as the composition root got them from the kernel's registry.
        recorder: Where the conversation is saved (the session's log); None: not saved.
        tool_search: Setting ``tool_search`` ("auto", True, False).
    """

    def __init__(
        self,
        local_tools: Sequence[Tool],
        source: ToolSource | None = None,
        *,
        cwd: Path,
        project_root: Path | None = None,
        plan_mode: bool = False,
        skills: SkillSource | None = None,
        skill_tool: Tool | None = None,
        project_notes: bool = True,
        todos: bool = False,
        claude_notes: bool = True,
        jobs: BackgroundJobs | None = None,
        feature_tools: Sequence[Tool] = (),
        recorder: Recorder | None = None,
        tool_search: str | bool = "auto",
    ) -> None:
        self.source = source
        self.skills = skills
        self._skill_tool = skill_tool
        self.history: list[Message] = []
        self.plan_mode = plan_mode
        self.server_instructions = ""
        self.identity = prompt.IDENTITY
        self.cwd, self.project_root = cwd, project_root
        self.project_notes = project_notes
        """The project's notes may go into the prompt (False: the project is not trusted)."""
        self.claude_notes = claude_notes
        """``~/.claude/CLAUDE.md`` goes into the prompt (``claude_files``)."""
        self.notes = load_notes(cwd, project_root, project=project_notes, claude=claude_notes)
        """The project notes in the prompt (``/memory`` shows them)."""
        self.instructions = prompt.instructions_block(cwd, project_root, self.notes)
        self.todos = TodoList()
        """The plan ``todo_write`` keeps (``/todos`` shows it; saved with the session)."""
        self._local: list[Tool] = list(local_tools)
        if todos:
            self._local.append(TodoWriteTool(self.todos))
        self.jobs = jobs
        """The background jobs ``bash`` starts (``/jobs`` lists them); None: no jobs."""
        self._local += feature_tools
        self._mcp: list[Tool] = []
        self.system_prompt = ""
        self.blocks: dict[str, str] = {}
        """The system prompt's blocks by name (for ``/context``)."""
        self._schemas: list[dict[str, Any]] = []
        self._by_name: dict[str, Tool] = {}
        self.tool_search = tool_search
        """Setting ``tool_search``: "auto", True or False."""
        self.context_window = DEFAULT_WINDOW
        self.search = ToolSearch()
        self._search_tool = SearchToolsTool(self.search, _describe)
        self.search_on = False
        """Whether MCP tools are deferred behind ``search_tools`` now."""
        self._offered: list[Tool] = []
        self.recorder = recorder
        """Where the conversation is saved (the session's log); None: not saved."""
        self.history_version = 0
        """Bumped whenever the history is rewritten (compaction, /clear, resume)."""
        self._rebuild()

    @property
    def all_tools(self) -> list[Tool]:
        """Local tools (with ``skill`` while there are skills), then MCP tools."""
        skill = self._skill_tool
        if skill is not None and self.skills is not None and self.skills.skills():
            return [*self._local, skill, *self._mcp]
        return [*self._local, *self._mcp]

    @property
    def active_tools(self) -> list[Tool]:
        """The tools the model is offered now (all of them, or the read tools in plan mode)."""
        base = self.all_tools
        if self.plan_mode:
            return [t for t in base if t.info.permission.capability is Capability.READ]
        return list(base)

    def set_plan_mode(self, on: bool) -> None:
        """Turn plan mode on or off (rebuilds the tool list and the prompt)."""
        self.plan_mode = on
        self._rebuild()

    def set_identity(self, text: str) -> None:
        """Replace the identity block (a subagent's own system prompt)."""
        self.identity = text
        self._rebuild()

    def set_tool_search(self, value: str | bool) -> None:
        """Setting ``tool_search`` ("auto", True, False)."""
        if value != self.tool_search:
            self.tool_search = value
            self._rebuild()

    def set_context_window(self, window: int) -> None:
        """The model's window ("auto" tool search depends on it)."""
        if window != self.context_window:
            self.context_window = window
            self._rebuild()

    async def before_prompt(self) -> bool:
        """Pick up a changed MCP tool set or newly loaded tools; True when the request changed.

        Costs nothing when the source is clean. This is the only place that writes tools.
        """
        changed = False
        if self.search.pending:
            self.search.pending = False
            self._rebuild()
            changed = True
        if self.source is not None and await self._refresh():
            changed = True
        return changed

    def reload_notes(self) -> None:
        """Read the project notes again (after ``/init`` wrote one) and rebuild the prompt."""
        self.notes = load_notes(
            self.cwd, self.project_root, project=self.project_notes, claude=self.claude_notes
        )
        self.instructions = prompt.instructions_block(self.cwd, self.project_root, self.notes)
        self._rebuild()

    async def refresh_skills(self) -> bool:
        """List the servers' skills again (``/skills``); True when the prompt changed."""
        if self.skills is None or not await self.skills.refresh(force=True):
            return False
        self._rebuild()
        return True

    async def _refresh(self) -> bool:
        assert self.source is not None
        tools = await self.source.refresh_if_dirty()
        if tools is None:
            return False
        self._mcp = [t for t in tools if is_mcp_tool(t)]
        self.server_instructions = self.source.instructions()
        if self.skills is not None:
            await self.skills.refresh()  # entries only: no skill file is read
        self._rebuild()
        return True

    def _wants_search(self, mcp: list[Tool]) -> bool:
        if not mcp or self.tool_search is False:
            return False
        size = 0 if self.tool_search is True else estimate([tool_schema(t) for t in mcp])
        return toolsearch.wanted(self.tool_search, size, self.context_window)

    def _rebuild(self) -> None:
        active = self.active_tools
        mcp = [t for t in active if is_mcp_tool(t)]
        self.search_on = self._wants_search(mcp)
        deferred: list[Tool] = []
        if self.search_on:
            by_name = {t.name: t for t in mcp}
            loaded = [by_name[n] for n in self.search.loaded if n in by_name]
            local = [t for t in active if not is_mcp_tool(t)]
            offered = [*local, self._search_tool, *loaded]
            deferred = [t for t in mcp if t.name not in set(self.search.loaded)]
        else:
            offered = active
        self.search.set_deferred(deferred)
        self._offered = offered
        self._schemas = [tool_schema(t) for t in offered]
        self._by_name = {t.name: t for t in offered}
        dynamic = prompt.dynamic_block(offered, self.server_instructions, plan_mode=self.plan_mode)
        if deferred:
            dynamic = "\n\n".join(b for b in (dynamic, catalog(deferred, prompt.server_of)) if b)
        if self.skills is not None:
            dynamic = "\n\n".join(b for b in (dynamic, self.skills.prompt_section()) if b)
        self.blocks = {
            "identity": self.identity,
            "instructions": self.instructions,
            "dynamic": dynamic,
        }
        self.system_prompt = prompt.assemble(self.identity, self.instructions, dynamic)

    @property
    def offered_tools(self) -> list[Tool]:
        """The tools in the request: the active set, or with tool search the built-ins,
        ``search_tools`` and the loaded MCP tools."""
        return list(self._offered)

    def deferred_names(self) -> set[str]:
        """MCP tools that exist but are not in the request (tool search)."""
        return {t.name for t in self.search.deferred}

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The ``tools`` array for the request (same objects while the tool set is unchanged)."""
        return self._schemas

    def find_tool(self, name: str) -> Tool | None:
        """An offered tool by its model-visible name (routing is by exact name, never split)."""
        return self._by_name.get(name)

    def messages(self) -> list[Message]:
        """The system message followed by the history."""
        return [{"role": "system", "content": self.system_prompt}, *self.history]

    def checkpoint(self) -> None:
        """Save what changed (when a recorder is attached); never raises for a full disk."""
        if self.recorder is not None:
            self.recorder.sync(self)

    def rewrote_history(self) -> None:
        """The history was changed in place, not only appended to (compaction)."""
        self.history_version += 1

    def replace_history(self, messages: Iterable[Message]) -> None:
        """Start from these messages (a resumed session)."""
        self.history[:] = list(messages)
        self.history_version += 1

    def restore_loaded(self, names: Iterable[str]) -> None:
        """Tools ``search_tools`` had loaded in a resumed session: loaded again, in order."""
        new = [n for n in names if n not in self.search.loaded]
        if new:
            self.search.loaded.extend(new)
            self._rebuild()

    def clear(self) -> None:
        """Forget the conversation and its todo list (tools and plan mode stay)."""
        self.history.clear()
        self.todos.replace([])
        self.history_version += 1
        self.checkpoint()


def _describe(tool: Tool) -> str:
    params = ", ".join(tool_schema(tool)["function"]["parameters"].get("properties", {}))
    summary = prompt.first_line(tool.description)
    return f"{tool.name}: {summary}" + (f" (parameters: {params})" if params else "")
