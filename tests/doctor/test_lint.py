"""Tool linting against ``tests.servers.lint_target``: the JSON findings, snapshotted."""

from __future__ import annotations

from typing import Any

from tests.doctor.conftest import Doctor, ids
from tests.helpers import server_entry as entry
from tests.helpers import write_settings
from tests.servers.lint_target import LONG_NAME

SHORT = "mcp__lint__generate_the_quarterly_revenue_report_for_ev_531bf18d"
EXCLUDE = 'or hide the tool with "exclude_tools": ["{}"] in server \'lint\' in <settings>.'


def normalized(report: dict[str, Any], settings: str) -> list[dict[str, Any]]:
    """Findings with the settings path replaced by ``<settings>``."""
    out = []
    for f in report["findings"]:
        f = {
            k: (v.replace(settings, "<settings>") if isinstance(v, str) else v)
            for k, v in f.items()
        }
        out.append(f)
    return out


def finding(check: str, severity: str, tool: str, message: str, hint: str) -> dict[str, Any]:
    return {
        "check": check,
        "severity": severity,
        "server": "lint",
        "tool": tool,
        "file": "<settings>",
        "key": None,
        "message": message,
        "hint": hint,
    }


def test_lint_target_findings_snapshot(doctor: Doctor) -> None:
    path = write_settings(doctor.project, {"mcp_servers": {"lint": entry("lint_target")}})
    assert len(LONG_NAME) == 70
    code, report = doctor.json()
    assert code == 1  # the invalid schema is an error
    unknown = (
        "has an unknown capability (no annotations and no telling keywords); codebot asks "
        "before every call"
    )
    assert normalized(report, str(path)) == [
        finding(
            "tool.name",
            "warning",
            "dotted.name",
            "tool 'dotted.name' of server 'lint' is shown to the model as "
            "'mcp__lint__dotted_name_0a3a2da5' (sanitized: only letters, digits, '_' and '-' "
            "are allowed)",
            "It works under that name; for a readable one, ask the server's author to rename "
            "the tool, " + EXCLUDE.format("dotted.name"),
        ),
        finding(
            "tool.name",
            "warning",
            LONG_NAME,
            f"tool '{LONG_NAME}' of server 'lint' is shown to the model as '{SHORT}' "
            f"(shortened: 'mcp__lint__{LONG_NAME}' is 81 characters, over the limit of 64)",
            "It works under that name; for a readable one, give server 'lint' a shorter name "
            "in <settings>, " + EXCLUDE.format(LONG_NAME),
        ),
        finding(
            "tool.description",
            "warning",
            "no_description",
            "tool 'no_description' of server 'lint' has no description; the model can only "
            "guess from its name",
            "Ask the server's author to describe it, " + EXCLUDE.format("no_description"),
        ),
        finding(
            "tool.description_length",
            "info",
            "long_description",
            "tool 'long_description' of server 'lint' has a description of 1500 characters; "
            "codebot sends it whole (OpenAI's API accepts it; some OpenAI-compatible servers, "
            "and OpenAI before mid-2025, rejected descriptions over 1024)",
            "If your model endpoint rejects it (chat exits 5 with 'string too long'), hide the "
            'tool with "exclude_tools": ["long_description"] in server \'lint\' in <settings>.',
        ),
        finding(
            "tool.schema",
            "error",
            "bad_schema",
            "tool 'bad_schema' of server 'lint' has an invalid input schema: "
            "/properties/count/minimum: 'zero' is not of type 'number'",
            "Model APIs reject the whole request over it. Ask the server's author to fix the "
            "schema, " + EXCLUDE.format("bad_schema"),
        ),
        finding(
            "tool.schema_strict",
            "info",
            "strict_breaker",
            "tool 'strict_breaker' of server 'lint' uses schema features OpenAI strict mode "
            "rejects: if at /, then at /, format 'uri' at /properties/link, allOf at "
            "/properties/filter, not at /properties/mode, object without 'properties' at "
            "/properties/options",
            "Only matters with strict function calling. To be safe there, ask the server's "
            "author for a plain schema (no allOf/not/if, standard formats, objects with "
            "properties).",
        ),
        finding(
            "tool.capability",
            "warning",
            "contradiction",
            "tool 'contradiction' of server 'lint' is annotated both readOnlyHint and "
            "destructiveHint; codebot treats it as write",
            "Ask the server's author to fix the annotations.",
        ),
        finding(
            "tool.capability",
            "info",
            LONG_NAME,
            f"tool '{LONG_NAME}' of server 'lint' {unknown}",
            f'To skip the question, add "{SHORT}" to "permissions": {{"allow": [...]}} in your '
            "settings.",
        ),
        finding(
            "tool.capability",
            "info",
            "long_description",
            f"tool 'long_description' of server 'lint' {unknown}",
            'To skip the question, add "mcp__lint__long_description" to "permissions": '
            '{"allow": [...]} in your settings.',
        ),
        finding(
            "tool.capability",
            "info",
            "no_description",
            f"tool 'no_description' of server 'lint' {unknown}",
            'To skip the question, add "mcp__lint__no_description" to "permissions": '
            '{"allow": [...]} in your settings.',
        ),
    ]
    [server] = report["servers"]
    # Every visible name belongs to its own tool (names are allocated per tool, in order).
    assert [
        (t["name"], t["original_name"], t["name_reason"], t["capability"]) for t in server["tools"]
    ] == [
        ("mcp__lint__bad_schema", "bad_schema", None, "read"),
        ("mcp__lint__contradiction", "contradiction", None, "write"),
        ("mcp__lint__dotted_name_0a3a2da5", "dotted.name", "sanitized", "read"),
        (SHORT, LONG_NAME, "shortened", "unknown"),
        ("mcp__lint__long_description", "long_description", None, "unknown"),
        ("mcp__lint__no_description", "no_description", None, "unknown"),
        ("mcp__lint__ping", "ping", None, "read"),
        ("mcp__lint__strict_breaker", "strict_breaker", None, "read"),
    ]
    long_tool = next(t for t in server["tools"] if t["original_name"] == "long_description")
    assert long_tool["description_length"] == 1500
    assert long_tool["tokens"] > 1500 // 4
    assert server["tokens"] == sum(t["tokens"] for t in server["tools"])
    assert server["checks"]["tool.schema"] == "error"
    assert server["checks"]["tool.description_length"] == "info"
    assert server["checks"]["tool.schema_strict"] == "info"
    assert server["checks"]["connect.handshake"] == "pass"
    assert report["summary"] == {
        "servers": 1,
        "connected": 1,
        "failed": 0,
        "invalid": 0,
        "disabled": 0,
        "needs_login": 0,
        "tools": 8,
        "tokens": server["tokens"],
        "errors": 1,
        "warnings": 4,
        "infos": 5,
    }


