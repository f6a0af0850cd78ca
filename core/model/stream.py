"""What one model turn produced, and the accumulator that builds it from streamed chunks.

We do not use the SDK's ``.stream()`` helper: it concatenates every key, so a server that repeats
``id`` or ``name`` on each delta yields ``"call_1call_1"``, and a delta without ``index`` raises.
Here ``id``/``type``/``name`` are assigned and only ``arguments`` and ``content`` concatenate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from codebot_mcp.core.errors import ModelError

if TYPE_CHECKING:  # openai is imported lazily at run time; these are for type checkers only
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

TextCallback = Callable[[str], None]
ProgressCallback = Callable[[int], None]
"""Called with the pieces of output streamed so far (text and tool-call arguments; about one
token each): a slow model shows that it is still generating."""


@dataclass(slots=True)
class ToolCall:
    """One function call the model asked for; ``arguments`` is the raw JSON text."""

    id: str
    name: str
    arguments: str


@dataclass(slots=True)
class Usage:
    """Token counts reported by the server, summed over the turns that reported them.

    ``reported`` and ``unreported`` count model turns with and without a ``usage`` from the
    server, so a total over turns that reported nothing is *unknown*, never 0/0.
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    """Prompt tokens the server served from its prompt cache."""
    reported: int = 0
    unreported: int = 0
    reasoning_tokens: int = 0
    """Completion tokens the model spent reasoning (included in ``completion_tokens``)."""

    @property
    def known(self) -> bool:
        """True when at least one turn reported usage."""
        return self.reported > 0

    @property
    def total(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    @property
    def cached_share(self) -> float | None:
        """Cached prompt tokens as a fraction of prompt tokens (None when unknown)."""
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else None

    def add(self, other: Usage | None) -> None:
        """Accumulate another turn's usage (None: that turn reported nothing)."""
        if other is None:
            self.unreported += 1
            return
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cached_tokens += other.cached_tokens
        self.reasoning_tokens += other.reasoning_tokens
        self.reported += other.reported
        self.unreported += other.unreported

    def as_dict(self) -> dict[str, Any]:
        """For ``--json``: counts are null when no turn reported usage."""
        known = self.known
        return {
            "prompt_tokens": self.prompt_tokens if known else None,
            "completion_tokens": self.completion_tokens if known else None,
            "cached_tokens": self.cached_tokens if known else None,
            "reasoning_tokens": self.reasoning_tokens if known else None,
            "total_tokens": self.total if known else None,
            "cached_share": round(self.cached_share, 4) if self.cached_share is not None else None,
            "turns_reported": self.reported,
            "turns_unreported": self.unreported,
        }


@dataclass(slots=True)
class Reply:
    """One assistant turn: text, tool calls, why it stopped, and usage."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list[ToolCall])
    finish_reason: str | None = None
    usage: Usage | None = None
    model: str | None = None
    """The model the server says answered."""
    reasoning: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    """The model's reasoning items as the API sent them (the Responses API: a summary, and
    the encrypted reasoning that goes back with the turn so it survives tool calls)."""

    @property
    def empty(self) -> bool:
        """No text and no tool calls (what llama.cpp streams for a turn that has tools)."""
        return not self.text and not self.tool_calls

    @property
    def reasoning_summary(self) -> str:
        """The summaries of the reasoning, as text ("" when there are none)."""
        return reasoning_summary(self.reasoning)

    def message(self) -> dict[str, Any]:
        """The assistant message to put in the history.

        ``content`` is always a string: llama.cpp rejects ``null`` next to ``tool_calls``.
        """
        message: dict[str, Any] = {"role": "assistant", "content": self.text}
        if self.reasoning and not self.empty:  # an item the API gets back needs a successor
            message[REASONING_KEY] = self.reasoning
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


REASONING_KEY = "reasoning"
"""An assistant message's reasoning items in the history (and the saved session); only the
Responses API is sent them, Chat Completions requests leave the key out."""


def reasoning_summary(items: list[dict[str, Any]]) -> str:
    """The summary text of reasoning items, paragraphs apart."""
    parts = [
        str(part.get("text") or "")
        for item in items
        for part in item.get("summary") or ()
        if isinstance(part, dict)
    ]
    return "\n\n".join(p for p in parts if p)


def _usage(raw: Any) -> Usage | None:
    if raw is None:
        return None
    details = getattr(raw, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    out = getattr(raw, "completion_tokens_details", None)
    reasoning = getattr(out, "reasoning_tokens", None) if out is not None else None
    return Usage(
        int(raw.prompt_tokens or 0),
        int(raw.completion_tokens or 0),
        int(cached or 0),
        reported=1,
        reasoning_tokens=int(reasoning or 0),
    )


class StreamAccumulator:
    """Merge ``ChatCompletionChunk``s into a :class:`Reply`, emitting text as it arrives."""

    def __init__(
        self, on_text: TextCallback | None = None, on_progress: ProgressCallback | None = None
    ) -> None:
        self._on_text = on_text
        self._on_progress = on_progress
        self.generated = 0
        """Pieces of output so far (content and tool-call argument deltas)."""
        self._text: list[str] = []
        self._calls: dict[int, ToolCall] = {}
        self._last_index = -1
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.model: str | None = None
        self.chunks = 0

    def add(self, chunk: ChatCompletionChunk) -> None:
        """Fold one chunk in; only choice 0 counts (we never ask for ``n > 1``)."""
        self.chunks += 1
        if chunk.model:
            self.model = chunk.model
        if chunk.usage is not None:
            self.usage = _usage(chunk.usage)
        for choice in chunk.choices:
            if choice.index not in (0, None):
                continue
            delta = choice.delta
            if delta is not None:
                before = self.generated
                if delta.content:
                    self._text.append(delta.content)
                    self.generated += 1
                    if self._on_text is not None:
                        self._on_text(delta.content)
                for piece in delta.tool_calls or ():
                    self._merge_call(piece)
                    self.generated += 1
                if self.generated != before and self._on_progress is not None:
                    self._on_progress(self.generated)
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
        return Reply("".join(self._text), calls, self.finish_reason, self.usage, self.model)

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
    return Reply(
        text, calls, choice.finish_reason or "stop", _usage(completion.usage), completion.model
    )
