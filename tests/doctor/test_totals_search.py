"""The doctor's size checks count what ``codebot chat`` sends: with tool search on, names only."""

from __future__ import annotations

import mcp_types as types

from codebot_mcp.core.config.settings import Settings
from codebot_mcp.mcpbridge.connection.mcp_client import Client
from codebot_mcp.mcpbridge.connection.tool import MCPTool
from codebot_mcp.mcpbridge.doctor.checks import (
    ServerContext,
    ToolEntry,
    TotalsContext,
    totals_checks,
)
from tests.doctor.conftest import Doctor
from tests.helpers import server_config, write_settings
from tests.helpers import server_entry as entry


def _server(name: str, tools: dict[str, int]) -> ServerContext:
    config = server_config(name, {"command": "x"})
    ctx = ServerContext(config, Settings(), {})
    client = Client(config)
    ctx.client = client
    ctx.tools = [
        ToolEntry(
            MCPTool(
                client, types.Tool(name=n, input_schema={"type": "object"}), f"mcp__{name}__{n}"
            ),
            t,
        )
        for n, t in tools.items()
    ]
    return ctx


def _findings(settings: Settings, *servers: ServerContext) -> list[tuple[str, str, str]]:
    ctx = TotalsContext(settings, list(servers))
    found = [*totals_checks._tool_count(ctx), *totals_checks._catalog_tokens(ctx)]
    return [(f.check, f.severity, f.message + " | " + (f.hint or "")) for f in found]


def test_auto_defers_a_big_catalog_so_the_schemas_are_not_a_warning() -> None:
    big = _server("big", {"search_docs": 15_000, "fetch_page": 6_000})
    [(check, severity, text)] = _findings(Settings(), big)
    assert (check, severity) == ("totals.tokens", "info")
    assert "the 2 MCP tool schemas would add about 21,000 tokens" in text
    assert "tool search defers them" in text and "search_tools" in text
    sent = int(text.split("their names, about ")[1].split(" tokens")[0].replace(",", ""))
    assert 0 < sent < 500, text  # the names and search_tools, not 21,000


def test_off_or_a_huge_window_keeps_the_warning_and_names_the_setting() -> None:
    big = _server("big", {"search_docs": 15_000, "fetch_page": 6_000})
    [(_, severity, text)] = _findings(Settings(tool_search=False), big)
    assert severity == "warning" and "adds about 21,000 tokens to every request" in text
    assert '"tool_search": "auto" (on past 10% of the 128,000-token context window)' in text
    # A 1M-token window: 10% is 100,000, so "auto" sends all 21,000 tokens of schemas.
    [(_, severity, text)] = _findings(Settings(context_window=1_000_000), big)
    assert severity == "warning" and "adds about 21,000 tokens" in text
    assert '"tool_search": true' in text and "1,000,000-token context window" in text


def test_the_tool_count_limit_does_not_apply_to_deferred_tools() -> None:
    many = _server("many", {f"t{i}": 10 for i in range(126)})  # 1,260 tokens: auto stays off
    [(check, severity, text)] = _findings(Settings(), many)
    assert (check, severity) == ("totals.tool_count", "warning")
    assert "126 MCP tools plus codebot's" in text and '"tool_search": true' in text
    assert _findings(Settings(tool_search=True), many) == []


def test_a_catalog_of_names_too_big_even_for_tool_search_is_still_a_warning() -> None:
    names = {f"tool_with_a_rather_long_descriptive_name_{i:05}": 20 for i in range(3000)}
    huge = _server("huge", names)
    [(check, severity, text)] = _findings(Settings(), huge)
    assert (check, severity) == ("totals.tokens", "warning")
    assert "tool search is on, but its catalog of 3,000 deferred tool names still adds" in text


def test_doctor_on_a_real_big_server_follows_the_setting(doctor: Doctor) -> None:
    servers = {"many": entry("many_raw", "--count", "1000", "--page-size", "500")}
    write_settings(doctor.project, {"mcp_servers": servers})
    code, report = doctor.json()
    assert code == 0 and report["checks"]["totals.tokens"] == "info"
    [finding] = [f for f in report["findings"] if f["check"] == "totals.tokens"]
    assert "the 1,000 MCP tool schemas would add about" in finding["message"]
    assert report["checks"]["totals.tool_count"] == "pass"  # 1,000 tools, none in the request
    write_settings(doctor.project, {"mcp_servers": servers, "tool_search": False})
    code, report = doctor.json()
    assert report["checks"]["totals.tokens"] == "warning"
    assert report["checks"]["totals.tool_count"] == "warning"
