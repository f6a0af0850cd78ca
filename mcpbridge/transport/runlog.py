"""One log file per run: a server's stderr (and its log messages), a warm holder's last words.

Each launch gets ``<state>/log/<name>/<UTC time>-<pid>-<n>.log``, created new (0600, never
following a link) and never truncated by another process: two projects, two terminals or a
restart each write their own file, so a failure message quotes the lines of its own run only.

Old logs are pruned whenever a new one is made: per name, the newest :data:`KEEP_LOGS` stay,
and older ones go unless the process that wrote them is still running.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import time
from contextlib import suppress
from pathlib import Path
from typing import BinaryIO

from codebot_mcp.core.config import paths

KEEP_LOGS = 10
"""Logs kept per server name (plus any whose process still runs): enough to compare a few
runs, bounded so that a script calling ``mcp call`` in a loop does not fill the disk."""

_SAFE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_sequence = itertools.count(1)


HOLDER_FOLDER = "@warm"
"""The warm holders' logs (``@`` is not allowed in a server name, so no server shares it)."""


def server_log(name: str) -> tuple[Path, BinaryIO]:
    """A new, empty log file for this launch of server ``name``, open for writing."""
    if _SAFE_NAME.fullmatch(name):
        return _open(name)
    return _open("server-" + hashlib.sha256(name.encode()).hexdigest()[:12])


def holder_log() -> tuple[Path, BinaryIO]:
    """A new, empty log file for one warm holder, open for writing."""
    return _open(HOLDER_FOLDER)


def _open(folder: str) -> tuple[Path, BinaryIO]:
    directory = paths.private_dir(paths.log_dir() / folder)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    while True:
        path = directory / f"{stamp}-{os.getpid()}-{next(_sequence)}.log"
        try:
            fd = os.open(path, flags, 0o600)
        except FileExistsError:
            continue  # another interpreter with our pid number left one: take the next number
        break
    prune(directory, keep=KEEP_LOGS)
    return path, os.fdopen(fd, "wb")


def _writer_alive(path: Path) -> bool:
    parts = path.stem.split("-")
    try:
        pid = int(parts[-2])
    except (IndexError, ValueError):
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def prune(directory: Path, *, keep: int) -> None:
    """Remove all but the newest ``keep`` logs in ``directory``, sparing running writers'."""
    logs: list[tuple[float, Path]] = []
    with suppress(OSError):
        for entry in os.scandir(directory):
            if entry.name.endswith(".log") and entry.is_file(follow_symlinks=False):
                with suppress(OSError):
                    logs.append((entry.stat(follow_symlinks=False).st_mtime, Path(entry.path)))
    logs.sort(reverse=True)
    for _mtime, path in logs[keep:]:
        if not _writer_alive(path):
            with suppress(OSError):
                path.unlink()
