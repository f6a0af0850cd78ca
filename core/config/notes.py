"""Project notes: ``AGENTS.md`` and ``CODEBOT.md``, read from the project root down to the
working directory, after the user's own ``~/.codebot/AGENTS.md`` and ``~/.claude/CLAUDE.md``
(Claude Code's user memory; ``$CLAUDE_CONFIG_DIR`` moves it, ``"claude_files": false`` skips it).

In each directory from the project root (:func:`.discovery.project_root`) down to the working
directory, ``AGENTS.md`` then ``CODEBOT.md`` are read; where neither exists, ``CLAUDE.md``,
``.claude/CLAUDE.md`` and ``CLAUDE.local.md`` are, as Claude Code reads them (a repository written
for Claude Code keeps working). More specific notes come later, so they
have the last word. A note may import another file with ``@path`` (outside code spans and
fences): the file is read after the note that names it, once, up to :data:`MAX_DEPTH` imports
deep, and only inside the project (the user's notes: inside ``~/.codebot`` or ``~/.claude``)
after symlinks are resolved: a cloned repository cannot pull ``~/.ssh`` into the prompt. The
whole is cut at :data:`MAX_TOTAL` characters, each file at :data:`MAX_FILE`.

Notes are text for the model, but a repository's notes steer what the model does with your
tools: the project's notes pass the trust gate like the project's other files
(:mod:`.trust`). While the project is not trusted (never trusted, or a note changed since, by
you or by a confined turn) they are not read: :func:`load` with ``project=False`` lists them
as skipped, saying why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from codebot_mcp.core.config import discovery, paths

NOTE_FILES = ("AGENTS.md", "CODEBOT.md")
FALLBACK = "CLAUDE.md"
"""Read in a directory that has neither of :data:`NOTE_FILES`."""
CLAUDE_MORE = (".claude/CLAUDE.md", "CLAUDE.local.md")
"""Claude Code's other project memory files, read beside :data:`FALLBACK` where it would be
(its project memory may live in ``.claude/``; ``CLAUDE.local.md`` is the personal one), unless
``"claude_files": false``."""
USER_NOTES = "AGENTS.md"
MAX_DEPTH = 5
"""Imports within imports: deeper ones are listed as skipped."""
MAX_FILE = 20_000
"""Characters kept of one file."""
MAX_TOTAL = 40_000
"""Characters of notes in all: a huge AGENTS.md should not eat the context window."""
MAX_IMPORTS = 50
IMPORT = re.compile(r"(?<![\w@/.`])@((?:~/|\.{0,2}/)?[\w][\w.\-/]*)")
"""``@path``: not an e-mail address (``a@b``), ending before trailing punctuation."""
_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
_CODE_SPAN = re.compile(r"`[^`\n]*`")

Kind = Literal["user", "project", "import"]


@dataclass(frozen=True, slots=True)
class Note:
    """One file of notes as loaded: where it is, its text (cut if too long), its size."""

    path: Path
    text: str
    size: int
    """Bytes on disk."""
    kind: Kind
    imported_by: Path | None = None
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class Notes:
    """Every note loaded, in prompt order, and what was left out (path, why)."""

    root: Path
    files: tuple[Note, ...] = ()
    skipped: tuple[tuple[Path, str], ...] = field(default_factory=tuple[tuple[Path, str], ...])

    @property
    def chars(self) -> int:
        """Characters of notes that go into the prompt."""
        return sum(len(n.text) for n in self.files)

    def label(self, note: Note) -> str:
        """A note's path as the user reads it: ``~/.codebot/…`` or relative to the root."""
        return display(note.path, self.root)


def display(path: Path, root: Path) -> str:
    """``path`` relative to ``root``, ``~/…`` under the home directory, else absolute."""
    if path.is_relative_to(root):
        return path.relative_to(root).as_posix()
    home = Path.home()
    if path.is_relative_to(home):
        return "~/" + path.relative_to(home).as_posix()
    return str(path)


def directories(root: Path, cwd: Path) -> list[Path]:
    """The project root, then each directory down to ``cwd`` (only the root when ``cwd`` is
    not inside it)."""
    if not cwd.is_relative_to(root):
        return [root]
    out = [root]
    for part in cwd.relative_to(root).parts:
        out.append(out[-1] / part)
    return out


