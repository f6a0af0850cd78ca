"""The check functions on their own, on hand-made contexts: schemas, timing, totals, naming."""

from __future__ import annotations

import re
from pathlib import Path

import mcp_types as types

from codebot_mcp.core.config.settings import Settings
from codebot_mcp.mcpbridge.connection.mcp_client import Client, ServerInfo
from codebot_mcp.mcpbridge.connection.tool import MCPTool
from codebot_mcp.mcpbridge.doctor.checks import (
    CHECKS,
    ServerContext,
    ToolEntry,
    TotalsContext,
    connection_checks,
    totals_checks,
)
from codebot_mcp.mcpbridge.doctor.checks.schema_checks import (
    schema_errors,
    strict_mode_breakers,
    validator_class,
)
from codebot_mcp.mcpbridge.doctor.run import estimate_tokens
from codebot_mcp.mcpbridge.tools.naming import allocate
from tests.helpers import server_config

DOCS = Path(__file__).resolve().parents[2] / "docs" / "doctor.md"


def test_schema_errors_use_the_declared_draft() -> None:
    assert schema_errors({"type": "object", "properties": {}}) == []
    # A boolean exclusiveMinimum is right in draft-04 and wrong in 2020-12.
    draft4 = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "minimum": 0,
        "exclusiveMinimum": True,
    }
    assert schema_errors(draft4) == []
    assert schema_errors({"exclusiveMinimum": True}) == [
        "/exclusiveMinimum: True is not of type 'number'"
    ]
    cls, unknown = validator_class({"$schema": "https://example.com/my-draft"})
    assert unknown == "https://example.com/my-draft" and cls.__name__ == "Draft202012Validator"


def test_strict_mode_breakers_walk_nested_schemas() -> None:
    schema = {
        "type": "object",
        "properties": {
            "when": {"type": "string", "format": "date-time"},
            "list": {"type": "array", "items": {"anyOf": [{"type": "object"}, {"not": {}}]}},
        },
        "$defs": {"x": {"type": "string", "format": "uri-reference"}},
    }
    assert strict_mode_breakers(schema) == [
        "object without 'properties' at /properties/list/items/anyOf/0",
        "not at /properties/list/items/anyOf/1",
        "format 'uri-reference' at /$defs/x",
    ]


def _server(timeout: float = 10.0, **tools: int) -> ServerContext:
    config = server_config("s", {"command": "x", "timeout": timeout})
    ctx = ServerContext(config, Settings(), {})
    client = Client(config)
    ctx.client = client
    ctx.tools = [
        ToolEntry(
            MCPTool(client, types.Tool(name=n, input_schema={"type": "object"}), f"mcp__s__{n}"), t
        )
        for n, t in tools.items()
    ]
    return ctx


def test_slow_handshake_is_a_warning() -> None:
    ctx = _server(timeout=10.0)
    assert ctx.client is not None
    ctx.client.info = ServerInfo("2025-11-25", "s", "1", {}, None, handshake_ms=6000)
    [f] = connection_checks._slow(ctx)
    assert (f.check, f.severity, f.key) == ("connect.slow", "warning", "timeout")
    assert f.message == "server 's' took 6.0 s to connect, 60% of its 10 s timeout"
    ctx.client.info = ServerInfo("2025-11-25", "s", "1", {}, None, handshake_ms=4000)
    assert list(connection_checks._slow(ctx)) == []


def test_tool_count_and_token_totals() -> None:
    many = _server(**{f"t{i}": 10 for i in range(126)})
    ctx = TotalsContext(Settings(), [many])
    [f] = totals_checks._tool_count(ctx)
    assert f.message.startswith("126 MCP tools plus codebot's 6 built-in tools exceed the 128")
    assert list(totals_checks._catalog_tokens(ctx)) == []
    big = _server(a=15_000, b=6_000)
    [f] = totals_checks._catalog_tokens(TotalsContext(Settings(tool_search=False), [big]))
    assert f.message == "the tool catalog adds about 21,000 tokens to every request (over 20,000)"
    assert "the biggest: s (~21,000)" in (f.hint or "")


def test_token_estimate_is_a_quarter_of_the_request_json() -> None:
    tool = _server(x=0).tools[0].tool
    expected = (
        '{"type":"function","function":{"name":"mcp__s__x","description":"",'
        '"parameters":{"type":"object","properties":{}}}}'
    )
    assert estimate_tokens(tool) == -(-len(expected) // 4)


def test_allocated_names_keep_the_order_given() -> None:
    # Regression: adjusted names used to be appended at the end, so zipping the result with
    # the pairs gave tools each other's names (and routed calls to the wrong tool).
    pairs = [("s", "a.b"), ("s", "plain"), ("s", "x" * 70), ("s", "zed")]
    names = allocate(pairs)
    assert [(n.server, n.tool) for n in names] == pairs
    assert [n.reason for n in names] == ["sanitized", None, "shortened", None]


def test_docs_list_every_check() -> None:
    text = DOCS.read_text()
    documented = re.findall(r"^\| `([a-z_]+\.[a-z_]+)` \| (\w+) \|", text, re.MULTILINE)
    assert documented == [(c.id, c.severity) for c in CHECKS]


def test_settings_parse_rereads_each_file_and_passes_only_when_it_parses(tmp_path: Path) -> None:
    from codebot_mcp.mcpbridge.doctor.checks import entry_checks

    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text('{"mcp_servers": {}}')
    bad.write_text('{"mcp_servers": {,}}')
    assert list(entry_checks._parse(TotalsContext(Settings(global_file=good), []))) == []
    [finding] = entry_checks._parse(TotalsContext(Settings(global_file=good, project_file=bad), []))
    assert (finding.check, finding.severity, finding.file) == ("settings.parse", "error", bad)
    assert "invalid JSON" in finding.message and "line 1" in finding.message
