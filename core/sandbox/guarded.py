"""What stays read-only inside the writable paths, whatever the sandbox lets a command write.

A confined command may write the project, but some of what lies there runs later *outside*
the sandbox, or decides what runs: git reads its directory (hooks, ``config``, ``commondir``,
``info/``, ``config.worktree``) on the user's next ``git status``; codebot reads its own
directories and the project's ``.codebot``, ``.claude``, ``.mcp.json`` and memory files, and
runs its exec helper and its installation. :func:`plan` lists what the exec helper then
protects in the command's private mount namespace (``core/proc/exec_helper.c``):

- **protected**: a read-only bind mount of each path: every git directory found in a
  writable tree as a whole (a ``.git`` directory, a ``.git`` file and the directory it names
  when that lies in a writable tree), the project files above wherever the scan meets them,
  codebot's own directories (home, state with the trust store and tokens, cache with the exec
  helper, data) and its installation (a virtual environment, the package, the helper) when
  they lie in a writable tree. A mount point cannot be renamed, removed or replaced (EBUSY),
  and nothing beneath it can be written (EROFS), ``chmod`` included.
- **pinned**: each directory between a writable root and a protected git directory or path of
  codebot's that could be renamed (its parent is writable) is bound onto itself, read-write:
  renaming it gives EBUSY too, so ``mv vendor/x elsewhere`` cannot put a fresh repository in
  its place.

What does not exist cannot be mounted over: a confined command can still *create* a missing
``.git``, ``.codebot``, ``.claude``, ``.mcp.json`` or memory file. :class:`Watch` notices
those after each call (the result and the user are told), it does not prevent them.

Nested repositories are found by :class:`GitScan`, a breadth-first walk of the writable
trees bounded in directories and depth, kept between calls: a directory whose modification
time is unchanged is not listed again, so a call costs one ``stat`` per known directory.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from codebot_mcp.core.config import discovery, notes, paths
from codebot_mcp.core.errors import SettingsError

GIT = ".git"
PROJECT_NAMES: tuple[str, ...] = (
    paths.PROJECT_DIR,
    discovery.CLAUDE_DIR,
    ".mcp.json",  # core.config.discovery.MCP_JSON
    *notes.NOTE_FILES,
    notes.FALLBACK,
    *(name for name in notes.CLAUDE_MORE if "/" not in name),  # CLAUDE.local.md (.claude/: above)
)
"""Files codebot reads as the project's configuration or memory, in any directory."""
WATCHED_NAMES: tuple[str, ...] = (GIT, *PROJECT_NAMES)
"""Names whose creation by a confined command is reported (it cannot be prevented)."""
SKIPPED = frozenset(
    ("node_modules", "__pycache__", "site-packages", ".tox", ".nox", ".mypy_cache",
     ".pytest_cache", ".ruff_cache", ".gradle", ".next")
)  # fmt: skip
"""Directories the scan does not enter: generated trees, large, that hold no repository of
the user's (a virtual environment, a folder holding ``pyvenv.cfg``, is not entered either)."""
MAX_DIRS = 2_000
"""Directories the scan keeps track of, over all writable trees (breadth first: shallow
directories first); past it, deeper repositories are not protected (:attr:`GitScan.capped`)."""
MAX_DEPTH = 8
"""Directory levels below a writable root the scan descends."""
MAX_SCAN_SECONDS = 1.0
"""Wall time one scan may take (a slow network file system): past it, it stops there."""
MAX_MOUNTS = 200
"""Protected paths per command (the exec helper takes up to 256 of each kind)."""
RECENT_NS = 2_000_000_000
"""A directory modified this recently is listed again next time: its modification time
may not have moved yet for an entry made in the same clock tick."""


@dataclass(frozen=True, slots=True)
class Own:
    """One of codebot's own paths, with what it is (for messages)."""

    path: Path
    label: str
    make: bool = False
    """A directory codebot creates (0700) before protecting it, when it is missing."""


