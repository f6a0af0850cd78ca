"""``/export [FILE]``: this session written to a file; and the writing ``codebot export`` shares."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from codebot_mcp.cli import render

if TYPE_CHECKING:
    from codebot_mcp.cli.chat_runtime import ChatRuntime
    from codebot_mcp.core.agent.history import SavedSession


def export_text(saved: SavedSession, fmt: str) -> str:
    from codebot_mcp.core.agent.sessionexport import render as export

    return export(saved, fmt, render.REDACTOR)


def write_export(path: Path, text: str) -> None:
    from codebot_mcp.core.errors import CodebotError
    from codebot_mcp.core.fsutil import atomic_write

    try:
        atomic_write(path, text)
    except OSError as exc:
        raise CodebotError(
            f"cannot write {path}: {exc.strerror or exc}",
            hint="Pick another file with --output (or /export FILE).",
        ) from None


def repl_export(runtime: ChatRuntime, file: str) -> None:
    """``/export [FILE]``: this session as Markdown (JSON when FILE ends in ``.json``),
    by default to ``codebot-<session>.md`` in the working directory."""
    from codebot_mcp.core.agent import history
    from codebot_mcp.core.agent.sessionexport import default_name
    from codebot_mcp.core.errors import CodebotError

    log = runtime.log
    runtime.session.checkpoint()  # what the log has not written yet
    if log is None or not log.path.exists():
        print("(nothing to export yet: this session has not been saved)", file=sys.stderr)
        return
    try:
        saved = history.find(runtime.project, log.id)
        target = Path(file).expanduser() if file else default_name(saved)
        path = target if target.is_absolute() else runtime.globals.cwd / target
        write_export(path, export_text(saved, "json" if path.suffix == ".json" else "markdown"))
    except CodebotError as exc:
        render.error(exc)
        return
    print(f"(exported session {saved.id} to {render.safe(path, one_line=True)})")