def test_one_malformed_tool_breaks_the_whole_listing(doctor: Doctor) -> None:
    write_settings(
        doctor.project, {"mcp_servers": {"lint": entry("lint_target", "--broken-listing")}}
    )
    code, report = doctor.json()
    assert code == 1
    assert ids(report, "lint") == [("tools.list", "error")]
    [f] = report["findings"]
    assert "tools.8.inputSchema.type" in f["message"] and "\n" not in f["message"]
    assert "none of the tools is usable" in f["hint"]
    assert report["servers"][0]["status"] == "failed"
    assert report["servers"][0]["checks"]["tool.schema"] == "skipped"


def test_filters_that_match_nothing(doctor: Doctor) -> None:
    write_settings(
        doctor.project,
        {
            "mcp_servers": {
                "typo": entry(
                    "lint_target", include_tools=["Ping", "pin*"], exclude_tools=["nope"]
                ),
                "none": entry("lint_target", include_tools=["zzz*"]),
            }
        },
    )
    code, report = doctor.json()
    assert code == 0
    assert [(f["check"], f["key"], f["message"]) for f in report["findings"]] == [
        (
            "settings.filter",
            "include_tools",
            "server 'none': pattern 'zzz*' in 'include_tools' matches none of its 8 tools",
        ),
        (
            "tools.empty",
            "include_tools",
            "server 'none': include_tools/exclude_tools hide all of its 8 tools",
        ),
        (
            "settings.filter",
            "include_tools",
            "server 'typo': pattern 'Ping' in 'include_tools' matches none of its 8 tools",
        ),
        (
            "settings.filter",
            "exclude_tools",
            "server 'typo': pattern 'nope' in 'exclude_tools' matches none of its 8 tools",
        ),
    ]
    code, _ = doctor.json("--strict")
    assert code == 1
