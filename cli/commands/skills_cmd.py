"""``codebot skills list|show``: the skills the model may load, and one loaded as it would.

Both read the local skills folders and start the configured MCP servers (trusted ones only),
so the served skills are listed too. ``list`` reads no file of a served skill (``skills/list``
only), and of a local skill only its ``SKILL.md``. ``show`` loads one skill exactly as
the ``skill`` tool does: every file verified against its entry before anything of it is used;
the first failure stops the load (exit 1) naming the file and what did not match.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Annotated

import typer

from codebot_mcp.cli import render, signals
from codebot_mcp.cli.commands.mcp.common import JsonOpt, TimeoutOpt, servers_for, started
from codebot_mcp.cli.runtime import Globals, open_manager
from codebot_mcp.core.errors import ExitCode

if TYPE_CHECKING:
    from codebot_mcp.core.config.servers import ServerConfig
    from codebot_mcp.core.config.settings import Settings
    from codebot_mcp.core.skills.skillcatalog import SkillCatalog
    from codebot_mcp.core.skills.skillload import LoadedSkill, SkillLoader

app = typer.Typer(
    help="Skills: folders holding a SKILL.md, and skills served by MCP servers.",
    no_args_is_help=True,
)
"""The ``skills`` group; :mod:`cli.app` adds it to the root."""


@asynccontextmanager
async def opened(
    globals_: Globals, settings: Settings, servers: dict[str, ServerConfig]
) -> AsyncIterator[tuple[SkillCatalog, SkillLoader, list[str]]]:
    """The catalog with every server started and its skills listed (entries only), the
    loader, and the servers that failed to start."""
    from codebot_mcp.cli.extensions import skill_catalog  # deferred: `--help` stays light

    if not servers:
        catalog, loader = skill_catalog(settings, None)
        yield catalog, loader, []
        return
    from codebot_mcp.cli.answers import policy

    async with open_manager(servers, agent=policy(settings, None, None)) as manager:
        failed = await started(manager, list(servers), None)
        catalog, loader = skill_catalog(settings, manager)
        await catalog.refresh()
        yield catalog, loader, failed


@app.command("list")
def list_command(ctx: typer.Context, as_json: JsonOpt = False, timeout: TimeoutOpt = None) -> int:
    """List every skill with its origin: a local folder, or a server and a URI.

    Reads no file of a served skill, and of a local skill only its SKILL.md.
    Exit 0 ok, 3 settings error, 4 a server failed (the others' skills are listed).
    """

    globals_: Globals = ctx.obj
    settings, servers = servers_for(globals_, None, timeout)
    from codebot_mcp.cli.skillview import catalog_text, catalog_view

    async def run() -> int:
        async with opened(globals_, settings, servers) as (catalog, _, failed):
            if as_json:
                view = catalog_view(catalog)
                view["failed"] = {
                    **dict.fromkeys(failed, "the server failed to start"),
                    **view["failed"],
                }
                render.print_json(view)
            else:
                print(catalog_text(catalog))
            bad = failed or catalog.listing.failures
            return ExitCode.SERVER if bad else ExitCode.OK

    return signals.run(run)


@app.command("show")
def show_command(
    ctx: typer.Context,
    name: Annotated[
        str,
        typer.Argument(
            metavar="NAME", help="The skill: NAME, or SERVER:NAME to pick among duplicates."
        ),
    ],
    files: Annotated[
        bool, typer.Option("--files", help="Also fetch (and verify) every file it lists.")
    ] = False,
    as_json: JsonOpt = False,
    timeout: TimeoutOpt = None,
) -> int:
    """Load one skill as the model would and print its body (and with --files its files).

    A served skill's files are verified against its entry (size, digest, and for SKILL.md
    the front matter field by field) before anything of them is used; the first mismatch
    stops the load, names the file and what did not match, and nothing after it is fetched.
    Exit 0 ok, 1 verification failed, 2 no such skill (or ambiguous), 3 settings error,
    4 a server failed.
    """

    globals_: Globals = ctx.obj
    settings, servers = servers_for(globals_, None, timeout)

    async def run() -> LoadedSkill:
        async with opened(globals_, settings, servers) as (catalog, loader, _):
            skill = await catalog.resolve(name)
            return await loader.load(skill, all_files=files)

    loaded = signals.run(run)
    from codebot_mcp.cli.skillview import loaded_header, loaded_text, loaded_view

    if as_json:
        render.print_json(loaded_view(loaded, with_files=files))
    else:
        print(loaded_header(loaded), file=sys.stderr)
        print(loaded_text(loaded, with_files=files))
    return ExitCode.OK
