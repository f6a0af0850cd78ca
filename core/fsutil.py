"""The one way codebot writes a file: atomically, never through a symlink, with a chosen mode.

A temporary file is made with ``mkstemp`` in the target's own directory (a unique name, so
two processes writing the same file never share it), written, ``fsync``\\ ed, given its mode,
then renamed over the target with ``os.replace``. A crash leaves the old file or the new one,
never half of either. ``os.replace`` renames over a symlink rather than writing through it;
``atomic_write`` goes further and refuses a target that is a symlink, so a planted link can
neither redirect the write nor be silently swapped for a file.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from pathlib import Path

__all__ = ["SymlinkRefusedError", "atomic_write", "current_umask"]


class SymlinkRefusedError(OSError):
    """The target of a write is a symlink (a planted link must not redirect or vanish)."""


def current_umask() -> int:
    """The process's umask (read without changing it for longer than one call)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write(
    path: Path,
    data: bytes | str,
    *,
    mode: int | None = None,
    encoding: str = "utf-8",
    follow_symlinks: bool = False,
) -> bool:
    """Replace ``path`` with ``data`` atomically; True when the file existed before.

    Args:
        path: The file to write. Its directory must exist.
        data: Bytes, or text encoded with ``encoding``.
        mode: The file's mode. None keeps an existing file's mode, and gives a new file
            ``0o666`` less the umask (what ``open()`` would).
        encoding: For text ``data``.
        follow_symlinks: Write to what a symlink at ``path`` points to, instead of refusing.

    Raises:
        SymlinkRefusedError: ``path`` is a symlink (and ``follow_symlinks`` is False).
        OSError: the directory cannot be written, or the target is not a regular file.
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        info = None
    if info is not None and stat.S_ISLNK(info.st_mode):
        if not follow_symlinks:
            raise SymlinkRefusedError(errno.ELOOP, "refusing to write through a symlink", str(path))
        path = Path(os.path.realpath(path))
        try:
            info = os.stat(path)
        except FileNotFoundError:
            info = None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    if mode is None:
        mode = stat.S_IMODE(info.st_mode) if info is not None else 0o666 & ~current_umask()
    raw = data.encode(encoding) if isinstance(data, str) else data
    import tempfile  # 5 ms at import, for a write: not on the warm path

    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return info is not None


def sweep_orphans(bases: Iterable[Path], prefix: str) -> None:
    """Remove the directories ``<base>/<prefix><pid>-...`` whose codebot process is gone (a
    SIGKILL leaves them behind): only our own, never through a symlink."""
    import shutil

    for base in set(bases):
        try:
            entries = list(base.glob(f"{prefix}*-*"))
        except OSError:
            continue
        for entry in entries:
            pid = entry.name[len(prefix) :].partition("-")[0]
            try:
                if not pid.isdigit() or entry.lstat().st_uid != os.geteuid() or entry.is_symlink():
                    continue
                os.kill(int(pid), 0)
            except ProcessLookupError:
                shutil.rmtree(entry, ignore_errors=True)
            except OSError:  # boundary: alive but not ours to signal, or unreadable: leave it
                continue
