"""``ask``: a whole ``chat -p`` session behind one tool call of ``codebot mcp serve``.

The session is ``chat``'s own (the composition root in ``cli`` builds it: settings, trust,
MCP servers, the gate, the model), run in this process by an :class:`Asker`. What comes back
is the answer and a summary of the transcript (turns, every tool call and how it ended), as
text for the model and as ``structuredContent`` for programs. The session is saved like any
chat, so ``codebot chat --resume <session_id>`` continues it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from codebot_mcp.core.agent.events import AgentEvents, RunResult
from codebot_mcp.core.agent.permissions import Approver
from codebot_mcp.core.tools.base import Capability, Origin, Permission, ToolInfo, ToolResult

MAX_ARGUMENTS_SHOWN = 120
"""Characters of each tool call's arguments in the transcript summary."""
MAX_REASON_SHOWN = 200


@dataclass(frozen=True, slots=True)
class AskOutcome:
    """What one ``ask`` produced: the run (also when it failed) and where it is saved."""

    run: RunResult
    session_id: str | None
    model: str | None = None


class Asker(Protocol):
    """Runs one ``chat -p`` session (``cli`` implements it with ``open_runtime``).

    ``approver`` asks the MCP client about the session's calls that need approval (None:
    nobody can be asked, so those calls are denied with the reason, as in ``chat -p``).

    Raises:
        CodebotError: the session could not run (no model configured, settings, the model
            API); its message and hint become the tool's error.
    """

    async def __call__(
        self, prompt: str, *, plan: bool, events: AgentEvents, approver: Approver | None
    ) -> AskOutcome: ...


class AskTool:
    """The ``ask`` tool: a prompt in, an answer and a transcript summary out."""

    name = "ask"
    description = (
        "Ask codebot, a coding agent working in this project, to do a task or answer a "
        "question. It runs a whole agent session (it can read, search, edit and write files "
        "and run commands, asking before anything that changes the project) and returns its "
        "final answer with a summary of what it did. Set plan to keep it read-only."
    )

    def __init__(self, asker: Asker) -> None:
        self.asker = asker

    def schema(self) -> dict[str, Any]:
        """Arguments: ``prompt``, optional ``plan``."""
        return {
            "type": "object",
            "properties": {
                "prompt": {"type": "string", "description": "The task or question."},
                "plan": {
                    "type": "boolean",
                    "description": "Plan mode: read-only tools only (default false).",
                },
            },
            "required": ["prompt"],
        }

    @property
    def info(self) -> ToolInfo:
        """The session it runs may do anything its own gate allows."""
        return ToolInfo(
            Origin.SUBAGENT,
            Permission(
                Capability.EXECUTE, "built-in ask: runs an agent session that may edit and run"
            ),
        )

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        """Without events or an approver (``mcp serve`` calls :meth:`run`)."""
        return await self.run(arguments, AgentEvents(), None)

    async def run(
        self, arguments: Mapping[str, Any], events: AgentEvents, approver: Approver | None
    ) -> ToolResult:
        """Run the session; its failure is an error result naming what failed and the fix."""
        from codebot_mcp.core.errors import CodebotError

        prompt = arguments.get("prompt")
        plan = arguments.get("plan", False)
        if not isinstance(prompt, str) or not prompt.strip():
            return ToolResult("ask: 'prompt' must be a non-empty string", is_error=True)
        if not isinstance(plan, bool):
            return ToolResult("ask: 'plan' must be true or false", is_error=True)
        try:
            outcome = await self.asker(prompt, plan=plan, events=events, approver=approver)
        except CodebotError as exc:
            hint = f" ({exc.hint})" if exc.hint else ""
            return ToolResult(f"ask failed: {exc.message}{hint}", is_error=True)
        return summarize(outcome)


def summarize(outcome: AskOutcome) -> ToolResult:
    """The answer, then the transcript summary; ``data`` holds the structured form."""
    run = outcome.run
    calls: list[dict[str, Any]] = [
        {
            "name": r.call.name,
            "arguments": r.call.arguments,
            "outcome": _outcome(r.denied, r.rejected, r.result.is_error),
            "reason": r.reason or None,
        }
        for r in run.tool_calls
    ]
    lines = [run.text.strip() or "(no answer)", "", "---", _headline(outcome, len(calls))]
    for call in calls:
        arguments = str(call["arguments"])
        if len(arguments) > MAX_ARGUMENTS_SHOWN:
            arguments = arguments[:MAX_ARGUMENTS_SHOWN] + "..."
        line = f"- {call['name']} {arguments}: {call['outcome']}"
        if call["reason"]:
            line += f" ({str(call['reason'])[:MAX_REASON_SHOWN]})"
        lines.append(line)
    if run.error is not None:
        lines.append(f"The session ended with an error: {run.error.message}")
    structured = {
        "answer": run.text,
        "outcome": run.outcome.value,
        "turns": run.turns,
        "tool_calls": [{**c, "arguments": _json_or_text(str(c["arguments"]))} for c in calls],
        "session_id": outcome.session_id,
        "model": outcome.model,
        "error": run.error.message if run.error is not None else None,
    }
    failed = run.error is not None or not run.text.strip()
    return ToolResult("\n".join(lines), is_error=failed, data={"structuredContent": structured})


def _outcome(denied: bool, rejected: bool, is_error: bool) -> str:
    if denied:
        return "denied"
    if rejected:
        return "rejected"
    return "error" if is_error else "ok"


def _headline(outcome: AskOutcome, calls: int) -> str:
    run = outcome.run
    turns = f"{run.turns} turn{'s' if run.turns != 1 else ''}"
    made = f"{calls} tool call{'s' if calls != 1 else ''}"
    saved = f"; session {outcome.session_id}" if outcome.session_id else ""
    return f"codebot's session: {turns}, {made}{saved}" + (":" if calls else ".")


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text
