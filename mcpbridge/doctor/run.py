"""``codebot mcp doctor``: run every registered check and collect the findings as plain data.

The checks themselves live in :mod:`mcpbridge.doctor.checks` (one module per family, each check a
function with a stable id). This module runs them in order, connecting to every server whose
settings pass, and builds a :class:`Report`: per server its status, handshake facts, tools
and check outcomes, plus one flat list of findings. The report formats (text, JSON, JUnit)
live in :mod:`cli.commands.mcp.doctor_render`; they all read the same report.

Nothing here prints. Secrets never enter a report: messages from servers are redacted by the
client, every finding is passed through the server's redactor, and configs are shown masked.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import anyio

from codebot_mcp.core import gcpause
from codebot_mcp.core.config.servers import ServerConfig
from codebot_mcp.core.config.settings import Settings, root_dirs
from codebot_mcp.core.errors import ExitCode, SettingsError
from codebot_mcp.core.model import tokens
from codebot_mcp.core.secrets.credentials import is_secret
from codebot_mcp.core.secrets.redact import Redactor, entry_secrets
from codebot_mcp.core.tools.base import tool_schema
from codebot_mcp.core.tools.useragent import Policy, UserAgent
from codebot_mcp.mcpbridge.auth import LoginOptions
from codebot_mcp.mcpbridge.connection.manager import Manager
from codebot_mcp.mcpbridge.connection.tool import MCPTool
from codebot_mcp.mcpbridge.doctor.checks import (
    CHECKS,
    Finding,
    ServerContext,
    Severity,
    ToolContext,
    ToolEntry,
    TotalsContext,
    checks_in,
)
from codebot_mcp.mcpbridge.doctor.checks.check_base import Scope
from codebot_mcp.mcpbridge.doctor.checks.entry_checks import parse_finding

__all__ = ["CHECKS", "Finding", "Report", "ServerReport", "diagnose", "unreadable"]


ServerStatus = Literal["connected", "failed", "needs login", "invalid", "disabled"]
CheckStatus = Literal["pass", "info", "warning", "error", "skipped"]
_RANK: dict[str, int] = {"pass": 0, "info": 1, "warning": 2, "error": 3}


@dataclass(slots=True)
class ServerReport:
    """One server: how far it got, what its checks found."""

    context: ServerContext
    status: ServerStatus = "invalid"
    findings: list[Finding] = field(default_factory=list[Finding])
    checks: dict[str, CheckStatus] = field(default_factory=dict[str, CheckStatus])
    skipped: dict[str, str] = field(default_factory=dict[str, str])
    """Check id → why it did not run."""

    @property
    def name(self) -> str:
        """The server's name in settings."""
        return self.context.name

    @property
    def tokens(self) -> int:
        """Estimated tokens this server's tool catalog adds to every request."""
        return sum(t.tokens for t in self.context.tools)


@dataclass(slots=True)
class Report:
    """Everything one doctor run found."""

    settings: Settings | None
    servers: list[ServerReport] = field(default_factory=list[ServerReport])
    findings: list[Finding] = field(default_factory=list[Finding])
    """Every finding: settings-level first, then each server's, then the totals."""
    checks: dict[str, CheckStatus] = field(default_factory=dict[str, CheckStatus])
    """Outcomes of the checks that are not about one server (settings and totals)."""
    settings_unreadable: bool = False
    elapsed_ms: float = 0.0

    def count(self, severity: Severity) -> int:
        """How many findings have this severity."""
        return sum(1 for f in self.findings if f.severity == severity)

    def exit_code(self, *, strict: bool = False) -> int:
        """3 unreadable settings; 1 any error (or, with ``strict``, any warning); else 0."""
        if self.settings_unreadable:
            return ExitCode.SETTINGS
        if self.count("error") or (strict and self.count("warning")):
            return ExitCode.TOOL_ERROR
        return ExitCode.OK


