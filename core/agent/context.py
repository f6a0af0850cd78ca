"""The context window: what a model holds, what a request costs, and compaction.

Before each request the agent asks :meth:`ContextBudget.fit` whether the request passes about
80% of the window. If it does, old tool results are cut first (cheap, no request); if that is
not enough, every turn before the current one is summarised by the model in one request. The
current turn (the user's prompt and everything after it) always stays whole.

Costs are estimated from characters (:data:`CHARS_PER_TOKEN`) and corrected by the API's
``usage``: after an answer, the next estimate starts from the prompt tokens the server counted.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from codebot_mcp.core.model.tokens import CHARS_PER_TOKEN

if TYPE_CHECKING:
    from codebot_mcp.core.model.client import ChatModel

DEFAULT_WINDOW = 128_000
COMPACT_AT = 0.8
"""Compact when a request would pass this share of the window."""
KEEP_TOOL_RESULT_CHARS = 300
"""Old tool results longer than this are cut to a note (the model can call the tool again)."""
SUMMARY_INPUT_SHARE = 0.5
"""The transcript sent for summarising is cut to this share of the window."""
SUMMARY_MAX_TOKENS = 2048
MIN_SUMMARISED_TOKENS = 1000
"""Older turns smaller than this are not summarised unasked: a summary would save too little
to be worth a request (an overflow or ``/compact`` summarises them anyway)."""

KNOWN_WINDOWS: tuple[tuple[str, int], ...] = (
    # (model-name prefix, tokens); the longest matching prefix wins.
    ("gpt-5", 400_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("claude", 200_000),
    ("gemini-1.5", 1_048_576),
    ("gemini-2", 1_048_576),
    ("llama3.1", 131_072),
    ("llama3.2", 131_072),
    ("llama-3.1", 131_072),
    ("llama3", 8_192),
    ("qwen2.5-coder", 32_768),
    ("qwen3", 40_960),
    ("mistral-large", 131_072),
    ("codestral", 262_144),
    ("deepseek", 131_072),
    ("smollm2", 8_192),
)

SUMMARY_PROMPT = """\
You are compacting a coding session so it can continue in a smaller context. Summarise the \
conversation below for the assistant that will continue it: the user's goals and requests, \
decisions made, files read or changed (with paths), commands run and their outcomes, errors \
met, and what remains to do. Keep exact names, paths and numbers. Write plain text, at most \
about 600 words. Do not address the user."""


def known_window(model: str) -> int | None:
    """The window of a well-known model (by name prefix, ignoring any ``vendor/`` part)."""
    name = model.lower().rsplit("/", 1)[-1]
    best = max((p for p, _ in KNOWN_WINDOWS if name.startswith(p)), key=len, default=None)
    return dict(KNOWN_WINDOWS)[best] if best else None


def window_for(model: str, configured: int | None, reported: int | None = None) -> int:
    """``context_window`` from settings, else what the endpoint reports for the model, else
    the table, else :data:`DEFAULT_WINDOW`."""
    return configured or reported or known_window(model) or DEFAULT_WINDOW


OUTPUT_SHARE = 4
"""With the default ``max_tokens``, a turn's output is capped at a quarter of a known window."""
MIN_OUTPUT_CAP = 256


