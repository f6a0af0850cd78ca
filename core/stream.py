"""What one model turn produced, and the accumulator that builds it from streamed chunks.

We do not use the SDK's ``.stream()`` helper: it concatenates every key, so a server that repeats
``id`` or ``name`` on each delta yields ``"call_1call_1"``, and a delta without ``index`` raises.
Here ``id``/``type``/``name`` are assigned and only ``arguments`` and ``content`` concatenate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.errors import ModelError

if TYPE_CHECKING:  # openai is imported lazily at run time; these are for type checkers only
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

TextCallback = Callable[[str], None]


@dataclass(slots=True)
class ToolCall:
    """One function call the model asked for; ``arguments`` is the raw JSON text."""

    id: str
    name: str
    arguments: str


@dataclass(slots=True)
class Usage:
    """Token counts reported by the server (zero when it reports none)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, other: Usage | None) -> None:
        """Accumulate another turn's usage into this one."""
        if other is not None:
            self.prompt_tokens += other.prompt_tokens
            self.completion_tokens += other.completion_tokens


@dataclass(slots=True)
class Reply:
    """One assistant turn: text, tool calls, why it stopped, and usage."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list[ToolCall])
    finish_reason: str | None = None
    usage: Usage | None = None

    @property
    def empty(self) -> bool:
        """No text and no tool calls (what llama.cpp streams for a turn that has tools)."""
        return not self.text and not self.tool_calls

    def message(self) -> dict[str, Any]:
        """The assistant message to put in the history.

        ``content`` is always a string: llama.cpp rejects ``null`` next to ``tool_calls``.
        """
        message: dict[str, Any] = {"role": "assistant", "content": self.text}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in self.tool_calls
            ]
        return message


def _usage(raw: Any) -> Usage | None:
    if raw is None:
        return None
    return Usage(int(raw.prompt_tokens or 0), int(raw.completion_tokens or 0))


class StreamAccumulator:
    """Merge ``ChatCompletionChunk``s into a :class:`Reply`, emitting text as it arrives."""

    def __init__(self, on_text: TextCallback | None = None) -> None:
        self._on_text = on_text
        self._text: list[str] = []
        self._calls: dict[int, ToolCall] = {}
        self._last_index = -1
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.chunks = 0

    def add(self, chunk: ChatCompletionChunk) -> None:
        """Fold one chunk in; only choice 0 counts (we never ask for ``n > 1``)."""
        self.chunks += 1
        if chunk.usage is not None:
            self.usage = _usage(chunk.usage)
        for choice in chunk.choices:
            if choice.index not in (0, None):
                continue
            delta = choice.delta
            if delta is not None:
                if delta.content:
                    self._text.append(delta.content)
                    if self._on_text is not None:
                        self._on_text(delta.content)
                for piece in delta.tool_calls or ():
                    self._merge_call(piece)
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason

    def _merge_call(self, piece: Any) -> None:
        index = piece.index
        if index is None:  # some servers omit it: a new id starts a call, else continue the last
            index = self._last_index + 1 if piece.id or self._last_index < 0 else self._last_index
        self._last_index = index
        call = self._calls.setdefault(index, ToolCall(id="", name="", arguments=""))
        if piece.id:
            call.id = piece.id
        function = piece.function
        if function is not None:
            if function.name:
                call.name = function.name
            if function.arguments:
                call.arguments += function.arguments

    def reply(self) -> Reply:
        """The accumulated turn, even when unfinished (see :meth:`result`)."""
        calls = [self._calls[i] for i in sorted(self._calls)]
        for n, call in enumerate(calls):
            call.id = call.id or f"call_{n}"  # some servers send no id; the result needs one
        return Reply("".join(self._text), calls, self.finish_reason, self.usage)

    def result(self) -> Reply:
        """The finished turn.

        Raises:
            ModelError: the stream ended without a finish reason (dropped, or not a stream).
        """
        if self.finish_reason is None:
            got = "nothing" if self.chunks == 0 else f"{self.chunks} chunk(s)"
            raise ModelError(
                f"the model's reply stream ended early (got {got} and no finish reason)",
                hint="The server or a proxy cut the connection; try again. If it keeps "
                "happening the server may not support streaming.",
            )
        return self.reply()


def reply_from_completion(completion: ChatCompletion, on_text: TextCallback | None) -> Reply:
    """Turn a non-streamed completion into a :class:`Reply` (text is emitted once).

    Raises:
        ModelError: the completion has no choices.
    """
    if not completion.choices:
        raise ModelError(
            "the model API returned a completion with no choices",
            hint="The server may not be OpenAI-compatible; check the base URL.",
        )
    choice = completion.choices[0]
    message = choice.message
    calls: list[ToolCall] = []
    for n, raw in enumerate(message.tool_calls or ()):
        function = getattr(raw, "function", None)
        if function is None:  # a "custom" tool call; we only declare function tools
            continue
        calls.append(ToolCall(raw.id or f"call_{n}", function.name, function.arguments or ""))
    text = message.content or ""
    if text and on_text is not None:
        on_text(text)
    return Reply(text, calls, choice.finish_reason or "stop", _usage(completion.usage))
