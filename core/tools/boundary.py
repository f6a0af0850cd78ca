"""The file tools' boundary: where ``read``, ``write`` (and edit, glob, grep) may reach.

- Inside the project root (or the working directory when there is no project): allowed.
- Outside: the permission gate asks (:meth:`Boundary.reach` says so), and a run nobody can
  answer denies it unless ``--allow`` or ``--yes`` says otherwise.
- A path that leads into one the sandbox hides (credentials, ``sandbox.deny_read``:
  :attr:`Boundary.hidden`) asks too, even inside the root (a project that is your home).
- Devices, FIFOs and sockets are refused: reading ``/dev/zero`` would never end, a FIFO
  would block forever.
- Reads are bounded (:data:`MAX_READ_BYTES`).
- A write never follows a symlink out of the root, and never follows a final symlink at all
  (``O_NOFOLLOW``): what the approval showed is what gets written.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

MAX_READ_BYTES = 10 * 1024 * 1024
"""A read stops here; a model has no use for more of one file in one call."""


class BoundaryError(Exception):
    """The path may not be used at all; the message is for the model."""


@dataclass(frozen=True, slots=True)
class Reach:
    """Where a path argument leads."""

    written: str
    """The path as the model wrote it."""
    resolved: Path
    """Absolute, with every symlink followed."""
    inside: bool
    """True when the resolved path is inside the root."""
    root: Path
    hidden: Path | None = None
    """The path hidden from the sandbox (credentials) that it leads into, if any."""

    @property
    def asks(self) -> bool:
        """Whether the gate asks whatever the rules say: outside the root, or hidden."""
        return not self.inside or self.hidden is not None

    def describe(self) -> str:
        """``/real/path (outside the project root /root)`` for approvals and denials."""
        where = "inside" if self.inside else "outside"
        text = f"{self.resolved} ({where} the project root {self.root})"
        if self.hidden is not None:
            text += f", in {self.hidden}, which the sandbox hides (credentials)"
        return text

    def asks_because(self) -> str:
        """Why the gate asks (when :attr:`asks`), in short: for the approval's "asks because"."""
        if self.inside and self.hidden is not None:
            return "the path leads into one hidden from the sandbox"
        return "the path leads outside the project root"

    def why(self) -> str:
        """Why the gate asks (when :attr:`asks`), with the resolved path."""
        return f"{self.asks_because()}: {self.describe()}"


class Boundary:
    """Paths relative to ``cwd``, judged against ``root``.

    Args:
        cwd: Where relative paths start.
        root: The project root; defaults to ``cwd``.
    """

    def __init__(
        self,
        cwd: Path,
        root: Path | None = None,
        hidden: Callable[[], Iterable[Path]] | None = None,
    ) -> None:
        self.cwd = Path(os.path.abspath(cwd))
        self.root = Path(os.path.realpath(root or cwd))
        self.hidden = hidden
        """What the sandbox hides now (``Sandbox.hidden_reals``), given by whoever composes
        the tools: a path leading into one asks."""

    def reach(self, path: str) -> Reach:
        """Where ``path`` leads, symlinks followed (the path need not exist)."""
        lexical = Path(os.path.abspath(self.cwd / Path(path).expanduser()))
        resolved = Path(os.path.realpath(lexical))
        hidden = None
        if self.hidden is not None:
            hidden = next((h for h in self.hidden() if resolved.is_relative_to(h)), None)
        return Reach(path, resolved, resolved.is_relative_to(self.root), self.root, hidden)

    def read_bytes(self, path: Path, limit: int = MAX_READ_BYTES) -> tuple[bytes, bool]:
        """Up to ``limit`` bytes of a regular file, and whether there was more (see
        :func:`read_regular`)."""
        return read_regular(path, limit)

    def writable(self, reach: Reach) -> Path:
        """The real path a write (or an edit) of ``reach`` changes.

        Raises:
            BoundaryError: the path leads out of the root through a symlink, or is a device,
                FIFO or socket.
        """
        lexical = Path(os.path.abspath(self.cwd / Path(reach.written).expanduser()))
        if lexical.is_relative_to(self.root) and not reach.inside:
            raise BoundaryError(
                f"{reach.written} is inside the project root but a symlink leads it to "
                f"{reach.resolved}, outside it; write the real path if that is intended"
            )
        target = reach.resolved
        if target.exists():
            refuse_special(target, target.stat().st_mode)
        return target

    def write_text(self, reach: Reach, content: str) -> bool:
        """Create or overwrite the file ``reach`` leads to; True when it existed.

        Raises:
            BoundaryError: the path leads out of the root through a symlink, or is a device,
                FIFO or socket.
            OSError: the file cannot be written.
        """
        target = self.writable(reach)
        target.parent.mkdir(parents=True, exist_ok=True)
        from codebot_mcp.core.fsutil import atomic_write

        return atomic_write(target, content)  # a symlink planted since the check is refused


def read_regular(path: Path, limit: int = MAX_READ_BYTES) -> tuple[bytes, bool]:
    """Up to ``limit`` bytes of a regular file, and whether there was more.

    Raises:
        BoundaryError: a device, FIFO or socket.
        OSError: the file cannot be opened or read.
    """
    # O_NONBLOCK: opening a FIFO must not block before fstat can refuse it.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
        refuse_special(path, info.st_mode)
        os.set_blocking(fd, True)
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    return data[:limit], len(data) > limit


def refuse_special(path: Path, mode: int) -> None:
    """Raise for anything but a regular file or a directory."""
    for test, kind in (
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            raise BoundaryError(f"{path} is {kind}; only regular files can be read or written")
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise BoundaryError(f"{path} is not a regular file")
