"""``codebot plugin install|update|list|remove|enable|disable`` and ``codebot plugin
marketplace add|list|update|remove``: Claude Code plugins and marketplaces.

The work is :mod:`core.plugins` (fetching, installing) and :mod:`core.config.plugins`
(reading, the record); this module shows what a plugin runs and asks before installing it.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from codebot_mcp.cli import render
from codebot_mcp.cli.commands.mcp.common import JsonOpt
from codebot_mcp.cli.runtime import Globals
from codebot_mcp.core.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from codebot_mcp.core.config.plugins.pluginstore import Installed
    from codebot_mcp.core.plugins.plugininstall import Prepared

app = typer.Typer(
    help="Claude Code plugins: commands, agents, skills, hooks and MCP servers in one folder.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
"""The ``plugin`` group; :mod:`cli.app` adds it to the root."""
market_app = typer.Typer(
    help="Plugin marketplaces: a folder, a git repository or a URL holding marketplace.json.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(market_app, name="marketplace")


class Scope(StrEnum):
    """Where an installed plugin loads."""

    USER = "user"
    PROJECT = "project"


YesOpt = Annotated[
    bool,
    typer.Option(
        "--yes", "-y", help="Install without asking (review what it runs first; for scripts)."
    ),
]
ScopeOpt = Annotated[
    Scope,
    typer.Option(
        "--scope",
        "-s",
        help="user: in every session (default); project: only in this project.",
        case_sensitive=False,
    ),
]


def _safe(text: object) -> str:
    return render.safe(str(text), one_line=True)


def _components(prepared: Prepared) -> list[str]:
    from codebot_mcp.core.config.plugins.load import server_name

    plugin = prepared.plugin
    out: list[str] = []
    commands: list[str] = []
    for folder in plugin.commands:
        files = [folder] if folder.is_file() else sorted(folder.rglob("*.md"))
        for path in files:
            rel = (
                path.relative_to(folder).with_suffix("")
                if folder.is_dir()
                else path.with_suffix("")
            )
            name = ":".join(rel.parts) if folder.is_dir() else path.stem
            commands.append(f"/{plugin.name}:{name}")
    agents = [
        f"{plugin.name}:{p.stem}"
        for folder in plugin.agents
        for p in ([folder] if folder.is_file() else sorted(folder.glob("*.md")))
    ]
    skills = [
        p.parent.name
        for folder in plugin.skills
        for p in (
            [folder / "SKILL.md"]
            if (folder / "SKILL.md").is_file()
            else sorted(folder.glob("*/SKILL.md"))
        )
    ]
    servers = [server_name(plugin.name, s) for _src, table in plugin.servers for s in table]
    hooks = sum(1 for key in prepared.runs if key.startswith("hook "))
    for label, items in (
        ("commands", commands),
        ("agents", agents),
        ("skills", skills),
        ("MCP servers", servers),
    ):
        if items:
            out.append(f"{label}: {', '.join(_safe(i) for i in items)}")
    if hooks:
        out.append(f"hooks: {hooks}")
    return out


def _show(prepared: Prepared) -> None:
    plugin = prepared.plugin
    version = f" {plugin.version}" if plugin.version else ""
    commit = f" (commit {prepared.commit[:12]})" if prepared.commit else ""
    print(f"plugin {_safe(plugin.name)}{_safe(version)} from {_safe(prepared.source)}{commit}")
    if plugin.description:
        print(f"  {_safe(plugin.description)}")
    for line in _components(prepared):
        print(f"  {line}")
    for warning in plugin.warnings:
        render.warn(warning)
    if prepared.previous is not None and prepared.source_changed:
        render.warn(
            f"this replaces plugin '{_safe(plugin.name)}' installed from "
            f"{_safe(prepared.previous.source)}"
        )
    if prepared.previous is not None and prepared.changes:
        print("This update changes what the plugin runs:")
        for line in prepared.changes:
            print(f"  {_safe(line)}")
    elif prepared.runs:
        print("It runs:")
        for key, what in prepared.runs.items():
            print(f"  {_safe(key)}: {_safe(what)}")
    else:
        print("It runs nothing (no hooks, servers, command lines or scripts).")


def _ask(question: str) -> bool:
    from codebot_mcp.cli.repl.repl_keys import read_key

    try:
        return read_key(f"{question} [y/N] ", "yn", enter="n") == "y"
    except EOFError:
        return False


def _consent(prepared: Prepared, yes: bool, verb: str) -> bool:
    """Whether to go on: --yes, or a y on a terminal; refuses without a terminal."""
    if yes or not prepared.needs_consent:
        return True
    if not sys.stdin.isatty():
        raise UsageError(
            f"not {verb} plugin '{prepared.plugin.name}' without confirmation: stdin is not a "
            "terminal, and the plugin runs the commands shown above",
            hint="Run it in a terminal to review and answer, or pass --yes once you have "
            "reviewed what it runs.",
        )
    what = "Install" if verb == "installing" else "Update"
    return _ask(f"{what} plugin '{_safe(prepared.plugin.name)}' and let it run these?")


def _install(globals_: Globals, spec: str, yes: bool, scope: Scope, verb: str) -> int:
    from codebot_mcp.core.plugins import plugininstall as install

    if scope is Scope.PROJECT:
        from codebot_mcp.core.config import discovery

        project = discovery.project_root(globals_.cwd)
        if project is None:
            raise UsageError(
                f"--scope project: {globals_.cwd} is not inside a project (no .git, .codebot "
                "or .claude found)",
                hint="Run it inside the project, or install with --scope user.",
            )
    else:
        project = None
    prepared = install.prepare(spec, globals_.cwd)
    try:
        _show(prepared)
        if prepared.previous is not None and not prepared.needs_consent:
            print("What it runs is unchanged.")
        if not _consent(prepared, yes, verb):
            render.warn(
                f"plugin '{prepared.plugin.name}' not {verb.replace('ing', 'ed')}; nothing changed"
            )
            return ExitCode.DECLINED
        installed = install.commit(prepared, scope=scope.value, project=project)
    finally:
        prepared.discard()
    done = "updated" if prepared.previous is not None else "installed"
    state = "" if installed.enabled else " (disabled: `codebot plugin enable` turns it on)"
    print(f"{done} plugin '{_safe(installed.name)}' in {_safe(installed.path)}{state}")
    return ExitCode.OK


@app.command("install")
def install_command(
    ctx: typer.Context,
    spec: Annotated[
        str,
        typer.Argument(
            metavar="PATH|GIT-URL|NAME@MARKETPLACE",
            help="A plugin folder, a git URL (#ref for a branch or tag), or NAME@MARKETPLACE.",
        ),
    ],
    yes: YesOpt = False,
    scope: ScopeOpt = Scope.USER,
) -> int:
    """Install a plugin: show its commands, agents, skills, and everything it runs (hooks, MCP
    servers, !`cmd` lines, scripts), then ask. Installing one already installed updates it,
    and asks again when what it runs changed.

    Exit 0 installed, 1 declined or the source could not be fetched, 2 bad arguments or no
    terminal to ask on (pass --yes), 3 the plugin's files are wrong (the message names the
    file and key).
    """
    return _install(ctx.obj, spec, yes, scope, "installing")


@app.command("update")
def update_command(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="An installed plugin.")],
    yes: YesOpt = False,
) -> int:
    """Fetch a plugin again from where it came from (its marketplace is fetched first); asks
    again when what it runs changed."""
    from codebot_mcp.core.plugins import plugininstall as install

    installed = install.get(name)
    scope = Scope(installed.scope)
    return _install(ctx.obj, install.update_spec(installed), yes, scope, "updating")


def _row(installed: Installed) -> dict[str, Any]:
    return {
        "name": installed.name,
        "version": installed.version,
        "enabled": installed.enabled,
        "scope": installed.scope,
        "project": str(installed.project) if installed.project else None,
        "source": installed.source,
        "marketplace": installed.marketplace,
        "commit": installed.commit,
        "digest": installed.digest,
        "path": str(installed.path),
        "installed_at": installed.installed_at,
        "runs": dict(installed.runs),
    }


@app.command("list")
def list_command(as_json: JsonOpt = False) -> int:
    """List installed plugins: version, enabled, scope, where they came from."""
    from codebot_mcp.core.config.plugins import pluginstore as store

    record = store.read()
    rows = [_row(p) for p in record.plugins.values()]
    if as_json:
        render.print_json({"plugins": rows})
        return ExitCode.OK
    if not rows:
        print("No plugins installed (codebot plugin install PATH|GIT-URL|NAME@MARKETPLACE).")
        return ExitCode.OK
    table = [["NAME", "VERSION", "STATE", "SCOPE", "SOURCE"]]
    for row in rows:
        source = f"{row['name']}@{row['marketplace']}" if row["marketplace"] else row["source"]
        if row["commit"]:
            source += f" ({row['commit'][:12]})"
        table.append(
            [
                _safe(row["name"]),
                _safe(row["version"] or "-"),
                ("enabled" if row["enabled"] else "disabled")
                + ("" if Path(row["path"]).is_dir() else " (copy missing: reinstall)"),
                row["scope"] + (f" {row['project']}" if row["project"] else ""),
                _safe(source),
            ]
        )
    print(render.table(table).rstrip("\n"))
    return ExitCode.OK


@app.command("remove")
def remove_command(name: Annotated[str, typer.Argument(help="An installed plugin.")]) -> int:
    """Uninstall a plugin (its cached copy is deleted; its data folder is kept)."""
    from codebot_mcp.core.plugins import plugininstall as install

    installed = install.remove(name)
    print(f"removed plugin '{_safe(installed.name)}'")
    return ExitCode.OK


@app.command("enable")
def enable_command(name: Annotated[str, typer.Argument(help="An installed plugin.")]) -> int:
    """Load a disabled plugin again in new sessions."""
    from codebot_mcp.core.plugins import plugininstall as install

    install.set_enabled(name, True)
    print(f"enabled plugin '{_safe(name)}'")
    return ExitCode.OK


@app.command("disable")
def disable_command(name: Annotated[str, typer.Argument(help="An installed plugin.")]) -> int:
    """Keep a plugin installed but load none of it (commands, agents, skills, hooks,
    servers)."""
    from codebot_mcp.core.plugins import plugininstall as install

    install.set_enabled(name, False)
    print(f"disabled plugin '{_safe(name)}'")
    return ExitCode.OK


@market_app.command("add")
def market_add(
    ctx: typer.Context,
    source: Annotated[
        str,
        typer.Argument(
            metavar="SOURCE",
            help="A folder, a git URL (#ref), owner/repo (GitHub), or a marketplace.json URL.",
        ),
    ],
) -> int:
    """Add a marketplace; its plugins install as NAME@MARKETPLACE."""
    from codebot_mcp.core.plugins import marketplace

    globals_: Globals = ctx.obj
    market, catalog = marketplace.add(source, globals_.cwd)
    names = ", ".join(_safe(n) for n in catalog.plugins) or "none"
    print(f"added marketplace '{_safe(market.name)}' ({market.kind}); plugins: {names}")
    return ExitCode.OK


@market_app.command("list")
def market_list(as_json: JsonOpt = False) -> int:
    """List the added marketplaces and their plugins."""
    from codebot_mcp.core.config.plugins import pluginstore as store
    from codebot_mcp.core.plugins import marketplace

    rows: list[dict[str, Any]] = []
    for market in store.read().marketplaces.values():
        row: dict[str, Any] = {**market.to_json(), "name": market.name, "plugins": None}
        try:
            catalog = marketplace.catalog_of(market)
            row["plugins"] = [
                {"name": n, "version": e.get("version"), "description": e.get("description")}
                for n, e in catalog.plugins.items()
            ]
        except UsageError as exc:
            row["error"] = exc.message
        except Exception as exc:  # boundary: one broken marketplace does not hide the others
            row["error"] = str(exc)
        rows.append(row)
    if as_json:
        render.print_json({"marketplaces": rows})
        return ExitCode.OK
    if not rows:
        print("No marketplaces added (codebot plugin marketplace add SOURCE).")
        return ExitCode.OK
    for row in rows:
        print(f"{_safe(row['name'])}  ({row['kind']}: {_safe(row['source'])})")
        if row.get("error"):
            render.warn(f"marketplace '{row['name']}': {row['error']}")
        for plugin in row["plugins"] or []:
            version = f" {plugin['version']}" if plugin["version"] else ""
            about = f"  {plugin['description']}" if plugin["description"] else ""
            print(f"  {_safe(plugin['name'])}{_safe(version)}{_safe(about)}")
    return ExitCode.OK


@market_app.command("update")
def market_update(
    name: Annotated[str | None, typer.Argument(help="A marketplace (default: every one).")] = None,
) -> int:
    """Fetch a marketplace again (installed plugins are updated by `codebot plugin update`)."""
    from codebot_mcp.core.config.plugins import pluginstore as store
    from codebot_mcp.core.plugins import marketplace

    names = [name] if name else list(store.read().marketplaces)
    for one in names:
        market, catalog = marketplace.update(one)
        print(f"updated marketplace '{_safe(market.name)}'; plugins: {', '.join(catalog.plugins)}")
    return ExitCode.OK


@market_app.command("remove")
def market_remove(name: Annotated[str, typer.Argument(help="A marketplace.")]) -> int:
    """Forget a marketplace (plugins installed from it stay installed)."""
    from codebot_mcp.core.plugins import marketplace

    market = marketplace.remove(name)
    print(f"removed marketplace '{_safe(market.name)}'")
    return ExitCode.OK
