"""The shadow store: content-addressed snapshots of a project's files, kept outside it.

A snapshot records every file of the project that git would not ignore (``.gitignore``
files respected, ``.git`` and codebot's own state directory skipped) as a tree of objects:
a file's bytes, a symlink's target, and one tree per directory naming its entries, each
stored once under its SHA-256 in an :class:`~core.checkpoints.pack.ObjectPack`. Unchanged files
cost a ``stat``: a stat cache remembers which content a path had at a given size, mtime,
ctime, inode and mode, so only changed files are read again (files changed within
:data:`RACY_NS` of being hashed are always read again). A file or directory that cannot be
read is recorded as such (an ``x`` entry): nothing under it is ever compared or restored.

Why not a second git directory (``GIT_DIR``/``GIT_WORK_TREE``)? Measured on a 5,000-file
project (``make bench``, target 16): git's first snapshot writes a loose object per file (1.5
to 4.6 s), this store's one pack (0.7 to 1.4 s); later ones cost about the same. The store
also checks the caps before it writes anything, keeps exact modes, needs no ``git`` binary,
and reads no git configuration, attributes or filters a cloned project could set.

Layout (directories 0700, files 0600), one store per project, shared by its sessions: the
pack's files (``objects.pack``, ``objects.idx``, ``lock``, ``.gitignore``) and
``stat.cache``, JSON lines ``[path, size, mtime_ns, ctime_ns, ino, mode, digest, seen_ns]``.

Size: one class; the walk, the stat cache it consults and the trees it builds go together (a
snapshot needs all three at once); the objects themselves live in ``core.checkpoints.pack``.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from codebot_mcp.core.checkpoints.pack import (
    NotAFileError,
    ObjectPack,
    StoreError,
    private_file,
    write_all,
)
from codebot_mcp.core.config import paths
from codebot_mcp.core.fsutil import atomic_write
from codebot_mcp.core.tools.gitignore import IgnoreStack

__all__ = [
    "Entry",
    "ShadowStore",
    "Snapshot",
    "SnapshotSkipped",
    "StoreError",
]

ALWAYS_SKIPPED = frozenset({".git"})
"""Never snapshotted: the user's repository is theirs (and ``git`` already versions it)."""
RACY_NS = 2_000_000_000
"""A file whose mtime is this close to when it was hashed is hashed again next time: a
change within the file system's timestamp granularity leaves the stat unchanged."""
_S_IFMT = 0o170000
CACHE_SLACK = 1000
"""The stat cache is rewritten once it holds this many lines more than twice its paths."""
GC_MIN_DEAD_BYTES = 1024 * 1024
"""A pack is rewritten once at least this much (and half of it) is unreachable."""

