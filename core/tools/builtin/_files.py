"""What the file tools share: their base class, and walking a directory the way git sees it.

:class:`FileTool` holds the working directory and the boundary (:mod:`core.boundary`) that
``read``, ``write``, ``edit``, ``glob`` and ``grep`` resolve a ``path`` argument against.
``glob`` and ``grep``'s Python fallback share the walker, so both see the same files:
``.gitignore`` files respected (:mod:`core.tools.gitignore`, git's own rules, negation
included), ``.git`` skipped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from codebot_mcp.core.security.boundary import Boundary, Reach
from codebot_mcp.core.tools.gitignore import IgnoreStack

MAX_FILES = 200_000
"""Files visited per walk: a search of a huge tree stops rather than running for minutes."""
ALWAYS_SKIPPED = frozenset({".git"})


class FileTool:
    """A built-in tool that works on files under ``cwd``, inside the boundary of ``root``."""

    def __init__(self, cwd: Path, root: Path | None = None) -> None:
        self.cwd = cwd
        self.boundary = Boundary(cwd, root)

    def reach(self, arguments: Mapping[str, Any]) -> Reach | None:
        """Where the call's ``path`` leads, symlinks followed: the gate asks when it is outside
        the root, and shows the resolved path when it asks."""
        path = arguments.get("path")
        return self.boundary.reach(path) if isinstance(path, str) and path else None


def walk(base: Path, root: Path | None = None) -> Iterator[Path]:
    """Files under ``base`` (sorted, depth first), minus what ``.gitignore`` files exclude.

    Symlinked directories are not entered; a symlinked file is kept only when its target
    stays inside ``root`` or ``base`` (the file-tool boundary, :mod:`core.boundary`).
    """
    ignores = IgnoreStack()
    count = 0
    inside = [Path(os.path.realpath(p)) for p in (base, root) if p is not None]

    def within(path: Path) -> bool:
        real = Path(os.path.realpath(path))
        return any(real.is_relative_to(p) for p in inside)

    def visit(directory: Path, prefix: str) -> Iterator[Path]:
        nonlocal count
        pushed = ignores.enter(directory, prefix)
        try:
            try:
                entries = sorted(os.scandir(directory), key=lambda e: e.name)
            except OSError:  # boundary: an unreadable directory is skipped
                return
            for entry in entries:
                if entry.name in ALWAYS_SKIPPED:
                    continue
                path = Path(entry.path)
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                    is_file = entry.is_file()
                except OSError:
                    continue
                relative = prefix + entry.name
                if ignores.ignored(relative, is_dir=is_dir):
                    continue
                if is_dir:
                    yield from visit(path, relative + "/")
                elif is_file and (not entry.is_symlink() or within(path)):
                    count += 1
                    if count > MAX_FILES:
                        return
                    yield path
        finally:
            if pushed:
                ignores.leave()

    yield from visit(base, "")


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob over ``/``-separated relative paths: ``**`` any depth, ``*`` and ``?`` within
    one part, ``[...]`` classes, ``{a,b}`` alternatives."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end].replace("\\", "\\\\")
                out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
                i = end
        elif c == "{":
            end = pattern.find("}", i)
            if end == -1:
                out.append(re.escape(c))
            else:
                options = pattern[i + 1 : end].split(",")
                out.append("(?:" + "|".join(glob_regex(o).pattern[4:-3] for o in options) + ")")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("(?s:" + "".join(out) + r")\Z")


def glob_match(pattern: str, relative: str) -> bool:
    """Whether ``relative`` (posix) matches ``pattern``; a pattern without ``/`` matches the
    file name at any depth, as in ``.gitignore`` and ripgrep's ``--glob``."""
    if "/" not in pattern:
        relative = relative.rsplit("/", 1)[-1]
    return bool(glob_regex(pattern).match(relative))
