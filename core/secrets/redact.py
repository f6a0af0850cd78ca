"""Keep secrets out of everything codebot prints or writes.

Header values, env values and API keys are secrets by definition; URLs may carry them as
``user:pass@`` or as ``?token=`` style query parameters. :class:`Redactor` scrubs every known
secret value out of arbitrary text (error messages from servers included).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from codebot_mcp.core.secrets.credentials import is_credential_name, looks_like_token

MASK = "***"
_MIN_SECRET_LENGTH = 4  # shorter values would mask ordinary words


@functools.cache
def _url_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """``user:pass@`` in a URL, and a secret-looking query value; compiled on first use (about
    1.5 ms, which ``codebot --help`` and a warm call would otherwise pay at every start).

    Bounded repeats: unbounded ones make a long run of letters (a hostile tool result) take
    quadratic time, 40 kB in half a minute. A ``${VAR}`` reference in place of the secret is
    not one: it stays readable."""
    credentials = re.compile(
        r"(?P<scheme>(?<![a-z0-9+.-])[a-z][a-z0-9+.-]{0,31}://)"
        r"(?![^/@\s]{0,1024}:\$\{[A-Za-z_][A-Za-z0-9_]{0,127}\}@)[^/@\s]{1,1024}@",
        re.IGNORECASE,
    )
    query = re.compile(
        r"(?P<key>[?&](?=[a-z0-9_-]{0,128}=)(?:[a-z0-9_-]{0,64}(?:token|key|secret|password|"
        r"passwd|auth|sig|signature|credential)[a-z0-9_-]{0,64})=)"
        r"(?!\$\{[A-Za-z_][A-Za-z0-9_]{0,127}\}(?:[&#\s]|$))[^&#\s]+",
        re.IGNORECASE,
    )
    return credentials, query


_PLAIN_ENV = frozenset(
    "PATH HOME PYTHONPATH NODE_PATH NODE_ENV LANG LANGUAGE TERM USER LOGNAME SHELL TMPDIR TZ "
    "PWD DEBUG LOG_LEVEL".split()
)
"""Env keys whose values are configuration, not secrets."""


def expandable_values(raw: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(key, text)`` of every value of an entry where ``${VAR}`` expands: the one list in
    :func:`core.envexpand.expandable_strings` (``oauth`` included)."""
    from codebot_mcp.core.envexpand import expandable_strings

    return expandable_strings(raw)


class _Entry(Protocol):
    @property
    def env(self) -> Mapping[str, str]: ...
    @property
    def headers(self) -> Mapping[str, str]: ...
    @property
    def raw(self) -> Mapping[str, Any]: ...


_CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "x-api-key"})


def _paths_only(value: str) -> bool:
    parts = [p for p in value.split(os.pathsep) if p]
    return bool(parts) and all(p.startswith(("/", "~", "./", "../")) for p in parts)


def entry_secrets(config: _Entry, environ: Mapping[str, str] | None = None) -> list[str]:
    """The secret values one server entry carries, to be redacted wherever they appear.

    Header and env values named like a credential (``Authorization``, ``*_TOKEN``) or
    expanded from a credential-looking variable; other header and env values only when they
    look like a credential themselves (``looks_like_token``, loose; configuration such as
    ``PATH``, ``HOME`` and plain paths never); and the value of every credential-looking
    variable the entry expands anywhere (``args``, ``url``), so ``--key=${API_KEY}`` is masked too.
    """
    from codebot_mcp.core.envexpand import referenced

    environ = os.environ if environ is None else environ
    raw_env: Any = config.raw.get("env")
    written: Mapping[str, Any] = raw_env if isinstance(raw_env, dict) else {}  # pyright: ignore[reportUnknownVariableType]
    raw_headers: Any = config.raw.get("headers")
    written_headers: Mapping[str, Any] = raw_headers if isinstance(raw_headers, dict) else {}  # pyright: ignore[reportUnknownVariableType]
    secrets: list[str] = []
    for section, values, raw in (
        ("headers", config.headers, written_headers),
        ("env", config.env, written),
    ):
        for key, value in values.items():
            source = raw.get(key)
            refs = referenced(source) if isinstance(source, str) else []
            credential = (
                is_credential_name(key)
                or key.lower() in _CREDENTIAL_HEADERS
                or any(is_credential_name(r) for r in refs)
            )
            if credential:
                secrets.append(value)
            elif section == "env" and (key.upper() in _PLAIN_ENV or _paths_only(value)):
                continue
            elif looks_like_token(
                value, strict=False
            ):  # not named a credential: masked only if it looks like one
                secrets.append(value)
    for _, text in expandable_values(config.raw):
        for name in referenced(text):
            if is_credential_name(name) and environ.get(name):
                secrets.append(environ[name])
    return secrets


