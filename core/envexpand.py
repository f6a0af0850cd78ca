"""``${VAR}`` and ``${VAR:-default}`` expansion for settings values.

``$${`` is a literal ``${``. A default is taken literally up to the first ``}``; nesting is
not supported. An undefined variable without a default raises :class:`UndefinedVariable`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_PATTERN = re.compile(r"\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class UndefinedVariableError(Exception):
    """A ``${VAR}`` with no value and no default."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def expand(text: str, environ: Mapping[str, str]) -> str:
    """Expand variables in ``text`` from ``environ``.

    ``${VAR:-default}`` uses the default when VAR is unset or empty, like the shell.

    Raises:
        UndefinedVariable: a ``${VAR}`` is unset and has no default.
    """
    if "$" not in text:
        return text

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name is None:  # "$${" escape
            return "${"
        default = match.group(2)
        value = environ.get(name)
        if default is not None:
            return value if value else default
        if value is None:
            raise UndefinedVariableError(name)
        return value

    return _PATTERN.sub(replace, text)


def referenced(text: str) -> list[str]:
    """The variable names ``text`` refers to, in order (``$${`` escapes are not references)."""
    return [m.group(1) for m in _PATTERN.finditer(text) if m.group(1) is not None]


def defaulted(text: str) -> set[str]:
    """The variable names ``text`` refers to with a ``:-default``."""
    return {m.group(1) for m in _PATTERN.finditer(text) if m.group(1) and m.group(2) is not None}


EXPANDED_STRINGS = (
    "command",
    "cwd",
    "url",
    "args[]",
    "env.*",
    "headers.*",
    "oauth.client_id",
    "oauth.client_secret",
    "oauth.client_metadata_url",
    "oauth.private_key",
    "oauth.issuer",
    "oauth.assertion",
    "oauth.assertion_file",
    "oauth.idp_token_endpoint",
    "oauth.idp_issuer",
    "oauth.idp_client_id",
    "oauth.id_token",
    "oauth.id_token_file",
)
"""Every string of a server entry where ``${VAR}`` expands (``args[]``: each argument;
``env.*``: each value). The loader expands these and nothing else, and the trust review and
doctor list the variables of exactly these: one list, so a key that starts expanding cannot
stay invisible to either."""


def expandable_strings(raw: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(key, text)`` for every string of the entry ``raw`` (as written) that the loader
    expands, in :data:`EXPANDED_STRINGS` order: ``command``, ``args[0]``, ``env.TOKEN``,
    ``oauth.client_secret``..."""
    found: list[tuple[str, str]] = []
    for pattern in EXPANDED_STRINGS:
        section, _, key = pattern.partition(".")
        if pattern.endswith("[]"):
            values = raw.get(pattern[:-2])
            if isinstance(values, list):
                name = pattern[:-2]
                found += [(f"{name}[{i}]", v) for i, v in enumerate(values) if isinstance(v, str)]
        elif key == "*":
            values = raw.get(section)
            if isinstance(values, dict):
                found += [(f"{section}.{k}", v) for k, v in values.items() if isinstance(v, str)]
        elif key:
            inner = raw.get(section)
            if isinstance(inner, dict) and isinstance(inner.get(key), str):
                found.append((pattern, inner[key]))
        elif isinstance(raw.get(pattern), str):
            found.append((pattern, raw[pattern]))
    return found


def is_expanded(key: str) -> bool:
    """``key`` (``args[2]``, ``env.X``, ``oauth.issuer``) is one :data:`EXPANDED_STRINGS` names."""
    for pattern in EXPANDED_STRINGS:
        if pattern.endswith("[]"):
            if re.fullmatch(re.escape(pattern[:-2]) + r"\[\d+\]", key):
                return True
        elif pattern.endswith(".*"):
            if key.startswith(pattern[:-1]):
                return True
        elif key == pattern:
            return True
    return False
