"""Output helpers: errors with hints, aligned tables, JSON, colour only on a terminal."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from codebot_mcp.core.errors import CodebotError
from codebot_mcp.core.secrets.redact import SECRETS, printable, printable_json

REDACTOR = SECRETS
"""Knows every secret of this run (filled in when settings load); scrubs logs and errors."""


def safe(text: object, *, one_line: bool = False) -> str:
    """Untrusted text on its way to the terminal: secrets scrubbed, control characters shown
    escaped (see :func:`core.secrets.redact.printable`); ``None`` is the empty string. Our own
    styling is added around it, after. The one function every printed stranger's text goes
    through (servers, models, settings, files)."""
    return printable(REDACTOR("" if text is None else str(text)), one_line=one_line)


def use_color(stream: TextIO) -> bool:
    """Colour only on a terminal, and never with ``NO_COLOR`` set."""
    return "NO_COLOR" not in os.environ and hasattr(stream, "isatty") and stream.isatty()


def style(text: str, code: str, stream: TextIO = sys.stdout) -> str:
    """Wrap ``text`` in an ANSI SGR code when the stream takes colour."""
    return f"\x1b[{code}m{text}\x1b[0m" if use_color(stream) else text


def error_line(message: str) -> None:
    """``error: <message>`` on stderr (secrets scrubbed)."""
    print(f"{style('error', '31;1', sys.stderr)}: {safe(message)}", file=sys.stderr)


def error(exc: CodebotError) -> None:
    """The error and, on the next line, its hint."""
    error_line(exc.message)
    if exc.hint:
        print(f"{style('hint', '33', sys.stderr)}: {safe(exc.hint)}", file=sys.stderr)


_WARNED: set[str] = set()


def warn_once(message: str) -> None:
    """``warn``, but a message already shown in this process is not shown again."""
    if message not in _WARNED:
        _WARNED.add(message)
        warn(message)


def reset_warnings() -> None:
    """Forget which warnings were shown (each command run starts afresh)."""
    _WARNED.clear()


def hint(message: str) -> None:
    """``hint: <message>`` on stderr (secrets scrubbed)."""
    print(f"{style('hint', '33', sys.stderr)}: {safe(message)}", file=sys.stderr)


def note(message: str) -> None:
    """``note: <message>`` on stderr: a fact worth knowing, not a problem."""
    print(f"{style('note', '2', sys.stderr)}: {safe(message)}", file=sys.stderr)


def warn(message: str) -> None:
    """``warning: <message>`` on stderr (secrets scrubbed)."""
    print(f"{style('warning', '33;1', sys.stderr)}: {safe(message)}", file=sys.stderr)


def table(rows: Sequence[Sequence[str]], *, indent: str = "") -> str:
    """Left-aligned columns, two spaces apart; the last column is not padded."""
    if not rows:
        return ""
    rows = [[safe(cell, one_line=True) for cell in row] for row in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for row in rows:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])] + [row[-1]]
        lines.append((indent + "  ".join(cells)).rstrip())
    return "\n".join(lines)


def print_json(data: Any) -> None:
    """Pretty JSON on stdout, every known secret scrubbed (as :func:`safe` does for text)."""
    import json

    from codebot_mcp.core.secrets.redact import scrub

    print(printable_json(json.dumps(scrub(data, REDACTOR), indent=2, ensure_ascii=False)))


def count(n: int, noun: str) -> str:
    """``1 server``, ``2 servers``: a count with its noun (a regular plural)."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def first_line(text: str | None, limit: int = 80) -> str:
    """The first non-empty line, shortened to ``limit`` characters, made safe to print."""
    line = next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), "")
    line = safe(line, one_line=True)
    return line if len(line) <= limit else line[: limit - 1] + "…"


_installed: tuple[Any, int] | None = None
"""What :func:`setup_logging` changed (its handler, the root level before), for
:func:`reset_logging`."""


def setup_logging(*, debug: bool) -> None:
    """With ``debug``: every log line on stderr, secrets scrubbed. Without: library log lines
    (the SDK logs transport trouble) never reach the terminal; codebot reports failures itself.
    """
    import logging  # deferred: costs start-up time on paths that never log

    global _installed
    reset_logging()
    root = logging.getLogger()
    if not debug:
        handler: logging.Handler = logging.NullHandler()
        root.addHandler(handler)
        _installed = (handler, root.level)
        return

    class RedactingFormatter(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            return safe(super().format(record))

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(RedactingFormatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    root.addHandler(handler)
    _installed = (handler, root.level)
    root.setLevel(logging.DEBUG)


def reset_logging() -> None:
    """Undo :func:`setup_logging` (an in-process run must not leave its handler, bound to that
    run's stderr, nor the debug level, to whatever runs next in the process)."""
    global _installed
    if _installed is None:
        return
    import logging

    handler, level = _installed
    root = logging.getLogger()
    root.removeHandler(handler)
    root.setLevel(level)
    _installed = None


def debug_traceback(exc: BaseException) -> None:
    """The traceback of ``exc`` on stderr (``--debug``), secrets scrubbed."""
    import traceback

    text = "".join(traceback.format_exception(exc))
    print(safe(text), file=sys.stderr, end="")