def redact_url(text: str) -> str:
    """Remove ``user:pass@`` and secret-looking query values from URLs in ``text``."""
    if "://" in text:  # fast paths: a log flood has neither
        text = _url_patterns()[0].sub(rf"\g<scheme>{MASK}@", text)
    if "?" in text or "&" in text:
        text = _url_patterns()[1].sub(rf"\g<key>{MASK}", text)
    return text


def redact_values(mapping: Mapping[str, str]) -> dict[str, str]:
    """The same keys with every value masked (an empty value stays empty)."""
    return {key: (MASK if value else "") for key, value in mapping.items()}


class Redactor:
    """Scrubs known secret values, and URL credentials, out of text."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: set[str] = set()
        self.add(secrets)

    def add(self, secrets: Iterable[str]) -> None:
        """Remember more secret values (short ones are ignored)."""
        for secret in secrets:
            if len(secret) >= _MIN_SECRET_LENGTH:
                self._secrets.add(secret)
                # "Bearer abc" leaks "abc" on its own too.
                for part in secret.split():
                    if len(part) >= 8:
                        self._secrets.add(part)

    def values(self) -> frozenset[str]:
        """Every secret value known now (for :class:`core.scrubstream.StreamScrubber`)."""
        return frozenset(self._secrets)

    def __call__(self, text: str) -> str:
        """``text`` with every secret replaced by ``***``."""
        for secret in sorted(self._secrets, key=len, reverse=True):
            if secret in text:
                text = text.replace(secret, MASK)
        return redact_url(text)


def _escape_table(*, keep: str) -> dict[int, str]:
    named = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r", 0x1B: "\\x1b"}
    table: dict[int, str] = {}
    for code in (*range(0x20), 0x7F, *range(0x80, 0xA0)):
        table[code] = named.get(code, f"\\x{code:02x}")
    # Invisible and direction-changing characters reorder or hide what a terminal shows
    # ("Trojan Source"); tag characters carry text no one sees. ZWJ/ZWNJ stay: scripts and
    # emoji need them.
    invisible = (0x200B, 0x200E, 0x200F, 0x2028, 0x2029, *range(0x202A, 0x202F))
    for code in (*invisible, *range(0x2060, 0x2065), *range(0x2066, 0x206A), 0xFEFF):
        table[code] = f"\\u{code:04x}"
    for code in range(0xE0000, 0xE0080):
        table[code] = f"\\U{code:08x}"
    for char in keep:
        table.pop(ord(char), None)
    return table


_ONE_LINE = _escape_table(keep="")
_LINES = _escape_table(keep="\n\t")


def printable(text: str, *, one_line: bool = False) -> str:
    """``text`` safe for a terminal: control characters (ESC, ``\\r``, OSC, C1), invisible and
    bidi characters are shown escaped (``\\x1b``, ``\\r``, ``\\u202e``), never interpreted.

    Every piece of text from settings, a server or the model goes through here before it is
    printed. ``one_line`` escapes newlines and tabs too. Written here rather than taken from
    rich: rich's ``escape_control_codes`` leaves ESC itself alone, and rich is not a dependency.
    """
    return text.translate(_ONE_LINE if one_line else _LINES)


def printable_json(text: str) -> str:
    """JSON text (``ensure_ascii=False``) with C1, DEL, invisible and bidi characters as
    ``\\uXXXX`` escapes: the same document, safe to show (C0 is escaped by ``json`` itself)."""
    return text.translate(_JSON)


def _surrogates(code: int) -> str:
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


_JSON = {
    code: f"\\u{code:04x}" if code < 0x10000 else _surrogates(code)
    for code in (c for c in _ONE_LINE if c >= 0x7F)
}


SECRETS = Redactor()
"""Every secret of this run (header and env values, credentials, the API key), filled in
when settings load. Tool results pass through it before the model or any output sees them."""


def scrub(value: Any, redactor: Redactor = SECRETS) -> Any:
    """``value`` (text, or JSON-like data) with every known secret replaced by ``***``."""
    if isinstance(value, str):
        return redactor(value)
    if isinstance(value, dict):
        return {k: scrub(v, redactor) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list | tuple):
        return [scrub(v, redactor) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value
