"""``mcp doctor --format sarif``: the report as SARIF 2.1.0, for code scanning in CI.

One rule per check id (all of them, so a rule's index never moves), one result per finding.
A finding's location is the settings file it is about, at the line of the server's entry
(``core.config.locate``); a file inside the project is given relative to it (``%SRCROOT%``),
so GitHub's code scanning can annotate it; others are absolute ``file://`` URIs. Secrets are
already out of the report (findings are redacted when they are made).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from codebot_mcp.core import __version__
from codebot_mcp.core.config.locate import entry_line
from codebot_mcp.mcpbridge.doctor.checks import CHECKS, Finding
from codebot_mcp.mcpbridge.doctor.run import Report

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_SERVER_KEYS = ("mcp_servers", "mcpServers")


def sarif(report: Report, *, strict: bool = False, root: Path | None = None) -> str:
    """The SARIF log of ``report`` (``root``: the directory results are relative to; the
    project root by default, else the working directory)."""
    settings = report.settings
    if root is None and settings is not None:
        root = settings.project_root or settings.cwd
    index = {c.id: i for i, c in enumerate(CHECKS)}
    rules = [_rule(c.id, c.severity, c.summary, c.scope) for c in CHECKS]
    lines: dict[tuple[Path, str | None], int | None] = {}
    results = [_result(f, index, root, lines, report) for f in report.findings]
    code = report.exit_code(strict=strict)
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "codebot mcp doctor",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": rules,
            }
        },
        "results": results,
        "invocations": [
            {
                "executionSuccessful": not report.settings_unreadable,
                "exitCode": int(code),
                "properties": {"strict": strict},
            }
        ],
        "columnKind": "unicodeCodePoints",
    }
    if root is not None:
        run["originalUriBaseIds"] = {"%SRCROOT%": {"uri": root.as_uri() + "/"}}
    log = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def _rule(check: str, severity: str, summary: str, scope: str) -> dict[str, Any]:
    return {
        "id": check,
        "name": "".join(part.title() for part in check.replace("_", ".").split(".")),
        "shortDescription": {"text": summary},
        "fullDescription": {"text": f"{check} ({severity}): {summary}"},
        "defaultConfiguration": {"level": _LEVEL[severity]},
        "properties": {"scope": scope, "tags": ["mcp", scope]},
    }


def _result(
    finding: Finding,
    index: dict[str, int],
    root: Path | None,
    lines: dict[tuple[Path, str | None], int | None],
    report: Report,
) -> dict[str, Any]:
    text = finding.message + (f"\nhint: {finding.hint}" if finding.hint else "")
    result: dict[str, Any] = {
        "ruleId": finding.check,
        "level": _LEVEL[finding.severity],
        "message": {"text": text},
    }
    if finding.check in index:
        result["ruleIndex"] = index[finding.check]
    file = finding.file or _fallback_file(report)
    if file is not None:
        key = (file, finding.server)
        if key not in lines:
            lines[key] = _line(file, finding.server)
        result["locations"] = [_location(file, lines[key], root)]
    identity = "|".join(
        [finding.check, finding.server or "", finding.tool or "", finding.key or ""]
    )
    result["partialFingerprints"] = {
        "codebotFinding/v1": hashlib.sha256(identity.encode()).hexdigest()[:32]
    }
    properties = {
        "server": finding.server,
        "tool": finding.tool,
        "key": finding.key,
        "hint": finding.hint,
    }
    result["properties"] = {k: v for k, v in properties.items() if v is not None}
    return result


def _fallback_file(report: Report) -> Path | None:
    """Findings about no file (the totals) point at the project's settings, else the user's."""
    settings = report.settings
    if settings is None:
        return None
    return settings.project_file or settings.global_file


def _line(file: Path, server: str | None) -> int | None:
    """The line of the server's entry (or of the servers' object, or none)."""
    if server is None:
        return entry_line(file, "mcp_servers") or entry_line(file, "mcpServers")
    for key in _SERVER_KEYS:
        line = entry_line(file, key, server)
        if line is not None:
            return line
    return None


def _location(file: Path, line: int | None, root: Path | None) -> dict[str, Any]:
    artifact: dict[str, Any]
    try:
        relative = file.resolve().relative_to(root.resolve()) if root is not None else None
    except ValueError:
        relative = None
    if relative is not None:
        artifact = {"uri": relative.as_posix(), "uriBaseId": "%SRCROOT%"}
    else:
        artifact = {"uri": file.resolve().as_uri()}
    physical: dict[str, Any] = {"artifactLocation": artifact}
    if line is not None:
        physical["region"] = {"startLine": line}
    return {"physicalLocation": physical}
