"""Scrub a stream of text that arrives in pieces: a secret split across two pieces is masked.

The model's answer streams to the terminal delta by delta, a server's stderr reaches its log
read by read, progress and log notifications come one message at a time. Scrubbing each piece
alone would let a secret through whenever a boundary falls inside it. :class:`StreamScrubber`
holds back the end of what it has seen while that end could still become a secret (at most
the longest secret's length minus one character), and, for URL credentials, a last word that
holds ``://``, ``=`` or ``@`` until it ends (the secret parts of a URL come after those);
everything before is scrubbed and given out at once.
"""

from __future__ import annotations

from collections.abc import Callable

from codebot_mcp.core.secrets.redact import SECRETS, Redactor

URL_HOLD_LIMIT = 4096
"""A trailing word longer than this is given out even when it looks like a URL."""
_URL_MARKERS = ("://", "=", "@")
"""What is secret in a URL comes after these: a word holding one waits until it ends."""
_CONTEXT_LIMIT = 512


class StreamScrubber:
    """Feed pieces in order; each call returns what is safe to show now; :meth:`flush` the rest.

    Args:
        redactor: Knows the secrets (read at every piece, so secrets added later count).
        urls: Also hold a last word with ``://``, ``=`` or ``@`` until whitespace ends it, so a
            URL's ``user:pass@`` or ``?token=...`` split in two is masked (a word longer than
            4096 characters is given out).
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
        """The end of the word given out last (a URL is judged whole across pieces)."""

    def feed(self, text: str) -> str:
        """Scrubbed text that can be shown now (possibly empty)."""
        if not text:
            return ""
        buffer = self.pending + text
        secrets = self.redactor.values()
        cut = len(buffer) - _held(buffer, secrets)
        if self.urls:
            full = self.context + buffer
            start = _last_word(full, URL_HOLD_LIMIT)
            if start is not None and any(m in full[start:] for m in _URL_MARKERS):
                cut = min(cut, max(0, start - len(self.context)))
        cut = _safe_cut(buffer, cut, secrets)
        self.pending = buffer[cut:]
        return self._scrub(buffer[:cut])

    def flush(self) -> str:
        """Everything still held, scrubbed (the stream ended)."""
        rest, self.pending = self.pending, ""
        out = self._scrub(rest)
        self.context = ""
        return out

    def _scrub(self, text: str) -> str:
        if not text:
            return ""
        out = self.redactor(text)
        if self.urls and self.context:
            # The start of this word is out already: judge the URL whole, show only the rest.
            joined = self.redactor(self.context + text)
            if joined.startswith(self.context):
                out = joined[len(self.context) :]
        if self.urls:
            joined_out = self.context + out
            start = _last_word(joined_out, _CONTEXT_LIMIT)
            self.context = joined_out[start:] if start is not None else joined_out[-_CONTEXT_LIMIT:]
        return self.extra(out) if self.extra is not None else out


def _last_word(text: str, limit: int) -> int | None:
    """Where the last word of ``text`` starts, or None when it is longer than ``limit``."""
    end = len(text)
    at = end
    while at > 0 and end - at <= limit and not text[at - 1].isspace():
        at -= 1
    return at if end - at <= limit else None


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
