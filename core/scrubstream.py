"""Scrub a stream of text that arrives in pieces: a secret split across two pieces is masked.

The model's answer streams to the terminal delta by delta, a server's stderr reaches its log
read by read, progress and log notifications come one message at a time. Scrubbing each piece
alone would let a secret through whenever a boundary falls inside it. :class:`StreamScrubber`
holds back the end of what it has seen while that end could still become a secret (at most
the longest secret's length minus one character), and, for URL credentials, the last word
until it ends (a URL is only known to be one once it is whole); everything before is scrubbed
and given out at once. A last word of letters and digits alone (``Still typ``) is given out at
once, so streaming stays live, and kept as context: if ``://user:pass@`` follows, the URL is
still recognised and masked.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from core.redact import SECRETS, Redactor

URL_HOLD_LIMIT = 4096
"""A trailing word longer than this is given out even when it looks like a URL."""
_TRAILING_WORD = re.compile(r"\S*\Z")
_PLAIN_WORD = re.compile(r"[^\W_]*")
_CONTEXT_LIMIT = 64
"""The most of a given-out last word kept as context for the next piece's URL patterns."""


class StreamScrubber:
    """Feed pieces in order; each call returns what is safe to show now; :meth:`flush` the rest.

    Args:
        redactor: Knows the secrets (read at every piece, so secrets added later count).
        urls: Also hold the last word until whitespace ends it, so a URL's ``user:pass@`` or
            ``?token=...`` split in two is masked (a word longer than 4096 is given out).
        extra: Further scrubbing applied to every piece given out.
    """

    def __init__(
        self,
        redactor: Redactor = SECRETS,
        *,
        urls: bool = True,
        extra: Callable[[str], str] | None = None,
    ) -> None:
        self.redactor = redactor
        self.urls = urls
        self.extra = extra
        self.pending = ""
        self.context = ""
        """The plain last word already given out (a URL's scheme, perhaps): scrubbed again in
        front of the next piece so that a URL split after its scheme is still masked."""

    def feed(self, text: str) -> str:
        """Scrubbed text that can be shown now (possibly empty)."""
        if not text:
            return ""
        buffer = self.pending + text
        secrets = self.redactor.values()
        cut = len(buffer) - _held(buffer, secrets)
        if self.urls:
            word = _TRAILING_WORD.search(buffer, max(0, len(buffer) - URL_HOLD_LIMIT))
            plain = word is not None and _PLAIN_WORD.fullmatch(word.group()) is not None
            if word and word.start() > len(buffer) - URL_HOLD_LIMIT and not plain:
                cut = min(cut, word.start())
        cut = _safe_cut(buffer, cut, secrets)
        self.pending = buffer[cut:]
        return self._scrub(buffer[:cut])

    def flush(self) -> str:
        """Everything still held, scrubbed (the stream ended)."""
        rest, self.pending = self.pending, ""
        return self._scrub(rest)

    def _scrub(self, text: str) -> str:
        if not text:
            return ""
        context = self.context if self.urls else ""
        scrubbed = self.redactor(context + text)
        if context and scrubbed.startswith(context):
            scrubbed = scrubbed[len(context) :]
        elif context:  # the context itself was rewritten: give out only the new piece's share
            scrubbed = self.redactor(text)
        if self.urls:
            word = _TRAILING_WORD.search(context + text)
            tail = word.group() if word else ""
            self.context = tail[-_CONTEXT_LIMIT:] if _PLAIN_WORD.fullmatch(tail) else ""
        return self.extra(scrubbed) if self.extra is not None else scrubbed


def _held(buffer: str, secrets: frozenset[str]) -> int:
    """Length of the longest end of ``buffer`` that a secret starts with (but is not)."""
    best = 0
    for secret in secrets:
        first = secret[0]
        start = max(0, len(buffer) - len(secret) + 1)
        at = buffer.find(first, start)
        while at != -1:
            size = len(buffer) - at
            if size <= best:
                break
            if secret.startswith(buffer[at:]):
                best = size
                break
            at = buffer.find(first, at + 1)
    return best


def _safe_cut(buffer: str, cut: int, secrets: frozenset[str]) -> int:
    """Move ``cut`` back so that no whole secret in ``buffer`` straddles it."""
    moved = True
    while moved:
        moved = False
        for secret in secrets:
            at = buffer.find(secret, max(0, cut - len(secret) + 1))
            if at != -1 and at < cut < at + len(secret):
                cut, moved = at, True
    return cut