def own_paths(helpers: Iterable[Path] = ()) -> list[Own]:
    """codebot's own directories and its installation, resolved, and git's global
    configuration (``~/.gitconfig``, ``~/.config/git``): what no sandbox may write."""
    out = [
        Own(_real(paths.codebot_home()), "codebot's global directory", make=True),
        Own(_real(paths.state_dir()), "codebot's state directory (trust store, tokens)", True),
        Own(_real(paths.cache_dir()), "codebot's cache directory (the exec helper)", True),
        Own(_real(paths.data_dir()), "codebot's data directory (installed bundles)", True),
    ]
    if sys.prefix != sys.base_prefix:
        out.append(Own(_real(Path(sys.prefix)), "the virtual environment codebot runs from"))
    package = Path(paths.__file__).resolve().parent.parent.parent  # codebot_mcp/
    out.append(Own(package, "codebot's installed package"))
    out += [Own(_real(path), "codebot's exec helper") for path in helpers]
    command = shutil.which("codebot")
    if command is not None:  # a script outside the environment (pip --user, a shim)
        out.append(Own(_real(Path(command)), "the codebot command"))
    config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    for path in (Path.home() / ".gitconfig", config / "git"):  # what git reads everywhere
        out.append(Own(_real(path), "git's global configuration"))
    return out


def refuse_writable(entries: Sequence[Path], own: Iterable[Own], key: str) -> None:
    """A ``writable`` entry may neither contain nor lie inside one of codebot's own paths.

    Raises:
        SettingsError: one does; the message names the entry and the path.
    """
    owned = list(own)
    for entry in entries:
        real = _real(entry)
        for item in owned:
            if real == item.path or _inside(real, item.path):
                how = "is" if real == item.path else "lies inside"
                hint = f"Remove {entry} from '{key}': codebot's own files stay read-only."
            elif _inside(item.path, real):
                how = "holds"
                hint = (
                    f"Name the directories the tool needs instead (e.g. {_example(real)}), "
                    f"none of them containing {item.path}."
                )
            else:
                continue
            raise SettingsError(
                f"'{key}' lists {entry}, which {how} {item.label} ({item.path}): no sandbox "
                "may write there, or what a confined command writes would run outside the "
                "sandbox",
                hint=hint,
            )


def _example(entry: Path) -> str:
    home = Path.home()
    if entry == home:
        return "~/.npm, ~/.cache/pip"
    return f"{entry}/pip" if entry.name == ".cache" else "a subdirectory"


@dataclass(slots=True)
class _Listed:
    mtime: int
    children: tuple[str, ...]
    """Subdirectories to enter, as full paths."""
    found: tuple[str, ...]
    """Entries named ``.git`` or one of :data:`PROJECT_NAMES` (not symlinks)."""


@dataclass(slots=True)
class GitScan:
    """Git directories and project files in the writable trees, found again cheaply."""

    listed: dict[str, _Listed] = field(default_factory=dict[str, _Listed])
    capped: bool = False
    """The last scan stopped at :data:`MAX_DIRS`, :data:`MAX_DEPTH` or
    :data:`MAX_SCAN_SECONDS`."""

    def find(self, roots: Sequence[Path]) -> list[Path]:
        """Every ``.git`` (directory or file) and project file below ``roots``, shallow
        first (symlinks and the insides of ``.git`` are not entered)."""
        now = time.time_ns()
        deadline = time.monotonic() + MAX_SCAN_SECONDS
        seen: dict[str, _Listed] = {}
        found: list[Path] = []
        queue = deque((str(root), 0) for root in roots)
        self.capped = False
        while queue:
            directory, depth = queue.popleft()
            if directory in seen:
                continue
            if len(seen) >= MAX_DIRS or (len(seen) % 64 == 0 and time.monotonic() > deadline):
                self.capped = True
                break
            listed = self._list(directory, now)
            if listed is None:
                continue
            seen[directory] = listed
            found += [Path(directory, name) for name in listed.found]
            if depth >= MAX_DEPTH:
                self.capped = self.capped or bool(listed.children)
                continue
            queue.extend((child, depth + 1) for child in listed.children)
        self.listed = seen
        return found

    def _list(self, directory: str, now: int) -> _Listed | None:
        try:
            mtime = os.stat(directory).st_mtime_ns
        except OSError:
            return None
        known = self.listed.get(directory)
        if known is not None and known.mtime == mtime and now - mtime > RECENT_NS:
            return known
        children: list[str] = []
        found: list[str] = []
        venv = False
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    name = entry.name
                    if entry.is_symlink():
                        if name == GIT:  # its target is protected; the link can be replaced
                            found.append(name)
                        continue
                    if name == GIT or name in PROJECT_NAMES:
                        found.append(name)
                    elif name == "pyvenv.cfg":
                        venv = True
                    elif name not in SKIPPED and entry.is_dir(follow_symlinks=False):
                        children.append(entry.path)
        except OSError:  # boundary: unreadable: nothing found there
            return None
        kept = () if venv else tuple(sorted(children))
        return _Listed(mtime, kept, tuple(sorted(found)))


