"""What a run reports as it goes (:class:`AgentEvents`) and what it produced (:class:`RunResult`).

The CLI renders the events, each renderer an :class:`AgentEvents`: the terminal's
(``cli.repl.chatview.TurnView``), stream-json's (``cli.streamjson.StreamJsonView``), and any
other (ACP's updates) the same way; ``--json`` is built from the result. A call's events come
in order: ``tool_rejected`` (it cannot run), or ``tool_denied`` / ``tool_approved`` (with the
:class:`~core.agent.permissions.Decision`, whose ``by`` says what decided), then for an
approved call ``tool_started`` and ``tool_finished``. Kept apart from the loop in
:mod:`core.agent`, which re-exports every name here.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from codebot_mcp.core.agent.context import Compaction
from codebot_mcp.core.agent.permissions import Decision
from codebot_mcp.core.errors import CodebotError, TurnLimitError
from codebot_mcp.core.model.client import Retry
from codebot_mcp.core.model.stream import Reply, ToolCall, Usage
from codebot_mcp.core.tools.base import Tool, ToolResult


class RunObserver(Protocol):
    """Watches whole runs (``core.telemetry``): :meth:`observe` wraps one ``Agent.run``."""

    def observe(
        self, agent: Any, prompt: str, events: AgentEvents
    ) -> AbstractContextManager[AgentEvents]:
        """Around one run of ``agent``: yields the events the run reports to (``events``
        and the observer's own); the agent's ``last`` holds the result when it exits."""
        ...


class AgentEvents:
    """What happens during a run, for the CLI to render. Every method here does nothing."""

    def model_started(self, turn: int) -> None:
        """A request is about to go to the model (``turn`` counts from 1)."""

    def text(self, delta: str) -> None:
        """A piece of the assistant's text, as it streams."""

    def reasoning(self, delta: str) -> None:
        """A piece of the summary of the model's reasoning, as it streams (before the text;
        the whole summary is also on the :class:`Reply` of :meth:`model_finished`)."""

    def model_progress(self, generated: int) -> None:
        """The answer is still streaming: ``generated`` pieces (about tokens) so far."""

    def model_finished(self, reply: Reply) -> None:
        """The model's turn is complete."""

    def model_retrying(self, retry: Retry) -> None:
        """A failed request is sent again after ``retry.delay`` seconds."""

    def tools_changed(self) -> None:
        """The MCP tool set changed before this request."""

    def tool_started(self, call: ToolCall, tool: Tool) -> None:
        """An approved call starts running."""

    def tool_finished(self, call: ToolCall, result: ToolResult, seconds: float) -> None:
        """A call finished (the result is what the model will see)."""

    def tool_approved(self, call: ToolCall, decision: Decision) -> None:
        """The gate (or the user) allowed a call; it starts now, or with the reads of its turn
        (``decision.by`` says what allowed it)."""

    def tool_denied(self, call: ToolCall, decision: Decision) -> None:
        """The gate (or the user) denied a call."""

    def tool_rejected(self, call: ToolCall, result: ToolResult) -> None:
        """A call that could not run: unknown tool, invalid JSON arguments, a repeated call."""

    def compacted(self, compaction: Compaction) -> None:
        """The history was compacted to fit the context window."""

    def notice(self, text: str) -> None:
        """Something the user should know that is not an error (e.g. the model used)."""

    def warning(self, text: str) -> None:
        """Something that went wrong without stopping the run (a checkpoint was skipped)."""
        self.notice(text)


@dataclass(slots=True)
class ToolRecord:
    """One tool call and its outcome, for ``--json`` transcripts."""

    call: ToolCall
    result: ToolResult
    denied: bool = False
    reason: str = ""
    seconds: float = 0.0
    rejected: bool = False
    """The call never ran: unknown tool, invalid arguments or a repeated call."""


class Outcome(StrEnum):
    """How a run ended (``outcome`` in ``--json``)."""

    ANSWER = "answer"
    EMPTY = "empty_answer"
    """The model finished without a word: no text and no tool calls."""
    ERROR = "error"
    INTERRUPTED = "interrupted"


@dataclass(slots=True)
class RunResult:
    """What one prompt produced (also when it failed: ``error`` says why)."""

    text: str = ""
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    tool_calls: list[ToolRecord] = field(default_factory=list[ToolRecord])
    outcome: Outcome = Outcome.INTERRUPTED
    finish_reason: str | None = None
    error: CodebotError | None = None
    last_usage: Usage | None = None
    """The last model turn's usage (None when it reported none)."""
    compactions: list[Compaction] = field(default_factory=list[Compaction])
    trust_changes: list[str] = field(default_factory=list[str])
    """Project files that need trust (a server's script, a hook's, the notes...) this prompt's
    tool calls changed, relative to the project root (``core.config.trust.TurnWatch``)."""
    reasoning: list[str] = field(default_factory=list[str])
    """The summary of the model's reasoning, one entry per model turn that gave one."""


class RepeatedCallError(TurnLimitError):
    """The model kept making the same call after it was told the result will not change."""
