"""One log file per run: a server's stderr (and its log messages), a warm holder's last words.

What a server logs with ``notifications/message`` becomes one line each (:class:`ServerLog`),
written the same way by the SDK path (``connection.requests``) and the hot path
(``calls.lite_wire``).

Each launch gets ``<state>/log/<name>/<UTC time>-<pid>-<n>.log``, created new (0600, never
following a link) and never truncated by another process: two projects, two terminals or a
restart each write their own file, so a failure message quotes the lines of its own run only.

Old logs are pruned whenever a new one is made: per name, the newest :data:`KEEP_LOGS` stay,
and older ones go unless the process that wrote them is still running.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import os
import re
import time
from collections.abc import Callable, Mapping
from contextlib import suppress
from pathlib import Path
from typing import Any, BinaryIO

from codebot_mcp.core.config import paths
from codebot_mcp.core.config.servers import LOG_LEVELS
from codebot_mcp.core.secrets.redact import SECRETS, Redactor
from codebot_mcp.core.secrets.streamscrub import StreamScrubber

logger = logging.getLogger(__name__)

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


MAX_LOG_LINE = 10_000
"""Characters of one log message kept (a hostile server may send megabytes)."""


def message_scrubber(redact: Redactor) -> StreamScrubber:
    """A scrubber for one stream of a server's messages (its log, its progress): its own
    secrets and every secret of the run; a secret split across two messages is masked too."""
    redactor = Redactor([*redact.values(), *SECRETS.values()])
    return StreamScrubber(redactor, urls=False, extra=redact)


class ServerLog:
    """A server's ``notifications/message``, one line each in its log: ``[<level> <logger>]
    <data>`` (data as sent when it is a string, else its JSON), scrubbed as a stream, at most
    :data:`MAX_LOG_LINE` characters, CR and LF escaped. Messages below the entry's
    ``log_level`` are dropped (not every server filters).

    Args:
        write: Appends one line to the server's log file.
        redact: The server's secrets.
        log_level: The entry's ``log_level`` (None: keep every level).
    """

    def __init__(
        self, write: Callable[[str], None], redact: Redactor, log_level: str | None = None
    ) -> None:
        self._write = write
        self._scrub = message_scrubber(redact)
        self.min_level = LOG_LEVELS.index(log_level) if log_level in LOG_LEVELS else 0

    def write(self, level: str, source: str | None, data: Any) -> None:
        """Log one message (already read: ``level`` is one of ``LOG_LEVELS``)."""
        if level in LOG_LEVELS and LOG_LEVELS.index(level) < self.min_level:
            return
        text = self._scrub.feed(data if isinstance(data, str) else json.dumps(data))
        named = f" {source}" if source else ""
        line = f"[{level}{named}] {text}"[:MAX_LOG_LINE]
        try:
            self._write(line.replace("\r", "\\r").replace("\n", "\\n"))
        except OSError as exc:
            logger.debug("cannot write a server's log: %s", exc)

    def receive(self, params: Any) -> bool:
        """Log the raw ``params`` of a ``notifications/message`` (the hot path) if they are
        what the SDK's model accepts: a known ``level``, a string ``logger`` or none, and a
        ``data``; False (nothing written) otherwise, as the SDK drops such a message."""
        if not isinstance(params, Mapping) or "data" not in params:
            return False
        level, source = params.get("level"), params.get("logger")
        if level not in LOG_LEVELS or not (source is None or isinstance(source, str)):
            return False
        self.write(str(level), source, params["data"])
        return True
