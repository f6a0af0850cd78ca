"""What the file tools share: their base class, and walking a directory the way git sees it.

:class:`FileTool` holds the working directory and the boundary (:mod:`core.boundary`) that
``read``, ``write``, ``edit``, ``glob`` and ``grep`` resolve a ``path`` argument against.
``glob`` and ``grep``'s Python fallback share the walker, so both see the same files:
``.gitignore`` files respected (:mod:`core.tools.gitignore`, git's own rules, negation
included), ``.git`` skipped.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

from codebot_mcp.core.tools.boundary import Boundary, Reach
from codebot_mcp.core.tools.gitignore import IgnoreStack
from codebot_mcp.core.tools.globmatch import compiled

MAX_FILES = 200_000
"""Files visited per walk: a search of a huge tree stops rather than running for minutes."""
ALWAYS_SKIPPED = frozenset({".git"})


class TextFiles(Protocol):
    """Text files as an editor holds them, unsaved buffers included (ACP's ``fs`` methods,
    :mod:`cli.acp.files`). ``read``, ``edit`` and ``write`` go through it when it is set;
    the boundary and the gate decide first, as for the disk. Both raise ``OSError`` with a
    message for the model when the editor refuses or fails."""

    async def read_text(self, path: Path) -> str:
        """The file's text (an absolute path)."""
        ...

    async def write_text(self, path: Path, text: str) -> None:
        """Replace (or create) the file's text."""
        ...


class FileTool:
    """A built-in tool that works on files under ``cwd``, inside the boundary of ``root``."""

    def __init__(
        self,
        cwd: Path,
        root: Path | None = None,
        *,
        hidden: Callable[[], Iterable[Path]] | None = None,
        files: TextFiles | None = None,
    ) -> None:
        self.cwd = cwd
        self.boundary = Boundary(cwd, root, hidden)
        """``hidden``: what the sandbox hides from confined commands (credentials,
        ``sandbox.deny_read``): the tool asks before it opens it, as outside the root."""
        self.files = files
        """Where ``read``, ``edit`` and ``write`` read and write (None: the disk)."""

    def hidden_under(self, target: Path) -> list[Path]:
        """The paths the sandbox hides (:attr:`Boundary.hidden`) below ``target``, spelled
        under ``target`` as given (a search's results are): a search of ``target`` leaves
        them out. One that holds ``target`` itself is not listed: the gate asked for it."""
        if self.boundary.hidden is None:
            return []
        real = Path(os.path.realpath(target))
        return [
            target / h.relative_to(real)
            for h in self.boundary.hidden()
            if h.is_relative_to(real) and h != real
        ]

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


def glob_match(pattern: str, relative: str) -> bool:
    """Whether ``relative`` (posix) matches ``pattern``; a pattern without ``/`` matches the
    file name at any depth, as in ``.gitignore`` and ripgrep's ``--glob``."""
    if "/" not in pattern:
        relative = relative.rsplit("/", 1)[-1]
    return compiled(pattern).match(relative)  # linear time: core.tools.globmatch
