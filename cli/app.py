"""The Typer root: global options, and the one place that maps errors to exit codes."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from codebot_mcp.cli import render
from codebot_mcp.cli._typer import (
    HELP_OPTIONS,
    click_exceptions,
    hoist_global_options,
    light_option_parsing,
    optional_values,
    plain_metavars,
    pruned,
)
from codebot_mcp.cli.runtime import Globals
from codebot_mcp.core import __version__
from codebot_mcp.core.errors import CodebotError, ExitCode, UsageError

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


def _show_completion(value: str | None) -> None:
    if value is None:
        return
    from codebot_mcp.cli.commands import shell_completion as completion

    if value not in completion.SHELLS:
        raise typer.BadParameter(
            f"no completion for shell '{value}'; choose one of {', '.join(completion.SHELLS)}",
            param_hint="--show-completion",
        )
    typer.echo(completion.script(value))
    raise typer.Exit()


def _install_completion(value: bool) -> None:
    if not value:
        return
    from codebot_mcp.cli.commands import shell_completion as completion

    shell = completion.detect_shell()
    if shell is None:
        raise UsageError(
            "cannot tell your shell from $SHELL (bash, zsh and fish are supported)",
            hint="Print the script and source it yourself: "
            "codebot --show-completion bash > ~/.codebot-completion.sh",
        )
    path = completion.install(shell)
    typer.echo(f"{shell} completion installed in {path}; it takes effect in a new shell")
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
    model: Annotated[
        str | None,
        typer.Option(
            "--model", metavar="NAME", help="The model (chat, models).", show_default=False
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            metavar="URL",
            help="The OpenAI-compatible endpoint (chat, models).",
            show_default=False,
        ),
    ] = None,
    _show_completion: Annotated[
        str | None,
        typer.Option(
            "--show-completion",
            metavar="SHELL",
            callback=_show_completion,
            is_eager=True,
            expose_value=True,
            help="Print the completion script for SHELL (bash, zsh or fish).",
            show_default=False,
        ),
    ] = None,
    _install_completion: Annotated[
        bool,
        typer.Option(
            "--install-completion",
            callback=_install_completion,
            is_eager=True,
            help="Install completion for your shell ($SHELL: bash, zsh or fish).",
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
    ctx.obj = Globals(
        cwd=directory.resolve(),
        debug=debug,
        trust_project=trust_project,
        model=model,
        base_url=base_url,
    )
    render.setup_logging(debug=debug)


def _register() -> None:
    """Every command module has an ``app``; groups get a name, single commands merge in."""
    from codebot_mcp.cli.commands import (
        acp,
        chat,
        export,
        import_cmd,
        models,
        rewind_cmd,
        skills_cmd,
        trust_cmd,
    )
    from codebot_mcp.cli.commands.mcp import group as mcp

    app.add_typer(mcp.app, name="mcp")
    app.add_typer(import_cmd.app, name="import")
    app.add_typer(skills_cmd.app, name="skills")
    from codebot_mcp.cli.commands import plugin

    app.add_typer(plugin.app, name="plugin")
    app.add_typer(trust_cmd.app)
    app.add_typer(chat.app)
    app.add_typer(models.app)
    app.add_typer(rewind_cmd.app)
    app.add_typer(export.app)
    app.add_typer(acp.app)


_register()


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return the exit code (tests call this; ``main`` exits with it)."""
    argv = optional_values(list(sys.argv[1:] if argv is None else argv))
    command = typer.main.get_command(pruned(app, argv))
    light_option_parsing(command)  # type: ignore[arg-type]
    plain_metavars(command)  # type: ignore[arg-type]
    argv = hoist_global_options(argv, command)  # type: ignore[arg-type]
    debug = "--debug" in argv
    render.reset_warnings()
    if "_CODEBOT_COMPLETE" in os.environ:
        from codebot_mcp.cli.commands import shell_completion as completion

        completion.prepare()
    try:
        return _run(command, argv, debug)
    finally:
        render.reset_logging()


def _passthrough_hint(exc: Exception, argv: list[str]) -> str | None:
    """For an unknown option given to a command that passes arguments on (`mcp add NAME
    COMMAND...`, `mcp call SERVER TOOL ARGS...`): they belong after ``--``. Click alone says
    only "No such option: -y"."""
    if not isinstance(exc, click_exceptions.NoSuchOption) or exc.ctx is None or "--" in argv:
        return None
    command = exc.ctx.command
    variadic = [
        p
        for p in command.params
        if getattr(p, "param_type_name", "") == "argument" and getattr(p, "nargs", 1) == -1
    ]
    if not variadic:
        return None
    path = exc.ctx.command_path  # "codebot mcp add"
    option = exc.option_name
    name = exc.ctx.info_name
    after = argv[argv.index(name) + 1 :] if name in argv else []
    before = after[: after.index(option)] if option in after else after
    if not any(not t.startswith("-") for t in before):
        return None  # no argument yet: an option of codebot's own, mistyped
    if after[:2] and not any(t.startswith("-") for t in after[:2]):  # NAME COMMAND ...
        fixed = f"{path} {after[0]} -- {' '.join(after[1:])}"
        if "COMMAND" in (variadic[0].metavar or ""):
            return f"'{option}' is the server's, not codebot's: put its command after `--`: {fixed}"
    return f"'{option}' is not an option of `{path}`; to pass it on, put it after `--`."


def _run(command: Any, argv: list[str], debug: bool) -> int:
    try:
        result = command.main(args=argv, prog_name="codebot", standalone_mode=False)
    except click_exceptions.UsageError as exc:
        exc.show()
        passthrough = _passthrough_hint(exc, argv)
        if passthrough is not None:
            render.hint(passthrough)
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
    except Exception as exc:  # boundary: a bug; one line, the traceback only with --debug
        if debug:
            render.debug_traceback(exc)
        bug = CodebotError(
            f"unexpected error: {type(exc).__name__}: {exc}",
            hint="This is a bug in codebot; re-run with --debug for the traceback.",
        )
        render.error(bug)
        return ExitCode.TOOL_ERROR
    return int(result) if isinstance(result, int) else ExitCode.OK
