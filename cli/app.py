"""The Typer root: global options, and the one place that maps errors to exit codes."""

from __future__ import annotations

import importlib
import logging
import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from typer._click import exceptions as click_exceptions

from cli import render
from cli.runtime import Globals
from core.errors import CodebotError, ExitCode, UsageError

app = typer.Typer(
    name="codebot",
    help="A terminal coding agent and MCP client: every MCP server's tools become local tools.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"codebot {version('codebot')}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    cwd: Annotated[
        Path | None,
        typer.Option("--cwd", help="Run as if started in DIR (finds DIR/.codebot/settings.json)."),
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
    directory = (cwd or Path.cwd()).expanduser()
    if not directory.is_dir():
        raise UsageError(
            f"--cwd {directory}: no such directory", hint="Pass an existing directory to --cwd."
        )
    ctx.obj = Globals(cwd=directory.resolve(), debug=debug, trust_project=trust_project)
    if debug:
        render.setup_debug_logging()
    else:
        # Library warnings (the SDK logs transport trouble) must not reach the terminal;
        # codebot reports failures itself. --debug shows them.
        logging.getLogger().addHandler(logging.NullHandler())


def _register() -> None:
    from cli import mcp, trust

    app.add_typer(mcp.mcp_app, name="mcp")
    trust.register(app)
    try:
        chat = importlib.import_module("cli.chat")
    except ModuleNotFoundError:  # chat is being built; mcp commands work without it
        return
    chat.register(app)


_register()


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return the exit code (tests call this; ``main`` exits with it)."""
    command = typer.main.get_command(app)
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
            logging.getLogger("codebot").exception("error")
        render.error(exc)
        return exc.exit_code
    return int(result) if isinstance(result, int) else ExitCode.OK


def main() -> NoReturn:
    """Console-script entry point."""
    sys.exit(run())
