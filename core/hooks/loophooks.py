"""The user's hooks as the loop calls them: :class:`LoopHooks`, the kernel's
``core.agent.protocols.TurnHooks`` over one :class:`core.hooks.runner.Hooks`, registered at
import with the kernel's loop parts (``core.agent.loopparts``) for the chat's hooks the
composition root provides (none configured: no part, and the loop runs no hook).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from codebot_mcp.core.agent.loopparts import PartContext, register_loop_part
from codebot_mcp.core.agent.protocols import TurnHooks
from codebot_mcp.core.hooks.points import (
    after_call,
    before_call,
    before_compact,
    keep_going,
    post_compact,
    subagent_start,
    submit,
)
from codebot_mcp.core.hooks.runner import Hooks

if TYPE_CHECKING:
    from codebot_mcp.core.agent.events import AgentEvents
    from codebot_mcp.core.agent.permissions import HookDecision
    from codebot_mcp.core.model.stream import ToolCall
    from codebot_mcp.core.tools.base import Tool, ToolResult

__all__ = ["LoopHooks"]


class LoopHooks:
    """The user's hooks as the loop calls them (the kernel's ``TurnHooks``): each method is
    the hook point of the same name in :mod:`core.hooks.points`, over one :class:`Hooks`."""

    def __init__(self, hooks: Hooks) -> None:
        self.hooks = hooks

    @classmethod
    def over(cls, hooks: Hooks | None) -> LoopHooks | None:
        """``hooks`` for the loop; None for none."""
        return None if hooks is None else cls(hooks)

    async def submit(self, prompt: str, events: AgentEvents) -> str:
        return await submit(self.hooks, prompt, events)

    async def before_call(
        self, call: ToolCall, tool: Tool, arguments: Mapping[str, Any], events: AgentEvents
    ) -> HookDecision | None:
        return await before_call(self.hooks, call, tool, arguments, events)

    async def after_call(
        self,
        call: ToolCall,
        tool: Tool,
        arguments: Mapping[str, Any],
        result: ToolResult,
        events: AgentEvents,
        seconds: float = 0.0,
    ) -> ToolResult:
        return await after_call(self.hooks, call, tool, arguments, result, events, seconds)

    async def keep_going(self, history: list[Any], active: bool, events: AgentEvents) -> bool:
        return await keep_going(self.hooks, history, active, events)

    def listens(self, event: str, names: Sequence[str] = ()) -> bool:
        return bool(self.hooks.selected(event, names))

    async def before_compact(
        self, trigger: str, instructions: str | None, events: AgentEvents
    ) -> None:
        await before_compact(self.hooks, trigger, instructions, events)

    async def post_compact(self, trigger: str, summary: str, events: AgentEvents) -> None:
        await post_compact(self.hooks, trigger, summary, events)

    async def subagent_start(self, fields: Mapping[str, str], events: AgentEvents) -> str:
        self.hooks.agent_fields = dict(fields)
        return await subagent_start(self.hooks, events)

    def for_subagent(self) -> LoopHooks:
        return LoopHooks(self.hooks.for_subagent())


def _loop_hooks(context: PartContext) -> LoopHooks | None:
    """The chat's hooks for the loop (None: none configured)."""
    return LoopHooks.over(context.get(Hooks))


register_loop_part("hooks", TurnHooks, _loop_hooks)
