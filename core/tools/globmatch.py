"""Glob and ``.gitignore`` matching in linear time, whatever the pattern.

A glob turned into a regular expression backtracks: ``*a*a*a*a*a*a*b`` becomes
``[^/]*a[^/]*a…b``, and Python's ``re`` takes exponential time on a long name of ``a``\\ s,
holding the GIL so that not even a signal handler runs. Patterns come from the model
(``glob``, ``grep``'s filter) and from a repository's ``.gitignore`` files: strangers. So
matching is done here without backtracking:

- a path is split into segments; ``**`` (a whole segment) matches any number of them, by
  dynamic programming over (pattern segment, path segment);
- within a segment, the pattern is split at ``*`` into fixed-width pieces (literal
  characters, ``?``, ``[...]`` classes); the first must match at the start, the last at the
  end, each other one at its leftmost place after the previous: the classic greedy wildcard
  match, correct for ``*`` and linear in the segment's length per piece.

``{a,b}`` alternatives are expanded first (at most :data:`MAX_ALTERNATIVES`); a pattern
longer than :data:`MAX_PATTERN_CHARS` is refused. pathspec (which compiles ``.gitignore``
lines to regular expressions) is not used for the same reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

MAX_PATTERN_CHARS = 1024
MAX_ALTERNATIVES = 256
_ANY = "**"


class PatternError(ValueError):
    """A glob codebot will not match: too long, or too many ``{a,b}`` alternatives."""


@dataclass(frozen=True, slots=True)
class _Segment:
    """One path segment's pattern: fixed-width pieces that ``*`` separated."""

    pieces: tuple[re.Pattern[str], ...]
    widths: tuple[int, ...]
    starred: bool
    """True when the segment had a ``*`` (else its one piece must match the whole)."""

    def match(self, text: str) -> bool:
        pieces, widths = self.pieces, self.widths
        if not self.starred:
            return len(text) == widths[0] and pieces[0].match(text) is not None
        first, last = widths[0], widths[-1]
        if first + last > len(text) and len(pieces) > 1:
            return False
        if pieces[0].match(text) is None:
            return False
        end = len(text) - last
        if pieces[-1].match(text, end) is None:
            return False
        position = first
        for piece in pieces[1:-1]:
            found = piece.search(text, position, end)
            if found is None:
                return False
            position = found.end()
        return position <= end


def _atoms(text: str) -> tuple[str, int]:
    """A star-free piece as a regular expression of fixed width, and that width."""
    out: list[str] = []
    width = 0
    i = 0
    while i < len(text):
        c = text[i]
        if c == "?":
            out.append(".")
        elif c == "[" and (end := text.find("]", i + 2)) != -1:
            body = text[i + 1 : end]
            negate = body.startswith(("!", "^"))
            body = body[1:] if negate else body
            escaped = re.sub(r"([\\\]\[^])", r"\\\1", body)
            out.append("[" + ("^" if negate else "") + escaped + "]")
            i = end
        elif c == "\\" and i + 1 < len(text):
            i += 1
            out.append(re.escape(text[i]))
        else:
            out.append(re.escape(c))
        width += 1
        i += 1
    return "".join(out), width


def _segment(text: str) -> _Segment | str:
    if text == _ANY:
        return _ANY
    text = re.sub(r"\*+", "*", text)  # "**" inside a segment is one "*" (as in git)
    parts = text.split("*")
    compiled = [_atoms(p) for p in parts]
    return _Segment(
        tuple(re.compile(expression, re.DOTALL) for expression, _ in compiled),
        tuple(width for _, width in compiled),
        len(parts) > 1,
    )


