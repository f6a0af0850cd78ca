"""``.gitignore`` rules as git applies them on a walk down a tree.

Each directory may hold a ``.gitignore``; its patterns apply to paths below it, and the deepest
file with an opinion about a path wins (git's precedence). pathspec's ``GitIgnoreSpec`` does
the matching (negation included). The file tools' walker (``builtin/_files.walk``) and the
checkpoint store's (``agent/shadow``) share this one stack, so both see the same files.

Most paths match no pattern at all: each spec also gets one combined regular expression of
its patterns, and only a path that it matches is checked pattern by pattern (which is what
decides negations); :meth:`IgnoreStack.any_ignored` asks it once for a whole directory.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

__all__ = ["IGNORE_FILE", "IgnoreStack"]

IGNORE_FILE = ".gitignore"


def _spec(directory: Path) -> Any | None:
    try:
        text = (directory / IGNORE_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:  # boundary: no (readable) .gitignore here
        return None
    import pathspec  # deferred: only walks need it

    return pathspec.GitIgnoreSpec.from_lines(text.splitlines())


def _quick(spec: Any) -> re.Pattern[str] | None:
    """One regex that matches whatever any pattern of ``spec`` matches, line by line in a
    ``\\n``-joined list of paths (None: cannot build; every path is then checked in full)."""
    parts = [
        re.sub(r"\(\?P<\w+>", "(?:", p.regex.pattern)
        for p in spec.patterns
        if getattr(p, "regex", None) is not None
    ]
    if not parts:
        return None
    try:
        return re.compile("|".join(f"(?:{p})" for p in parts), re.MULTILINE)
    except re.error:  # boundary: an unusual pattern
        return None


class IgnoreStack:
    """The ``.gitignore`` specs on the way down a walk, each with the directory it belongs to.

    Paths are ``/``-separated and relative to the walk's base; a directory's prefix ends in
    ``/`` (the base's is ``""``).
    """

    def __init__(self) -> None:
        self._stack: list[tuple[str, Any, re.Pattern[str] | None]] = []

    def enter(self, directory: Path, prefix: str) -> bool:
        """Read ``directory``'s ``.gitignore`` (if any); True when one was pushed (then call
        :meth:`leave` on the way out)."""
        spec = _spec(directory)
        if spec is None:
            return False
        self._stack.append((prefix, spec, _quick(spec)))
        return True

    def leave(self) -> None:
        """Pop the spec :meth:`enter` pushed."""
        self._stack.pop()

    def any_ignored(self, prefix: str, names: list[tuple[str, bool]]) -> bool:
        """Whether any of one directory's entries (name, is a directory) might be ignored:
        False means none is, so the walk need not ask :meth:`ignored` about each. Joined
        with newlines, the entries are matched in one search per ``.gitignore``; a match
        that spans two lines only costs the per-entry check."""
        for spec_prefix, _spec, quick in self._stack:
            if quick is None:
                return True
            below = prefix[len(spec_prefix) :]
            joined = "\n".join(below + name + ("/" if d else "") for name, d in names)
            if quick.search(joined) is not None:
                return True
        return False

    def ignored(self, relative: str, *, is_dir: bool) -> bool:
        """Whether git would ignore ``relative`` (a directory when ``is_dir``)."""
        verdict = False
        for prefix, spec, quick in self._stack:
            candidate = relative[len(prefix) :] + ("/" if is_dir else "")
            if quick is not None and quick.search(candidate) is None:
                continue
            result = spec.check_file(candidate).include
            if result is not None:  # the deepest .gitignore with an opinion wins
                verdict = bool(result)
        return verdict
