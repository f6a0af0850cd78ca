"""The agent loop: ask the model, run the tools it calls, feed the results back, repeat.

One :meth:`Agent.run` per user prompt. Every model turn sees the session's current tools
(``before_prompt`` runs first). Tool calls of one turn are approved one after another (so the
user is never asked two questions at once), then run concurrently; results go back in call
order. Any tool failure (unknown name, invalid JSON, denial, an exception, a huge result)
becomes a tool result the model can read; only model API errors and the turn limit raise.

Cancellation (Ctrl-C) is ordinary structured cancellation: the running request and tool calls
are cancelled, and the history keeps only complete turns, so the next request is valid.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import anyio

from core.errors import CodebotError, TurnLimitError
from core.model import ChatModel
from core.permissions import Decision, PermissionGate, denial_text
from core.session import Message, Session
from core.stream import Reply, ToolCall, Usage
from core.tokens import CHARS_PER_TOKEN
from core.tools import Tool, ToolResult


class AgentEvents:
    """What happens during a run, for the CLI to render. Every method here does nothing."""

    def model_started(self, turn: int) -> None:
        """A request is about to go to the model (``turn`` counts from 1)."""

    def text(self, delta: str) -> None:
        """A piece of the assistant's text, as it streams."""

    def model_finished(self, reply: Reply) -> None:
        """The model's turn is complete."""

    def tools_changed(self) -> None:
        """The MCP tool set changed before this request."""

    def tool_started(self, call: ToolCall, tool: Tool) -> None:
        """An approved call starts running."""

    def tool_finished(self, call: ToolCall, result: ToolResult, seconds: float) -> None:
        """A call finished (the result is what the model will see)."""

    def tool_denied(self, call: ToolCall, decision: Decision) -> None:
        """The gate (or the user) denied a call."""


@dataclass(slots=True)
class ToolRecord:
    """One tool call and its outcome, for ``--json`` transcripts."""

    call: ToolCall
    result: ToolResult
    denied: bool = False
    reason: str = ""
    seconds: float = 0.0


@dataclass(slots=True)
class RunResult:
    """What one prompt produced."""

    text: str = ""
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    tool_calls: list[ToolRecord] = field(default_factory=list[ToolRecord])


def truncate(text: str, max_tokens: int) -> str:
    """Cut ``text`` to about ``max_tokens`` tokens, telling the model how much was cut."""
    limit = max_tokens * CHARS_PER_TOKEN
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    return (
        f"{text[:limit]}\n\n[codebot: this result was cut to the first {limit} of {len(text)} "
        f"characters; {cut} characters (about {cut // CHARS_PER_TOKEN} tokens) were cut. "
        "Ask for less at once (offset/limit, head, grep) to see the rest.]"
    )


def _tool_message(call: ToolCall, result: ToolResult) -> Message:
    text = result.text or "(no output)"
    return {
        "role": "tool",
        "tool_call_id": call.id,
        "content": f"Error: {text}" if result.is_error else text,
    }


def _parse_arguments(call: ToolCall) -> dict[str, Any] | str:
    """The arguments as a dict, or the reason they are unusable."""
    try:
        value = json.loads(call.arguments) if call.arguments.strip() else {}
    except json.JSONDecodeError as exc:
        return f"the arguments are not valid JSON ({exc.msg} at position {exc.pos})"
    if not isinstance(value, dict):
        return f"the arguments must be a JSON object, got {type(value).__name__}"
    return value  # pyright: ignore[reportUnknownVariableType]


