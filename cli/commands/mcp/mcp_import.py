"""``codebot mcp import``: bring in the servers other MCP clients are configured with."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from codebot_mcp.cli import render
from codebot_mcp.cli.commands.mcp.manage import ScopeChoice
from codebot_mcp.cli.runtime import Globals
from codebot_mcp.core.errors import ExitCode, SettingsError


class Client(StrEnum):
    """The formats ``--from`` reads."""

    CLAUDE_CODE = "claude-code"
    CLAUDE_DESKTOP = "claude-desktop"
    CURSOR = "cursor"
    VSCODE = "vscode"
    GEMINI = "gemini"
    CODEX = "codex"


ImportScopeOpt = Annotated[
    ScopeChoice | None,
    typer.Option(
        "--scope",
        metavar="global|project",
        help="Write everything here (default: user-level configs to global, a "
        "repository's to project).",
        show_default=False,
    ),
]
DryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Show what would be imported; write nothing.")
]

app = typer.Typer()
"""Holds ``import``; :mod:`cli.commands.mcp.group` adds it to the ``mcp`` group."""

_MARKS = {"add": "+", "same": "=", "clash": "!", "duplicate": "!", "skip": "-"}


@app.command("import")
def import_command(
    ctx: typer.Context,
    clients: Annotated[
        list[Client] | None,
        typer.Option(
            "--from",
            metavar="CLIENT",
            help="claude-code, claude-desktop, cursor, vscode, gemini or codex (repeatable; "
            "default: all).",
            show_default=False,
        ),
    ] = None,
    scope: ImportScopeOpt = None,
    dry_run: DryRunOpt = False,
) -> int:
    """Import MCP servers from other clients' configuration files.

    Fields are translated (sse/streamable-http → http, ${env:VAR} → ${VAR}, milliseconds →
    seconds); secrets are never copied (they become ${VAR} references to export); a name
    that exists already is reported as a clash and left as it is.
    Exit 0 done, 1 no config found, 3 a config file cannot be read.
    """
    from codebot_mcp.cli.commands.mcp.manage import keep_trust, warn_settings
    from codebot_mcp.core.config.importers import plan as importer

    globals_: Globals = ctx.obj
    warn_settings(globals_)
    names = [c.value for c in clients] if clients else list(importer.FORMATS)
    result = importer.discover(names, globals_.cwd, Path.home())
    importer.decide(result, scope.value if scope else None, globals_.cwd)  # type: ignore[arg-type]
    for error in result.errors:
        render.error_line(error)
    if result.errors and not result.read:
        render.hint("Fix the file (or move it aside) and import again; --from picks clients.")
        return ExitCode.SETTINGS
    if not result.read:
        looked = ", ".join(dict.fromkeys(str(s.path) for s in result.looked))
        render.error_line(f"no {' or '.join(names)} configuration found")
        render.hint(f"Looked in: {looked}.")
        return ExitCode.TOOL_ERROR
    _print(result, dry_run)
    if not dry_run and result.count("add"):
        added = [p for p in result.servers if p.action == "add" and p.target]
        project = [p for p in added if p.target and p.target.resolve() != _global_file().resolve()]
        if project and not any(_from_repository(p) for p in project):
            with keep_trust(globals_, project[0].target):  # type: ignore[arg-type]
                importer.apply(result)
        else:
            # Entries from a repository's own files are a stranger's: importing them never
            # makes the project trusted (`codebot trust` shows them first).
            importer.apply(result)
        if project and _needs_trust(globals_):
            render.warn(
                f"the project file {project[0].target} is not trusted: run `codebot trust` to "
                "review and start its servers"
            )
    return ExitCode.SETTINGS if result.errors else ExitCode.OK


def _from_repository(planned: object) -> bool:
    """An entry read from a file in the repository (not one of your user-level files)."""
    from codebot_mcp.core.config.importers.plan import Planned

    assert isinstance(planned, Planned)
    source = planned.item.source
    return source.scope == "project" and source.section is None


def _needs_trust(globals_: Globals) -> bool:
    from codebot_mcp.core.config import effective

    return effective.load(globals_.cwd, assume_trusted=globals_.trust_project).trust.needs_trust


def _global_file() -> Path:
    from codebot_mcp.core.config import paths

    return paths.global_settings_path()


def _print(result: object, dry_run: bool) -> None:
    from codebot_mcp.core.config.importers.plan import ImportPlan
    from codebot_mcp.core.secrets.redact import redact_url

    assert isinstance(result, ImportPlan)
    current: tuple[str, Path, str | None] | None = None
    for planned in result.servers:
        item = planned.item
        key = (item.source.client, item.source.path, item.source.section)
        if key != current:
            current = key
            section = f" (project {item.source.section})" if item.source.section else ""
            print(f"{item.source.client}: {render.safe(f'{item.source.path}{section}')}")
        what = redact_url(
            item.entry.get("url")
            or " ".join([item.entry.get("command", ""), *item.entry.get("args", [])])
        )
        target = f" → {planned.target}" if planned.action == "add" and planned.target else ""
        name, shown = render.safe(item.name, one_line=True), render.safe(what, one_line=True)
        print(f"  {_MARKS[planned.action]} {name}  {shown}{render.safe(target)}")
        if planned.reason:
            print(f"      {planned.action}: {render.safe(planned.reason, one_line=True)}")
        for note in item.notes:
            print(f"      note: {render.safe(note, one_line=True)}")
    added, clashes = result.count("add"), result.count("clash") + result.count("duplicate")
    verb = "would import" if dry_run else "imported"
    print(
        f"{verb} {added} server{'s' if added != 1 else ''}; {result.count('same')} already "
        f"there, {clashes} clash{'es' if clashes != 1 else ''}, {result.count('skip')} skipped"
        + (" (dry run: nothing written)" if dry_run else "")
    )


__all__ = ["SettingsError", "app"]