@dataclass(frozen=True, slots=True)
class Plan:
    """What one confined command gets: read-only paths, and directories pinned in place."""

    protected: tuple[Path, ...] = ()
    pinned: tuple[Path, ...] = ()


def plan(writable: Sequence[Path], found: Iterable[Path], own: Iterable[Own]) -> Plan:
    """The mounts that keep ``found`` (from :class:`GitScan`) and codebot's ``own`` paths
    read-only inside the ``writable`` roots, each one unrenameable, and the directories above
    a git directory or one of codebot's paths pinned (a new memory file in a renamed
    directory is no more than one made anywhere, which cannot be stopped: those are not)."""
    candidates: list[Path] = []
    for item in own:
        if any(_inside(item.path, w) for w in writable) and not any(
            _inside(w, item.path) for w in writable
        ):
            if item.make and not item.path.exists():
                _make_private(item.path)
            candidates.append(item.path)
    for path in found:
        if path.is_symlink():
            path = _real(path)
        candidates.append(path)
        if path.name == GIT and path.is_file():
            target = _gitdir(path)
            if target is not None and any(_inside(target, w) for w in writable):
                candidates.append(target)
    protected = _outermost(p for p in candidates if p.exists())[:MAX_MOUNTS]
    pinned: set[Path] = set()
    for path in protected:
        if path.name in PROJECT_NAMES:
            continue
        for parent in path.parents:
            if not any(_inside(parent, w) and parent != w for w in writable):
                break  # a writable root, or outside: its parent is not writable
            pinned.add(parent)
    pins = sorted(
        (p for p in pinned if not any(_inside(p, q) for q in protected)),
        key=lambda p: (len(p.parts), str(p)),
    )[:MAX_MOUNTS]
    return Plan(tuple(protected), tuple(pins))


def _outermost(paths_: Iterable[Path]) -> list[Path]:
    """``paths_`` without duplicates and without those inside another, shallow first."""
    out: list[Path] = []
    for path in sorted(set(paths_), key=lambda p: (len(p.parts), str(p))):
        if not any(_inside(path, kept) for kept in out):
            out.append(path)
    return out


def _gitdir(dotgit: Path) -> Path | None:
    """The directory a ``.git`` file names (``gitdir: PATH``, relative to its folder)."""
    try:
        with dotgit.open("rb") as handle:
            head = handle.read(4096).decode("utf-8", "replace")
    except OSError:
        return None
    first = head.splitlines()[0] if head else ""
    if not first.startswith("gitdir:"):
        return None
    return _real(dotgit.parent / first[len("gitdir:") :].strip())


class Watch:
    """Which of :data:`WATCHED_NAMES` exist in some directories, to tell what a call made."""

    def __init__(self, directories: Sequence[Path]) -> None:
        self.directories = tuple(directories)
        self.before = self._existing()

    def _existing(self) -> set[str]:
        return {
            path
            for directory in map(str, self.directories)
            for name in WATCHED_NAMES
            if os.path.lexists(path := os.path.join(directory, name))
        }

    def created(self) -> list[Path]:
        """What appeared since this watch began."""
        return [Path(p) for p in sorted(self._existing() - self.before)]


def _make_private(path: Path) -> None:
    try:
        paths.private_dir(path)
    except OSError:  # boundary: left missing; nothing to protect, nothing run from it
        pass


def _inside(path: Path, parent: Path) -> bool:
    """``path`` is ``parent`` or lies below it (both absolute and resolved; on strings:
    ``Path.parents`` costs ten times as much, on every call)."""
    child, top = str(path), str(parent)
    return child == top or child.startswith(top if top.endswith("/") else top + "/")


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))
