"""The one rough token estimate codebot uses (result cuts, catalog sizes): characters / 4."""

from __future__ import annotations

import math

CHARS_PER_TOKEN = 4
"""The usual ratio for English and JSON; for code it errs towards counting more tokens."""


def estimate_tokens(text: str) -> int:
    """About how many tokens ``text`` is (rounded up)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)
