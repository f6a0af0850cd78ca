"""The Responses API's wire format: the one request shape (Chat Completions messages and
function tools, as the session keeps them) as a ``POST /responses`` body, and its answer,
streamed events or one JSON response, as a :class:`core.model.stream.Reply`.

The history stays in the Chat Completions shape; this module translates at the edge, so the
loop never knows which API answers. What only the Responses API has rides along in that
shape: an assistant message's reasoning items (``REASONING_KEY``), sent back in the next
request's ``input`` so that, with ``store: false``, the model's reasoning survives its tool
calls (``include: ["reasoning.encrypted_content"]``). It goes back as it came (its id, summary
and encrypted content; not its status). A reasoning item without encrypted content (a server
that ignored ``include``) cannot go back: with ``store: false`` OpenAI looks its id up, finds
nothing and answers 400 ("Items are not persisted when `store` is set to false"), so it is
kept for the transcript only. Messages and calls go back without ids, for the same reason.

Events are read by their ``type``; those codebot has no use for (built-in tools, audio,
annotations) are counted and ignored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from codebot_mcp.core.errors import ModelError
from codebot_mcp.core.model.stream import (
    REASONING_KEY,
    ProgressCallback,
    Reply,
    TextCallback,
    ToolCall,
    Usage,
)

if TYPE_CHECKING:
    from codebot_mcp.core.model.config import ModelConfig

ENCRYPTED_REASONING = "reasoning.encrypted_content"
"""What ``include`` asks for: the reasoning, encrypted, to send back with ``store: false``."""
SUMMARY = "auto"
"""``reasoning.summary``: the most detailed summary the model offers."""


def request_body(
    config: ModelConfig,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    cap: int | None,
    *,
    extras: bool = True,
) -> dict[str, Any]:
    """The ``POST /responses`` body for one turn (without ``stream``).

    ``extras`` asks for reasoning summaries and encrypted reasoning (for a reasoning model,
    or when an effort is set); False once the server refused them.
    """
    instructions, items = request_input(messages)
    body: dict[str, Any] = {"model": config.model, "input": items, "store": False}
    if instructions:
        body["instructions"] = instructions
    if cap:
        body["max_output_tokens"] = cap
    if tools:
        body["tools"] = function_tools(tools)
        body["tool_choice"] = "auto"
    reasoning: dict[str, Any] = {}
    if config.reasoning_effort:
        reasoning["effort"] = config.reasoning_effort
    if extras and config.reasoning:
        reasoning["summary"] = SUMMARY
        body["include"] = [ENCRYPTED_REASONING]
    if reasoning:
        body["reasoning"] = reasoning
    return body


def drop_extras(body: dict[str, Any]) -> bool:
    """Remove the summary and the encrypted reasoning from a body; True when it held any."""
    reasoning = body.get("reasoning")
    had = "include" in body or (isinstance(reasoning, dict) and "summary" in reasoning)
    body.pop("include", None)
    if isinstance(reasoning, dict):
        kept = {k: v for k, v in cast(dict[str, Any], reasoning).items() if k != "summary"}
        if kept:
            body["reasoning"] = kept
        else:
            body.pop("reasoning")
    return had


def function_tools(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Chat Completions tool entries as Responses function tools (flat, not strict)."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        function = cast(Mapping[str, Any], tool.get("function") or tool)
        out.append(
            {
                "type": "function",
                "name": function.get("name"),
                "description": function.get("description") or "",
                "parameters": function.get("parameters") or {"type": "object", "properties": {}},
                "strict": False,
            }
        )
    return out


def request_input(
    messages: Sequence[Mapping[str, Any]],
) -> tuple[str | None, list[dict[str, Any]]]:
    """The leading system message as ``instructions``, the rest as ``input`` items."""
    instructions: str | None = None
    items: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        role = message.get("role")
        content = message.get("content")
        if role == "system" and index == 0:
            instructions = _text(content)
        elif role == "tool":
            call_id = str(message.get("tool_call_id") or "")
            items.append(
                {"type": "function_call_output", "call_id": call_id, "output": _text(content)}
            )
        elif role == "assistant":
            items += _assistant(message)
        else:
            items.append({"role": role or "user", "content": _parts(content)})
    return instructions, items


def _assistant(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """An assistant turn as the items the API answered with: reasoning, text, calls."""
    items: list[dict[str, Any]] = []
    for item in message.get(REASONING_KEY) or ():
        if isinstance(item, Mapping) and (item := cast(Mapping[str, Any], item)).get(
            "encrypted_content"
        ):
            back = {
                "type": "reasoning",
                "summary": item.get("summary") or [],
                "encrypted_content": item["encrypted_content"],
            }
            if item.get("id"):
                back = {"id": item["id"], **back}
            items.append(back)
    text = _text(message.get("content"))
    if text:
        items.append({"role": "assistant", "content": text})
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        items.append(
            {
                "type": "function_call",
                "call_id": call.get("id") or "",
                "name": function.get("name") or "",
                "arguments": function.get("arguments") or "",
            }
        )
    return items


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    return str(content)


def _parts(content: Any) -> Any:
    """User content: a string as it is, Chat Completions parts as Responses input parts."""
    if not isinstance(content, list):
        return _text(content)
    out: list[dict[str, Any]] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            out.append({"type": "input_text", "text": str(part.get("text") or "")})
        elif part.get("type") == "image_url":
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, dict) else image
            detail = image.get("detail") if isinstance(image, dict) else None
            out.append({"type": "input_image", "image_url": url, "detail": detail or "auto"})
        else:
            out.append(part)  # already a Responses part
    return out


class ResponsesAccumulator:
    """Merge Responses stream events into a :class:`Reply`, emitting text and reasoning
    summaries as they arrive. The same interface as :class:`core.model.stream.StreamAccumulator`
    (``add``, ``chunks``, ``finish_reason``, ``reply``, ``result``), plus ``failure``: what a
    ``response.failed`` or ``error`` event said."""

    def __init__(
        self,
        on_text: TextCallback | None = None,
        on_progress: ProgressCallback | None = None,
        on_reasoning: TextCallback | None = None,
    ) -> None:
        self._on_text = on_text
        self._on_progress = on_progress
        self._on_reasoning = on_reasoning
        self.chunks = 0
        self.generated = 0
        self._text: list[str] = []
        self._streamed: set[int] = set()
        """Output indexes whose text (or summary) arrived as deltas."""
        self._calls: dict[int, ToolCall] = {}
        self._reasoning: dict[int, dict[str, Any]] = {}
        self._summary_at: tuple[int, int] | None = None
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.model: str | None = None
        self.failure: dict[str, Any] | None = None

    def add(self, event: Any) -> None:
        """Fold one stream event in."""
        self.chunks += 1
        kind = getattr(event, "type", "")
        if kind == "response.output_text.delta":
            self._streamed.add(event.output_index)
            self._emit_text(event.delta)
        elif kind == "response.function_call_arguments.delta":
            self._call(event.output_index).arguments += event.delta
            self._progress()
        elif kind == "response.function_call_arguments.done":
            self._call(event.output_index).arguments = event.arguments
        elif kind == "response.reasoning_summary_text.delta":
            self._streamed.add(event.output_index)
            self._emit_summary(event.delta, (event.output_index, event.summary_index))
        elif kind in ("response.output_item.added", "response.output_item.done"):
            self._item(event.output_index, event.item, done=kind.endswith("done"))
        elif kind in ("response.created", "response.in_progress"):
            self.model = getattr(event.response, "model", None) or self.model
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            self.fold(event.response)
        elif kind == "error":
            self.failure = {"message": event.message, "code": getattr(event, "code", None)}

    def fold(self, response: Any) -> None:
        """A whole response (the last event's, or a JSON answer): its items, usage, status."""
        self.model = getattr(response, "model", None) or self.model
        for index, item in enumerate(getattr(response, "output", None) or ()):
            self._item(index, item, done=True)
        self.usage = usage(getattr(response, "usage", None)) or self.usage
        status = getattr(response, "status", None) or "completed"
        if status == "failed":
            error = getattr(response, "error", None)
            self.failure = {
                "message": getattr(error, "message", None) or "the response failed",
                "code": getattr(error, "code", None),
            }
        elif status == "incomplete":
            details = getattr(response, "incomplete_details", None)
            reason = getattr(details, "reason", None)
            self.finish_reason = "length" if reason == "max_output_tokens" else (reason or "length")
        elif status == "completed":
            self.finish_reason = "tool_calls" if self._calls else "stop"

    def _item(self, index: int, item: Any, *, done: bool) -> None:
        kind = getattr(item, "type", "")
        if kind == "function_call":
            call = self._call(index)
            call.id = getattr(item, "call_id", None) or call.id
            call.name = getattr(item, "name", None) or call.name
            if done and getattr(item, "arguments", None):
                call.arguments = item.arguments
        elif kind == "message" and done and index not in self._streamed:
            self._streamed.add(index)
            for part in getattr(item, "content", None) or ():
                text = getattr(part, "text", None) or getattr(part, "refusal", None)
                if text:
                    self._emit_text(text)
        elif kind == "reasoning" and done:
            found = item.model_dump(mode="json", exclude_none=True)
            found.pop("status", None)
            self._reasoning[index] = found
            if index not in self._streamed:
                self._streamed.add(index)
                for n, part in enumerate(found.get("summary") or ()):
                    if part.get("text"):
                        self._emit_summary(part["text"], (index, n))

    def _call(self, index: int) -> ToolCall:
        return self._calls.setdefault(index, ToolCall(id="", name="", arguments=""))

    def _emit_text(self, delta: str) -> None:
        if not delta:
            return
        self._text.append(delta)
        if self._on_text is not None:
            self._on_text(delta)
        self._progress()

    def _emit_summary(self, delta: str, at: tuple[int, int]) -> None:
        if not delta:
            return
        if self._summary_at is not None and self._summary_at != at:
            delta = "\n\n" + delta  # a new summary part: a new paragraph
        self._summary_at = at
        if self._on_reasoning is not None:
            self._on_reasoning(delta)
        self._progress()

    def _progress(self) -> None:
        self.generated += 1
        if self._on_progress is not None:
            self._on_progress(self.generated)

    def reply(self) -> Reply:
        """The accumulated turn, even when unfinished (see :meth:`result`)."""
        calls = [self._calls[i] for i in sorted(self._calls)]
        for n, call in enumerate(calls):
            call.id = call.id or f"call_{n}"
        reasoning = [self._reasoning[i] for i in sorted(self._reasoning)]
        return Reply(
            "".join(self._text), calls, self.finish_reason, self.usage, self.model, reasoning
        )

    def result(self) -> Reply:
        """The finished turn.

        Raises:
            ModelError: the stream ended before ``response.completed``.
        """
        if self.finish_reason is None:
            got = "nothing" if self.chunks == 0 else f"{self.chunks} event(s)"
            raise ModelError(
                f"the model's reply stream ended early (got {got} and no response.completed)",
                hint="The server or a proxy cut the connection; try again. If it keeps "
                "happening the server may not support streaming.",
            )
        return self.reply()


def usage(raw: Any) -> Usage | None:
    """A Responses ``usage`` as :class:`Usage` (input/output tokens, cached, reasoning)."""
    if raw is None:
        return None
    cached = getattr(getattr(raw, "input_tokens_details", None), "cached_tokens", None)
    reasoning = getattr(getattr(raw, "output_tokens_details", None), "reasoning_tokens", None)
    return Usage(
        int(getattr(raw, "input_tokens", 0) or 0),
        int(getattr(raw, "output_tokens", 0) or 0),
        int(cached or 0),
        reported=1,
        reasoning_tokens=int(reasoning or 0),
    )


def reply_from_response(
    response: Any, on_text: TextCallback | None, on_reasoning: TextCallback | None = None
) -> tuple[Reply, dict[str, Any] | None]:
    """A non-streamed answer as a :class:`Reply` (text and summaries emitted once), and
    the failure it reports, if any."""
    acc = ResponsesAccumulator(on_text, None, on_reasoning)
    acc.fold(response)
    reply = acc.reply()
    reply.finish_reason = reply.finish_reason or "stop"
    return reply, acc.failure
