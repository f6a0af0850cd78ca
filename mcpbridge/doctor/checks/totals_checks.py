"""Checks over every server at once: how many tools, how many tokens, shared names."""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterator

from codebot_mcp.core.model.tokens import estimate, estimate_text, window_for
from codebot_mcp.core.tools import builtin, toolsearch
from codebot_mcp.mcpbridge.doctor.checks.check_base import (
    Finding,
    ServerContext,
    TotalsContext,
    check,
)

MAX_TOOLS = 128
"""Chat Completions accepts at most this many tools in one request."""
BUILTIN_TOOLS = len(builtin.BUILTIN_TOOLS)
"""codebot's own tools (read, write, bash, ...) share the same request."""
MAX_CATALOG_TOKENS = 20_000
"""Past this the catalog eats a real share of a 128k context on every request."""
_LISTED = 3


def _window(ctx: TotalsContext) -> int:
    """The context window chat would use (``context_window``, else the model's, else 128k)."""
    model = os.environ.get("CODEBOT_MODEL") or ctx.settings.model or ""
    return window_for(model, ctx.settings.context_window)


def _search_on(ctx: TotalsContext) -> bool:
    """Whether ``codebot chat`` would defer these MCP tools behind ``search_tools``."""
    total = sum(_tokens(s) for s in ctx.servers)
    has_mcp = any(s.tools for s in ctx.servers)
    return toolsearch.wanted(ctx.settings.tool_search, total, _window(ctx), has_mcp=has_mcp)


def _deferred_cost(ctx: TotalsContext) -> int:
    """Tokens tool search sends instead of the schemas: ``search_tools`` and the name catalog."""
    tools = [t.tool for s in ctx.servers for t in s.tools]
    text = toolsearch.catalog(tools, lambda t: t.info.server or "")
    search = toolsearch.SearchToolsTool(toolsearch.ToolSearch(), str)
    schema = {"name": search.name, "description": search.description, "parameters": search.schema()}
    return estimate_text(text) + estimate({"type": "function", "function": schema})


def _search_hint(ctx: TotalsContext) -> str:
    share = f"{toolsearch.AUTO_SHARE:.0%} of the {_window(ctx):,}-token context window"
    if ctx.settings.tool_search is False:
        return f'or set "tool_search": "auto" (on past {share}) or true in settings.json'
    return f'or set "tool_search": true in settings.json ("auto" turns it on past {share})'


def _count(tools: list[str]) -> str:
    return f"{len(tools)} tool{'s' if len(tools) != 1 else ''}"


def _tokens(server: ServerContext) -> int:
    return sum(t.tokens for t in server.tools)


def _biggest(servers: list[ServerContext], measure: str) -> str:
    ranked = sorted(servers, key=lambda s: -(len(s.tools) if measure == "tools" else _tokens(s)))
    parts = [
        f"{s.name} ({len(s.tools) if measure == 'tools' else f'~{_tokens(s):,}'})"
        for s in ranked[:_LISTED]
    ]
    return ", ".join(parts)


@check(
    "totals.tool_count", "totals", "warning", f"more tools than one request accepts ({MAX_TOOLS})"
)
def _tool_count(ctx: TotalsContext) -> Iterator[Finding]:
    count = sum(len(s.tools) for s in ctx.servers)
    if count + BUILTIN_TOOLS > MAX_TOOLS and not _search_on(ctx):  # deferred: not in requests
        yield Finding(
            "totals.tool_count",
            "warning",
            f"{count} MCP tools plus codebot's {BUILTIN_TOOLS} built-in tools exceed the "
            f"{MAX_TOOLS} tools Chat Completions accepts in one request",
            "Trim with 'include_tools'/'exclude_tools' or disable servers you do not need "
            f"(the biggest: {_biggest(ctx.servers, 'tools')}), {_search_hint(ctx)}.",
        )


@check(
    "totals.tokens",
    "totals",
    "warning",
    f"the tool catalog costs over {MAX_CATALOG_TOKENS:,} tokens per request",
)
def _catalog_tokens(ctx: TotalsContext) -> Iterator[Finding]:
    total = sum(_tokens(s) for s in ctx.servers)
    trim = "Trim with 'include_tools'/'exclude_tools' or disable servers you do not need"
    biggest = _biggest(ctx.servers, "tokens")
    if not _search_on(ctx):
        if total > MAX_CATALOG_TOKENS:
            yield Finding(
                "totals.tokens",
                "warning",
                f"the tool catalog adds about {total:,} tokens to every request (over "
                f"{MAX_CATALOG_TOKENS:,})",
                f"{trim} (the biggest: {biggest}), {_search_hint(ctx)}.",
            )
        return
    count = sum(len(s.tools) for s in ctx.servers)
    sent = _deferred_cost(ctx)
    if sent > MAX_CATALOG_TOKENS:
        yield Finding(
            "totals.tokens",
            "warning",
            f"tool search is on, but its catalog of {count:,} deferred tool names still adds "
            f"about {sent:,} tokens to every request (over {MAX_CATALOG_TOKENS:,})",
            f"{trim}; the biggest: {biggest}.",
        )
    elif total > MAX_CATALOG_TOKENS:
        yield Finding(
            "totals.tokens",
            "info",
            f"the {count:,} MCP tool schemas would add about {total:,} tokens to every request; "
            f"tool search defers them, so each request carries search_tools and their names, "
            f"about {sent:,} tokens",
            f"Schemas join the request as the model loads tools with search_tools. {trim} "
            f"to shrink the catalog; the biggest: {biggest}.",
        )


@check(
    "totals.duplicate_name", "totals", "warning", "several servers offer a tool of the same name"
)
def _duplicates(ctx: TotalsContext) -> Iterator[Finding]:
    offered: dict[str, list[ServerContext]] = defaultdict(list)
    for server in ctx.servers:
        for name in sorted({t.tool.original_name for t in server.tools}):
            offered[name].append(server)
    # One finding per group of servers, not per name: the same server configured twice
    # shares every name, and one line that says so is worth more than fifty.
    groups: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for name, servers in offered.items():
        if len(servers) > 1:
            groups[tuple(s.name for s in servers)].append(name)
    by_name = {s.name: s for s in ctx.servers}
    for names, tools in sorted(groups.items()):
        quoted = ", ".join(f"'{n}'" for n in names[:-1]) + f" and '{names[-1]}'"
        shown = ", ".join(f"'{t}'" for t in tools[:5]) + (
            f" and {len(tools) - 5} more" if len(tools) > 5 else ""
        )
        files = sorted({str(by_name[n].config.source) for n in names})
        same = all(len(by_name[n].tools) == len(tools) for n in names)
        yield Finding(
            "totals.duplicate_name",
            "warning",
            f"servers {quoted} {'both' if len(names) == 2 else 'all'} offer {_count(tools)} "
            f"of the same name: {shown}",
            (
                "They look like the same server configured twice: remove one entry"
                if same
                else "The model has to tell them apart by server name alone: hide one "
                "side with 'exclude_tools'"
            )
            + f" (in {' and '.join(files)}).",
            tool=tools[0] if len(tools) == 1 else None,
        )
