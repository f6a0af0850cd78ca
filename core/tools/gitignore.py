"""``.gitignore`` rules as git applies them on a walk down a tree.

Each directory may hold a ``.gitignore``; its patterns apply to paths below it, and the deepest
file with an opinion about a path wins (git's precedence). :class:`core.tools.globmatch.GitIgnore`
does the matching (negation included) in linear time: a ``.gitignore`` is a stranger's file,
and a line like ``*a*a*a*a*b`` compiled to a regular expression (pathspec's way) backtracks
for hours on a long name, holding the GIL. The file tools' walker (``builtin/_files.walk``) and
the checkpoint store's (``agent/shadow``) share this one stack, so both see the same files.
"""

from __future__ import annotations

from pathlib import Path

from codebot_mcp.core.tools.globmatch import GitIgnore

__all__ = ["IGNORE_FILE", "IgnoreStack"]

IGNORE_FILE = ".gitignore"


def _spec(directory: Path) -> GitIgnore | None:
    try:
        text = (directory / IGNORE_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:  # boundary: no (readable) .gitignore here
        return None
    spec = GitIgnore(text.splitlines())
    return spec if spec.rules else None


class IgnoreStack:
    """The ``.gitignore`` specs on the way down a walk, each with the directory it belongs to.

    Paths are ``/``-separated and relative to the walk's base; a directory's prefix ends in
    ``/`` (the base's is ``""``).
    """

    def __init__(self) -> None:
        self._stack: list[tuple[str, GitIgnore]] = []

    def enter(self, directory: Path, prefix: str) -> bool:
        """Read ``directory``'s ``.gitignore`` (if any); True when one was pushed (then call
        :meth:`leave` on the way out)."""
        spec = _spec(directory)
        if spec is None:
            return False
        self._stack.append((prefix, spec))
        return True

    def leave(self) -> None:
        """Pop the spec :meth:`enter` pushed."""
        self._stack.pop()

    def any_ignored(self, prefix: str, names: list[tuple[str, bool]]) -> bool:
        """Whether any of one directory's entries (name, is a directory) might be ignored:
        False means none is, so the walk need not ask :meth:`ignored` about each."""
        if not self._stack:
            return False
        return any(self.ignored(prefix + name, is_dir=d) for name, d in names)

    def ignored(self, relative: str, *, is_dir: bool) -> bool:
        """Whether git would ignore ``relative`` (a directory when ``is_dir``)."""
        verdict = False
        for prefix, spec in self._stack:
            result = spec.check(relative[len(prefix) :], is_dir=is_dir)
            if result is not None:  # the deepest .gitignore with an opinion wins
                verdict = result
        return verdict