Kind = Literal["f", "l", "d", "x"]
"""A regular file, a symlink (its target is the object), a directory (a tree), a file or
directory that could not be read (no object: it, and what is under it, is never compared or
restored)."""
UNREAD = "0" * 64
"""The digest field of an ``x`` entry."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One path of a snapshot: a file or a symlink."""

    kind: Kind
    digest: str
    mode: int


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A snapshot taken: its tree and what it covered."""

    tree: str
    files: int
    size: int
    hashed: int
    """Files read (new or changed since the last snapshot); the others cost a stat."""
    seconds: float


@dataclass(frozen=True, slots=True)
class SnapshotSkipped:
    """A snapshot that was not taken, and why (a cap, an unreadable project)."""

    reason: str


@dataclass(slots=True)
class _Dir:
    """A directory met on the walk: its tree entries so far (files the stat cache knows),
    and what the store must still read (changed files, symlinks, subdirectories)."""

    entries: dict[str, list[Any]] = field(default_factory=dict[str, list[Any]])
    misses: list[tuple[str, tuple[int, int, int, int, int]]] = field(
        default_factory=list[tuple[str, tuple[int, int, int, int, int]]]
    )
    """Files to read: name and stat key (size, mtime, ctime, inode, mode)."""
    links: list[str] = field(default_factory=list[str])
    dirs: dict[str, _Dir] = field(default_factory=dict[str, "_Dir"])


class _OverCapError(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ShadowStore:
    """The snapshots of one project's files.

    Args:
        directory: Where the store lives (created 0700).
        root: The project root whose files are snapshotted.
        max_files: A snapshot of more files than this is skipped.
        max_bytes: A snapshot of more bytes than this is skipped.
    """

    def __init__(
        self, directory: Path, root: Path, *, max_files: int = 50_000, max_bytes: int = 1 << 30
    ) -> None:
        self.directory = directory
        self.root = Path(os.path.realpath(root))
        self.max_files = max_files
        self.max_bytes = max_bytes
        self.pack = ObjectPack(directory)
        self._generation: int | None = None
        self._cache: dict[str, tuple[tuple[int, int, int, int, int], str, int]] = {}
        self._cache_lines = 0
        self._cache_size = 0
        self._cache_ino: int | None = None
        self._skip = self._skipped_dirs()

    @property
    def pack_path(self) -> Path:
        """The objects."""
        return self.pack.pack_path

    @property
    def cache_path(self) -> Path:
        """The stat cache."""
        return self.directory / "stat.cache"

    def create(self) -> None:
        """The store's directory (see :meth:`ObjectPack.create`)."""
        self.pack.create()

    @contextlib.contextmanager
    def locked(self, *, write: bool) -> Iterator[None]:
        """Hold the store's lock (shared to read, exclusive to write), caught up with what
        other processes stored and hashed.

        Raises:
            StoreError: the store's directory or files cannot be opened.
        """
        with self.pack.locked(write=write):
            if self.pack.generation != self._generation:  # collected: start the cache over
                self._generation = self.pack.generation
                self._cache, self._cache_lines, self._cache_size = {}, 0, 0
            self._load_cache()
            yield

    def tree_digests(self, digest: str) -> Iterator[tuple[Kind, str]]:
        """(kind, digest) of a tree's entries."""
        for kind, child, _mode in self.tree(digest).values():
            yield kind, child

    # -- the stat cache ---------------------------------------------------------------------

    def _load_cache(self) -> None:
        try:
            with open(self.cache_path, "rb") as fh:
                ino = os.fstat(fh.fileno()).st_ino
                if ino != self._cache_ino:  # rewritten (or new): read it from the start
                    self._cache, self._cache_lines, self._cache_size = {}, 0, 0
                    self._cache_ino = ino
                fh.seek(self._cache_size)
                data = fh.read()
        except FileNotFoundError:
            return
        end = data.rfind(b"\n") + 1  # a line being written is read next time
        for line in data[:end].splitlines():
            try:
                path, size, mtime, ctime, ino, mode, digest, seen = json.loads(line)
            except (ValueError, TypeError):  # boundary: a damaged line is only a cache miss
                continue
            self._cache[path] = ((size, mtime, ctime, ino, mode), digest, seen)
            self._cache_lines += 1
        self._cache_size += end

    def _save_cache(self, lines: list[bytes]) -> None:
        if not lines:
            return
        if self._cache_lines + len(lines) > 2 * len(self._cache) + CACHE_SLACK:
            self._rewrite_cache()
            return
        fd = private_file(self.cache_path)
        try:
            written = write_all(fd, b"".join(lines))
        finally:
            os.close(fd)
        self._cache_size += written
        self._cache_lines += len(lines)

    def _rewrite_cache(self) -> None:
        """The stat cache again, one line per path (appending leaves old lines behind)."""
        lines = [
            json.dumps([path, *key, digest, seen], ensure_ascii=True).encode() + b"\n"
            for path, (key, digest, seen) in self._cache.items()
            if digest in self.pack.index
        ]
        data = b"".join(lines)
        atomic_write(self.cache_path, data, mode=0o600)
        self._cache_ino = os.stat(self.cache_path).st_ino
        self._cache_size, self._cache_lines = len(data), len(lines)

    # -- trees ----------------------------------------------------------------------------

    def tree(self, digest: str) -> dict[str, tuple[Kind, str, int]]:
        """A tree object: name → (kind, digest, mode).

        Raises:
            StoreError: the object is missing, damaged, or not a tree.
        """
        try:
            data = json.loads(self.pack.get(digest))
        except ValueError:
            raise StoreError(f"object {digest[:12]} is not a tree") from None
        if not isinstance(data, dict):
            raise StoreError(f"object {digest[:12]} is not a tree")
        out: dict[str, tuple[Kind, str, int]] = {}
        for name, value in data.items():
            if not _safe_name(name) or not _entry_shape(value):
                raise StoreError(f"tree {digest[:12]} holds an invalid entry {name!r}")
            out[name] = (value[0], value[1], value[2])
        return out

    def flatten(self, digest: str, prefix: str = "") -> dict[str, Entry]:
        """Every file and symlink under a tree, by ``/``-separated path."""
        out: dict[str, Entry] = {}
        for name, (kind, child, mode) in self.tree(digest).items():
            if kind == "d":
                out.update(self.flatten(child, f"{prefix}{name}/"))
            elif kind != "x":
                out[prefix + name] = Entry(kind, child, mode)
        return out

    def entry(self, tree: str, path: str) -> Entry | None:
        """The file or symlink at ``path`` in a tree (None: absent, or a directory)."""
        *parents, name = path.split("/")
        for part in parents:
            found = self.tree(tree).get(part)
            if found is None or found[0] != "d":
                return None
            tree = found[1]
        found = self.tree(tree).get(name)
        return Entry(*found) if found is not None and found[0] in ("f", "l") else None

    def changed(
        self, old: str | None, new: str | None, prefix: str = ""
    ) -> Iterator[tuple[str, Entry | None, Entry | None]]:
        """``(path, old entry, new entry)`` for each file or symlink that differs between two
        trees (None: absent, or no tree); equal subtrees are not opened."""
        if old == new:
            return
        a = self.tree(old) if old else {}
        b = self.tree(new) if new else {}
        for name in sorted(a.keys() | b.keys()):
            x, y = a.get(name), b.get(name)
            if x == y or (x is not None and x[0] == "x") or (y is not None and y[0] == "x"):
                continue  # equal, or unreadable on one side: nothing known to compare
            path = prefix + name
            x_dir = x[1] if x is not None and x[0] == "d" else None
            y_dir = y[1] if y is not None and y[0] == "d" else None
            if x_dir or y_dir:
                yield from self.changed(x_dir, y_dir, path + "/")
            x_file = Entry(*x) if x is not None and x[0] != "d" else None
            y_file = Entry(*y) if y is not None and y[0] != "d" else None
            if x_file != y_file:
                yield path, x_file, y_file

    # -- snapshots --------------------------------------------------------------------------

    def snapshot(self) -> Snapshot | SnapshotSkipped:
        """Record the project's files now: all of them, or none (past a cap).

        Raises:
            StoreError: the store cannot be written (disk full, permissions).
        """
        began = time.perf_counter()
        with self.locked(write=False):  # what other processes stored and hashed meanwhile
            generation = self.pack.generation
        try:
            top, files, size = self._walk()
        except _OverCapError as over:
            return SnapshotSkipped(over.reason)
        except OSError as exc:
            return SnapshotSkipped(f"the project cannot be read: {exc}")
        pending: list[bytes] = []
        cache_lines: list[bytes] = []
        hashed = [0]
        try:
            with self.locked(write=True):
                if self.pack.generation != generation:  # collected since the walk: trust no hit
                    top, files, size = self._walk()
                with self.pack.writing():
                    tree = self._store_dir(top, str(self.root), "", pending, cache_lines, hashed)
                    self.pack.flush(pending)
                self._save_cache(cache_lines)
        except _OverCapError as over:
            return SnapshotSkipped(over.reason)
        except OSError as exc:
            raise StoreError(f"cannot write the checkpoint store {self.directory}: {exc}") from exc
        return Snapshot(tree, files, size, hashed[0], time.perf_counter() - began)

    def _skipped_dirs(self) -> set[str]:
        """Directories inside the project that are codebot's own (the state, this store)."""
        out: set[str] = set()
        for path in (paths.state_dir(), self.directory):
            real = os.path.realpath(path)
            if real.startswith(str(self.root) + os.sep):
                out.add(os.path.relpath(real, self.root).replace(os.sep, "/"))
        return out

    def _walk(self) -> tuple[_Dir, int, int]:
        """Every entry git would not ignore, files checked against the stat cache as they
        are met (one pass: the per-file work is what a snapshot costs). Directories are
        read through descriptors (``stat`` relative to them, symlinks never followed)."""
        ignores = IgnoreStack()
        counts = [0, 0]
        cache, index, skip = self._cache, self.pack.index, self._skip
        max_files, max_bytes = self.max_files, self.max_bytes
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

        def visit(fd: int, directory: str, prefix: str) -> _Dir:
            node = _Dir()
            entries, misses = node.entries, node.misses
            pushed = ignores.enter(Path(directory), prefix)
            try:
                with os.scandir(fd) as listing:
                    listed = [
                        (e, e.is_dir(follow_symlinks=False))
                        for e in listing
                        if e.name not in ALWAYS_SKIPPED
                    ]
                if len(listed) > max_files:
                    raise _OverCapError(self._over(len(listed)))
                if ignores.any_ignored(prefix, [(e.name, d) for e, d in listed]):
                    listed = [
                        (e, d) for e, d in listed if not ignores.ignored(prefix + e.name, is_dir=d)
                    ]
                files = size = 0
                for entry, is_dir in listed:
                    if is_dir:
                        continue
                    name = entry.name
                    info = entry.stat(follow_symlinks=False)
                    mode = info.st_mode
                    kind = mode & _S_IFMT
                    if kind == stat.S_IFREG:
                        relative = prefix + name
                        key = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, mode)
                        hit = cache.get(relative)
                        if (
                            hit is not None
                            and hit[0] == key
                            and info.st_mtime_ns + RACY_NS < hit[2]
                            and hit[1] in index
                        ):
                            entries[name] = ["f", hit[1], mode & 0o7777]
                        else:
                            misses.append((name, key))
                        size += info.st_size
                    elif kind == stat.S_IFLNK:
                        node.links.append(name)
                    else:  # sockets, FIFOs, devices: nothing to restore
                        continue
                    files += 1
                counts[0] += files
                counts[1] += size
                if counts[0] > max_files or counts[1] > max_bytes:
                    raise _OverCapError(self._over(counts[0]))
                for entry, is_dir in listed:
                    relative = prefix + entry.name
                    if not is_dir or relative in skip:
                        continue
                    try:
                        child = os.open(entry.name, flags, dir_fd=fd)
                    except OSError:  # unreadable, or swapped for a link since it was listed
                        entries[entry.name] = ["x", UNREAD, 0]
                        continue
                    try:
                        node.dirs[entry.name] = visit(
                            child, f"{directory}/{entry.name}", relative + "/"
                        )
                    finally:
                        os.close(child)
            finally:
                if pushed:
                    ignores.leave()
            return node

        top_fd = os.open(self.root, flags & ~os.O_NOFOLLOW)
        try:
            top = visit(top_fd, str(self.root), "")
        finally:
            os.close(top_fd)
        return top, counts[0], counts[1]

    def _over(self, files: int) -> str:
        if files > self.max_files:
            return f"the project has more than {self.max_files:,} files (checkpoints.max_files)"
        return f"the project's files pass {_megabytes(self.max_bytes)} (checkpoints.max_size_mb)"

    def _store_dir(
        self,
        node: _Dir,
        directory: str,
        prefix: str,
        pending: list[bytes],
        cache_lines: list[bytes],
        hashed: list[int],
    ) -> str:
        entries = node.entries
        for name, child in node.dirs.items():
            digest = self._store_dir(
                child, f"{directory}/{name}", f"{prefix}{name}/", pending, cache_lines, hashed
            )
            entries[name] = ["d", digest, 0]
        for name in node.links:
            target = os.fsencode(os.readlink(f"{directory}/{name}"))
            entries[name] = ["l", self.pack.put(target, pending), 0]
        for name, key in node.misses:
            seen = time.time_ns()
            try:
                digest = self.pack.put_file(f"{directory}/{name}", key[0], pending)
            except FileNotFoundError:
                continue  # gone since the walk
            except (PermissionError, NotAFileError):  # unreadable, or replaced since the walk:
                entries[name] = ["x", UNREAD, 0]  # known to exist, never compared
                continue
            hashed[0] += 1
            relative = prefix + name
            self._cache[relative] = (key, digest, seen)
            line = json.dumps([relative, *key, digest, seen], ensure_ascii=True)
            cache_lines.append(line.encode() + b"\n")
            entries[name] = ["f", digest, key[4] & 0o7777]
        blob = json.dumps(entries, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return self.pack.put(blob.encode(), pending)

    # -- garbage ----------------------------------------------------------------------------

    def collect(self, live: Iterable[str]) -> int:
        """Drop every object no ``live`` tree reaches, when enough is dead; bytes freed.

        Raises:
            StoreError: the store cannot be rewritten.
        """
        with self.locked(write=True):
            reachable: set[str] = set()
            stack = [d for d in live if d in self.pack.index]
            while stack:
                digest = stack.pop()
                if digest in reachable:
                    continue
                reachable.add(digest)
                for kind, child in self.tree_digests(digest):
                    if kind == "d":
                        stack.append(child)
                    elif kind != "x":
                        reachable.add(child)
            dead = self.pack.size() - self.pack.size(reachable)
            if dead < GC_MIN_DEAD_BYTES or dead * 2 < self.pack.size():
                return 0
            self.pack.rewrite(reachable)
            with contextlib.suppress(FileNotFoundError):
                self.cache_path.unlink()  # its entries name objects that may be gone
            return dead


def _megabytes(count: int) -> str:
    return f"{count / 1_000_000:,.0f} MB"


def _safe_name(name: object) -> bool:
    """A tree entry's name: one path part, never ``..`` or a separator (a damaged or forged
    tree must not lead a restore outside the project)."""
    return (
        isinstance(name, str)
        and name not in ("", ".", "..")
        and "/" not in name
        and "\0" not in name
    )


def _entry_shape(value: object) -> bool:
    return (
        isinstance(value, list)
        and len(value) == 3
        and value[0] in ("f", "l", "d", "x")
        and isinstance(value[1], str)
        and len(value[1]) == 64
        and isinstance(value[2], int)
    )
