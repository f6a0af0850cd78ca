"""Where a key is in a settings file: the line of each object key, by its path.

``json`` parses values, not positions; reports that point into a file (``mcp doctor
--format sarif``: the line of a server's entry) need the line of ``"name":``. This is a small
scanner over strict JSON (what settings files are), with strings decoded by ``json`` itself.
"""

from __future__ import annotations

import json
from pathlib import Path

MAX_DEPTH = 4
"""Keys deeper than this are not recorded (a server entry is at depth 2)."""


def key_lines(text: str, max_depth: int = MAX_DEPTH) -> dict[tuple[str, ...], int]:
    """The 1-based line of every object key down to ``max_depth``, by its path of keys
    (arrays are stepped through, not recorded). Text that is not JSON gives what was found
    before the fault."""
    found: dict[tuple[str, ...], int] = {}
    stack: list[tuple[str, ...] | None] = []  # per open container: its path (None: an array)
    path: tuple[str, ...] = ()
    expect_key = False
    line, i, n = 1, 0, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
        elif c == '"':
            end = _string_end(text, i + 1)
            try:
                value = json.loads(text[i:end])
            except ValueError:
                return found
            line += text.count("\n", i, end)
            if expect_key and stack and stack[-1] is not None:
                key_path = (*stack[-1], value)
                if len(key_path) <= max_depth:
                    found.setdefault(key_path, line)
                path = key_path
                expect_key = False
            i = end
            continue
        elif c == "{":
            stack.append(path if stack or not path else ())
            expect_key = True
        elif c == "[":
            stack.append(None)
        elif c in "}]":
            if stack:
                stack.pop()
            path = _container_path(stack)
        elif c == ",":
            expect_key = bool(stack) and stack[-1] is not None
            path = _container_path(stack)
        i += 1
    return found


def _string_end(text: str, start: int) -> int:
    """The index after the closing quote of the string whose body starts at ``start``."""
    i, n = start, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == '"':
            return i + 1
        i += 1
    return n


def _container_path(stack: list[tuple[str, ...] | None]) -> tuple[str, ...]:
    for entry in reversed(stack):
        if entry is not None:
            return entry
    return ()


def entry_line(path: Path, *keys: str) -> int | None:
    """The line of ``keys`` in the settings file at ``path`` (the longest prefix of them
    found), or None when the file cannot be read or has none of them."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    lines = key_lines(text, max_depth=max(len(keys), 1))
    for end in range(len(keys), 0, -1):
        if (found := lines.get(tuple(keys[:end]))) is not None:
            return found
    return None
