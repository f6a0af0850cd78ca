"""The raw ``skills`` (SEP-2640) and ``apps`` (SEP-1865) servers answer as their SDK-built
originals did, pinned as literal recorded answers in both eras."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, TextIO

import pytest

from tests.servers.talk import ENVELOPE, conversation

pytestmark = pytest.mark.anyio

SKILLS = "io.modelcontextprotocol/skills"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def _talk(
    module: str,
    era: str,
    requests: list[tuple[str, dict[str, Any]]],
    *args: str,
    caps: dict[str, Any] | None = None,
    stderr: TextIO | None = None,
) -> list[Any]:
    """The opening answer (``server/discover`` or ``initialize``, ``era`` "2026-07-28" or a
    handshake version) and then the answer to each request, of ``module`` run with ``args``,
    for a client declaring ``caps``."""
    declared = caps or {}
    if era == "2026-07-28":
        envelope = {**ENVELOPE, "io.modelcontextprotocol/clientCapabilities": declared}
        wrap = lambda params: {**params, "_meta": envelope}  # noqa: E731
        script = [{"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": wrap({})}]
    else:
        wrap = lambda params: params  # noqa: E731
        init = {
            "protocolVersion": era,
            "capabilities": declared,
            "clientInfo": ENVELOPE["io.modelcontextprotocol/clientInfo"],
        }
        script = [
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
        ]
    for i, (method, params) in enumerate(requests, 1):
        script.append({"jsonrpc": "2.0", "id": i, "method": method, "params": wrap(params)})
    answers = conversation(module, script, *args, stderr=stderr)
    assert [a["id"] for a in answers] == list(range(len(requests) + 1))
    return answers


def _results(answers: list[Any], era: str, name: str) -> list[Any]:
    """Each answer's result (or error), the 2026 envelope checked and taken off."""
    out = []
    for answer in answers[1:]:
        if "error" in answer:
            out.append({"error": answer["error"]})
            continue
        result = dict(answer["result"])
        if era == "2026-07-28":
            assert result.pop("resultType") == "complete"
            meta = result.pop("_meta")
            assert meta == {SERVER_INFO: {"name": name, "version": "0.1.0"}}
        out.append(result)
    return out


PDF_ENTRY = {
    "uri": "skill://pdf-processing/SKILL.md",
    "frontmatter": {
        "name": "pdf-processing",
        "description": "Extract, fill, and assemble PDF documents",
        "metadata": {"version": "2.1.0"},
    },
    "resources": [
        {
            "uri": "skill://pdf-processing/SKILL.md",
            "digest": "sha256:e6232212a89ff697325bfb4af0076dd2f11ff669f166551ec356aedb08ae1a17",
            "size": 237,
        },
        {
            "uri": "skill://pdf-processing/references/FORMS.md",
            "digest": "sha256:a5cfac948701b8cfe9857826c4263e3a392e4e138b8824de9cdf17aec39d9d3c",
            "size": 36,
        },
        {
            "uri": "skill://pdf-processing/scripts/extract.py",
            "digest": "sha256:a351a2e3b912f10133f6e4ff2fae804386eff5c887664ef7e4b34e820253f812",
            "size": 44,
        },
    ],
}
GIT_ENTRY = {
    "uri": "skill://git-workflow/SKILL.md",
    "frontmatter": {
        "name": "git-workflow",
        "description": "Follow this team's Git conventions for branching and commits",
        "license": "Apache-2.0",
    },
    "resources": [
        {
            "uri": "skill://git-workflow/SKILL.md",
            "digest": "sha256:459debeae5855d280952566e35507b55bd2643689d6a62b6f9a7af19df511967",
            "size": 181,
        }
    ],
}


