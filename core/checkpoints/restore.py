"""Putting one path of the project back as a snapshot had it: never through a symlink, never
outside the project (``core.checkpoints.turns`` decides what, this module does it)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from pathlib import Path
from typing import Literal

from codebot_mcp.core.checkpoints.shadow import Entry
from codebot_mcp.core.fsutil import atomic_write

__all__ = ["current", "inside", "put_back", "remove"]


def current(root: Path, path: str) -> Entry | Literal["dir"] | None:
    """What ``path`` holds now, comparable with a snapshot's entry."""
    target = root / path
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        return None
    except NotADirectoryError:  # a parent is a file now
        return None
    if stat.S_ISDIR(info.st_mode):
        return "dir"
    if stat.S_ISLNK(info.st_mode):
        digest = hashlib.sha256(os.fsencode(os.readlink(target))).hexdigest()
        return Entry("l", digest, 0)
    hasher = hashlib.sha256()
    fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            hasher.update(chunk)
    return Entry("f", hasher.hexdigest(), stat.S_IMODE(info.st_mode))


def inside(root: Path, path: str, *, create: bool) -> Path:
    """``root/path``, refusing a parent that is a symlink or not a directory (a link planted
    since the snapshot must not carry a restore outside the project); missing parents are
    made when ``create``."""
    parts = path.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise OSError(f"not a path inside the project: {path!r}")
    current = root
    for part in parts[:-1]:
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            if not create:
                raise
            os.mkdir(current)
            continue
        if stat.S_ISLNK(info.st_mode):
            raise OSError(f"'{current.relative_to(root)}' is a symlink now; not followed")
        if not stat.S_ISDIR(info.st_mode):
            raise OSError(f"'{current.relative_to(root)}' is not a directory now")
    return current / parts[-1]


def remove(root: Path, path: str) -> None:
    """Remove the file or symlink at ``path`` (a link itself, never what it points to).

    Raises:
        OSError: it cannot be removed, or a parent is a symlink now.
    """
    os.unlink(inside(root, path, create=False))


def put_back(root: Path, path: str, entry: Entry, data: bytes) -> None:
    """Make ``path`` hold ``entry`` again: the file's ``data`` and mode, or a symlink to the
    target ``data`` names. Missing parent directories are made.

    Raises:
        OSError: it cannot be written, or a parent is a symlink or a file now.
    """
    target = inside(root, path, create=True)
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISLNK(os.lstat(target).st_mode):
            os.unlink(target)  # a link where a file belongs: never write through it
    if entry.kind == "l":
        temporary = target.with_name(f".{target.name}.codebot-rewind")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        os.symlink(os.fsdecode(data), temporary)
        os.replace(temporary, target)
    else:
        atomic_write(target, data, mode=entry.mode)
