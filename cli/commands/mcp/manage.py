"""``codebot mcp add|add-json|remove|get|enable|disable``: edit server entries from the shell."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from codebot_mcp.cli import render
from codebot_mcp.cli.commands import shell_completion as completion
from codebot_mcp.cli.runtime import Globals, load_unfiltered_settings
from codebot_mcp.core.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from codebot_mcp.core.config.serveredit import Edit
    from codebot_mcp.core.config.servers import ServerConfig
    from codebot_mcp.core.config.settings import Settings


class ScopeChoice(StrEnum):
    """Which settings file a command writes."""

    GLOBAL = "global"
    PROJECT = "project"


class TransportChoice(StrEnum):
    """``--transport``: stdio (a command) or http (a Streamable HTTP URL)."""

    STDIO = "stdio"
    HTTP = "http"
    STREAMABLE_HTTP = "streamable-http"


NameArg = Annotated[
    str,
    typer.Argument(
        metavar="NAME",
        help="The server's name in settings.",
        show_default=False,
        autocompletion=completion.server_names,
    ),
]
ScopeOpt = Annotated[
    ScopeChoice,
    typer.Option(
        "--scope",
        metavar="global|project",
        help="global: $CODEBOT_HOME/settings.json (yours, always trusted); project: the "
        "project's .codebot/settings.json.",
    ),
]
OptionalScopeOpt = Annotated[
    ScopeChoice | None,
    typer.Option(
        "--scope",
        metavar="global|project",
        help="The file to change (default: the one that defines NAME).",
        show_default=False,
    ),
]
ForceOpt = Annotated[bool, typer.Option("--force", help="Replace an entry of the same name.")]


app = typer.Typer()
"""Holds ``add``, ``add-json``, ``remove``, ``get``, ``enable``, ``disable``;
:mod:`cli.commands.mcp.group` adds them to the ``mcp`` group."""


@app.command("add")
def add_command(
    ctx: typer.Context,
    name: NameArg,
    command: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[-- COMMAND [ARGS]...]",
            help="The program to run and its arguments, after `--`.",
            show_default=False,
        ),
    ] = None,
    scope: ScopeOpt = ScopeChoice.GLOBAL,
    env: Annotated[
        list[str] | None,
        typer.Option(
            "--env", "-e", metavar="KEY=VALUE", help="Environment for the server (repeatable)."
        ),
    ] = None,
    header: Annotated[
        list[str] | None,
        typer.Option("--header", "-H", metavar="'KEY: VALUE'", help="HTTP header (repeatable)."),
    ] = None,
    url: Annotated[
        str | None,
        typer.Option(
            "--url", metavar="URL", help="A Streamable HTTP endpoint instead of a command."
        ),
    ] = None,
    transport: Annotated[
        TransportChoice | None,
        typer.Option(
            "--transport",
            "-t",
            metavar="stdio|http",
            help="stdio (default with a command) or http (default with --url).",
            show_default=False,
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", metavar="SECONDS", help="Handshake timeout.", show_default=False),
    ] = None,
    tool_timeout: Annotated[
        float | None,
        typer.Option(
            "--tool-timeout", metavar="SECONDS", help="Per-call timeout.", show_default=False
        ),
    ] = None,
    include_tools: Annotated[
        list[str] | None,
        typer.Option(
            "--include-tools", metavar="GLOB", help="Only tools matching GLOB (repeatable)."
        ),
    ] = None,
    exclude_tools: Annotated[
        list[str] | None,
        typer.Option(
            "--exclude-tools", metavar="GLOB", help="Hide tools matching GLOB (repeatable)."
        ),
    ] = None,
    disabled: Annotated[
        bool, typer.Option("--disabled", help='Write the entry with "enabled": false.')
    ] = False,
    force: ForceOpt = False,
) -> int:
    """Add a server: `codebot mcp add NAME -- COMMAND [ARGS]...` or `... NAME --url URL`.

    Secrets are refused in clear: write -e KEY='${KEY}' (and export KEY) instead.
    Exit 0 written, 2 bad arguments or NAME exists (use --force), 3 settings unreadable.
    """
    from codebot_mcp.core.config.serveredit import build_entry

    for flag, value in (("--timeout", timeout), ("--tool-timeout", tool_timeout)):
        if value is not None:
            check_seconds(flag, value)
    entry = build_entry(
        name,
        list(command or []),
        url=url,
        transport=transport.value if transport else None,
        env=env or [],
        headers=header or [],
        timeout=timeout,
        tool_timeout=tool_timeout,
        include_tools=include_tools or [],
        exclude_tools=exclude_tools or [],
        disabled=disabled,
    )
    return _write_entry(ctx.obj, name, entry, scope, force)


@app.command("add-json")
def add_json_command(
    ctx: typer.Context,
    name: NameArg,
    entry_json: Annotated[
        str,
        typer.Argument(
            metavar="JSON",
            help='The entry as JSON, e.g. \'{"command": "npx", "args": ["-y", "pkg"]}\'.',
            show_default=False,
        ),
    ],
    scope: ScopeOpt = ScopeChoice.GLOBAL,
    force: ForceOpt = False,
) -> int:
    """Add a server from its JSON entry (codebot's keys, or another client's: type "sse" is
    refused, "streamable-http" is taken as http).

    Exit 0 written, 2 invalid JSON or entry, 3 settings unreadable.
    """
    import json

    from codebot_mcp.core import jsonutil

    try:
        entry = jsonutil.loads(entry_json)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"invalid JSON for server '{name}': {exc.msg} at column {exc.colno}",
            hint='Quote it for the shell: \'{"command": "npx", "args": ["-y", "pkg"]}\'.',
        ) from None
    if not isinstance(entry, dict):
        raise UsageError(f"the entry for server '{name}' must be a JSON object")
    return _write_entry(ctx.obj, name, entry, scope, force)


def check_seconds(flag: str, value: float) -> None:
    """``--timeout`` and friends must be positive (usage error otherwise)."""
    import math

    if not math.isfinite(value) or value <= 0:
        raise UsageError(
            f"{flag} {value:g}: must be a positive number of seconds",
            hint=f"Pass e.g. {flag} 30.",
        )


def _write_entry(
    globals_: Globals, name: str, entry: dict[str, Any], scope: ScopeChoice, force: bool
) -> int:
    from codebot_mcp.core.config import serveredit as settings_edit

    warn_settings(globals_)
    path = settings_edit.settings_file(scope.value, globals_.cwd)  # type: ignore[arg-type]
    with keep_trust(globals_, path):
        edit = settings_edit.add_server(path, name, entry, force=force)
    _report(edit, f"added server '{name}'")
    if scope is ScopeChoice.PROJECT and not _trusted_after(globals_):
        render.warn(
            f"'{name}' is in the project file, which is not trusted: run `codebot trust` "
            "to start its servers"
        )
    return ExitCode.OK


@app.command("remove")
def remove_command(ctx: typer.Context, name: NameArg, scope: OptionalScopeOpt = None) -> int:
    """Remove a server's entry from the settings file that defines it.

    Exit 0 removed, 2 no such server (or defined in both files without --scope).
    """
    from codebot_mcp.core.config import serveredit as settings_edit

    globals_: Globals = ctx.obj
    path = _defining_file(globals_, name, scope)
    with keep_trust(globals_, path):
        edit = settings_edit.remove_server(path, name)
    _report(edit, f"removed server '{name}'")
    return ExitCode.OK


@app.command("enable")
def enable_command(ctx: typer.Context, name: NameArg, scope: OptionalScopeOpt = None) -> int:
    """Enable a server (removes "enabled": false from its entry). Exit 0, or 2 unknown."""
    return _set_enabled(ctx.obj, name, scope, True)


@app.command("disable")
def disable_command(ctx: typer.Context, name: NameArg, scope: OptionalScopeOpt = None) -> int:
    """Disable a server without removing it ("enabled": false). Exit 0, or 2 unknown."""
    return _set_enabled(ctx.obj, name, scope, False)


def _set_enabled(globals_: Globals, name: str, scope: ScopeChoice | None, enabled: bool) -> int:
    from codebot_mcp.core.config import serveredit as settings_edit

    path = _defining_file(globals_, name, scope)
    with keep_trust(globals_, path):
        edit = settings_edit.set_enabled(path, name, enabled)
    _report(edit, f"{'enabled' if enabled else 'disabled'} server '{name}'")
    return ExitCode.OK


def warn_settings(globals_: Globals) -> None:
    """The unknown-key and milliseconds warnings every command gives, for the commands that
    write settings without reading them first; an unreadable file is left to the write,
    which names it (a broken project file must not block adding a global server)."""
    from codebot_mcp.core.errors import SettingsError

    try:
        load_unfiltered_settings(globals_)  # for its warnings only
    except SettingsError:
        pass


def known_server(settings: Settings, name: str) -> ServerConfig:
    if name not in settings.servers:
        from codebot_mcp.cli.runtime import describe_settings_files

        known = ", ".join(settings.servers) or "none"
        raise UsageError(
            f"unknown server '{name}' (configured: {known})",
            hint=describe_settings_files(settings),
        )
    return settings.servers[name]


def _defining_file(globals_: Globals, name: str, scope: ScopeChoice | None) -> Path:
    """The file to edit for ``name``: ``--scope``'s, else the one file that defines it."""
    from codebot_mcp.core.config import serveredit as settings_edit

    if scope is not None:
        return settings_edit.settings_file(scope.value, globals_.cwd)  # type: ignore[arg-type]
    settings = load_unfiltered_settings(globals_)  # editing: every file, trusted or not
    found = []
    codebot_project = settings_edit.settings_file("project", globals_.cwd)
    for path in (settings.global_file, codebot_project if codebot_project.exists() else None):
        if path is None:
            continue
        document = settings_edit.read_document(path)
        entries = document.get(settings_edit.servers_key(document))
        if isinstance(entries, dict) and name in entries:
            found.append(path)
    if not found:
        config = known_server(settings, name)  # raises: unknown server
        raise UsageError(
            f"server '{name}' is defined in {config.source}, which codebot does not edit",
            hint=f"Edit that file, or override the entry: codebot mcp add {name} --scope "
            "project ... (the project's .codebot/settings.json wins over .mcp.json).",
        )
    if len(found) > 1:
        raise UsageError(
            f"server '{name}' is defined in both {found[0]} and {found[1]}",
            hint="Pass --scope global or --scope project to say which one to change.",
        )
    return found[0]