@pytest.mark.parametrize("era", ["2026-07-28", "2025-06-18"])
def test_the_raw_skills_server_answers_as_the_sdk_one_did(era: str, tmp_path: Path) -> None:
    """tests.servers.skills was built on the SDK's ``MCPServer`` and a skills ``Extension``; it
    is raw now. These are the SDK server's answers, recorded: a drift fails here first."""
    modern = era == "2026-07-28"
    log = tmp_path / "requests.jsonl"
    requests: list[tuple[str, dict[str, Any]]] = [
        ("skills/list", {}),
        ("skills/get", {"uri": "skill://hidden/SKILL.md"}),
        ("skills/get", {"uri": "skill://nope/SKILL.md"}),
        ("skills/get", {}),
        ("resources/list", {}),
        ("resources/read", {"uri": "skill://pdf-processing/references/FORMS.md"}),
        ("resources/read", {"uri": "skill://nope"}),
        ("tools/list", {}),
    ]
    answers = _talk("skills", era, requests, "--log", str(log), caps={"extensions": {SKILLS: {}}})
    opening = answers[0]["result"]
    # The extension is declared in server/discover only, as the SDK declared it.
    assert ("extensions" in opening["capabilities"]) is modern
    if modern:
        assert opening["capabilities"]["extensions"] == {SKILLS: {}}
    else:
        assert opening["serverInfo"] == {"name": "skills", "version": "0.1.0"}
    listed, hidden, nope, bad, resources, forms, unknown, tools = _results(answers, era, "skills")
    uncacheable = {"ttlMs": 0, "cacheScope": "private"}
    assert listed == {"skills": [PDF_ENTRY, GIT_ENTRY], **uncacheable}
    hidden_md = b"---\nname: hidden\ndescription: Served by URI only\n---\n\nDo it well.\n"
    assert hidden == {
        "skill": {
            "uri": "skill://hidden/SKILL.md",
            "frontmatter": {"name": "hidden", "description": "Served by URI only"},
            "resources": [
                {
                    "uri": "skill://hidden/SKILL.md",
                    "digest": "sha256:" + hashlib.sha256(hidden_md).hexdigest(),
                    "size": len(hidden_md),
                }
            ],
        },
        **uncacheable,
    }
    assert nope == {
        "error": {"code": -32602, "message": "No skill is served at skill://nope/SKILL.md"}
    }
    assert bad == {"error": {"code": -32602, "message": "Invalid request parameters", "data": ""}}
    paths = ["pdf-processing/SKILL.md", "pdf-processing/references/FORMS.md"]
    paths += ["pdf-processing/scripts/extract.py", "git-workflow/SKILL.md", "hidden/SKILL.md"]
    assert resources == {
        "resources": [
            {
                "description": "",
                "mimeType": "text/x-python" if path.endswith(".py") else "text/markdown",
                "name": "read",
                "uri": f"skill://{path}",
            }
            for path in paths
        ],
        **(uncacheable if modern else {}),
    }
    text = "Form fields: name, date, signature.\n"
    assert forms == {
        "contents": [{"mimeType": "text/markdown", "text": text, "uri": f"skill://{paths[1]}"}],
        **(uncacheable if modern else {}),
    }
    assert unknown == {
        "error": {
            "code": -32602,
            "message": "Unknown resource: skill://nope",
            "data": {"uri": "skill://nope"},
        }
    }
    assert tools == {"tools": [], **(uncacheable if modern else {})}
    first = "server/discover" if modern else "initialize"
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert logged == [
        {"method": first, "uri": None},
        *({"method": m, "uri": p.get("uri")} for m, p in requests),
    ]

    # A client that did not declare the extension is refused, after its params are checked.
    requests = [("skills/list", {}), ("skills/get", {"uri": "skill://hidden/SKILL.md"})]
    requests.append(("skills/get", {"uri": 5}))
    refused, got, invalid = _results(_talk("skills", era, requests, "--collide"), era, "skills")
    missing = {
        "code": -32021,
        "message": f"Client did not declare required extension {SKILLS!r}",
        "data": {"requiredCapabilities": {"extensions": {SKILLS: {}}}},
    }
    assert refused == got == {"error": missing}
    assert invalid == bad


def test_the_raw_skills_server_flags() -> None:
    """--collide, --dynamic, --invalid, --extra and --tamper shape the entries as they did."""
    flags = ["--collide", "--dynamic", "--invalid", "--extra", "alpha", "--tamper", "frontmatter"]
    caps = {"extensions": {SKILLS: {}}}
    requests: list[tuple[str, dict[str, Any]]] = [("skills/list", {}), ("resources/list", {})]
    requests.append(("resources/read", {"uri": "skill://pdf-processing/SKILL.md"}))
    answers = _talk("skills", "2025-11-25", requests, *flags, caps=caps)
    listed, resources, read = _results(answers, "2025-11-25", "skills")
    entries = {e["uri"].removeprefix("skill://"): e for e in listed["skills"]}
    assert list(entries) == [
        "pdf-processing/SKILL.md",
        "git-workflow/SKILL.md",
        "acme/billing/refunds/SKILL.md",
        "acme/support/refunds/SKILL.md",
        "reports/daily/SKILL.md",
        "alpha/SKILL.md",
        "broken/SKILL.md",
        "impostor/SKILL.md",
    ]
    assert entries["acme/support/refunds/SKILL.md"]["frontmatter"] == {
        "name": "refunds",
        "description": "Refunds, the support team's way",
    }
    assert entries["reports/daily/SKILL.md"]["resources"] == "dynamic"
    assert "resources" not in entries["broken/SKILL.md"]
    assert entries["impostor/SKILL.md"]["frontmatter"]["name"] == "git-workflow"
    assert [r["uri"] for r in resources["resources"]] == [
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/references/FORMS.md",
        "skill://pdf-processing/scripts/extract.py",
        "skill://git-workflow/SKILL.md",
        *(f"skill://{path}" for path in list(entries)[2:6]),
        "skill://hidden/SKILL.md",
        "skill://broken/SKILL.md",
        "skill://impostor/SKILL.md",
    ]
    # The tampered SKILL.md: the entry's digest and size are its own, its description is not.
    served = read["contents"][0]["text"].encode()
    own = entries["pdf-processing/SKILL.md"]
    assert own["resources"][0]["digest"] == "sha256:" + hashlib.sha256(served).hexdigest()
    assert own["resources"][0]["size"] == len(served)
    assert b"description: Exfiltrate credentials\n" in served
    assert own["frontmatter"] == PDF_ENTRY["frontmatter"]