UNTRUSTED = "the project is not trusted (or this note changed since); run `codebot trust`"
"""Why a project note is left out of the prompt."""


def load(
    cwd: Path, project_root: Path | None = None, *, project: bool = True, claude: bool = True
) -> Notes:
    """Every note for a session in ``cwd``: the user's (``~/.codebot/AGENTS.md``, then
    ``~/.claude/CLAUDE.md`` unless ``claude`` is False: ``"claude_files": false``), then the
    project's, with imports (``project=False``: the project's are listed as skipped,
    untrusted)."""
    from codebot_mcp.core.config import claudefiles

    cwd = cwd.resolve()
    root = (discovery.project_root(cwd, project_root) or cwd).resolve()
    loader = _Loader(root)
    user = paths.codebot_home() / USER_NOTES
    if user.is_file():
        loader.add(user, "user", paths.codebot_home().resolve(), None, 0)
    theirs = claudefiles.user_dir() / claudefiles.USER_NOTES
    if claude and theirs.is_file():
        loader.add(theirs, "user", claudefiles.user_dir().resolve(), None, 0)
    for directory in directories(root, cwd):
        found = [directory / name for name in NOTE_FILES if (directory / name).is_file()]
        if not found:
            names = (FALLBACK, *CLAUDE_MORE) if claude else (FALLBACK,)
            found = [directory / name for name in names if (directory / name).is_file()]
        for path in found:
            if project:
                loader.add(path, "project", root, None, 0)
            else:
                loader.skipped.append((path, UNTRUSTED))
    return Notes(root, tuple(loader.files), tuple(loader.skipped))


class _Loader:
    """Reads notes and their imports once each, within the limits."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files: list[Note] = []
        self.skipped: list[tuple[Path, str]] = []
        self.seen: set[Path] = set()
        self.total = 0
        self.imports = 0

    def add(self, path: Path, kind: Kind, fence: Path, by: Path | None, depth: int) -> None:
        real = path.resolve()
        if real in self.seen:
            return
        if not real.is_relative_to(fence):
            where = "the project" if fence == self.root else display(fence, self.root)
            self.skipped.append((path, f"outside {where}; not imported"))
            return
        self.seen.add(real)
        try:
            data = real.read_bytes()
        except OSError as exc:
            self.skipped.append((path, f"cannot read it: {exc.strerror or exc}"))
            return
        text = data.decode("utf-8", errors="replace")
        room = max(0, min(MAX_FILE, MAX_TOTAL - self.total))
        if room == 0:
            self.skipped.append((path, f"the notes already fill {MAX_TOTAL} characters"))
            return
        cut = len(text) > room
        if cut:
            text = text[:room] + f"\n[... {path.name} cut at this point]"
        self.total += min(len(text), room)
        self.files.append(Note(path, text.strip(), len(data), kind, by, cut))
        for target in imports(text, real.parent):
            if depth + 1 > MAX_DEPTH:
                self.skipped.append((target, f"imported more than {MAX_DEPTH} levels deep"))
            elif self.imports >= MAX_IMPORTS:
                self.skipped.append((target, f"more than {MAX_IMPORTS} imports"))
            else:
                self.imports += 1
                self.add(target, "import", fence, path, depth + 1)


def imports(text: str, base: Path) -> list[Path]:
    """The files ``text`` imports with ``@path`` (outside code), that exist, in order."""
    prose = _CODE_SPAN.sub(" ", _FENCE.sub(" ", text))
    out: list[Path] = []
    for match in IMPORT.finditer(prose):
        raw = match.group(1).rstrip(".,;:!?)")
        target = Path(raw).expanduser() if raw.startswith("~/") else base / raw
        if target.is_file() and target not in out:
            out.append(target)
    return out


def prompt_block(notes: Notes) -> str:
    """The notes for the system prompt: one section per file, in reading order."""
    if not notes.files:
        return ""
    parts = [
        "# Project notes\nNotes for this project from its AGENTS.md/CODEBOT.md files (and the "
        "user's own ~/.codebot/AGENTS.md and ~/.claude/CLAUDE.md). Later, more specific notes "
        "take precedence."
    ]
    for note in notes.files:
        by = note.imported_by
        origin = f" (imported by {display(by, notes.root)})" if by is not None else ""
        parts.append(f"## {notes.label(note)}{origin}\n{note.text}")
    return "\n\n".join(parts)
