"""Render a doctor report as compact text, JSON or JUnit XML. Pure functions: report → str.

:func:`mcpbridge.doctor.run.diagnose` runs the checks and returns the report; this module only
formats it. Secrets are already out of the report (findings redacted, configs masked).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from codebot_mcp.core.errors import ExitCode
from codebot_mcp.core.secrets.redact import printable, printable_json
from codebot_mcp.mcpbridge.connection.report import server_view
from codebot_mcp.mcpbridge.doctor.checks import CHECKS, Finding
from codebot_mcp.mcpbridge.doctor.run import Report, ServerReport

if TYPE_CHECKING:
    from codebot_mcp.core.config.settings import Settings

_MARKS = {"error": ("✗", "31"), "warning": ("!", "33"), "info": ("i", "36"), "pass": ("✓", "32")}
_SCOPE = {c.id: c.scope for c in CHECKS}


def _paint(text: str, code: str, color: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if color else text


def _mark(level: str, color: bool) -> str:
    mark, code = _MARKS.get(level, ("-", "2"))
    return _paint(mark, code, color)


def _worst(findings: Iterable[Finding]) -> str:
    levels = {f.severity for f in findings}
    return next((s for s in ("error", "warning") if s in levels), "pass")


# -- text -----------------------------------------------------------------------------------


def text(
    report: Report, *, strict: bool = False, verbose: bool = False, color: bool = False
) -> str:
    """The human report: one line per server, then its findings (info only with ``verbose``)."""
    lines: list[str] = []

    def findings(items: Iterable[Finding], indent: str = "  ") -> None:
        for f in items:
            if f.severity == "info" and not verbose:
                continue
            lines.append(
                f"{indent}{_mark(f.severity, color)} {_paint(f.check, '2', color)}  "
                f"{printable(f.message)}"
            )
            if f.hint:
                lines.append(f"{indent}  hint: {printable(f.hint)}")

    settings = report.settings
    if settings is not None:
        files = [printable(str(p)) for p in (settings.project_file, settings.global_file) if p]
        count = len(report.servers)
        lines.append(
            f"codebot mcp doctor: {count} server{'s' if count != 1 else ''}"
            + (f" from {' and '.join(files)}" if files else "")
        )
        if settings.claude_sources:  # hooks and permissions from Claude Code's files
            from codebot_mcp.core.config.claudefiles import label

            root = settings.project_root or settings.cwd
            shown = ", ".join(printable(label(p, root)) for p in settings.claude_sources)
            lines.append(f"also read (Claude Code's settings): {shown}")
    findings([f for f in report.findings if _SCOPE.get(f.check) == "settings"], indent="")
    for server in report.servers:
        lines.append("")
        _server_text(server, lines, verbose, color)
        findings(server.findings)
        failure = server.context.client.failure if server.context.client else None
        if failure is not None and failure.stderr_tail:
            lines.append("    server stderr (last lines):")
            lines.extend(f"      {printable(line)}" for line in failure.stderr_tail.splitlines())
    if settings is not None:
        total_tools = sum(len(s.context.tools) for s in report.servers)
        total_tokens = sum(s.tokens for s in report.servers)
        lines.append("")
        lines.append(
            f"totals: {total_tools} tool{'s' if total_tools != 1 else ''} · "
            f"~{total_tokens:,} tokens per request"
        )
        findings(f for f in report.findings if _SCOPE.get(f.check) == "totals")
    lines.append("")
    lines.append(_summary(report, strict, verbose, color))
    return "\n".join(lines) + "\n"


def _server_text(server: ServerReport, lines: list[str], verbose: bool, color: bool) -> None:
    ctx = server.context
    facts: list[str] = [ctx.config.type]
    info = ctx.client.info if ctx.client else None
    if server.status == "disabled":
        mark = _mark("disabled", color)
        facts.append("disabled")
    else:
        mark = _mark(_worst(server.findings), color)
        failure = ctx.client.failure if ctx.client else None
        if server.status == "connected" and info is not None:
            facts.append(f"connected in {info.handshake_ms / 1000:.1f} s")
            facts.append(f"protocol {printable(info.protocol_version, one_line=True)}")
            if info.name:
                about = f"{info.name} {info.version or ''}".strip()
                facts.append(printable(about, one_line=True))
            count = len(ctx.tools)
            facts.append(f"{count} tool{'s' if count != 1 else ''}")
            facts.extend(_auth_facts(server))
            facts.append(f"~{server.tokens:,} tokens")
        elif server.status == "needs login":
            facts.append("needs login")
        elif failure is not None:
            facts.append(f"failed at {failure.stage}")
        else:
            facts.append("not started")
    name = printable(server.name, one_line=True)
    lines.append(f"{mark} {_paint(name, '1', color)}  {' · '.join(facts)}")
    if verbose:
        source = str(ctx.config.source)
        if ctx.config.overrides:
            source += f" (overrides {ctx.config.overrides})"
        lines.append(f"  from {printable(source)}")
        if info is not None and info.capabilities:
            caps = printable(", ".join(sorted(info.capabilities)), one_line=True)
            lines.append(f"  capabilities: {caps}")
        for entry in ctx.tools:
            tool = entry.tool
            renamed = (
                f" ← {printable(tool.original_name, one_line=True)}" if tool.name_reason else ""
            )
            permission = tool.info.permission
            lines.append(
                f"    {tool.name}{renamed}  {permission.capability.value} "
                f"({permission.reason}) · ~{entry.tokens:,} tokens"
            )


def _auth_facts(server: ServerReport) -> list[str]:
    """``oauth jwt_bearer · DPoP-bound`` for a server that authorized with OAuth."""
    ctx = server.context
    client = ctx.client
    if ctx.config.type != "http" or client is None or not client.auth.trace.uses_oauth:
        return []
    facts = [f"oauth {ctx.config.oauth.grant}"]
    state = client.auth.dpop_state
    if state == "bound":
        facts.append("DPoP-bound")
    elif state == "bearer":
        facts.append("bearer token (no DPoP offered)")
    return facts


def _summary(report: Report, strict: bool, verbose: bool, color: bool) -> str:
    code = report.exit_code(strict=strict)
    if report.settings_unreadable:
        return f"{_mark('error', color)} the settings cannot be read · exit {code}"
    errors, warnings, infos = (report.count(s) for s in ("error", "warning", "info"))
    parts = [
        f"{errors} error{'s' if errors != 1 else ''}",
        f"{warnings} warning{'s' if warnings != 1 else ''}",
    ]
    if infos:
        parts.append(
            f"{infos} note{'s' if infos != 1 else ''}"
            + ("" if verbose else " (--verbose shows them)")
        )
    level = "error" if code else ("warning" if warnings else "pass")
    return f"{_mark(level, color)} {' · '.join(parts)} · exit {code}"


# -- json -----------------------------------------------------------------------------------


SCHEMA_VERSION = 1
"""Bumped only when a field of the JSON output changes meaning or disappears."""


def as_json(report: Report, *, strict: bool = False) -> str:
    """The documented ``--format json`` document (docs/doctor.md)."""
    text = json.dumps(json_document(report, strict=strict), indent=2, ensure_ascii=False)
    return printable_json(text) + "\n"


def json_document(report: Report, *, strict: bool = False) -> dict[str, Any]:
    """The JSON document as data."""
    settings = report.settings
    statuses = [s.status for s in report.servers]
    code = report.exit_code(strict=strict)
    return {
        "schema_version": SCHEMA_VERSION,
        "ok": code == ExitCode.OK,
        "exit_code": code,
        "strict": strict,
        "settings": {
            "readable": not report.settings_unreadable,
            "global_file": _path(settings.global_file if settings else None),
            "project_file": _path(settings.project_file if settings else None),
            "claude_files": [str(p) for p in settings.claude_sources] if settings else [],
        },
        "summary": {
            "servers": len(report.servers),
            **{k: statuses.count(k) for k in ("connected", "failed", "invalid", "disabled")},
            "needs_login": statuses.count("needs login"),
            "tools": sum(len(s.context.tools) for s in report.servers),
            "tokens": sum(s.tokens for s in report.servers),
            "errors": report.count("error"),
            "warnings": report.count("warning"),
            "infos": report.count("info"),
        },
        "checks": dict(report.checks),
        "policy": _policy_json(settings),
        "servers": [_server_json(s) for s in report.servers],
        "findings": [_finding_json(f) for f in report.findings],
        "elapsed_ms": round(report.elapsed_ms, 1),
    }


def _policy_json(settings: Settings | None) -> dict[str, Any]:
    """The managed settings in force and what they removed (``core.config.managed``)."""
    if settings is None or settings.managed_file is None:
        return {"managed_file": None, "removed": [], "locked": [], "require_mcp_lock": False}
    return {
        "managed_file": str(settings.managed_file),
        "removed": [{"server": n, "reason": r} for n, r in settings.policy_removed.items()],
        "locked": sorted(settings.managed_locked),
        "require_mcp_lock": settings.require_mcp_lock,
    }


def _path(path: object) -> str | None:
    return None if path is None else str(path)


def _finding_json(f: Finding) -> dict[str, Any]:
    return {
        "check": f.check,
        "severity": f.severity,
        "server": f.server,
        "tool": f.tool,
        "file": _path(f.file),
        "key": f.key,
        "message": f.message,
        "hint": f.hint,
    }


def _server_json(report: ServerReport) -> dict[str, Any]:
    ctx = report.context
    client = ctx.client
    view = server_view(
        report.name,
        report.status,
        ctx.config,
        client,
        [e.tool for e in ctx.tools],
        failure=client.failure if client is not None else None,
    )
    view["app_only_count"] = len(client.app_tools) if client is not None else 0
    view["tokens"] = report.tokens
    view["checks"] = dict(report.checks)
    for tool, entry in zip(view["tools"], ctx.tools, strict=True):
        tool["description_length"] = len(entry.tool.description)
        tool["tokens"] = entry.tokens
    return view


# -- junit ----------------------------------------------------------------------------------


def junit(report: Report, *, strict: bool = False) -> str:
    """JUnit XML: a test suite per server (plus settings and totals), a test case per check.

    An error fails its case; a warning fails it only with ``strict`` (else it is printed in
    the case's output, as notes are); a check that could not run is skipped.
    """
    root = ET.Element("testsuites", name="codebot mcp doctor")
    suites: list[tuple[str, Mapping[str, str], Mapping[str, str], list[Finding], float]] = []
    settings_checks = {k: v for k, v in report.checks.items() if _SCOPE.get(k) == "settings"}
    totals_checks = {k: v for k, v in report.checks.items() if _SCOPE.get(k) == "totals"}
    suites.append(
        (
            "settings",
            settings_checks,
            {},
            [f for f in report.findings if _SCOPE.get(f.check) == "settings"],
            0.0,
        )
    )
    for server in report.servers:
        info = server.context.client.info if server.context.client else None
        suites.append(
            (
                server.name,
                server.checks,
                server.skipped,
                server.findings,
                info.handshake_ms / 1000 if info else 0.0,
            )
        )
    if totals_checks:
        suites.append(
            (
                "totals",
                totals_checks,
                {},
                [f for f in report.findings if _SCOPE.get(f.check) == "totals"],
                0.0,
            )
        )
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for name, checks, skipped, findings, seconds in suites:
        counts = _suite(root, name, checks, skipped, findings, seconds, strict, report)
        for key in totals:
            totals[key] += counts[key]
    root.set("tests", str(totals["tests"]))
    root.set("failures", str(totals["failures"]))
    root.set("errors", "0")
    root.set("skipped", str(totals["skipped"]))
    root.set("time", f"{report.elapsed_ms / 1000:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def _suite(
    root: ET.Element,
    name: str,
    checks: Mapping[str, str],
    skipped: Mapping[str, str],
    findings: list[Finding],
    seconds: float,
    strict: bool,
    report: Report,
) -> dict[str, int]:
    name = printable(name, one_line=True)
    suite = ET.SubElement(root, "testsuite", name=f"mcp.{name}")
    counts = {"tests": 0, "failures": 0, "skipped": 0}
    for check_id, status in checks.items():
        counts["tests"] += 1
        case = ET.SubElement(suite, "testcase", classname=f"mcp.{name}", name=check_id)
        mine = [f for f in findings if f.check == check_id]
        if status == "skipped":
            counts["skipped"] += 1
            ET.SubElement(case, "skipped", message=printable(skipped.get(check_id, "not run")))
            continue
        failing = [f for f in mine if f.severity == "error" or (strict and f.severity == "warning")]
        body = "\n".join(_finding_text(f) for f in mine)
        if check_id.startswith(("connect.", "tools.list")):
            body += _stderr(report, name)
        if failing:
            counts["failures"] += 1
            failure = ET.SubElement(
                case, "failure", message=printable(failing[0].message), type=failing[0].severity
            )
            failure.text = body
        elif mine:
            ET.SubElement(case, "system-out").text = body
    suite.set("tests", str(counts["tests"]))
    suite.set("failures", str(counts["failures"]))
    suite.set("errors", "0")
    suite.set("skipped", str(counts["skipped"]))
    suite.set("time", f"{seconds:.3f}")
    return counts


def _finding_text(f: Finding) -> str:
    where = f" [{f.tool}]" if f.tool else ""
    text = f"{f.severity}{where}: {f.message}" + (f"\n  hint: {f.hint}" if f.hint else "")
    return printable(text)


def _stderr(report: Report, name: str) -> str:
    server = next((s for s in report.servers if s.name == name), None)
    client = server.context.client if server else None
    tail = client.failure.stderr_tail if client and client.failure else ""
    return f"\nserver stderr (last lines):\n{printable(tail)}" if tail else ""
