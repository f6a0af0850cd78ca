"""The Typer root: global options, and the one place that maps errors to exit codes."""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from cli import render
from cli._typer import HELP_OPTIONS, click_exceptions, light_option_parsing
from cli.runtime import Globals
from core import __version__
from core.errors import CodebotError, ExitCode, UsageError

app = typer.Typer(
    name="codebot",
    help="A terminal coding agent and MCP client: every MCP server's tools become local tools.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": HELP_OPTIONS},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"codebot {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    cwd: Annotated[
        str | None,
        typer.Option(
            "--cwd",
            metavar="DIR",
            help="Run as if started in DIR (finds DIR/.codebot/settings.json).",
        ),
    ] = None,
    debug: Annotated[
        bool, typer.Option("--debug", help="Show tracebacks and SDK logs (secrets stay redacted).")
    ] = False,
    trust_project: Annotated[
        bool,
        typer.Option(
            "--trust-project",
            help="Start the project's own MCP servers without recorded trust (this run only).",
        ),
    ] = False,
    _show_version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    directory = Path(cwd).expanduser() if cwd else Path.cwd()
    if not directory.is_dir():
        raise UsageError(
            f"--cwd {directory}: no such directory", hint="Pass an existing directory to --cwd."
        )
    ctx.obj = Globals(cwd=directory.resolve(), debug=debug, trust_project=trust_project)
    render.setup_logging(debug=debug)


def _register() -> None:
    """Every command module has an ``app``; groups get a name, single commands merge in."""
    from cli import chat, mcp, trust

    app.add_typer(mcp.app, name="mcp")
    app.add_typer(trust.app)
    app.add_typer(chat.app)


_register()


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return the exit code (tests call this; ``main`` exits with it)."""
    command = typer.main.get_command(app)
    light_option_parsing(command)  # type: ignore[arg-type]
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        result = command.main(args=argv, prog_name="codebot", standalone_mode=False)
    except click_exceptions.UsageError as exc:
        exc.show()
        return ExitCode.USAGE
    except click_exceptions.ClickException as exc:
        exc.show()
        return exc.exit_code
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except (typer.Abort, KeyboardInterrupt):
        render.error_line("interrupted")
        return ExitCode.INTERRUPTED
    except CodebotError as exc:
        if debug:
            render.debug_traceback(exc)
        render.error(exc)
        return exc.exit_code
    return int(result) if isinstance(result, int) else ExitCode.OK


def main() -> NoReturn:
    """Console-script entry point."""
    from mcpbridge import reaper  # standard library only

    reaper.arm()  # one-shot commands may leave their servers' shutdown to a reaper
    code = run()
    if reaper.pending():
        # Results first: the output is complete; the reaper stops the servers after we exit.
        # os._exit: finalizers of the handed-off processes would otherwise kill them at once.
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        reaper.spawn()
        os._exit(code)
    # The SDKs leave a large heap; tearing it down through the collector costs 100-800 ms
    # at exit. Frozen objects are skipped: the process is ending anyway.
    gc.freeze()
    sys.exit(code)
