"""``codebot export``: a saved session as Markdown or JSON, and ``/export`` in the REPL.

Without ``--session`` it takes the latest session of this project (as ``chat --continue``
does); without ``--output`` it writes to stdout. Secrets are masked and control characters
escaped (``core.agent.sessionexport``). ``/export`` is in :mod:`cli.repl.exportfile`.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from codebot_mcp.cli import render
from codebot_mcp.cli.repl.exportfile import export_text, write_export
from codebot_mcp.cli.runtime import Globals, load_effective
from codebot_mcp.core.errors import ExitCode

app = typer.Typer()
"""Holds ``export``; :mod:`cli.app` adds it to the root."""


class Format(StrEnum):
    """``--format``."""

    MARKDOWN = "markdown"
    JSON = "json"


@app.command("export")
def export_command(
    ctx: typer.Context,
    session: Annotated[
        str | None,
        typer.Option(
            "--session",
            metavar="ID",
            help="The session (an ID or a unique prefix); default: the latest of this project.",
        ),
    ] = None,
    fmt: Annotated[
        Format, typer.Option("--format", help="markdown (default) or json.")
    ] = Format.MARKDOWN,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", metavar="FILE", help="Write to FILE instead of stdout."),
    ] = None,
) -> int:
    """Export a saved session: the prompts, the answers, every tool call and its result.

    Secrets are masked and control characters escaped. Exit 0 exported, 1 the file could
    not be written, 2 usage (no such session: `codebot chat --resume` lists them), 3
    settings error.
    """
    from codebot_mcp.core.agent import history

    globals_: Globals = ctx.obj
    settings = load_effective(globals_, warn=False).settings
    saved = history.find(settings.project_root or globals_.cwd, session)
    text = export_text(saved, fmt.value)
    if output is None:
        sys.stdout.write(text)
        return ExitCode.OK
    path = output if output.is_absolute() else globals_.cwd / output
    write_export(path, text)
    print(f"exported session {saved.id} to {render.safe(path, one_line=True)}", file=sys.stderr)
    return ExitCode.OK
