"""One pack of content-addressed objects on disk, shared by processes: the checkpoint store's
storage (``core.checkpoints.shadow`` decides what goes in).

Every object is stored once under its SHA-256, appended to ``objects.pack`` (zlib-compressed
unless that saves under 10%), and named in ``objects.idx`` by one fixed-size record (digest,
offset, stored length, flags). Objects reach the disk (``fsync``) before the index names
them, and a torn last record is ignored, so a crash never leaves an index entry without its
bytes. Every read checks the digest.

Processes take turns through ``flock`` on ``lock`` (shared to read, exclusive to write), and
each catches up with what the others appended when it takes the lock. A collection rewrites
both files beside them and renames the index first, then the pack; a collection interrupted
between the two is finished by the next lock (:meth:`ObjectPack._finish_rewrite`). The
directory is 0700, every file 0600, with a ``.gitignore`` of ``*``.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import stat
import struct
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from codebot_mcp.core.config import paths
from codebot_mcp.core.fsutil import atomic_write
from codebot_mcp.core.tools.gitignore import IGNORE_FILE

__all__ = ["NotAFileError", "ObjectPack", "StoreError", "private_file", "write_all"]

STREAM_AT = 4 * 1024 * 1024
"""Files larger than this are hashed and compressed in chunks (memory stays bounded)."""
CHUNK = 1024 * 1024
COMPRESS_LEVEL = 1
"""zlib's fastest level: about 5 times the speed of the default for 10% more bytes."""
_RECORD = struct.Struct("<32sQQB")
"""digest, offset in the pack, stored length, flags (1: zlib)."""
_ZLIB = 1


class StoreError(Exception):
    """The store cannot be read or written (the message names the file and why)."""


class NotAFileError(OSError):
    """The path is no longer a regular file (swapped for a symlink, say) since the walk."""


def private_file(path: Path) -> int:
    """Open ``path`` to append, created 0600 (and made 0600 if it was not)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    os.fchmod(fd, 0o600)
    return fd


def write_all(fd: int, data: bytes) -> int:
    """Write all of ``data`` (``os.write`` may write less); its length."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    return len(data)


