"""``codebot mcp list|call``: parse, call into mcpbridge, render."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any

import typer

from codebot_mcp.cli import render, signals, warm_client
from codebot_mcp.cli.answers import LazyModel, policy
from codebot_mcp.cli.commands import shell_completion as completion
from codebot_mcp.cli.commands.mcp import warm
from codebot_mcp.cli.commands.mcp.auth import LoginOpt
from codebot_mcp.cli.commands.mcp.common import (
    AllowDriftOpt,
    AllowSamplingOpt,
    ElicitOpt,
    JsonOpt,
    ServerOpt,
)
from codebot_mcp.cli.commands.mcp.views import print_servers
from codebot_mcp.cli.login import login_options
from codebot_mcp.cli.runtime import (
    Globals,
    describe_settings_files,
    load_effective,
    open_manager,
    require_trusted,
    select_servers,
    session_pins,
    with_timeout,
)
from codebot_mcp.cli.warm_client import print_outcome
from codebot_mcp.core.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from codebot_mcp.core.config.servers import ServerConfig
    from codebot_mcp.core.config.settings import Settings
    from codebot_mcp.core.tools.base import ToolResult
    from codebot_mcp.core.tools.useragent import Policy
    from codebot_mcp.mcpbridge.connection.manager import Manager
    from codebot_mcp.mcpbridge.connection.taskpolicy import TaskStatus
    from codebot_mcp.mcpbridge.tools.tool_pins import Pins
    from codebot_mcp.mcpbridge.transport.process import Prelaunched

    ServerRequestsFlags = tuple[Settings, str | None, list[str] | None]
    """The settings, --elicit and --allow-sampling: how servers' requests are answered."""


app = typer.Typer(
    help="Use MCP servers directly: list their tools, call one, check the configuration.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
"""The ``mcp`` group; :mod:`cli.app` adds it to the root as ``mcp``."""
"""The former name, kept while branches that register on it are in flight."""


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
    login: LoginOpt = False,
    show_all: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Also show app-only tools (MCP Apps), which are never offered to the model.",
        ),
    ] = False,
    allow_drift: AllowDriftOpt = False,
) -> int:
    """List every configured server with its status and tools.

    Tools a server marks app-only (MCP Apps: ``_meta.ui.visibility`` without "model") are
    never offered to the model; they are counted, and shown with --all.

    Exit 0 when every selected server connected, 4 when any failed, needs a login or is held
    back by .codebot/mcp-lock.json (the others are listed), 2 for an unknown or disabled
    --server.
    """

    globals_: Globals = ctx.obj
    loaded = load_effective(globals_)
    settings, check = loaded.settings, loaded.trust
    for name in server or []:
        require_trusted(name, check, settings)  # "not trusted" (3), as `mcp call` says
    servers = with_timeout(select_servers(settings, server), timeout)
    if not servers and not as_json:
        render.warn("no MCP servers are configured")
        render.hint(describe_settings_files(settings))
        return ExitCode.OK
    pins = session_pins(settings, allow_drift=allow_drift)
    answer = None
    if not no_warm and timeout is None and not login and not allow_drift:  # no browser there
        payload = {"op": "list", "servers": list(servers), "schemas": schemas, "all": show_all}
        answer = warm_client.ask_holder(settings, check, payload)
    if answer is not None and isinstance(answer.get("views"), list):
        code = _render_list(answer["views"], as_json, schemas, servers)
    else:
        requests = policy(settings, None, None)
        code = signals.run(_list, servers, as_json, schemas, requests, login, show_all, pins)
    off = [c for c in servers.values() if server and not c.enabled]
    if off and code == ExitCode.OK:
        render.error_line(
            f"server '{off[0].name}' is disabled ('enabled': false in {off[0].source})"
        )
        render.hint(f"Enable it with `codebot mcp enable {off[0].name}`.")
        return ExitCode.USAGE
    return code


async def _list(
    servers: dict[str, ServerConfig],
    as_json: bool,
    schemas: bool,
    agent: Policy,
    login: bool = False,
    show_all: bool = False,
    pins: Pins | None = None,
) -> int:
    from codebot_mcp.mcpbridge.calls import route  # no SDK import while every server is plain

    # The capabilities are declared, so servers show the tools they offer only to clients
    # that can answer elicitation, sampling or roots (server-everything has three).
    options = login_options() if login else None
    views = await route.list_servers(
        servers,
        partial(_open, agent=agent, login=options, pins=pins),
        hot=not login,
        roots=agent.roots(),
        schemas=schemas,
        show_app_tools=show_all,
        pins=pins,
    )
    return _render_list(views, as_json, schemas, servers)


