"""``--output-format stream-json``: the agent's events as JSON lines, and the input lines of
``--input-format stream-json``.

:class:`EventWriter` writes one JSON object per line, flushed as it happens: ASCII only (so no
character a line reader or a terminal treats specially gets through), every known secret
scrubbed, every event numbered (``seq``) and timed (``ms`` since the run started).
:class:`StreamJsonView` renders the agent's events (:class:`core.agent.events.AgentEvents`)
onto it; the session's start and its results are built by ``cli.commands.headless``. The
format is documented in ``docs/stream-json.md`` and ``docs/stream-json.schema.json`` (a test
validates every event of real runs against the schema).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from codebot_mcp.cli import render
from codebot_mcp.core.agent.context import Compaction
from codebot_mcp.core.agent.events import AgentEvents
from codebot_mcp.core.agent.permissions import Decision, denial_text
from codebot_mcp.core.model.client import Retry
from codebot_mcp.core.model.stream import Reply, ToolCall
from codebot_mcp.core.secrets.redact import scrub
from codebot_mcp.core.secrets.streamscrub import StreamScrubber
from codebot_mcp.core.tools.base import Tool, ToolResult

FORMAT_VERSION = 1
"""``version`` in the ``init`` event: fields are only added; a change of meaning bumps it."""
RESULT_CAP_CHARS = 16_000
"""A tool result in an event is cut here (``truncated``, ``chars`` give the full size): the
model got it whole, the stream is for watching. ACP's tool-call updates cut at the same size."""
ARGUMENTS_CAP_CHARS = 64_000
"""Arguments longer than this (a whole file in ``write``) are shown as cut text."""
INPUT_LINE_CAP_BYTES = 10_000_000
"""One input line (a user message) may be this long; a longer one is refused, not read."""


class EventWriter:
    """Writes events as JSON lines to ``stream`` (stdout), each flushed at once."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout
        self.started = time.monotonic()
        self.seq = 0
        self.session_id: str | None = None
        """Set once the session exists; every event after carries it."""

    def emit(self, kind: str, **fields: Any) -> None:
        """One event: ``{"type": kind, ...fields, "session_id", "seq", "ms"}``."""
        event = {
            "type": kind,
            **fields,
            "session_id": self.session_id,
            "seq": self.seq,
            "ms": round((time.monotonic() - self.started) * 1000),
        }
        self.seq += 1
        line = json.dumps(scrub(event, render.REDACTOR), ensure_ascii=True, default=str)
        try:
            self.stream.write(line + "\n")
            self.stream.flush()
        except BrokenPipeError:  # the reader went away: the run goes on, unheard
            pass


def cap_text(text: str, limit: int = RESULT_CAP_CHARS) -> dict[str, Any]:
    """``{"content": text}``, cut at ``limit`` characters (``truncated``, ``chars``)."""
    if len(text) <= limit:
        return {"content": text, "truncated": False, "chars": len(text)}
    return {"content": text[:limit], "truncated": True, "chars": len(text)}


def call_arguments(arguments: str) -> Any:
    """A call's arguments as the model sent them: the JSON value, else the raw text (cut)."""
    if len(arguments) <= ARGUMENTS_CAP_CHARS:
        try:
            return json.loads(arguments or "{}")
        except (json.JSONDecodeError, RecursionError):
            return arguments
    return arguments[:ARGUMENTS_CAP_CHARS]


