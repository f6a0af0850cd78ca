"""``task``: hand a self-contained job to a subagent and get back only its final answer.

The tool is the model's side; running the subagent is :mod:`core.subagents.delegation`'s (a
:class:`TaskRunner`), which sits above this layer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from codebot_mcp.core.tools.base import Capability, Origin, Permission, ToolInfo, ToolResult
from codebot_mcp.core.tools.builtin._common import BadArgumentError, string


class TaskRunner(Protocol):
    """Runs subagents (``core.subagents.delegation.Subagents``)."""

    def agents(self) -> Sequence[tuple[str, str]]:
        """``(name, description)`` of each agent ``task`` may start."""
        ...

    async def run(self, description: str, prompt: str, agent: str | None) -> ToolResult:
        """Run one subagent to its final answer."""
        ...


class TaskTool:
    """Start a subagent."""

    name = "task"

    def __init__(self, runner: TaskRunner) -> None:
        self.runner = runner

    @property
    def description(self) -> str:
        """What ``task`` does, and the agents it can start."""
        lines = [
            "Start a subagent: a fresh session with its own context window that works on one "
            "self-contained task with its own tools and returns only its final answer (and "
            "its token usage). Use it for searches and investigations whose details you do not "
            "need to keep; give it everything it needs in `prompt`, since it sees nothing of "
            "this conversation. Several task calls in one turn run in parallel when their "
            "agents have only read-only tools.",
            "Agents (`agent`, default general-purpose):",
        ]
        lines += [f"- {name}: {text}" for name, text in self.runner.agents()]
        return "\n".join(lines)

    def schema(self) -> dict[str, Any]:
        """Arguments: ``description``, ``prompt``, optional ``agent``."""
        return {
            "type": "object",
            "properties": {
                "description": {
                    "type": "string",
                    "description": "A short (3-5 word) name for the task, shown to the user.",
                },
                "prompt": {"type": "string", "description": "The task, fully explained."},
                "agent": {
                    "type": "string",
                    "description": "Which agent runs it (see the list above).",
                    "enum": [name for name, _ in self.runner.agents()],
                },
            },
            "required": ["description", "prompt"],
        }

    @property
    def info(self) -> ToolInfo:
        """Starting a subagent changes nothing; each of its calls is checked like yours."""
        return ToolInfo(
            Origin.SUBAGENT,
            Permission(
                Capability.READ,
                "built-in task: starts a subagent whose own tool calls are each approved as yours",
            ),
        )

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        """Run the subagent."""
        try:
            description = string(arguments, "description")
            prompt = string(arguments, "prompt")
        except BadArgumentError as exc:
            return ToolResult(f"task: {exc}", is_error=True)
        agent = arguments.get("agent")
        if agent is not None and not isinstance(agent, str):
            return ToolResult("task: 'agent' must be a string (an agent's name)", is_error=True)
        return await self.runner.run(description, prompt, agent or None)