class Agent:
    """Runs prompts against a session.

    Args:
        session: Tools, history and the system prompt.
        model: The model client.
        gate: Decides which calls may run.
        max_turns: Model turns per prompt before :class:`TurnLimitError`.
        tool_result_max_tokens: Results longer than this (estimated) are cut.
    """

    def __init__(
        self,
        session: Session,
        model: ChatModel,
        gate: PermissionGate,
        *,
        max_turns: int = 50,
        tool_result_max_tokens: int = 25_000,
    ) -> None:
        self.session = session
        self.model = model
        self.gate = gate
        self.max_turns = max_turns
        self.tool_result_max_tokens = tool_result_max_tokens

    async def run(self, prompt: str, events: AgentEvents | None = None) -> RunResult:
        """Answer one user prompt, calling tools as the model asks.

        Raises:
            ModelError: the model API failed.
            TurnLimitError: ``max_turns`` model turns ended without a final answer.
        """
        events = events or AgentEvents()
        history = self.session.history
        start = len(history)
        history.append({"role": "user", "content": prompt})
        result = RunResult()
        try:
            for turn in range(1, self.max_turns + 1):
                result.turns = turn
                if await self.session.before_prompt():
                    events.tools_changed()
                events.model_started(turn)
                reply = await self.model.complete(
                    self.session.messages(), self.session.tool_schemas(), events.text
                )
                events.model_finished(reply)
                result.usage.add(reply.usage)
                if not reply.tool_calls:
                    history.append(reply.message())
                    result.text = reply.text
                    return result
                records = await self._run_calls(reply.tool_calls, events)
                result.tool_calls.extend(records)
                # Appended only once complete: a cancel above leaves no dangling tool_calls.
                history.append(reply.message())
                history.extend(_tool_message(r.call, r.result) for r in records)
        except BaseException:
            if len(history) == start + 1:  # nothing completed: the prompt never happened
                del history[start:]
            raise
        raise TurnLimitError(
            f"the agent stopped after {self.max_turns} model turns without a final answer",
            hint="Raise 'max_turns' in settings.json, or split the task into smaller prompts.",
        )

    async def _run_calls(self, calls: list[ToolCall], events: AgentEvents) -> list[ToolRecord]:
        records: list[ToolRecord | None] = [None] * len(calls)
        runnable: list[tuple[int, Tool, dict[str, Any]]] = []
        for index, call in enumerate(calls):
            tool = self.session.find_tool(call.name)
            if tool is None:
                records[index] = ToolRecord(call, ToolResult(self._unknown(call), is_error=True))
                continue
            arguments = _parse_arguments(call)
            if isinstance(arguments, str):
                text = f"{arguments}. Call '{call.name}' again with a JSON object of arguments."
                records[index] = ToolRecord(call, ToolResult(text, is_error=True))
                continue
            decision = await self.gate.check(tool, arguments)
            if not decision.allowed:
                events.tool_denied(call, decision)
                denied = ToolResult(denial_text(call.name, decision), is_error=True)
                records[index] = ToolRecord(call, denied, denied=True, reason=decision.reason)
                continue
            runnable.append((index, tool, arguments))

        async def execute(index: int, tool: Tool, arguments: dict[str, Any]) -> None:
            call = calls[index]
            events.tool_started(call, tool)
            began = time.monotonic()
            try:
                result = await tool.execute(arguments)
            except CodebotError as exc:  # e.g. a dead MCP transport: the model must know
                result = ToolResult(f"'{call.name}' is unavailable: {exc.message}", is_error=True)
            except Exception as exc:  # boundary: a buggy tool must not end the conversation
                result = ToolResult(f"'{call.name}' crashed: {exc!r}", is_error=True)
            result = ToolResult(
                truncate(result.text, self.tool_result_max_tokens), result.is_error, result.data
            )
            seconds = time.monotonic() - began
            events.tool_finished(call, result, seconds)
            records[index] = ToolRecord(call, result, seconds=seconds)

        async with anyio.create_task_group() as group:
            for index, tool, arguments in runnable:
                group.start_soon(execute, index, tool, arguments)
        return [r for r in records if r is not None]

    def _unknown(self, call: ToolCall) -> str:
        names = ", ".join(t.name for t in self.session.active_tools) or "none"
        return f"there is no tool named '{call.name}'. Available tools: {names}."
