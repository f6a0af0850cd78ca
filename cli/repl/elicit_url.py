"""URL-mode elicitation in the REPL: show the URL and its host plainly, open it after a yes.

A server's URL is a stranger's text, and the host shown must be the host the browser goes
to. So the URL is taken apart the way browsers do (the WHATWG URL standard, for ``http`` and
``https``), not the way Python's ``urllib`` does, which disagrees exactly where an attacker
wants it to: ``https://evil.example\\@bank.com/`` is host ``bank.com`` to ``urllib`` and
``evil.example`` to a browser (a ``\\`` ends the host like ``/``). The rules followed:

- leading and trailing control characters and spaces are dropped, tabs and line breaks
  removed anywhere (browsers do both);
- after ``scheme:``, any run of ``/`` and ``\\`` is skipped; the authority ends at the first
  ``/``, ``\\``, ``?`` or ``#``; a user name ends at the *last* ``@``;
- the host is percent-decoded, mapped to ASCII (UTS #46, non-transitional, as browsers:
  ``xn--…`` for non-ASCII letters), lower-cased; a host ending in a number is read as IPv4
  the way browsers read it (``0x7f.1`` is ``127.0.0.1``).

What is opened is rebuilt from those parts (scheme, user name, host, port, the rest), so the
browser goes where the user was shown. Only ``https`` and
``http`` URLs are opened; a URL that cannot be read with certainty is shown and declined,
and so is anything with a ``\\``, a tab or a line break (no legitimate URL needs one).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from codebot_mcp.cli import render

OPENABLE_SCHEMES = ("https", "http")
_HOST = re.compile(r"[a-z0-9._-]+|\[[0-9a-f:.]+\]")
"""A host name in ASCII form, or a bracketed IPv6 literal."""
MAX_URL_CHARS = 2048
"""A longer URL cannot be shown plainly (nor read before saying yes): it is declined."""
_FORBIDDEN_HOST = set("\x00\t\n\r #/:<>?@[\\]^|%\x7f")
"""WHATWG's forbidden domain code points (with C0 controls, below)."""


@dataclass(frozen=True, slots=True)
class ShownURL:
    """What the user sees of a URL before saying yes."""

    url: str
    """The whole URL, escaped, on one line."""
    host: str
    """The host the browser goes to, in ASCII (punycode) form; ``(no host)`` when none."""
    notes: tuple[str, ...] = ()
    """Warnings worth a second look (a non-ASCII host, a user name before the host)."""
    problem: str | None = None
    """Why it will not be opened at all (a scheme other than http/https, no host, ``\\``)."""
    target: str | None = None
    """What is opened: the URL rebuilt from the parts shown (None when declined)."""


class _UnreadableError(Exception):
    pass


def _ipv4_number(part: str) -> int:
    if part.lower().startswith("0x"):
        digits, base = part[2:], 16
    elif len(part) > 1 and part.startswith("0"):
        digits, base = part[1:], 8
    else:
        digits, base = part, 10
    if digits == "":
        return 0
    try:
        return int(digits, base)
    except ValueError:
        raise _UnreadableError("its host is not a valid IPv4 address") from None


def _ends_in_number(host: str) -> bool:
    labels = host.split(".")
    if labels[-1] == "" and len(labels) > 1:
        labels.pop()
    last = labels[-1]
    return bool(last) and (last.isdigit() or bool(re.fullmatch(r"0[xX][0-9a-fA-F]*", last)))


