"""The one rough token estimate codebot uses (result cuts, catalog sizes, what a request
costs): characters / 4; and the context window a model holds (settings, the endpoint, the
table of well-known models).

Below the agent on purpose: the agent's context budget and ``mcp doctor``'s totals both count
with these, and the bridge must not reach into the agent.
"""

from __future__ import annotations

import json
import math
from typing import Any

from codebot_mcp.core.media import images

CHARS_PER_TOKEN = 4
"""The usual ratio for English and JSON; for code it errs towards counting more tokens."""

DEFAULT_WINDOW = 128_000

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


def known_window(model: str) -> int | None:
    """The window of a well-known model (by name prefix, ignoring any ``vendor/`` part)."""
    name = model.lower().rsplit("/", 1)[-1]
    best = max((p for p, _ in KNOWN_WINDOWS if name.startswith(p)), key=len, default=None)
    return dict(KNOWN_WINDOWS)[best] if best else None


def window_for(model: str, configured: int | None, reported: int | None = None) -> int:
    """``context_window`` from settings, else what the endpoint reports for the model, else
    the table, else :data:`DEFAULT_WINDOW`."""
    return configured or reported or known_window(model) or DEFAULT_WINDOW


def estimate_tokens(text: str) -> int:
    """About how many tokens ``text`` is (rounded up)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def estimate_text(text: str) -> int:
    """Tokens of a piece of text, estimated (:func:`estimate_tokens`)."""
    return estimate_tokens(text)


def estimate(value: Any) -> int:
    """Tokens of a message, a tool schema, or a list of them, estimated from their JSON."""
    if isinstance(value, str):
        return estimate_text(value)
    pictures = 0
    if isinstance(value, list):  # an image costs about IMAGE_TOKENS, not its base64
        value, pictures = images.for_estimate(value)
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return estimate_text(text) + pictures * images.IMAGE_TOKENS
