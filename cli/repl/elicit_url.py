"""URL-mode elicitation in the REPL: show the URL and its host plainly, open it after a yes.

A server's URL is a stranger's text. The whole URL is shown escaped on one line, the host
apart from it, in its ASCII (punycode) form when it has non-ASCII letters (a look-alike
domain shows as ``xn--…``), and the user names, not the host, are called out. Only
``https`` and ``http`` URLs are opened; anything else is shown and declined.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from codebot_mcp.cli import render

OPENABLE_SCHEMES = ("https", "http")
_HOST = re.compile(r"[A-Za-z0-9._:-]+")
"""A host name in ASCII form (an IPv6 literal without its brackets included)."""
MAX_URL_CHARS = 2048
"""A longer URL cannot be shown plainly (nor read before saying yes): it is declined."""


@dataclass(frozen=True, slots=True)
class ShownURL:
    """What the user sees of a URL before saying yes."""

    url: str
    """The whole URL, escaped, on one line."""
    host: str
    """The host, in ASCII (punycode) form; ``(no host)`` when there is none."""
    notes: tuple[str, ...] = ()
    """Warnings worth a second look (a non-ASCII host, a user name before the host)."""
    problem: str | None = None
    """Why it will not be opened at all (a scheme other than http/https, no host)."""


def _ascii_host(host: str) -> str:
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError:
        ascii_host = host.encode("ascii", "backslashreplace").decode("ascii")
    return render.safe(ascii_host, one_line=True)  # control characters stay visible


def describe(url: str) -> ShownURL:
    """Take ``url`` apart for the question."""
    if len(url) > MAX_URL_CHARS:
        shown = render.safe(url[:200], one_line=True) + "…"
        problem = f"the URL is {len(url):,} characters long, over {MAX_URL_CHARS:,}"
        return ShownURL(shown, "(not shown)", problem=problem)
    shown = render.safe(url, one_line=True)
    try:
        parts = urlsplit(url)
        hostname = parts.hostname or ""
    except ValueError as exc:
        return ShownURL(shown, "(no host)", problem=f"it is not a valid URL ({exc})")
    notes: list[str] = []
    host = _ascii_host(hostname) if hostname else "(no host)"
    if hostname and not hostname.isascii():
        notes.append(f"the host has non-ASCII letters: it is {host}")
    if parts.username is not None:
        notes.append(
            f"'{render.safe(parts.username, one_line=True)}' before the '@' is not the host"
        )
    scheme = parts.scheme.lower()
    if scheme not in OPENABLE_SCHEMES:
        problem = (
            f"codebot opens only http(s) URLs, not '{render.safe(scheme, one_line=True)}:'"
            if scheme
            else "it has no scheme; codebot opens only http(s) URLs"
        )
        return ShownURL(shown, host, tuple(notes), problem)
    if not hostname:
        return ShownURL(shown, host, tuple(notes), "it has no host")
    if not _HOST.fullmatch(host):
        return ShownURL(shown, host, tuple(notes), "its host has characters no host name has")
    return ShownURL(shown, host, tuple(notes))