def unreadable(exc: SettingsError) -> Report:
    """The report for settings that cannot be read at all (exit 3)."""
    finding = parse_finding(exc)
    return Report(
        None, findings=[finding], checks={"settings.parse": "error"}, settings_unreadable=True
    )


async def diagnose(
    settings: Settings,
    servers: Mapping[str, ServerConfig],
    *,
    selected: bool = False,
    environ: Mapping[str, str] | None = None,
    untrusted: Collection[str] = (),
    login: LoginOptions | None = None,
    agent: UserAgent | None = None,
    offline: bool = False,
    withheld: Sequence[str] = (),
    trust_state: str | None = None,
) -> Report:
    """Check ``servers`` (connecting to each whose settings pass, in parallel).

    Args:
        settings: The loaded settings (for file names and the project root).
        servers: The entries to check, usually ``settings.servers`` or a ``--server`` subset
            (with ``--timeout`` applied).
        selected: True when ``--server`` narrowed the set (no "nothing configured" warning).
        environ: Variables for ``${VAR}`` checks; defaults to ``os.environ``.
        untrusted: Project servers of an untrusted project: reported, never started.
        login: Run the OAuth browser flow for servers that need it (``--login``).
        withheld: Project settings an untrusted project sets (left out of ``settings``).
        agent: Answers the servers' requests. By default the non-interactive policy of
            ``mcp list``: the capabilities chat declares are declared (so the doctor sees the
            tools chat sees), ``roots/list`` gets the roots, elicitation is declined and
            sampling refused.
        offline: Do not ask registries for newer versions of installed servers.
        trust_state: How the untrusted project is described (``TrustCheck.state``: it names
            the files changed since the project was trusted).
    """
    started = time.perf_counter()
    env = os.environ if environ is None else environ
    reports = [
        ServerReport(ServerContext(c, settings, env, trusted=n not in untrusted))
        for n, c in sorted(servers.items())
    ]
    if trust_state:
        for report in reports:
            report.context.trust_state = trust_state
    to_connect: list[ServerReport] = []
    for report in reports:
        if not report.context.config.enabled:
            report.status = "disabled"
            _skip(
                report,
                ("entry", "config", "connect", "server", "tool", "registry"),
                "the server is disabled",
            )
            continue
        _run(report, "entry", report.context)
        if report.context.config.error is None:
            _run(report, "config", report.context)
        else:
            _skip(report, ("config",), "the entry is invalid")
        if any(f.severity == "error" for f in report.findings):
            _skip(report, ("connect", "server", "tool"), "not started: fix its settings first")
        else:
            to_connect.append(report)
    async with anyio.create_task_group() as group:  # the registries while servers start
        if not offline:
            for report in reports:
                if report.context.config.enabled:
                    group.start_soon(_ask_registry, report.context)
        if to_connect:
            if agent is None:
                root = settings.project_root
                agent = Policy(root_dirs=root_dirs(root, settings.cwd, settings.roots))
            await _connect_and_check(to_connect, login, agent)
    for report in reports:
        if report.context.config.enabled:
            _run(report, "registry", report.context)

    contexts = [r.context for r in reports]
    totals = TotalsContext(settings, contexts, selected, tuple(withheld))
    head = Report(settings)
    _run(head, "settings", totals)
    tail = Report(settings)
    _run(tail, "totals", totals)
    return Report(
        settings,
        servers=reports,
        findings=[*head.findings, *(f for r in reports for f in r.findings), *tail.findings],
        checks={**head.checks, **tail.checks},
        elapsed_ms=(time.perf_counter() - started) * 1000,
    )


