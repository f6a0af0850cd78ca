"""``codebot rewind``: restore the project's files to before a turn of a saved session.

The shell's side of ``/rewind``, for what ``chat -p`` changed: without ``--session`` it takes
the latest session of this project (as ``chat --continue`` does), without ``N`` its latest
turn. It shows what it would do and asks; ``--yes`` does not ask, ``--dry-run`` only shows.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

from codebot_mcp.cli import render
from codebot_mcp.cli.runtime import Globals, load_effective
from codebot_mcp.core.errors import CodebotError, ExitCode, UsageError

if TYPE_CHECKING:
    from codebot_mcp.core.agent.history import SavedSession
    from codebot_mcp.core.checkpoints.turns import Checkpoints, Plan


app = typer.Typer()
"""Holds ``rewind``; :mod:`cli.app` adds it to the root."""


@app.command("rewind")
def rewind_command(
    ctx: typer.Context,
    number: Annotated[
        int | None,
        typer.Argument(
            metavar="[N]",
            help="Restore the files to before turn N (default: the session's latest turn).",
            show_default=False,
        ),
    ] = None,
    session: Annotated[
        str | None,
        typer.Option(
            "--session",
            metavar="ID",
            help="The session (an ID or a unique prefix); default: the latest of this project.",
        ),
    ] = None,
    list_: Annotated[
        bool, typer.Option("--list", help="List the turns and the files each changed.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would be restored; change nothing.")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Restore without asking.")] = False,
    conversation: Annotated[
        bool,
        typer.Option(
            "--conversation",
            help="Also take the conversation back to before turn N (what --continue resumes).",
        ),
    ] = False,
) -> int:
    """Restore the files a session's turns changed (edit, write and bash alike) to before turn N.

    Files the turns created are removed, files they deleted come back; files no turn
    touched, and gitignored files, are left alone. Exit 0 restored (or listed, or a dry
    run), 1 nothing to rewind, declined, or a file could not be restored, 2 usage (no such
    session or turn, no terminal to ask), 3 settings error.
    """
    from codebot_mcp.core.agent import history
    from codebot_mcp.core.checkpoints import checkpointing
    from codebot_mcp.core.checkpoints.turns import Checkpoints, RewindError

    globals_: Globals = ctx.obj
    if number is not None and number < 1:
        raise UsageError(f"turn {number}: turns count from 1", hint="Pass N >= 1, or --list.")
    # An untrusted project's own 'checkpoints' limits do not apply (trust applied once).
    settings = load_effective(globals_, warn=False).settings
    project = settings.project_root or globals_.cwd
    saved = history.find(project, session)
    config = checkpointing.of(settings)
    checkpoints = Checkpoints(
        project,
        saved.id,
        max_files=config.max_files,
        max_bytes=config.max_bytes,
        scrub=render.REDACTOR,
    )
    turns = checkpoints.turns()
    if not turns:
        off = "" if config.enabled else " ('checkpoints.enabled' is false in settings)"
        raise RewindError(
            f"session {saved.id} has no turns to rewind{off}",
            hint="Turns are recorded as codebot runs prompts; `codebot rewind --list "
            "--session ID` shows another session's.",
        )
    with _store_errors():
        if list_:
            return _list(checkpoints, saved)
        plan = checkpoints.plan(number if number is not None else turns[-1].number)
        return _rewind(checkpoints, saved, plan, dry_run=dry_run, yes=yes, talk=conversation)


@contextmanager
def _store_errors() -> Iterator[None]:
    """A damaged or unreadable store becomes a user-facing error (exit 1)."""
    from codebot_mcp.core.checkpoints.shadow import StoreError
    from codebot_mcp.core.checkpoints.turns import describe_error

    try:
        yield
    except StoreError as exc:
        raise describe_error(exc) from None


def _list(checkpoints: Checkpoints, saved: SavedSession) -> int:
    from codebot_mcp.cli.rewindview import turn_lines

    turns = checkpoints.turns()
    print(f"session {saved.id}: {len(turns)} turn{'s' if len(turns) != 1 else ''}")
    for line in turn_lines(checkpoints, turns):
        print(line)
    return ExitCode.OK


def _rewind(
    checkpoints: Checkpoints,
    saved: SavedSession,
    plan: Plan,
    *,
    dry_run: bool,
    yes: bool,
    talk: bool,
) -> int:
    from codebot_mcp.cli.rewindview import plan_lines, result_line
    from codebot_mcp.core.agent import history
    from codebot_mcp.core.checkpoints.turns import RewindError

    for line in plan_lines(plan):
        print(line)
    offset = plan.turn.conversation
    if talk:
        if offset is None:
            raise RewindError(
                f"turn {plan.turn.number} did not record where the conversation stood",
                hint="The session was not being saved then; rewind the files alone.",
            )
        print(f"  and the conversation, to before turn {plan.turn.number}")
    if not plan.actions and not talk:
        raise RewindError(
            f"nothing to rewind: the files are as they were before turn {plan.turn.number}",
            hint="`codebot rewind --list` shows what each turn changed.",
        )
    if dry_run:
        print("(dry run: nothing was changed)")
        return ExitCode.OK
    if not yes and not _confirm(plan.turn.number):
        render.warn("nothing was restored")
        return ExitCode.DECLINED
    restored = checkpoints.restore(plan) if plan.actions else None
    if talk and offset is not None:
        try:
            history.rewind(saved.path, offset)
        except OSError as exc:
            raise CodebotError(
                f"cannot rewind the conversation in {saved.path}: {exc.strerror or exc}",
                hint="Check that the file is writable.",
            ) from None
        print(f"conversation taken back to before turn {plan.turn.number}")
    if restored is None:
        return ExitCode.OK
    print(result_line(restored))
    for path, why in restored.failed:
        render.error_line(f"cannot restore {path}: {why}")
    if restored.failed:
        render.hint("The other files were restored; fix the cause and run the rewind again.")
        return ExitCode.TOOL_ERROR
    return ExitCode.OK


def _confirm(number: int) -> bool:
    if not sys.stdin.isatty():
        raise UsageError(
            "not restoring without confirmation: stdin is not a terminal",
            hint="Run it in a terminal, pass --yes to restore, or --dry-run to only look.",
        )
    from codebot_mcp.cli.repl.repl_keys import read_key

    try:
        answer = read_key(f"Restore to before turn {number}? [y/N] ", "yn", enter="n")
    except EOFError:
        answer = ""
    return answer == "y"
