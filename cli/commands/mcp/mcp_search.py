"""``codebot mcp search QUERY``: find servers in the MCP Registry (``registry_url``)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated, Any

import typer

from codebot_mcp.cli import render
from codebot_mcp.cli.runtime import Globals, load_effective
from codebot_mcp.core.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from codebot_mcp.core.registry.serverjson import ServerInfo
    from codebot_mcp.core.registry.serversearch import SearchResult, Source

app = typer.Typer()
"""Holds ``search``; :mod:`cli.commands.mcp.group` adds it to the ``mcp`` group."""


def registry_urls(globals_: Globals) -> tuple[str, ...]:
    """The ``registry_url`` setting, a project's value only once the project is trusted."""
    loaded = load_effective(globals_, warn=False)  # trust applied once
    settings, check = loaded.settings, loaded.trust
    if check.needs_trust and "registry_url" in check.gated:
        render.warn(
            f"ignoring registry_url of {check.project_file}: the project is {check.state} "
            "(run `codebot trust` to use it)"
        )
    return settings.registry_url


def age(seconds: float | None) -> str:
    """``5 minutes``, ``3 hours``..., for how old cached data is."""
    if seconds is None:
        return "never fetched"
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if count != 1 else ''} old"
    return "less than a minute old"


@app.command("search")
def search_command(
    ctx: typer.Context,
    query: Annotated[
        str,
        typer.Argument(
            metavar="QUERY",
            help="Words to find in a server's name, title or description.",
            show_default=False,
        ),
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    show_all: Annotated[
        bool, typer.Option("--all", help="Show deprecated servers too, with their status message.")
    ] = False,
    offline: Annotated[
        bool, typer.Option("--offline", help="Search the cached catalog only (no network).")
    ] = False,
    limit: Annotated[
        int, typer.Option("--limit", metavar="N", help="Show at most N servers.")
    ] = 50,
) -> int:
    """Search the MCP Registry (setting registry_url) for servers to install.

    The registry's own search matches names; codebot also searches titles and descriptions
    in its cached catalog, which works offline. Exit 0 (matches or not), 1 when no registry
    can be reached and nothing is cached.
    """
    from codebot_mcp.core.registry.serversearch import search

    if limit < 1:
        raise UsageError(f"--limit {limit}: must be at least 1")
    urls = registry_urls(ctx.obj)

    def crawling(url: str) -> None:
        render.hint(f"fetching the catalog of {url} (once: later searches fetch only what changed)")

    result = search(urls, query, include_deprecated=show_all, offline=offline, on_crawl=crawling)
    now = time.time()
    for source in result.sources:
        _report_source(source, now)
    if as_json:
        render.print_json(_json(result, query, now, limit))
        return ExitCode.OK
    _print(result, query, limit, several=len(urls) > 1)
    return ExitCode.OK


def _report_source(source: Source, now: float) -> None:
    shown = render.safe(source.registry, one_line=True)
    if source.cached and source.fetched_at is None:
        if source.error is not None:
            render.warn(f"{source.error}; nothing is cached for {shown} yet")
        else:
            render.warn(f"nothing is cached for {shown} yet: search once without --offline")
        return
    if source.error is not None:
        render.warn(
            f"{source.error}; results from its cached catalog "
            f"({age(now - source.fetched_at if source.fetched_at else None)})"
        )
    elif source.offline:
        render.hint(
            f"offline: results from the cached catalog of {shown} "
            f"({age(now - source.fetched_at if source.fetched_at else None)})"
        )
    if not source.complete:
        render.hint(
            f"the catalog of {shown} is still being fetched: descriptions of servers not "
            "fetched yet are not searched (names are); search again to fetch more"
        )


def install_options(server: ServerInfo) -> list[dict[str, Any]]:
    """Each way to run the server, as the JSON view shows it."""
    out: list[dict[str, Any]] = []
    for package in server.packages:
        out.append(
            {
                "kind": "package",
                "registry_type": package.registry_type,
                "identifier": package.identifier,
                "version": package.version,
                "runtime": package.runtime_hint,
                "transport": package.transport.type,
            }
        )
    out += [{"kind": "remote", "transport": r.type, "url": r.url} for r in server.remotes]
    return out


def _json(result: SearchResult, query: str, now: float, limit: int) -> dict[str, Any]:
    return {
        "query": query,
        "registries": [
            {
                "url": s.registry,
                "from_cache": s.cached,
                "error": s.error,
                "fetched_at": s.fetched_at,
                "age_seconds": None if s.fetched_at is None else round(now - s.fetched_at),
                "complete": s.complete,
            }
            for s in result.sources
        ],
        "servers": [
            {
                "name": s.name,
                "title": s.title,
                "description": s.description,
                "version": s.version,
                "status": s.status,
                "status_message": s.status_message,
                "registry": s.registry,
                "repository": s.repository_url,
                "website": s.website_url,
                "install": install_options(s),
                "needs_secrets": bool(s.secrets),
                "secrets": s.secrets,
            }
            for s in result.servers[:limit]
        ],
        "total": len(result.servers),
        "hidden_deprecated": result.hidden,
    }


def _print(result: SearchResult, query: str, limit: int, *, several: bool) -> None:
    safe = render.safe
    if not result.servers:
        print(f"no servers match '{safe(query, one_line=True)}'")
    for server in result.servers[:limit]:
        name = render.style(safe(server.name, one_line=True), "1")
        head = f"{name}  {safe(server.version, one_line=True)}"
        if server.title:
            head += f"  {safe(server.title, one_line=True)}"
        if server.status == "deprecated":
            message = (
                f": {safe(server.status_message, one_line=True)}" if server.status_message else ""
            )
            head += f"  {render.style(f'[deprecated{message}]', '33')}"
        print(head)
        if server.description:
            print(f"  {safe(server.description, one_line=True)}")
        options = server.install_options()
        shown = safe(" · ".join(options), one_line=True) if options else "nothing to run"
        print(f"  install: {shown}")
        secrets = server.secrets
        print(
            f"  secrets: {safe(', '.join(secrets), one_line=True)}"
            if secrets
            else "  secrets: none"
        )
        if several:
            print(f"  registry: {safe(server.registry, one_line=True)}")
    if not result.servers and not result.hidden:
        return
    footer = f"{len(result.servers)} server{'s' if len(result.servers) != 1 else ''}"
    if len(result.servers) > limit:
        footer += f", {limit} shown (--limit)"
    if result.hidden:
        footer += f"; {result.hidden} deprecated not shown (--all shows them)"
    print(footer)
    if result.servers:
        render.hint(
            "install one with `codebot mcp install NAME` (NAME@VERSION for another version)"
        )