def _ipv4(host: str) -> str:
    """WHATWG's IPv4 parser: up to four parts, decimal, octal (``0``) or hex (``0x``)."""
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    if len(parts) > 4 or "" in parts:
        raise _UnreadableError("its host is not a valid IPv4 address")
    numbers = [_ipv4_number(p) for p in parts]
    if any(n > 255 for n in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        raise _UnreadableError("its host is not a valid IPv4 address")
    value = numbers[-1]
    for i, n in enumerate(numbers[:-1]):
        value += n * 256 ** (3 - i)
    return str(ipaddress.IPv4Address(value))


def _percent_decode(text: str) -> str:
    raw = re.sub(
        rb"%([0-9A-Fa-f]{2})", lambda m: bytes([int(m.group(1), 16)]), text.encode("utf-8")
    )
    return raw.decode("utf-8", "replace")


def _to_ascii(domain: str) -> str:
    if domain.isascii():
        return domain.lower()
    try:
        import idna  # UTS #46, as browsers map hosts

        return idna.encode(domain, uts46=True, transitional=False, std3_rules=False).decode()
    except ImportError:  # pragma: no cover - idna comes with httpx; the codec is IDNA 2003
        try:
            return domain.encode("idna").decode("ascii").lower()
        except UnicodeError:
            raise _UnreadableError(
                "its host cannot be mapped to ASCII as a browser would"
            ) from None
    except (UnicodeError, ValueError):
        raise _UnreadableError("its host cannot be mapped to ASCII as a browser would") from None


def browser_host(host: str) -> str:
    """The host a browser connects to for the authority's host part ``host``."""
    if host.startswith("["):
        if not host.endswith("]"):
            raise _UnreadableError("it is not a valid URL (Invalid IPv6 URL)")
        try:
            return f"[{ipaddress.IPv6Address(host[1:-1]).compressed}]"
        except ValueError:
            raise _UnreadableError("its host is not a valid IPv6 address") from None
    domain = _percent_decode(host)
    ascii_host = _to_ascii(domain)
    if not ascii_host:
        raise _UnreadableError("it has no host")
    if any(c in _FORBIDDEN_HOST or ord(c) < 0x20 for c in ascii_host):
        raise _UnreadableError("its host has characters no host name has")
    if _ends_in_number(ascii_host):
        return _ipv4(ascii_host)
    return ascii_host


@dataclass(frozen=True, slots=True)
class _Parts:
    scheme: str
    userinfo: str | None
    host: str
    port: str
    rest: str


def _split(url: str) -> _Parts:
    """The authority of an http(s) URL, taken apart as browsers do."""
    match = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", url)
    if match is None:
        raise _UnreadableError("it has no scheme; codebot opens only http(s) URLs")
    scheme = match.group(1).lower()
    after = url[match.end() :]
    after = after.lstrip("/\\")
    end = re.search(r"[/\\?#]", after)
    authority, rest = (after[: end.start()], after[end.start() :]) if end else (after, "")
    before, at, host_port = authority.rpartition("@")
    userinfo = before if at else None
    if host_port.startswith("["):
        close = host_port.find("]")
        host, port_part = (
            (host_port[: close + 1], host_port[close + 1 :]) if close >= 0 else (host_port, "")
        )
    else:
        host, _, tail = host_port.partition(":")
        port_part = ":" + tail if _ else ""
    port = port_part[1:] if port_part.startswith(":") else ""
    if port_part and not port_part.startswith(":"):
        raise _UnreadableError("it is not a valid URL (text after the IPv6 host)")
    if port and not port.isdigit():
        raise _UnreadableError("it is not a valid URL (its port is not a number)")
    if port and int(port) > 65535:
        raise _UnreadableError("it is not a valid URL (its port is out of range)")
    return _Parts(scheme, userinfo, host, port, rest.replace("\\", "/"))


def describe(url: str) -> ShownURL:
    """Take ``url`` apart for the question, as the browser will."""
    if len(url) > MAX_URL_CHARS:
        shown = render.safe(url[:200], one_line=True) + "…"
        too_long = f"the URL is {len(url):,} characters long, over {MAX_URL_CHARS:,}"
        return ShownURL(shown, "(not shown)", problem=too_long)
    shown = render.safe(url, one_line=True)
    trimmed = url.strip("".join(chr(c) for c in range(0x21)))
    cleaned = re.sub(r"[\t\n\r]", "", trimmed)
    match = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", cleaned)
    scheme = match.group(1).lower() if match else ""
    if scheme and scheme not in OPENABLE_SCHEMES:
        other = f"codebot opens only http(s) URLs, not '{render.safe(scheme, one_line=True)}:'"
        return ShownURL(shown, "(no host)", problem=other)
    try:
        parts = _split(cleaned)
        host = browser_host(parts.host) if parts.host else ""
    except _UnreadableError as exc:
        return ShownURL(shown, "(no host)", problem=str(exc))
    shown_host = render.safe(host, one_line=True) if host else "(no host)"
    notes: list[str] = []
    decoded = _percent_decode(parts.host)
    if host and not decoded.isascii():
        notes.append(f"the host has non-ASCII letters: it is {shown_host}")
    if parts.userinfo is not None:
        name = render.safe(parts.userinfo, one_line=True)
        notes.append(f"'{name}' before the '@' is not the host")
    problem: str | None = None
    if trimmed != url or cleaned != trimmed:
        problem = (
            "it has spaces, tabs, line breaks or control characters that a browser drops: "
            f"the browser would go to {shown_host}"
        )
    elif "\\" in cleaned:
        problem = (
            f"it has a '\\', which a browser reads as '/': the browser would go to {shown_host}"
        )
    elif not re.match(r"[A-Za-z][A-Za-z0-9+.-]*://[^/\\]", cleaned):
        problem = (
            "it has no host"
            if not host or re.match(r"[A-Za-z][A-Za-z0-9+.-]*:///", cleaned)
            else f"it does not start with scheme://host: the browser would go to {shown_host}"
        )
    elif not host:
        problem = "it has no host"
    elif not _HOST.fullmatch(host):
        problem = "its host has characters no host name has"
    if problem is not None:
        return ShownURL(shown, shown_host, tuple(notes), problem)
    port = f":{parts.port}" if parts.port else ""
    user = f"{parts.userinfo}@" if parts.userinfo is not None else ""
    target = f"{parts.scheme}://{user}{host}{port}{parts.rest or '/'}"
    return ShownURL(shown, shown_host, tuple(notes), target=target)