def _expand(pattern: str) -> list[str]:
    """``{a,b}`` alternatives, expanded (innermost first; at most MAX_ALTERNATIVES)."""
    out = [pattern]
    while True:
        done = True
        expanded: list[str] = []
        for item in out:
            match = re.search(r"\{([^{}]*)\}", item)
            if match is None or "," not in match.group(1):
                expanded.append(item)
                continue
            done = False
            for option in match.group(1).split(","):
                expanded.append(item[: match.start()] + option + item[match.end() :])
            if len(expanded) > MAX_ALTERNATIVES:
                raise PatternError(
                    f"the pattern expands to more than {MAX_ALTERNATIVES} alternatives"
                )
        out = expanded
        if done:
            return out


class Glob:
    """A compiled glob over ``/``-separated relative paths: ``**`` any number of segments,
    ``*`` and ``?`` within one segment, ``[...]`` classes, ``{a,b}`` alternatives."""

    def __init__(self, pattern: str) -> None:
        if len(pattern) > MAX_PATTERN_CHARS:
            raise PatternError(f"the pattern is longer than {MAX_PATTERN_CHARS} characters")
        self.pattern = pattern
        self._alternatives = [
            tuple(_segment(s) for s in option.split("/")) for option in _expand(pattern)
        ]

    def match(self, path: str) -> bool:
        """Whether ``path`` (relative, ``/``-separated) matches, in linear time."""
        parts = path.split("/")
        return any(_match_segments(option, parts) for option in self._alternatives)


def _match_segments(pattern: tuple[_Segment | str, ...], parts: list[str]) -> bool:
    """Dynamic programming over (pattern segment, path segment): each pair is tried once."""
    count, total = len(pattern), len(parts)
    reachable = [False] * (total + 1)  # reachable[j]: parts[:j] matched by pattern[:i]
    reachable[0] = True
    for i, segment in enumerate(pattern):
        nxt = [False] * (total + 1)
        if segment == _ANY:
            # zero or more segments; a trailing "**" at least one (a file below the directory)
            at_least = 1 if i == count - 1 else 0
            seen = [False] * (total + 2)
            for j in range(total + 1):
                seen[j + 1] = seen[j] or reachable[j]
            nxt = [seen[j + 1 - at_least] for j in range(total + 1)]
        else:
            assert isinstance(segment, _Segment)
            for j in range(total):
                if reachable[j] and segment.match(parts[j]):
                    nxt[j + 1] = True
        reachable = nxt
        if not any(reachable):
            return False
    return reachable[total]


@lru_cache(maxsize=256)
def compiled(pattern: str) -> Glob:
    """A cached :class:`Glob` (the same pattern is matched against every file of a walk)."""
    return Glob(pattern)


@dataclass(frozen=True, slots=True)
class _Rule:
    glob: Glob
    negate: bool
    directory_only: bool
    anchored: bool


class GitIgnore:
    """The rules of one ``.gitignore`` file, matched with :class:`Glob` (git's rules: the
    last matching line wins, ``!`` re-includes, a trailing ``/`` is for directories, a line
    with a ``/`` before its end is relative to the file's directory, others match a name at
    any depth)."""

    def __init__(self, lines: list[str]) -> None:
        self.rules: list[_Rule] = []
        for raw in lines:
            rule = _rule(raw)
            if rule is not None:
                self.rules.append(rule)

    def check(self, relative: str, *, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included by a ``!`` line; None: no line matches."""
        name = relative.rsplit("/", 1)[-1]
        verdict: bool | None = None
        for rule in self.rules:
            if rule.directory_only and not is_dir:
                continue
            target = relative if rule.anchored else name
            if rule.glob.match(target):
                verdict = not rule.negate
        return verdict


def _rule(raw: str) -> _Rule | None:
    line = raw.rstrip("\n")
    while line.endswith(" ") and not line.endswith("\\ "):
        line = line[:-1]
    if not line or line.startswith("#"):
        return None
    negate = line.startswith("!")
    if negate or line.startswith("\\!") or line.startswith("\\#"):
        line = line[1:]
    directory_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    line = line.removeprefix("/")
    if line.startswith("**/"):
        anchored = True
    try:
        return _Rule(compiled(line), negate, directory_only, anchored)
    except PatternError:
        return None  # a line codebot will not match is a line that matches nothing
