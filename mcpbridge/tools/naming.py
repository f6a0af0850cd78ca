"""Model-visible tool names: ``mcp__<server>__<tool>``, valid for every model API.

OpenAI accepts ``^[A-Za-z0-9_-]{1,64}$``. A name that needs sanitizing or shortening gets a
short hash of the original (server, tool) pair, so it is stable across runs and does not
depend on which other tools exist; plain names that collide are de-duplicated the same way.
Calls are routed through the resulting map, never by splitting the string.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from codebot_mcp.core.tools.base import MCP_PREFIX

MAX_NAME_LENGTH = 64
_INVALID_CHARS = re.compile(r"[^A-Za-z0-9_-]")
_HASH_LENGTH = 8


@dataclass(frozen=True, slots=True)
class AllocatedName:
    """The visible name of one tool and why it differs from the plain form, if it does."""

    server: str
    tool: str
    name: str
    reason: str | None = None
    """None for the plain ``mcp__server__tool``; else "sanitized", "shortened" or "duplicate"."""


def plain_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>`` with no adjustment (may be invalid)."""
    return f"{MCP_PREFIX}{server}__{tool}"


def _hashed(server: str, tool: str, base: str, salt: int = 0) -> str:
    digest = hashlib.sha256(f"{server}\0{tool}\0{salt}".encode()).hexdigest()[:_HASH_LENGTH]
    keep = MAX_NAME_LENGTH - _HASH_LENGTH - 1
    return f"{base[:keep]}_{digest}"


def allocate(pairs: Iterable[tuple[str, str]]) -> list[AllocatedName]:
    """Give every (server, tool) pair a unique valid name, in the order given.

    Pass the pairs sorted (by server, then tool) so the result is deterministic.
    """
    result: list[AllocatedName | None] = []
    taken: set[str] = set()
    pending: list[tuple[int, str, str, str, str]] = []
    for index, (server, tool) in enumerate(pairs):
        plain = plain_name(server, tool)
        safe = _INVALID_CHARS.sub("_", plain)
        result.append(None)
        if safe != plain:
            pending.append((index, server, tool, _hashed(server, tool, safe), "sanitized"))
        elif len(plain) > MAX_NAME_LENGTH:
            pending.append((index, server, tool, _hashed(server, tool, plain), "shortened"))
        elif plain in taken:
            pending.append((index, server, tool, _hashed(server, tool, plain), "duplicate"))
        else:
            taken.add(plain)
            result[index] = AllocatedName(server, tool, plain)
    # Adjusted names are given out after every plain one, so none can steal a plain name;
    # each goes back to its own position, because callers zip the result with their pairs.
    for index, server, tool, name, reason in pending:
        salt = 0
        while name in taken:
            salt += 1
            name = _hashed(server, tool, name[: -_HASH_LENGTH - 1], salt)
            reason = "duplicate"
        taken.add(name)
        result[index] = AllocatedName(server, tool, name, reason)
    return [n for n in result if n is not None]