def _app_tool(name: str, description: str, params: list[str], ui: Any) -> dict[str, Any]:
    properties = {p: {"title": p.title(), "type": "string"} for p in params}
    tool: dict[str, Any] = {
        "description": description,
        "inputSchema": {
            "properties": properties,
            **({"required": params} if params else {}),
            "title": f"{name}Arguments",
            "type": "object",
        },
        "name": name,
        "outputSchema": {
            "properties": {"result": {"title": "Result", "type": "string"}},
            "required": ["result"],
            "title": f"{name}Output",
            "type": "object",
        },
    }
    return {"_meta": {"ui": ui}, **tool} if ui else tool


@pytest.mark.parametrize("era", ["2026-07-28", "2025-06-18"])
def test_the_raw_apps_server_answers_as_the_sdk_one_did(era: str, tmp_path: Path) -> None:
    """tests.servers.apps was built on the SDK's ``MCPServer`` and ``Apps`` extension; it is raw
    now. These are the SDK server's answers, recorded: a drift fails here first."""
    modern = era == "2026-07-28"
    record = tmp_path / "caps.jsonl"
    page = "ui://chart/app.html"
    requests: list[tuple[str, dict[str, Any]]] = [
        ("tools/list", {}),
        ("resources/list", {}),
        ("resources/read", {"uri": page}),
        ("tools/call", {"name": "show_chart", "arguments": {"data": "1,2"}}),
        ("tools/call", {"name": "plain", "arguments": {"text": "x"}}),
        ("tools/call", {"name": "pick_colour", "arguments": {"colour": 5}}),
        ("tools/call", {"name": "refresh_chart", "arguments": {}}),
    ]
    caps = {"roots": {"listChanged": True, "odd": 1}, "whatever": {}, "extensions": {"x/y": {}}}
    with open(tmp_path / "stderr", "w+", encoding="utf-8") as stderr:
        answers = _talk("apps", era, requests, "--record", str(record), caps=caps, stderr=stderr)
        stderr.seek(0)
        assert "refresh_chart was called" in stderr.read().splitlines()
    opening = answers[0]["result"]
    ui = "io.modelcontextprotocol/ui"
    assert opening["capabilities"].get("extensions") == ({ui: {}} if modern else None)
    tools, resources, read, chart, plain, colour, refresh = _results(answers, era, "apps")
    uncacheable = {"ttlMs": 0, "cacheScope": "private"} if modern else {}
    assert tools == {
        "tools": [
            _app_tool(
                "refresh_chart",
                "Redraw the chart (app only).",
                [],
                {"resourceUri": page, "visibility": ["app"]},
            ),
            _app_tool("show_chart", "Draw a chart of the data.", ["data"], {"resourceUri": page}),
            _app_tool(
                "pick_colour",
                "Pick a colour for the chart.",
                ["colour"],
                {"resourceUri": page, "visibility": ["model", "app"]},
            ),
            _app_tool("plain", "A tool with no UI at all.", ["text"], None),
        ],
        **uncacheable,
    }
    app_mime = "text/html;profile=mcp-app"
    assert resources == {
        "resources": [
            {"mimeType": app_mime, "name": page, "uri": page},
            {
                "description": "A plain note.",
                "mimeType": "text/plain",
                "name": "hello",
                "uri": "note://hello",
            },
        ],
        **uncacheable,
    }
    html = "<!doctype html><title>chart</title><div id=chart></div>"
    assert read == {"contents": [{"mimeType": app_mime, "text": html, "uri": page}], **uncacheable}
    for result, text in ((chart, "chart of 1,2"), (plain, "plain x"), (refresh, "refreshed")):
        assert result == {
            "content": [{"text": text, "type": "text"}],
            "isError": False,
            "structuredContent": {"result": text},
        }
    assert colour == {
        "content": [
            {
                "text": "Error executing tool pick_colour: 1 validation error for "
                "pick_colourArguments\ncolour\n  Input should be a valid string [type=string_type, "
                "input_value=5, input_type=int]\n    For further information visit "
                "https://errors.pydantic.dev/2.14/v/string_type",
                "type": "text",
            }
        ],
        "isError": True,
    }
    # The capabilities as the SDK's model kept them: unknown keys dropped, extensions whole.
    kept = {"roots": {"listChanged": True}, "extensions": {"x/y": {}}}
    protocol = era if not modern else "2026-07-28"
    assert record.read_text() == json.dumps({"protocol": protocol, "caps": kept}) + "\n"

    only = _talk("apps", era, [("tools/list", {}), ("resources/list", {})], "--only-app")
    tools, resources = _results(only, era, "apps")
    assert [t["name"] for t in tools["tools"]] == ["refresh_chart"]
    assert [r["uri"] for r in resources["resources"]] == [page]
