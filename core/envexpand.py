"""``${VAR}`` and ``${VAR:-default}`` expansion for settings values.

``$${`` is a literal ``${``. A default is taken literally up to the first ``}``; nesting is
not supported. An undefined variable without a default raises :class:`UndefinedVariable`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_PATTERN = re.compile(r"\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class UndefinedVariable(Exception):
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
            raise UndefinedVariable(name)
        return value

    return _PATTERN.sub(replace, text)


def referenced(text: str) -> list[str]:
    """The variable names ``text`` refers to, in order (``$${`` escapes are not references)."""
    return [m.group(1) for m in _PATTERN.finditer(text) if m.group(1) is not None]


def defaulted(text: str) -> set[str]:
    """The variable names ``text`` refers to with a ``:-default``."""
    return {m.group(1) for m in _PATTERN.finditer(text) if m.group(1) and m.group(2) is not None}