def open_file(path: str) -> Any:
    """Open a regular file for reading without following a symlink: a link swapped in after
    the walk must not pull a file from outside the project into the store.

    Raises:
        NotAFileError: it is not a regular file now.
        OSError: it cannot be opened.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NotAFileError(path)
    return os.fdopen(fd, "rb")


class ObjectPack:
    """The objects of one store directory.

    Args:
        directory: Where the pack lives (created 0700 on first use).
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.index: dict[str, tuple[int, int, int]] = {}
        """Digest → (offset, stored length, flags), as of the last lock."""
        self.generation: int | None = None
        """The pack file's inode: it changes when a collection rewrote the pack."""
        self._index_size = 0
        self._fd: int | None = None

    @property
    def pack_path(self) -> Path:
        """The objects."""
        return self.directory / "objects.pack"

    @property
    def index_path(self) -> Path:
        """Where each object is in the pack."""
        return self.directory / "objects.idx"

    def create(self) -> None:
        """The directory (0700), with a ``.gitignore`` of ``*``: should it sit inside a
        project (a state directory there), git, ``grep`` and ``glob`` pass it by."""
        if (self.directory / IGNORE_FILE).exists():
            return
        paths.private_dir(self.directory)
        atomic_write(self.directory / IGNORE_FILE, "*\n", mode=0o600)

    @contextlib.contextmanager
    def locked(self, *, write: bool) -> Iterator[None]:
        """Hold the lock (shared to read, exclusive to write) and catch up with what other
        processes wrote.

        Raises:
            StoreError: the directory or its files cannot be opened.
        """
        try:
            self.create()
            fd = private_file(self.directory / "lock")
        except OSError as exc:
            raise StoreError(f"cannot open the checkpoint store {self.directory}: {exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if write else fcntl.LOCK_SH)
            self._finish_rewrite()
            self._catch_up()
            yield
        finally:
            os.close(fd)  # releases the lock

    def _rewrite_paths(self) -> tuple[Path, Path]:
        return self.directory / "objects.pack.new", self.directory / "objects.idx.new"

    def _finish_rewrite(self) -> None:
        """A collection that stopped between replacing the index and the pack is finished
        (the new index names offsets in the new pack); one that stopped earlier is dropped."""
        pack_tmp, index_tmp = self._rewrite_paths()
        with contextlib.suppress(FileNotFoundError):
            if index_tmp.exists():
                index_tmp.unlink()
                pack_tmp.unlink()
            else:
                os.replace(pack_tmp, self.pack_path)

    def _catch_up(self) -> None:
        """Reload the index when the pack was rewritten; read what others appended since."""
        try:
            info = os.stat(self.pack_path)
        except FileNotFoundError:
            info = None
        ino = info.st_ino if info else None
        if ino != self.generation:
            self.index, self._index_size, self.generation = {}, 0, ino
        pack_size = info.st_size if info else 0
        try:
            with open(self.index_path, "rb") as fh:
                fh.seek(self._index_size)
                data = fh.read()
        except FileNotFoundError:
            data = b""
        usable = len(data) - len(data) % _RECORD.size  # a torn last record is ignored
        for digest, offset, length, flags in _RECORD.iter_unpack(data[:usable]):
            if offset + length <= pack_size:
                self.index[digest.hex()] = (offset, length, flags)
        self._index_size += usable

    # -- reading --------------------------------------------------------------------------

    def get(self, digest: str) -> bytes:
        """An object's bytes (hold :meth:`locked`).

        Raises:
            StoreError: the object is missing or damaged.
        """
        found = self.index.get(digest)
        if found is None:
            raise StoreError(f"object {digest[:12]} is missing from {self.pack_path}")
        offset, length, flags = found
        try:
            with open(self.pack_path, "rb") as fh:
                data = os.pread(fh.fileno(), length, offset)
            data = zlib.decompress(data) if flags & _ZLIB else data
        except (OSError, zlib.error) as exc:
            message = f"cannot read object {digest[:12]} from {self.pack_path}: {exc}"
            raise StoreError(message) from None
        if hashlib.sha256(data).hexdigest() != digest:
            raise StoreError(f"object {digest[:12]} in {self.pack_path} is damaged")
        return data

    # -- writing (hold the exclusive lock, inside writing()) ----------------------------------

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Keep the pack open for appending while objects are put."""
        self._fd = private_file(self.pack_path)
        try:
            self.generation = os.fstat(self._fd).st_ino
            yield
        finally:
            os.close(self._fd)
            self._fd = None

    def _append(self, digest: str, stored: bytes, flags: int, pending: list[bytes]) -> None:
        assert self._fd is not None, "objects are written inside writing()"
        offset = os.fstat(self._fd).st_size
        write_all(self._fd, stored)
        self.index[digest] = (offset, len(stored), flags)
        pending.append(_RECORD.pack(bytes.fromhex(digest), offset, len(stored), flags))

    def put(self, data: bytes, pending: list[bytes]) -> str:
        """Store ``data`` unless it is stored; its digest (its index record joins
        ``pending`` until :meth:`flush`)."""
        digest = hashlib.sha256(data).hexdigest()
        if digest not in self.index:
            packed = zlib.compress(data, COMPRESS_LEVEL)
            if len(packed) < len(data) * 0.9:
                self._append(digest, packed, _ZLIB, pending)
            else:
                self._append(digest, data, 0, pending)
        return digest

    def put_file(self, path: str, size: int, pending: list[bytes]) -> str:
        """Store a file's bytes; their digest. Large files go through in chunks.

        Raises:
            NotAFileError: it is not a regular file now.
            OSError: it cannot be read.
        """
        if size <= STREAM_AT:
            with open_file(path) as fh:
                return self.put(fh.read(), pending)
        hasher = hashlib.sha256()
        with open_file(path) as fh:
            for chunk in iter(lambda: fh.read(CHUNK), b""):
                hasher.update(chunk)
        digest = hasher.hexdigest()
        if digest in self.index:
            return digest
        # Compress straight into the pack (the lock is held), hashing again what is stored.
        assert self._fd is not None, "objects are written inside writing()"
        offset = os.fstat(self._fd).st_size
        hasher, packer, written = hashlib.sha256(), zlib.compressobj(COMPRESS_LEVEL), 0
        with open_file(path) as fh:
            for chunk in iter(lambda: fh.read(CHUNK), b""):
                hasher.update(chunk)
                written += write_all(self._fd, packer.compress(chunk))
        written += write_all(self._fd, packer.flush())
        digest = hasher.hexdigest()  # what was stored, should the file have changed meanwhile
        self.index[digest] = (offset, written, _ZLIB)
        pending.append(_RECORD.pack(bytes.fromhex(digest), offset, written, _ZLIB))
        return digest

    def flush(self, pending: list[bytes]) -> None:
        """The objects put reach the disk, then the index names them."""
        if not pending:
            return
        assert self._fd is not None, "objects are written inside writing()"
        os.fsync(self._fd)
        fd = private_file(self.index_path)
        try:
            write_all(fd, b"".join(pending))
        finally:
            os.close(fd)
        self._index_size += len(pending) * _RECORD.size

    # -- collecting -----------------------------------------------------------------------

    def size(self, digests: Iterable[str] | None = None) -> int:
        """Stored bytes of these objects (all when None)."""
        if digests is None:
            return sum(length for _, length, _ in self.index.values())
        return sum(self.index[d][1] for d in digests if d in self.index)

    def rewrite(self, keep: set[str]) -> None:
        """Keep only the objects in ``keep`` (hold the exclusive lock).

        Raises:
            StoreError: the files cannot be rewritten.
        """
        pack_tmp, index_tmp = self._rewrite_paths()
        records: list[bytes] = []
        try:
            with open(self.pack_path, "rb") as old:
                fd = os.open(pack_tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                try:
                    offset = 0
                    for digest in sorted(keep, key=lambda d: self.index[d][0]):
                        start, length, flags = self.index[digest]
                        write_all(fd, os.pread(old.fileno(), length, start))
                        records.append(_RECORD.pack(bytes.fromhex(digest), offset, length, flags))
                        offset += length
                    os.fsync(fd)
                finally:
                    os.close(fd)
            fd = os.open(index_tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                write_all(fd, b"".join(records))
                os.fsync(fd)
            finally:
                os.close(fd)
            # The index first: a crash between the two leaves the new pack beside the new
            # index, and the next lock finishes the job (see _finish_rewrite).
            os.replace(index_tmp, self.index_path)
            os.replace(pack_tmp, self.pack_path)
        except OSError as exc:
            raise StoreError(f"cannot rewrite {self.pack_path}: {exc}") from exc
        self.generation = None
        self._catch_up()