async def _connect_and_check(
    reports: list[ServerReport], login: LoginOptions | None, agent: UserAgent
) -> None:
    configs = {r.name: r.context.config for r in reports}
    async with Manager(configs, login=login, agent=agent) as manager:
        await manager.start_all()
        gcpause.release()  # connected: the checks begin (core.gcpause)
        tools = manager.tools()
        for report in reports:
            ctx = report.context
            ctx.client = manager.clients[report.name]
            if ctx.client.state == "connected":
                ctx.tools = [
                    ToolEntry(t, estimate_tokens(t)) for t in tools if t.server == ctx.name
                ]
                ctx.listed = await _listed(ctx)
        for report in reports:
            ctx = report.context
            _run(report, "connect", ctx)
            if ctx.client is not None and ctx.client.state == "connected":
                report.status = "connected"
                _run(report, "server", ctx)
                _run(report, "tool", ctx)
            else:
                failure = ctx.client.failure if ctx.client is not None else None
                report.status = "needs login" if failure and failure.needs_login else "failed"
                _skip(report, ("server", "tool"), "the server did not connect")


REGISTRY_SECONDS = 15.0
"""How long doctor waits for a registry's answer about newer versions (its own requests are
bounded at 10 s each; a stalled registry must not hold the report)."""


async def _ask_registry(ctx: ServerContext) -> None:
    """What the entry's registry says of newer versions (entries ``mcp install`` wrote)."""
    provenance = ctx.config.provenance
    if provenance is None:
        return
    from codebot_mcp.core.registry.newversions import UpdateCheck, check_update

    ctx.update = UpdateCheck(provenance, error="the registry did not answer in time")
    with anyio.move_on_after(REGISTRY_SECONDS):
        ctx.update = await anyio.to_thread.run_sync(
            check_update, provenance, abandon_on_cancel=True
        )


async def _listed(ctx: ServerContext) -> list[Any] | None:
    """Every tool the server lists, before include/exclude (None if that cannot be had)."""
    client = ctx.client
    assert client is not None
    config = ctx.config
    if config.include_tools is None and not config.exclude_tools:
        return [*client.tools, *client.app_tools]
    # The client filters its listing; the filter check needs the names it filtered out.
    with anyio.move_on_after(config.timeout):
        try:
            return await client.list_all_tools(cached=True)  # the SDK's cache may serve
        except Exception:  # boundary: without the full list, the filter check just skips
            return None
    return None


def estimate_tokens(tool: MCPTool) -> int:
    """Tokens of the tool's entry in a request (its JSON, as the session sends it)."""
    text = json.dumps(tool_schema(tool), ensure_ascii=False, separators=(",", ":"))
    return tokens.estimate_tokens(text)


def _run(report: ServerReport | Report, scope: Scope, ctx: Any) -> None:
    redact = _redactor(ctx) if isinstance(ctx, ServerContext) else None
    for check in checks_in(scope):
        if scope == "tool":
            found = [f for e in ctx.tools for f in check.run(ToolContext(ctx, e))]
        else:
            found = list(check.run(ctx))
        if redact is not None:
            found = [
                replace(f, message=redact(f.message), hint=_opt(redact, f.hint)) for f in found
            ]
        report.findings.extend(found)
        report.checks[check.id] = _worst(found)


def _skip(report: ServerReport, scopes: Iterable[Scope], why: str) -> None:
    for scope in scopes:
        for check in checks_in(scope):
            report.checks.setdefault(check.id, "skipped")
            report.skipped.setdefault(check.id, why)


def _worst(findings: list[Finding]) -> CheckStatus:
    worst: CheckStatus = "pass"
    for f in findings:
        if _RANK[f.severity] > _RANK[worst]:
            worst = f.severity
    return worst


def _redactor(ctx: ServerContext) -> Redactor:
    """The entry's secrets (the one heuristic), parsed or as written (an invalid entry's
    headers are only in ``raw``)."""
    config = ctx.config
    values = entry_secrets(config, ctx.environ)
    raw = config.raw.get("headers")
    if isinstance(raw, dict):
        # A value that references ${VAR} is not the secret; its expansion (above) is.
        values.extend(
            v
            for k, v in raw.items()
            if isinstance(v, str) and "${" not in v and is_secret(str(k), v)
        )
    return Redactor(values)


def _opt(redact: Redactor, text: str | None) -> str | None:
    return None if text is None else redact(text)
