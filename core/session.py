"""The session: tool sets, history, plan mode and the before-prompt hook.

``all_tools`` is the local layer (built-ins, fixed) followed by the MCP layer (replaceable).
Only :meth:`Session.before_prompt` replaces the MCP layer (remote tools are a replaceable layer): an
active set that mirrors ``all_tools`` keeps mirroring; a filtered one that held MCP tools gets
the new MCP set in their place; a filtered one without MCP tools stays without. Plan mode is a
view over the active set (read-capability tools only), so a refresh in plan mode stays filtered.

Works with any :class:`core.tools.ToolSource`; this module never imports ``mcp``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from core import prompt
from core.tools import Capability, Tool, ToolSource, is_mcp_tool, normalize_schema

Message = dict[str, Any]


def tool_schema(tool: Tool) -> dict[str, Any]:
    """The Chat Completions ``tools`` entry for a tool."""
    parameters = normalize_schema(tool.schema())
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": parameters},
    }


class Session:
    """One conversation: what the model may call, what was said, and the system prompt.

    Args:
        local_tools: The built-in layer (fixed for the session).
        source: Where MCP tools come from; None for none.
        cwd: The working directory (named in the prompt; project notes are looked up there).
        project_root: Where ``.codebot/`` was found, also searched for project notes.
        plan_mode: Start in plan mode (``--plan``).
    """

    def __init__(
        self,
        local_tools: Sequence[Tool],
        source: ToolSource | None = None,
        *,
        cwd: Path,
        project_root: Path | None = None,
        plan_mode: bool = False,
    ) -> None:
        self.source = source
        self.history: list[Message] = []
        self.plan_mode = plan_mode
        self.server_instructions = ""
        self.identity = prompt.IDENTITY
        self.instructions = prompt.instructions_block(cwd, project_root)
        self._local: list[Tool] = list(local_tools)
        self._mcp: list[Tool] = []
        self._active: list[Tool] | None = None  # None: mirror all_tools
        self.system_prompt = ""
        self._schemas: list[dict[str, Any]] = []
        self._by_name: dict[str, Tool] = {}
        self._rebuild()

    @property
    def all_tools(self) -> list[Tool]:
        """Local tools, then MCP tools."""
        return [*self._local, *self._mcp]

    @property
    def active_tools(self) -> list[Tool]:
        """The tools the model is offered now (after the filter and plan mode)."""
        base = self.all_tools if self._active is None else self._active
        if self.plan_mode:
            return [t for t in base if t.permission().capability is Capability.READ]
        return list(base)

    def set_active(self, names: Iterable[str] | None) -> None:
        """Restrict the active set to ``names`` (in ``all_tools`` order); None mirrors all.

        The filtered half of the replaceable-layer rule above; tool search builds on it.
        """
        if names is None:
            self._active = None
        else:
            wanted = set(names)
            self._active = [t for t in self.all_tools if t.name in wanted]
        self._rebuild()

    def set_plan_mode(self, on: bool) -> None:
        """Turn plan mode on or off (rebuilds the tool list and the prompt)."""
        self.plan_mode = on
        self._rebuild()

    async def before_prompt(self) -> bool:
        """Pick up a changed MCP tool set; True when the tools or prompt changed.

        Costs nothing when the source is clean. This is the only place that writes tools.
        """
        if self.source is None:
            return False
        tools = await self.source.refresh_if_dirty()
        if tools is None:
            return False
        self._replace_mcp([t for t in tools if is_mcp_tool(t)])
        self.server_instructions = self.source.instructions()
        self._rebuild()
        return True

    def _replace_mcp(self, new: list[Tool]) -> None:
        self._mcp = new
        if self._active is None:
            return
        held = [i for i, t in enumerate(self._active) if is_mcp_tool(t)]
        if not held:
            return  # a filtered set that excluded MCP stays so
        local = [t for t in self._active if not is_mcp_tool(t)]
        at = sum(1 for t in self._active[: held[0]] if not is_mcp_tool(t))
        self._active = [*local[:at], *new, *local[at:]]

    def _rebuild(self) -> None:
        active = self.active_tools
        self._schemas = [tool_schema(t) for t in active]
        self._by_name = {t.name: t for t in active}
        dynamic = prompt.dynamic_block(active, self.server_instructions, plan_mode=self.plan_mode)
        self.system_prompt = prompt.assemble(self.identity, self.instructions, dynamic)

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The ``tools`` array for the request (same objects while the tool set is unchanged)."""
        return self._schemas

    def find_tool(self, name: str) -> Tool | None:
        """An active tool by its model-visible name (routing is by exact name, never split)."""
        return self._by_name.get(name)

    def messages(self) -> list[Message]:
        """The system message followed by the history."""
        return [{"role": "system", "content": self.system_prompt}, *self.history]

    def clear(self) -> None:
        """Forget the conversation (tools and plan mode stay)."""
        self.history.clear()
