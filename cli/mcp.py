"""``codebot mcp list|call``: parse, call into mcpbridge, render."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cli import completion, render, warm
from cli.runtime import (
    Globals,
    apply_trust,
    describe_settings_files,
    load_settings,
    open_manager,
    require_trusted,
    select_servers,
    with_timeout,
)
from core.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from core.servers import ServerConfig
    from core.tools import ToolResult


app = typer.Typer(
    help="Use MCP servers directly: list their tools, call one, check the configuration.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
"""The ``mcp`` group; :mod:`cli.app` adds it to the root as ``mcp``."""
mcp_app = app
"""The former name, kept while branches that register on it are in flight."""

ServerOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--server",
        "-s",
        metavar="NAME",
        help="Only this server (repeatable).",
        show_default=False,
        autocompletion=completion.server_names,
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


@app.command("list")
def list_command(
    ctx: typer.Context,
    server: ServerOpt = None,
    as_json: JsonOpt = False,
    schemas: Annotated[
        bool, typer.Option("--schemas", help="Show each tool's input schema.")
    ] = False,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout", metavar="SECONDS", help="Handshake timeout in seconds, per server."
        ),
    ] = None,
    no_warm: warm.NoWarmOpt = False,
) -> int:
    """List every configured server with its status and tools.

    Exit 0 when every selected server connected, 4 when any failed (the others are listed),
    2 for an unknown or disabled --server.
    """
    import anyio

    from mcpbridge import reaper

    reaper.allow()  # one-shot: results first, the servers' shutdown after
    globals_: Globals = ctx.obj
    settings, check = apply_trust(globals_, load_settings(globals_))
    servers = with_timeout(select_servers(settings, server), timeout)
    if not servers and not as_json:
        render.warn("no MCP servers are configured")
        render.hint(describe_settings_files(settings))
        return ExitCode.OK
    answer = None
    if not no_warm and timeout is None:
        payload = {"op": "list", "servers": list(servers), "schemas": schemas}
        answer = warm.ask_holder(settings, check, payload)
    if answer is not None and isinstance(answer.get("views"), list):
        code = _render_list(answer["views"], as_json, schemas)
    else:
        code = anyio.run(_list, servers, as_json, schemas)
    off = [c for c in servers.values() if server and not c.enabled]
    if off and code == ExitCode.OK:
        render.error_line(
            f"server '{off[0].name}' is disabled ('enabled': false in {off[0].source})"
        )
        render.hint(f"Enable it with `codebot mcp enable {off[0].name}`.")
        return ExitCode.USAGE
    return code


async def _list(servers: dict[str, ServerConfig], as_json: bool, schemas: bool) -> int:
    from mcpbridge import lite  # the hot path: no SDK import while every server is plain

    if lite.usable(servers):
        try:
            views = await lite.list_servers(servers, schemas=schemas)
        except lite.Fallback:
            pass
        else:
            return _render_list(views, as_json, schemas)
    async with open_manager(servers) as manager:
        from mcpbridge.report import status_view

        await manager.start_all()
        statuses = manager.status()
        views = [status_view(s, manager, schemas=schemas) for s in statuses]
    return _render_list(views, as_json, schemas)


def _render_list(views: list[dict[str, Any]], as_json: bool, schemas: bool) -> int:
    completion.remember_tools(views)
    failed = any(v["status"] == "failed" for v in views)
    if as_json:
        render.print_json({"servers": views})
    else:
        _print_servers(views, schemas)
    return ExitCode.SERVER if failed else ExitCode.OK


async def _call(config: ServerConfig, tool: str, arguments: dict[str, Any]) -> ToolResult:
    from mcpbridge import lite  # the hot path: no SDK import while the server is plain

    if lite.usable({config.name: config}):
        try:
            return await lite.call_tool(config, tool, arguments)
        except lite.Fallback:
            pass
    async with open_manager({config.name: config}) as manager:
        from mcpbridge.call import call_once

        return await call_once(manager, config, tool, arguments)


async def _batch(servers: dict[str, ServerConfig]) -> bool:
    import json

    def emit(answer: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(answer, ensure_ascii=False) + "\n")
        sys.stdout.flush()

    async def read_line() -> str:
        import anyio

        return await anyio.to_thread.run_sync(sys.stdin.readline)

    async with open_manager(servers, prelaunch=False) as manager:
        from mcpbridge.call import call_batch

        return await call_batch(manager, servers, read_line, emit)


def _print_servers(views: list[dict[str, Any]], schemas: bool) -> None:
    if not views:
        render.warn("no MCP servers are configured")
        return
    marks = {"connected": ("✓", "32"), "disabled": ("-", "2")}
    for i, v in enumerate(views):
        mark, color = marks.get(v["status"], ("✗", "31"))
        facts = [v["transport"], v["status"]]
        if v["protocol_version"]:
            facts.append(f"protocol {v['protocol_version']}")
        if v["status"] == "connected":
            facts.append(f"{v['tool_count']} tool{'s' if v['tool_count'] != 1 else ''}")
        print(
            ("\n" if i else "") + f"{render.style(mark, color)} {render.style(v['name'], '1')}"
            f"  {' · '.join(facts)}"
        )
        source = v["source"] + (f" (overrides {v['overrides']})" if v["overrides"] else "")
        print(f"  from {source}")
        if v["failure"]:
            err = v["failure"]
            print(f"  {err['stage']} failed: {err['message']}")
            if err.get("hint"):
                print(f"  hint: {err['hint']}")
            if err.get("stderr_tail"):
                print("  server stderr (last lines):")
                for line in err["stderr_tail"].splitlines():
                    print(f"    {line}")
        rows = [
            [
                t["name"],
                t["original_name"] if t["name_reason"] else "",
                t["capability"],
                render.first_line(t["description"], 70),
            ]
            for t in v["tools"]
        ]
        if rows:
            print(render.table(rows, indent="  "))
        if schemas:
            import json

            for t in v["tools"]:
                print(f"\n  {t['name']} input schema:")
                for line in json.dumps(t["input_schema"], indent=2).splitlines():
                    print(f"    {line}")


@app.command("call")
def call_command(
    ctx: typer.Context,
    server: Annotated[
        str | None,
        typer.Argument(
            metavar="SERVER",
            help="The server's name in settings.",
            show_default=False,
            autocompletion=completion.server_names,
        ),
    ] = None,
    tool: Annotated[
        str | None,
        typer.Argument(
            metavar="TOOL",
            help="The tool's name (or its mcp__ name).",
            show_default=False,
            autocompletion=completion.tool_names,
        ),
    ] = None,
    args: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="ARGS...",
            help="A JSON object, @FILE, '-' (stdin) or key=value pairs.",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the whole result (content, isError, ...).")
    ] = False,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout", metavar="SECONDS", help="Seconds for the handshake and for the call."
        ),
    ] = None,
    batch: Annotated[
        bool,
        typer.Option(
            "--batch",
            help='Read one JSON request per line on stdin ({"server", "tool", "arguments"}); '
            "write one JSON result per line. Servers stay connected.",
        ),
    ] = False,
    no_warm: warm.NoWarmOpt = False,
) -> int:
    """Call one tool of one server and print its result.

    Exit 0 ok, 1 the tool reported an error, 2 bad arguments, 3 settings error,
    4 server unreachable. With --batch: 0 when every request succeeded, else 1.
    """
    import anyio

    from core import arguments, trust
    from core.servers import require_usable
    from mcpbridge import reaper

    reaper.allow()  # one-shot: results first, the servers' shutdown after

    globals_: Globals = ctx.obj
    settings = load_settings(globals_)
    if batch:
        if server or tool or args:
            raise UsageError(
                "--batch takes the requests on stdin, not SERVER TOOL on the command line",
                hint='Pipe lines like {"server": "s", "tool": "t", "arguments": {}} into it.',
            )
        settings, _ = apply_trust(globals_, settings)
        servers = with_timeout(settings.servers, timeout)
        ok = anyio.run(_batch, servers)
        return ExitCode.OK if ok else ExitCode.TOOL_ERROR
    if server is None or tool is None:
        raise UsageError(
            "missing SERVER and TOOL",
            hint="Usage: codebot mcp call SERVER TOOL [ARGS...] (or --batch).",
        )
    check = trust.check(settings, assume_trusted=globals_.trust_project)
    require_trusted(server, check, settings)
    if server in settings.shadowed and check.needs_trust:
        settings, _ = apply_trust(globals_, settings)  # the global entry stands in
    config = select_servers(settings, [server])[server]
    require_usable(config)
    arguments_ = arguments.parse(args or [], cwd=globals_.cwd)
    answer = None
    if not no_warm and timeout is None:
        payload = {
            "op": "call",
            "server": server,
            "tool": tool,
            "arguments": arguments_,
            "pairs": isinstance(arguments_, arguments.Pairs),  # typed by the schema over there
        }
        answer = warm.ask_holder(settings, check, payload)
    if answer is not None:
        from core.tools import ToolResult

        warm.raise_answer_error(answer)
        outcome = ToolResult(**answer["result"])
    else:
        config = with_timeout({server: config}, timeout)[server]
        outcome = anyio.run(_call, config, tool, arguments_)
    if as_json:
        render.print_json(outcome.data)
    elif outcome.text:
        sys.stdout.write(outcome.text if outcome.text.endswith("\n") else outcome.text + "\n")
    if outcome.is_error:
        render.error_line(f"tool '{tool}' on server '{server}' reported an error")
        return ExitCode.TOOL_ERROR
    return ExitCode.OK


def _add_groups() -> None:
    from cli import doctor, mcp_get, mcp_import, mcp_manage

    app.add_typer(doctor.app)
    app.add_typer(warm.app)
    app.add_typer(mcp_manage.app)
    app.add_typer(mcp_get.app)
    app.add_typer(mcp_import.app)


_add_groups()
