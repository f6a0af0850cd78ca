"""What the kernel knows of its features: small protocols the loop, the session and the gate
call, which a feature's package implements and the composition root (``cli``) hands in.

The loop never imports a feature: hooks arrive as a :class:`TurnHooks`
(``core.hooks.loophooks.LoopHooks``), checkpoints as a :class:`TurnCheckpoints`
(``core.checkpoints.turns.Checkpoints``), both made by the feature registered for the slot
(:mod:`.loopparts`), the skills as a :class:`SkillSource` for the
session (``core.skills.skillcatalog``; the gate's view of them is
:class:`core.agent.approvals.SkillApprovals`). Imports
run from the features to the kernel only (``[tool.importlinter]`` in ``pyproject.toml``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from codebot_mcp.core.agent.events import AgentEvents
    from codebot_mcp.core.agent.permissions import HookDecision
    from codebot_mcp.core.model.stream import ToolCall
    from codebot_mcp.core.tools.base import Tool, ToolResult

__all__ = ["SkillSource", "TurnCheckpoints", "TurnHooks"]


@runtime_checkable
class TurnHooks(Protocol):
    """The user's hooks at the loop's hook points (``UserPromptSubmit``, ``PreToolUse``,
    ``PostToolUse``, ``Stop``, ``PreCompact``, ``PostCompact``, ``SubagentStart``)."""

    async def submit(self, prompt: str, events: AgentEvents) -> str:
        """The prompt as the model will see it (raises ``HookBlockedError`` on a block)."""
        ...

    async def before_call(
        self, call: ToolCall, tool: Tool, arguments: Mapping[str, Any], events: AgentEvents
    ) -> HookDecision | None:
        """What the hooks say about a call, for the gate."""
        ...

    async def after_call(
        self,
        call: ToolCall,
        tool: Tool,
        arguments: Mapping[str, Any],
        result: ToolResult,
        events: AgentEvents,
        seconds: float = 0.0,
    ) -> ToolResult:
        """The result, with what the hooks tell the model added."""
        ...

    async def keep_going(self, history: list[Any], active: bool, events: AgentEvents) -> bool:
        """True when a ``Stop`` hook blocked the stop (its reason is the next prompt)."""
        ...

    def listens(self, event: str, names: Sequence[str] = ()) -> bool:
        """Some hook of ``event`` matches one of ``names`` (the loop skips work otherwise)."""
        ...

    async def before_compact(
        self, trigger: str, instructions: str | None, events: AgentEvents
    ) -> None:
        """``PreCompact`` (raises ``HookBlockedError`` when it blocks a manual one)."""
        ...

    async def post_compact(self, trigger: str, summary: str, events: AgentEvents) -> None:
        """``PostCompact``."""
        ...

    async def subagent_start(self, fields: Mapping[str, str], events: AgentEvents) -> str:
        """``SubagentStart`` for these hooks of a subagent: context for its prompt."""
        ...

    def for_subagent(self) -> TurnHooks:
        """The same hooks, for a subagent's calls."""
        ...


@runtime_checkable
class TurnCheckpoints(Protocol):
    """Snapshots around a prompt's changes, for rewinding."""

    async def begin(self, prompt: str) -> str | None:
        """A turn starts; a warning about the previous snapshot, if any."""
        ...

    async def before_calls(
        self, calls: Sequence[ToolCall], find_tool: Callable[[str], Tool | None]
    ) -> str | None:
        """Snapshot before the turn's first change; a warning if it failed."""
        ...

    def end(self) -> None:
        """The turn ended."""
        ...

    async def settle(self) -> str | None:
        """Wait for the last snapshot (the chat ends, ``/rewind``); a problem with it, if
        any."""
        ...

    def for_subagent(self) -> TurnCheckpoints:
        """What a subagent started in this turn uses."""
        ...


class SkillSource(Protocol):
    """The skills the session names in the prompt."""

    def skills(self) -> Sequence[Any]:
        """The skills the model may load now."""
        ...

    async def refresh(self, *, force: bool = False) -> bool:
        """List the servers' skills again; True when the entries changed."""
        ...

    def prompt_section(self) -> str:
        """The prompt's section naming the skills ("" for none)."""
        ...