class StreamJsonView(AgentEvents):
    """Renders one session's agent events as stream-json (see the module docstring).

    Args:
        writer: Where events go.
        find_tool: The session's tool lookup (a call's server and capability).
        partial: ``--include-partial``: also ``assistant_delta`` events as text streams.
    """

    def __init__(
        self,
        writer: EventWriter,
        find_tool: Callable[[str], Tool | None],
        *,
        partial: bool = False,
    ) -> None:
        self.writer = writer
        self.find_tool = find_tool
        self.partial = partial
        self.turn = 0
        self._scrub = StreamScrubber(render.REDACTOR)

    def model_started(self, turn: int) -> None:
        """Remember the turn (every assistant event names it)."""
        self.turn = turn

    def text(self, delta: str) -> None:
        """``assistant_delta`` (with ``--include-partial``); a secret split across deltas is
        still masked."""
        if self.partial and (shown := self._scrub.feed(delta)):
            self.writer.emit("assistant_delta", turn=self.turn, text=shown)

    def model_finished(self, reply: Reply) -> None:
        """``reasoning`` (the summary of the model's reasoning, when the Responses API gave
        one), ``assistant`` (the whole message), then ``usage`` when the server reported it."""
        if self.partial and (rest := self._scrub.flush()):
            self.writer.emit("assistant_delta", turn=self.turn, text=rest)
        if summary := reply.reasoning_summary:
            self.writer.emit("reasoning", turn=self.turn, summary=render.REDACTOR(summary))
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if reply.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "name": c.name, "arguments": call_arguments(c.arguments)}
                for c in reply.tool_calls
            ]
        self.writer.emit(
            "assistant",
            turn=self.turn,
            message=message,
            finish_reason=reply.finish_reason,
            model=reply.model,
        )
        if reply.usage is not None:
            self.writer.emit("usage", turn=self.turn, usage=reply.usage.as_dict())

    def model_retrying(self, retry: Retry) -> None:
        """``retry``: never silent."""
        self.writer.emit(
            "retry",
            attempt=retry.attempt,
            of=retry.of,
            reason=retry.reason,
            delay_seconds=retry.delay,
        )

    def tools_changed(self) -> None:
        """``tools_changed``: a server's tools changed before this request."""
        self.writer.emit("tools_changed", turn=self.turn)

    def _call(self, call: ToolCall) -> None:
        tool = self.find_tool(call.name)
        info = tool.info if tool is not None else None
        self.writer.emit(
            "tool_call",
            turn=self.turn,
            id=call.id,
            name=call.name,
            arguments=call_arguments(call.arguments),
            server=info.server if info is not None else None,
            tool=info.original_name if info is not None else None,
            capability=info.permission.capability.value if info is not None else None,
        )

    def _permission(self, call: ToolCall, decision: Decision) -> None:
        self.writer.emit(
            "permission",
            tool_call_id=call.id,
            name=call.name,
            decision="allow" if decision.allowed else "deny",
            by=decision.by.value,
            rule=decision.rule,
            reason=decision.reason,
        )

    def _result(self, call: ToolCall, status: str, text: str, **extra: Any) -> None:
        self.writer.emit(
            "tool_result",
            tool_call_id=call.id,
            name=call.name,
            status=status,
            **cap_text(text),
            **extra,
        )

    def tool_approved(self, call: ToolCall, decision: Decision) -> None:
        """``tool_call``, then ``permission`` (allow)."""
        self._call(call)
        self._permission(call, decision)

    def tool_denied(self, call: ToolCall, decision: Decision) -> None:
        """``tool_call``, ``permission`` (deny), and the ``tool_result`` the model gets."""
        self._call(call)
        self._permission(call, decision)
        self._result(call, "denied", denial_text(call.name, decision), seconds=0.0, sandbox=None)

    def tool_rejected(self, call: ToolCall, result: ToolResult) -> None:
        """A call that could not run: ``tool_call`` and its ``tool_result`` (rejected)."""
        self._call(call)
        self._result(call, "rejected", result.text, seconds=0.0, sandbox=None)

    def tool_finished(self, call: ToolCall, result: ToolResult, seconds: float) -> None:
        """``tool_result``: ok or error, masked and cut; then ``todos`` when ``todo_write``
        changed the plan."""
        sandbox = result.data.get("sandbox")
        self._result(
            call,
            "error" if result.is_error else "ok",
            result.text,
            seconds=round(seconds, 3),
            sandbox=sandbox if isinstance(sandbox, str) else None,
        )
        todos = result.data.get("todos") if call.name == "todo_write" else None
        if isinstance(todos, list) and result.data.get("changed", True):
            self.writer.emit("todos", tool_call_id=call.id, todos=todos)

    def compacted(self, compaction: Compaction) -> None:
        """``compaction``."""
        self.writer.emit("compaction", **compaction_dict(compaction))

    def notice(self, text: str) -> None:
        """``notice`` (level ``note``)."""
        self.writer.emit("notice", level="note", message=text)

    def warning(self, text: str) -> None:
        """``notice`` (level ``warning``)."""
        self.writer.emit("notice", level="warning", message=text)


def compaction_dict(c: Compaction) -> dict[str, Any]:
    """A compaction as ``--json`` and stream-json show it."""
    return {
        "before_tokens": c.before,
        "after_tokens": c.after,
        "cut_tool_results": c.cut_results,
        "summarised_messages": c.summarised_messages,
        "in_turn": c.in_turn,
        "shortened_results": c.shortened_results,
    }


class InputLineError(ValueError):
    """An input line that is not a user message (the message says why)."""


def user_message(line: str) -> str:
    """The text of one ``--input-format stream-json`` line.

    The line is ``{"type": "user", "message": {"role": "user", "content": CONTENT}}`` (Claude
    Code's shape; ``role`` may be left out), where CONTENT is a string or a list of content
    blocks of which the ``{"type": "text", "text": ...}`` ones are joined. Other keys (a
    ``session_id``, ``parent_tool_use_id``) are ignored.

    Raises:
        InputLineError: not JSON, not a user message, or no text in it.
    """
    try:
        data = json.loads(line)
    except (json.JSONDecodeError, RecursionError) as exc:
        why = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        raise InputLineError(f"not JSON ({why})") from None
    if not isinstance(data, Mapping) or data.get("type") != "user":
        raise InputLineError('not a user message (expected {"type": "user", "message": ...})')
    message: Any = data.get("message")
    if not isinstance(message, Mapping):
        raise InputLineError('"message" must be an object with "content"')
    role: Any = message.get("role", "user")
    if role != "user":
        raise InputLineError(f'"message.role" must be "user", not {json.dumps(role)}')
    content: Any = message.get("content")
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if not isinstance(block, Mapping) or block.get("type") != "text":
                kind = block.get("type") if isinstance(block, Mapping) else None
                raise InputLineError(
                    f"content block of type {json.dumps(kind)}: only text blocks are accepted"
                )
            text: Any = block.get("text")
            if not isinstance(text, str):
                raise InputLineError('a text block needs a string "text"')
            parts.append(text)
        content = "\n\n".join(parts)
    if not isinstance(content, str):
        raise InputLineError('"message.content" must be a string or a list of text blocks')
    if not content.strip():
        raise InputLineError("the message is empty")
    return content
