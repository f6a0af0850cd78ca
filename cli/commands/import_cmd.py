"""``codebot import claude`` (a whole Claude Code setup) and ``codebot import <client>`` (the
MCP servers of another client, as ``codebot mcp import --from <client>``)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from codebot_mcp.cli import render
from codebot_mcp.cli.commands.mcp.mcp_import import DryRunOpt, ImportScopeOpt
from codebot_mcp.cli.runtime import Globals
from codebot_mcp.core.errors import CodebotError, ExitCode, SettingsError

app = typer.Typer(
    help="Bring another tool's setup into codebot's own files.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
"""The ``import`` group; :mod:`cli.app` adds it to the root."""


class ClaudeScope(StrEnum):
    PROJECT = "project"
    USER = "user"
    GLOBAL = "global"
    """The same as ``user`` (``mcp import``'s word for your own settings)."""


MARKS = {
    "copy": "+",
    "translate": "~",
    "replace": "!",
    "same": "=",
    "kept": "=",
    "clash": "!",
    "skip": "-",
}


@app.command("claude")
def claude_command(
    ctx: typer.Context,
    user: Annotated[
        bool,
        typer.Option(
            "--user",
            help="Import your own ~/.claude setup (and ~/.claude.json servers) into ~/.codebot "
            "(the same as --scope user).",
        ),
    ] = False,
    scope: Annotated[
        ClaudeScope | None,
        typer.Option(
            "--scope",
            metavar="project|user",
            help="project (default): .claude/, .mcp.json, CLAUDE.md → .codebot/; user (or "
            "global): ~/.claude/ → ~/.codebot/.",
            show_default=False,
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the plan; write nothing.")
    ] = False,
    force: Annotated[
        bool,
        typer.Option("--force", help="Replace an existing entry or file of the same name."),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable report.")] = False,
) -> int:
    """Copy a Claude Code setup into codebot's own files, and say what was not translated.

    Reads hooks, permissions and sandbox.network.allowedDomains from .claude/settings.json and
    .claude/settings.local.json, agents, commands and skills from .claude/, servers from
    .mcp.json, and CLAUDE.md (with --user: ~/.claude/ or $CLAUDE_CONFIG_DIR, and
    ~/.claude.json). Writes .codebot/settings.json
    (merged: an entry of the same name is kept unless --force) and .codebot/agents|commands|
    skills/. Every item is listed: copied, translated (how), already there, clash, skipped
    (why). A second run changes nothing.
    Exit 0 done, 1 no Claude Code setup found, 2 bad options, 3 a file cannot be read or
    written.
    """
    from codebot_mcp.cli.commands.mcp.manage import warn_settings
    from codebot_mcp.core.config.importers import claude_setup
    from codebot_mcp.core.config.importers.claude_setup import WRITES
    from codebot_mcp.core.errors import UsageError

    globals_: Globals = ctx.obj
    if user and scope is ClaudeScope.PROJECT:
        raise UsageError("--user and --scope project contradict each other", hint="Pick one.")
    chosen = "project" if not user and scope in (None, ClaudeScope.PROJECT) else "user"
    warn_settings(globals_)
    aliases = _aliases(globals_)
    try:
        setup = claude_setup.plan(chosen, globals_.cwd, force=force, aliases=aliases)  # type: ignore[arg-type]
    except CodebotError as exc:
        if not as_json:
            raise
        render.error(exc)  # stderr as always; stdout still holds the document
        render.print_json(
            {"scope": chosen, "dry_run": dry_run, "items": [], "written": [],
             "errors": [exc.message], "exit_code": int(exc.exit_code)}
        )  # fmt: skip
        return exc.exit_code
    written: list[str] = []
    error: SettingsError | None = None
    if not dry_run and setup.items:
        try:
            written = [str(p) for p in claude_setup.apply(setup)]
        except SettingsError as exc:
            error = exc
    code = _exit_code(setup, error)
    if as_json:
        render.print_json(
            {
                "scope": chosen,
                "dry_run": dry_run,
                "source": str(setup.source_dir),
                "target": str(setup.target_dir),
                "settings": str(setup.settings_path),
                "items": [i.as_json() for i in setup.items],
                "counts": {a: setup.count(a) for a in claude_setup.ACTIONS},
                "written": written,
                "errors": [*setup.errors, *([error.message] if error else [])],
                "exit_code": int(code),
            }
        )
        return code
    for message in setup.errors:
        render.error_line(message)
    if error is not None:
        render.error(error)
    if not setup.items:
        if not setup.errors:
            looked = ", ".join(str(p) for p in dict.fromkeys(setup.looked))
            render.error_line("no Claude Code setup found")
            render.hint(
                f"Looked in: {looked}." + ("" if chosen == "user" else " --user imports yours.")
            )
        return code
    _print(setup, dry_run)
    if not dry_run and any(i.action in WRITES for i in setup.items):
        render.hint(
            f"codebot also reads {setup.source_dir} as it is: once you have checked the "
            "import, move it aside so its hooks do not run twice."
        )
    if not dry_run and chosen == "project" and setup.settings_changed and _needs_trust(globals_):
        render.warn(
            f"{setup.settings_path} now holds hooks or servers that need trust: run `codebot "
            "trust` to review them"
        )
    return code


def _exit_code(setup: object, error: SettingsError | None) -> ExitCode:
    from codebot_mcp.core.config.importers.claude_setup import Setup

    assert isinstance(setup, Setup)
    if error is not None or setup.errors:
        return ExitCode.SETTINGS
    if not setup.items:
        return ExitCode.TOOL_ERROR
    return ExitCode.OK


def _aliases(globals_: Globals) -> dict[str, str]:
    """``model_aliases`` as the session would use them (a project's only once trusted)."""
    from codebot_mcp.core.config import effective

    try:
        loaded = effective.load(globals_.cwd, assume_trusted=globals_.trust_project)
    except SettingsError:
        return {}
    return dict(loaded.settings.model_aliases)


def _needs_trust(globals_: Globals) -> bool:
    from codebot_mcp.core.config import effective

    return effective.load(globals_.cwd, assume_trusted=globals_.trust_project).trust.needs_trust


def _print(setup: object, dry_run: bool) -> None:
    from codebot_mcp.core.config.importers.claude_setup import WRITES, Setup

    assert isinstance(setup, Setup)
    print(f"Claude Code setup: {render.safe(setup.source_dir)} → {render.safe(setup.target_dir)}")
    for item in setup.items:
        target = ""
        if item.target is not None and item.action in WRITES:
            target = f" → {render.safe(item.target)}"
        name = render.safe(item.name, one_line=True)
        print(f"  {MARKS[item.action]} {item.kind} {name}{target}")
        if item.reason:
            print(f"      {item.action}: {render.safe(item.reason, one_line=True)}")
        for note in item.notes:
            print(f"      translated: {render.safe(note, one_line=True)}")
    copied, translated = setup.count("copy"), setup.count("translate") + setup.count("replace")
    verb = "would import" if dry_run else "imported"
    print(
        f"{verb} {copied + translated} item{'s' if copied + translated != 1 else ''} "
        f"({copied} as is, {translated} translated); "
        f"{setup.count('same') + setup.count('kept')} already there, "
        f"{setup.count('clash')} clash{'es' if setup.count('clash') != 1 else ''}, "
        f"{setup.count('skip')} skipped" + (" (dry run: nothing written)" if dry_run else "")
    )


def _servers_from(client: str, help_text: str) -> None:
    """``codebot import <client>``: the MCP servers of that client (``mcp import --from``)."""

    def command(
        ctx: typer.Context, scope: ImportScopeOpt = None, dry_run: DryRunOpt = False
    ) -> int:
        from codebot_mcp.cli.commands.mcp.mcp_import import Client, import_command

        return import_command(ctx, [Client(client)], scope, dry_run)

    command.__doc__ = (
        f"Import the MCP servers {help_text} is configured with (as `codebot mcp import "
        f"--from {client}`). Exit 0 done, 1 no config found, 3 a config file cannot be read."
    )
    command.__name__ = f"import_{client.replace('-', '_')}"
    app.command(client)(command)


for _client, _text in (
    ("claude-desktop", "Claude Desktop"),
    ("cursor", "Cursor"),
    ("vscode", "VS Code"),
    ("gemini", "Gemini CLI"),
    ("codex", "Codex"),
):
    _servers_from(_client, _text)