class keep_trust:
    """Editing a trusted project file yourself keeps it trusted.

    The project's trust is a hash of its entries, so any edit would revoke it. When the
    project was trusted by a recorded decision (or had nothing to trust) before the edit, the
    edit is the user's own and trust is recorded again for the new entries; a project that was
    not trusted stays untrusted.
    """

    def __init__(self, globals_: Globals, path: Path) -> None:
        self.globals = globals_
        self.path = path
        self.keep = False

    def __enter__(self) -> None:
        from codebot_mcp.core.config import effective

        if self.path.resolve() == settings_edit_global().resolve():
            return
        try:
            loaded = effective.load(self.globals.cwd)
        except Exception:  # boundary: an unreadable file is reported by the edit itself
            return
        if loaded.settings.project_file is not None and loaded.settings.project_file != self.path:
            return
        result = loaded.trust
        self.keep = result.reason in ("recorded", "nothing to trust")

    def __exit__(self, *exc: object) -> None:
        if not self.keep or exc[0] is not None:
            return
        from codebot_mcp.core.config import effective, trust

        result = effective.load(self.globals.cwd).trust
        if result.servers or result.gated:
            trust.record(result)


def settings_edit_global() -> Path:
    from codebot_mcp.core.config import paths

    return paths.global_settings_path()


def _trusted_after(globals_: Globals) -> bool:
    from codebot_mcp.core.config import effective

    return not effective.load(globals_.cwd, assume_trusted=globals_.trust_project).trust.needs_trust


def _report(edit: Edit, what: str) -> None:
    created = (
        " (created it, mode 0600)"
        if edit.created and _is_private(edit.path)
        else (" (created it)" if edit.created else "")
    )
    print(f"{what} in {edit.path}{created}")


def _is_private(path: Path) -> bool:
    return path.stat().st_mode & 0o077 == 0