def output_cap(default: int, window: int) -> int:
    """The default output cap for a model whose window is known: a quarter of it, at most
    ``default`` (a local model at a dozen tokens a second must not run 8k tokens a turn)."""
    return min(default, max(MIN_OUTPUT_CAP, window // OUTPUT_SHARE))


def estimate_text(text: str) -> int:
    """Tokens of a piece of text, estimated."""
    return -(-len(text) // CHARS_PER_TOKEN)


def estimate(value: Any) -> int:
    """Tokens of a message, a tool schema, or a list of them, estimated from their JSON."""
    if isinstance(value, str):
        return estimate_text(value)
    return estimate_text(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


@dataclass(slots=True)
class Compaction:
    """What one compaction did."""

    before: int
    after: int
    cut_results: int = 0
    summarised_messages: int = 0
    summary_requests: int = 0


Notify = Callable[[Compaction], None]


class ContextBudget:
    """The window of the current model and the compaction policy for one session.

    Args:
        window: The model's context window in tokens.
        reserve: Tokens kept free for the answer (the per-turn output cap, bounded).
    """

    def __init__(self, window: int = DEFAULT_WINDOW, *, reserve: int = 0) -> None:
        self.window = window
        self.reserve = min(reserve, window // 4)
        self.summary_requests = 0
        """Requests spent on summaries this session."""
        self.compactions = 0
        self._anchor: tuple[int, int] | None = None
        """(estimated, counted) prompt tokens of the last answered request."""

    @property
    def last_counted(self) -> int | None:
        """Prompt tokens the API counted for the last answered request (None: not yet)."""
        return self._anchor[1] if self._anchor else None

    @property
    def limit(self) -> int:
        """Requests estimated above this are compacted first."""
        return int(self.window * COMPACT_AT) - self.reserve

    def learn_window(self, window: int | None) -> None:
        """The server named a smaller window in an error: believe it."""
        if window and window < self.window:
            self.window = window
            self.reserve = min(self.reserve, window // 4)

    def observe(self, messages: Sequence[Any], tools: Sequence[Any], prompt_tokens: int) -> None:
        """The server counted ``prompt_tokens`` for this request: calibrate the estimate."""
        if prompt_tokens > 0:
            self._anchor = (self.raw_estimate(messages, tools), prompt_tokens)

    @staticmethod
    def raw_estimate(messages: Sequence[Any], tools: Sequence[Any]) -> int:
        """Characters / 4 over the request's messages and tools."""
        return estimate(list(messages)) + (estimate(list(tools)) if tools else 0)

    def cost(self, messages: Sequence[Any], tools: Sequence[Any]) -> int:
        """Estimated prompt tokens of a request (anchored to the last counted one)."""
        raw = self.raw_estimate(messages, tools)
        if self._anchor is None:
            return raw
        estimated, counted = self._anchor
        if raw >= estimated:  # the usual case: the history grew since the counted request
            return counted + (raw - estimated)
        return raw * counted // max(1, estimated)

    async def fit(
        self,
        history: list[dict[str, Any]],
        keep_from: int,
        request: Callable[[], tuple[list[Any], list[Any]]],
        model: ChatModel,
        *,
        force: bool = False,
        focus: str | None = None,
    ) -> Compaction | None:
        """Compact ``history`` in place when the request would pass the limit (or ``force``).

        Args:
            history: The conversation (without the system message).
            keep_from: Index of the current turn's first message: it and what follows stay.
            request: Builds ``(messages, tools)`` of the next request from the history.
            model: Summaries are asked of it.
            force: Compact even under the limit (``/compact``, or after an overflow error).
            focus: What the summary should keep in particular (``/compact <focus>``).

        Raises:
            ModelError: the summary request failed.
        """
        before = self.cost(*request())
        if before <= self.limit and not force:
            return None
        done = Compaction(before=before, after=before)
        keep_from = max(0, min(keep_from, len(history)))
        done.cut_results = cut_tool_results(history, keep_from)
        done.after = self.cost(*request())
        worth = force or estimate(history[:keep_from]) >= MIN_SUMMARISED_TOKENS
        if (done.after > self.limit or force) and worth and _has_turns(history, keep_from):
            summary = await self._summarise(history[:keep_from], model, focus)
            done.summarised_messages = keep_from
            done.summary_requests = 1
            history[:keep_from] = summary_messages(summary)
            self._anchor = None
            done.after = self.cost(*request())
        if done.cut_results or done.summarised_messages:
            self.compactions += 1
            return done
        return None

    async def _summarise(
        self, old: list[dict[str, Any]], model: ChatModel, focus: str | None
    ) -> str:
        limit = int(self.window * SUMMARY_INPUT_SHARE) * CHARS_PER_TOKEN
        transcript = render_transcript(old, limit)
        ask = SUMMARY_PROMPT + (f"\n\nPay particular attention to: {focus}" if focus else "")
        self.summary_requests += 1
        reply = await model.complete(
            [{"role": "system", "content": ask}, {"role": "user", "content": transcript}],
            (),
            None,
            max_tokens=SUMMARY_MAX_TOKENS,
        )
        return reply.text.strip() or "(the summary came back empty)"


def _has_turns(history: Sequence[Mapping[str, Any]], keep_from: int) -> bool:
    return any(m.get("role") in ("user", "assistant") for m in history[:keep_from])


def cut_tool_results(history: list[dict[str, Any]], keep_from: int) -> int:
    """Replace long tool results before ``keep_from`` with a short note; returns how many."""
    cut = 0
    for message in history[:keep_from]:
        content = message.get("content")
        if message.get("role") != "tool" or not isinstance(content, str):
            continue
        if len(content) <= KEEP_TOOL_RESULT_CHARS or content.startswith("[codebot: cut"):
            continue
        head = content[:200].rstrip()
        message["content"] = (
            f"[codebot: cut old tool result of {len(content)} characters to save context; "
            f"call the tool again if you need it. It began: {head!r}]"
        )
        cut += 1
    return cut


def summary_messages(summary: str) -> list[dict[str, Any]]:
    """The two messages that stand in for the summarised turns."""
    return [
        {
            "role": "user",
            "content": "[codebot compacted the earlier conversation; this is its summary]\n\n"
            + summary,
        },
        {"role": "assistant", "content": "Understood. I will continue from this summary."},
    ]


def render_transcript(messages: Sequence[Mapping[str, Any]], limit: int) -> str:
    """Messages as plain text for the summary request, the oldest cut first past ``limit``."""
    parts: list[str] = []
    for message in messages:
        role = str(message.get("role", "?"))
        content = message.get("content")
        text = content if isinstance(content, str) else json.dumps(content)
        for call in message.get("tool_calls") or ():
            function = call.get("function", {})
            text += f"\n[calls {function.get('name')} {str(function.get('arguments'))[:500]}]"
        if role == "tool" and len(text) > 2000:
            text = text[:2000] + " [...]"
        parts.append(f"{role}: {text}")
    joined = "\n\n".join(parts)
    if len(joined) > limit:
        joined = "[... the oldest part was cut ...]\n" + joined[-limit:]
    return joined


@dataclass(frozen=True, slots=True)
class Slice:
    """One row of ``/context``."""

    label: str
    tokens: int


def breakdown(
    blocks: Mapping[str, str],
    builtin_schemas: Sequence[Any],
    mcp_schemas: Mapping[str, Sequence[Any]],
    history: Sequence[Any],
    window: int,
) -> list[Slice]:
    """What fills the window, largest first, with ``free`` last."""
    rows = [Slice(f"system: {name}", estimate_text(text)) for name, text in blocks.items() if text]
    if builtin_schemas:
        rows.append(Slice("built-in tools", estimate(list(builtin_schemas))))
    for server, schemas in sorted(mcp_schemas.items()):
        if schemas:
            rows.append(Slice(f"MCP tools: {server}", estimate(list(schemas))))
    rows.append(Slice("history", estimate(list(history)) if history else 0))
    rows.sort(key=lambda r: -r.tokens)
    used = sum(r.tokens for r in rows)
    rows.append(Slice("free", max(0, window - used)))
    return rows