def _open(
    servers: Mapping[str, ServerConfig],
    handed: Prelaunched | None,
    *,
    lazy: LazyModel | None = None,
    **options: Any,
) -> AbstractAsyncContextManager[Manager]:
    """The SDK path of ``mcp list``/``mcp call`` (:data:`mcpbridge.calls.route.OpenManager`);
    ``lazy``: the model ``mcp call`` samples with, built if a server asks; ``options``: the
    rest of :func:`cli.runtime.open_manager`'s (``--batch``: ``prelaunch``)."""
    if lazy is not None:
        from codebot_mcp.core.agent.sampling import Sampler

        options["sampler"] = Sampler(lazy)
    return open_manager(servers, handed=handed, **options)


def _render_list(
    views: list[dict[str, Any]], as_json: bool, schemas: bool, servers: dict[str, ServerConfig]
) -> int:
    completion.remember_tools(views, servers)
    failed = any(v["status"] in ("failed", "needs login") for v in views)
    if as_json:
        render.print_json({"servers": views})
    else:
        print_servers(views, schemas)
    return ExitCode.SERVER if failed else ExitCode.OK


async def _call(
    config: ServerConfig,
    tool: str,
    arguments: dict[str, Any],
    requests: ServerRequestsFlags,
    login: bool = False,
    pins: Pins | None = None,
) -> ToolResult:
    from codebot_mcp.mcpbridge.calls import route  # no SDK import while the server is plain

    settings, elicit, allow_sampling = requests
    agent = policy(settings, elicit, allow_sampling)
    lazy = LazyModel(settings)
    tty = sys.stderr.isatty()
    try:
        return await route.call_tool(
            config,
            tool,
            arguments,
            partial(
                _open,
                agent=agent,
                lazy=lazy,
                login=login_options() if login else None,
                pins=pins,
            ),
            hot=warm_client.plain(requests, login),
            roots=agent.roots(),
            pins=pins,
            # a task may run for minutes: off a terminal each change of its status gets a line
            on_progress=_progress_line if tty else None,
            on_task_status=None if tty else _task_line,
        )
    finally:
        if tty:
            sys.stderr.write("\r\x1b[2K")
        await lazy.aclose()


def _progress_line(server: str, value: float, total: float | None, message: str | None) -> None:
    """Progress of a call on a terminal's stderr, rewritten in place (a task's status too)."""
    from codebot_mcp.cli.render import safe

    percent = f" {min(value / total, 1.0):.0%}" if total else ""
    text = f"{server}:{percent} {safe(message, one_line=True)[:100]}".rstrip()
    sys.stderr.write(f"\r\x1b[2K{text}")
    sys.stderr.flush()


def _task_line(server: str, status: TaskStatus) -> None:
    """A task's status on stderr that is not a terminal: one line per change."""
    from codebot_mcp.cli.render import safe

    sys.stderr.write(f"{safe(server, one_line=True)}: {safe(status.describe(), one_line=True)}\n")
    sys.stderr.flush()


class _StdinRequests:
    """``--batch``'s requests, a line at a time from stdin."""

    def __init__(self) -> None:
        from collections import deque

        try:
            self.fd = sys.stdin.fileno()
        except (AttributeError, OSError, ValueError):  # not a file (a test's StringIO)
            self.fd = -1
        self.encoding = sys.stdin.encoding or "utf-8"
        self.errors = sys.stdin.errors or "strict"
        self.pending: deque[bytes] = deque()
        self.rest = b""
        self.ended = False

    def _take(self, chunk: bytes) -> list[bytes]:
        """Split ``chunk`` after what was left over into whole lines (kept for reading)."""
        if not chunk:
            self.ended = True
            return []
        *lines, self.rest = (self.rest + chunk).split(b"\n")
        self.pending.extend(line + b"\n" for line in lines)
        return lines

    async def read_line(self) -> str:
        """The next line of stdin ("" at its end). Stdin is read a chunk at a time in a worker
        thread (a piped file of requests: one hop, not one per line), whole lines decoded."""
        import os

        import anyio

        if self.fd < 0:
            return await anyio.to_thread.run_sync(sys.stdin.readline)
        while not self.pending:
            if self.ended:
                line, self.rest = self.rest, b""
                return line.decode(self.encoding, self.errors)
            self._take(await anyio.to_thread.run_sync(os.read, self.fd, 1 << 16))
        return self.pending.popleft().decode(self.encoding, self.errors)

    def servers_named_already(self) -> set[str]:
        """The servers named by the requests stdin holds already (a piped file), read without
        waiting for more: they launch while the SDK is imported, as a single call's server
        does. Lines that do not parse are left to the batch to report."""
        import os
        import select

        from codebot_mcp.core import jsonutil

        if self.fd < 0:
            return set()
        try:
            if not select.select([self.fd], [], [], 0)[0]:
                return set()  # nothing written yet (a terminal, a slow producer)
            lines = self._take(os.read(self.fd, 1 << 16))
        except (OSError, ValueError):
            return set()
        names: set[str] = set()
        for line in lines:
            try:
                request = jsonutil.loads(line)
            except ValueError:  # not JSON, or too deep (JSONTooDeepError is a ValueError)
                continue
            if isinstance(request, dict) and isinstance(request.get("server"), str):
                names.add(request["server"])
        return names


