"""Keep secrets out of everything codebot prints or writes.

Which header and env values are secrets is :func:`core.secrets.credentials.is_secret`'s call
(the one heuristic); API keys are secrets by definition; URLs may carry them as ``user:pass@``
or as ``?token=`` style query parameters. :class:`Redactor` scrubs every known
secret value out of arbitrary text (error messages from servers included).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

# core.secrets.credentials (the heuristic's patterns) is imported where it is used: a warm
# `mcp call` prints through this module and needs none of it.

MASK = "***"
_MIN_SECRET_LENGTH = 4  # shorter values would mask ordinary words


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


def _written(config: _Entry, section: str) -> Mapping[str, Any]:
    raw: Any = config.raw.get(section)
    return raw if isinstance(raw, dict) else {}


def _value_is_secret(key: str, value: str, written: Any) -> bool:
    """:func:`is_secret` of one env or header value, knowing the variables it came from."""
    from codebot_mcp.core.envexpand import referenced
    from codebot_mcp.core.secrets.credentials import is_secret

    sources = referenced(written) if isinstance(written, str) else []
    return is_secret(key, value, sources=sources)


def masked_values(config: _Entry, section: str) -> dict[str, str]:
    """The entry's ``env`` or ``headers`` (expanded) with each secret value masked and
    configuration shown as it is (``MODE=server``, ``REGION=eu-west-1``)."""
    values: Mapping[str, str] = config.env if section == "env" else config.headers
    written = _written(config, section)
    return {
        key: (MASK if _value_is_secret(key, value, written.get(key)) else value)
        for key, value in values.items()
    }


def entry_secrets(config: _Entry, environ: Mapping[str, str] | None = None) -> list[str]:
    """The secret values one server entry carries, to be redacted wherever they appear.

    Header and env values that :func:`is_secret` calls secrets (a credential's name, or the
    shape of a key or token; expanded from a credential-named variable), and the value of every
    credential-named variable the entry expands anywhere (``args``, ``url``), so
    ``--key=${API_KEY}`` is masked too. Configuration (``MODE=server``, ``REGION=eu-west-1``,
    ``GRAFANA_URL=http://127.0.0.1:9``) is not: it would mask ordinary text in every result.
    """
    from codebot_mcp.core.envexpand import referenced
    from codebot_mcp.core.secrets.credentials import is_credential_name, is_secret

    environ = os.environ if environ is None else environ
    secrets: list[str] = []
    for section, values in (("headers", config.headers), ("env", config.env)):
        written = _written(config, section)
        for key, value in values.items():
            if _value_is_secret(key, value, written.get(key)):
                secrets.append(value)
    for _, text in expandable_values(config.raw):
        for name in referenced(text):
            expanded = environ.get(name)
            if expanded and is_credential_name(name) and is_secret(name, expanded):
                secrets.append(expanded)
    return secrets


def redact_url(text: str) -> str:
    """Remove ``user:pass@`` and secret-looking query values from URLs in ``text``."""
    if "://" not in text and "?" not in text and "&" not in text:
        return text  # the fast path: a log flood has none
    from codebot_mcp.core.secrets.credentials import url_patterns

    if "://" in text:
        text = url_patterns()[0].sub(rf"\g<scheme>{MASK}@", text)
    if "?" in text or "&" in text:
        text = url_patterns()[1].sub(rf"\g<key>{MASK}", text)
    return text


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
        return {k: scrub(v, redactor) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(v, redactor) for v in value]
    return value