async def _batch(
    servers: dict[str, ServerConfig],
    requests: ServerRequestsFlags,
    login: bool = False,
    pins: Pins | None = None,
) -> bool:
    import json

    from codebot_mcp.core.secrets.redact import printable_json

    def emit(answer: dict[str, Any]) -> None:
        sys.stdout.write(printable_json(json.dumps(answer, ensure_ascii=False)) + "\n")
        sys.stdout.flush()

    from codebot_mcp.mcpbridge.calls import route

    stdin = _StdinRequests()
    settings, elicit, allow_sampling = requests
    lazy = LazyModel(settings)
    agent = policy(settings, elicit, allow_sampling)
    try:
        return await route.call_batch(
            servers,
            partial(
                _open,
                agent=agent,
                lazy=lazy,
                login=login_options() if login else None,
                pins=pins,
                prelaunch=stdin.servers_named_already(),
            ),
            stdin.read_line,
            emit,
        )
    finally:
        await lazy.aclose()


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
    elicit: ElicitOpt = None,
    allow_sampling: AllowSamplingOpt = None,
    login: LoginOpt = False,
    allow_drift: AllowDriftOpt = False,
) -> int:
    """Call one tool of one server and print its result.

    Exit 0 ok, 1 the tool reported an error, 2 bad arguments, 3 settings error,
    4 server unreachable or held back by .codebot/mcp-lock.json (its tools drifted: the
    message shows the diff). With --batch: 0 when every request succeeded, else 1.
    """

    from codebot_mcp.core.config.servers import require_usable
    from codebot_mcp.core.tools import arguments

    globals_: Globals = ctx.obj
    # Trust applied once: the model behind sampling, the roots and every limit come from the
    # trusted settings, whichever server is called.
    loaded = load_effective(globals_, warn=batch)
    settings, check = loaded.settings, loaded.trust
    pins = session_pins(settings, allow_drift=allow_drift)
    if batch:
        if server or tool or args:
            raise UsageError(
                "--batch takes the requests on stdin, not SERVER TOOL on the command line",
                hint='Pipe lines like {"server": "s", "tool": "t", "arguments": {}} into it.',
            )
        servers = with_timeout(settings.servers, timeout)
        policy(settings, elicit, allow_sampling)  # a bad --elicit is a usage error up front
        requests = (settings, elicit, allow_sampling)
        ok = signals.run(_batch, servers, requests, login, pins)
        return ExitCode.OK if ok else ExitCode.TOOL_ERROR
    if server is None or tool is None:
        raise UsageError(
            "missing SERVER and TOOL",
            hint="Usage: codebot mcp call SERVER TOOL [ARGS...] (or --batch).",
        )
    require_trusted(server, check, settings)
    config = select_servers(settings, [server])[server]
    require_usable(config)
    arguments_ = arguments.parse(args or [], cwd=globals_.cwd)
    policy(settings, elicit, allow_sampling)  # a bad --elicit is a usage error up front
    answer = None
    requests = (settings, elicit, allow_sampling)
    if not no_warm and timeout is None and not allow_drift and warm_client.plain(requests, login):
        payload = {
            "op": "call",
            "server": server,
            "tool": tool,
            "arguments": arguments_,
            "pairs": isinstance(arguments_, arguments.Pairs),  # typed by the schema over there
        }
        answer = warm_client.ask_holder(settings, check, payload)
    if answer is not None:
        from codebot_mcp.core.tools.base import ToolResult

        warm_client.raise_answer_error(answer)
        outcome = ToolResult(**answer["result"])
    else:
        config = with_timeout({server: config}, timeout)[server]
        outcome = signals.run(_call, config, tool, arguments_, requests, login, pins)
    return print_outcome(outcome, server, tool, as_json=as_json)


def _add_groups() -> None:
    from codebot_mcp.cli.commands.mcp import auth as mcp_auth
    from codebot_mcp.cli.commands.mcp import (
        doctor,
        lock,
        mcp_import,
        mcp_install,
        mcp_resources,
        mcp_search,
    )
    from codebot_mcp.cli.commands.mcp import get as mcp_get
    from codebot_mcp.cli.commands.mcp import manage as mcp_manage
    from codebot_mcp.cli.commands.mcp import prompts as mcp_prompts
    from codebot_mcp.cli.commands.mcp import serve as mcp_serve

    app.add_typer(doctor.app)
    app.add_typer(warm.app)
    app.add_typer(lock.app)
    app.add_typer(mcp_manage.app)
    app.add_typer(mcp_get.app)
    app.add_typer(mcp_import.app)
    app.add_typer(mcp_resources.app)
    app.add_typer(mcp_prompts.app)
    app.add_typer(mcp_auth.app)
    app.add_typer(mcp_search.app)
    app.add_typer(mcp_install.app)
    app.add_typer(mcp_serve.app)


_add_groups()
