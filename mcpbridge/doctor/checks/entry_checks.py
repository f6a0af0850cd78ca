"""Checks over the settings files and each server entry; none of them starts a server."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from codebot_mcp.core.config import paths
from codebot_mcp.core.config.servers import parse_server
from codebot_mcp.core.config.settings import read_json
from codebot_mcp.core.envexpand import UndefinedVariableError, expand, expandable_strings
from codebot_mcp.core.errors import SettingsError
from codebot_mcp.core.proc.lookup import find_command
from codebot_mcp.core.secrets.redact import redact_url
from codebot_mcp.mcpbridge.doctor.checks.check_base import (
    Finding,
    ServerContext,
    TotalsContext,
    check,
)

PLACEHOLDER_VALUE = "http://codebot.invalid"
"""Stands in for unset variables when re-validating an entry: also a well-formed URL, so a
``"url": "${BASE}/mcp"`` does not turn a missing variable into a bogus URL error."""
_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


@check("settings.parse", "settings", "error", "a settings file cannot be read or parsed (exit 3)")
def _parse(ctx: TotalsContext) -> Iterator[Finding]:
    # Settings that fail to load never get here (mcpbridge.doctor.run.unreadable reports them,
    # exit 3); this re-reads each file with the loader's own reader, so a pass is a real one.
    for path in (ctx.settings.global_file, ctx.settings.project_file):
        if path is None:
            continue
        try:
            read_json(path)
        except SettingsError as exc:
            yield parse_finding(exc, path)


def parse_finding(exc: SettingsError, path: Path | None = None) -> Finding:
    """The ``settings.parse`` error for a settings file that cannot be read."""
    return Finding("settings.parse", "error", exc.message, exc.hint, file=path)


@check("settings.servers", "settings", "warning", "no MCP server is configured")
def _servers(ctx: TotalsContext) -> Iterator[Finding]:
    if ctx.servers or ctx.selected:
        return
    files = [str(p) for p in (ctx.settings.global_file, ctx.settings.project_file) if p]
    where = " and ".join(files) if files else "no settings file was found"
    yield Finding(
        "settings.servers",
        "warning",
        f"no MCP servers are configured ({where})",
        f'Add entries under "mcp_servers" in {paths.global_settings_path()} (yours) or in '
        f"{ctx.settings.cwd / paths.PROJECT_DIR / paths.SETTINGS_FILE} (the project's), e.g. "
        "with `codebot mcp add NAME -- COMMAND [ARGS]...`; or run with --cwd pointing at the "
        "project.",
        file=ctx.settings.project_file or ctx.settings.global_file,
        key="mcp_servers",
    )


@check("settings.trust", "entry", "error", "a project server is not trusted, so not started")
def _trust(ctx: ServerContext) -> Iterator[Finding]:
    if ctx.trusted:
        return
    yield ctx.finding(
        "settings.trust",
        "error",
        f"server '{ctx.name}' is defined by the project file {ctx.config.source}, and the "
        f"project is {ctx.trust_state}: it was not started",
        "Review what it runs (`codebot trust` shows it, and what changed), then "
        "`codebot trust`; or pass --trust-project (or set CODEBOT_TRUST_PROJECT=1) for one run.",
    )


@check(
    "settings.trust_settings",
    "settings",
    "warning",
    "a project file sets keys that apply only once the project is trusted",
)
def _trust_settings(ctx: TotalsContext) -> Iterator[Finding]:
    if not ctx.withheld:
        return
    yield Finding(
        "settings.trust_settings",
        "warning",
        f"skipping project settings ({', '.join(ctx.withheld)}) from "
        f"{ctx.settings.project_file}: the project is not trusted, so they do not apply",
        "Review them, then `codebot trust`; or pass --trust-project (or set "
        "CODEBOT_TRUST_PROJECT=1) for one run.",
        file=ctx.settings.project_file,
        key=ctx.withheld[0],
    )


@check("settings.disabled", "settings", "info", "a server is disabled and is not checked")
def _disabled(ctx: TotalsContext) -> Iterator[Finding]:
    for server in ctx.servers:
        if not server.config.enabled:
            yield server.finding(
                "settings.disabled",
                "info",
                f"server '{server.name}' is disabled; it was not checked",
                f'Set "enabled": true for {server.where} to use and check it.',
                key="enabled",
            )


# -- every enabled entry -------------------------------------------------------------------


def undefined_variables(
    raw: Mapping[str, Any], environ: Mapping[str, str]
) -> list[tuple[str, str]]:
    """Every ``(key, VAR)`` whose ``${VAR}`` is unset and has no default, in key order.

    The loader stops at the first one; listing them all saves a fix-and-rerun loop.
    """
    found: list[tuple[str, str]] = []
    for key, value in expandable_strings(raw):
        known = dict(environ)
        while True:
            try:
                expand(value, known)
                break
            except UndefinedVariableError as exc:
                found.append((key, exc.name))
                known[exc.name] = PLACEHOLDER_VALUE
    return found


@check("settings.entry", "entry", "error", "a server entry is invalid (missing or mistyped keys)")
def _entry(ctx: ServerContext) -> Iterator[Finding]:
    config = ctx.config
    if config.error is None:
        return
    message, hint = config.error, config.hint
    missing = undefined_variables(config.raw, ctx.environ)
    if missing:
        # Re-validate with the variables filled in: when that passes, settings.variable has
        # said everything; when it fails, the entry has a second problem worth its own line.
        base_dir = ctx.settings.project_root or ctx.settings.cwd
        environ = {**ctx.environ, **{name: PLACEHOLDER_VALUE for _, name in missing}}
        again = parse_server(config.name, config.raw, config.source, environ, base_dir)
        if again.error is None:
            return
        message, hint = again.error, again.hint
    yield ctx.finding(
        "settings.entry",
        "error",
        message,
        hint or f"Fix the entry of {ctx.where} (docs/settings.md lists the keys).",
    )


@check("settings.variable", "entry", "error", "a ${VAR} without default is not set")
def _variables(ctx: ServerContext) -> Iterator[Finding]:
    for key, name in undefined_variables(ctx.config.raw, ctx.environ):
        yield ctx.finding(
            "settings.variable",
            "error",
            f"server '{ctx.name}': variable ${{{name}}} in '{key}' is not set",
            f"Export {name} before running codebot, or write ${{{name}:-default}} in '{key}' "
            f"of {ctx.where}.",
            key=key,
        )


def _entry_warnings(ctx: ServerContext, check_id: str, kind: str) -> Iterator[Finding]:
    """The warnings of ``kind`` that parsing the entry recorded, as ``check_id`` findings."""
    for warning in ctx.config.warnings:
        if warning.kind == kind:
            yield ctx.finding(
                check_id,
                "warning",
                f"server '{ctx.name}': {warning.message}",
                f"{warning.hint} in {ctx.where}.",
                key=warning.key,
            )


@check("settings.unknown_key", "entry", "warning", "an entry has a key codebot does not know")
def _unknown_keys(ctx: ServerContext) -> Iterator[Finding]:
    yield from _entry_warnings(ctx, "settings.unknown_key", "unknown_key")


@check("settings.milliseconds", "entry", "warning", "a timeout looks like milliseconds")
def _milliseconds(ctx: ServerContext) -> Iterator[Finding]:
    yield from _entry_warnings(ctx, "settings.milliseconds", "milliseconds")


@check("settings.unknown_setting", "settings", "warning", "a settings file has an unknown key")
def _unknown_settings(ctx: TotalsContext) -> Iterator[Finding]:
    for warning in ctx.settings.warnings:
        yield Finding(
            "settings.unknown_setting",
            "warning",
            warning.message,
            f"Rename or remove the key in {warning.file}.",
            file=warning.file,
            key=warning.key,
        )


@check("settings.override", "entry", "info", "a project entry replaces a global one")
def _override(ctx: ServerContext) -> Iterator[Finding]:
    config = ctx.config
    if config.overrides is not None:
        yield ctx.finding(
            "settings.override",
            "info",
            f"server '{ctx.name}' from {config.source} replaces the entry of the same name "
            f"in {config.overrides}",
            "Nothing to do if intended; rename one of them to keep both.",
        )


# -- every valid entry ---------------------------------------------------------------------


@check("settings.command", "config", "error", "the stdio command is not found or not executable")
def _command(ctx: ServerContext) -> Iterator[Finding]:
    config = ctx.config
    if config.type != "stdio" or not config.command:
        return
    command = config.command
    # The same lookup the launcher does (core.proc.lookup), so the doctor and a session agree.
    search_path = config.env.get("PATH")
    if find_command(command, config.cwd, config.env) is not None:
        return
    if os.sep in command:
        path = Path(command).expanduser()
        path = path if path.is_absolute() or config.cwd is None else config.cwd / path
        if path.is_file():
            why, fix = "is not executable", f"Make it executable (chmod +x {command})"
        else:
            why, fix = "does not exist", "Fix the path"
    else:
        where = "the PATH set in 'env'" if search_path is not None else "PATH"
        why, fix = f"is not found on {where}", "Install it, or write its full path"
    yield ctx.finding(
        "settings.command",
        "error",
        f"server '{ctx.name}': command '{command}' {why}",
        f"{fix} in 'command' of {ctx.where}.",
        key="command",
    )


@check("settings.cwd", "config", "error", "the working directory does not exist")
def _cwd(ctx: ServerContext) -> Iterator[Finding]:
    config = ctx.config
    if config.type != "stdio" or config.cwd is None or config.cwd.is_dir():
        return
    why = "is not a directory" if config.cwd.exists() else "does not exist"
    base = ctx.settings.project_root or ctx.settings.cwd
    yield ctx.finding(
        "settings.cwd",
        "error",
        f"server '{ctx.name}': working directory {config.cwd} {why}",
        f"Create it, or fix 'cwd' of {ctx.where} (relative paths start at {base}).",
        key="cwd",
    )


@check(
    "settings.url", "config", "error", "the URL is malformed, carries credentials, or is plain http"
)
def _url(ctx: ServerContext) -> Iterator[Finding]:
    config = ctx.config
    if config.type != "http" or not config.url:
        return
    url, shown = config.url, redact_url(config.url)
    parts = urlsplit(url)
    try:
        _ = parts.port  # raises on a port that is not a number in range
        port_ok = True
    except ValueError:
        port_ok = False
    if not port_ok or not parts.hostname:
        what = "its port is not a number from 0 to 65535" if not port_ok else "it has no host"
        yield ctx.finding(
            "settings.url",
            "error",
            f"server '{ctx.name}': URL {shown} is malformed: {what}",
            f"Write 'url' of {ctx.where} as https://host[:port]/path.",
            key="url",
        )
        return
    if shown != url:
        yield ctx.finding(
            "settings.url",
            "warning",
            f"server '{ctx.name}': the URL carries credentials (user:password@ or a token in "
            "the query)",
            f'Move them to \'headers\' of {ctx.where}, e.g. "Authorization": "Bearer '
            '${TOKEN}": URLs end up in logs and proxies.',
            key="url",
        )
    if parts.scheme == "http" and parts.hostname not in _LOCAL_HOSTS:
        yield ctx.finding(
            "settings.url",
            "warning",
            f"server '{ctx.name}': {shown} is plain http to a remote host; requests and "
            "headers travel unencrypted",
            f"Use https:// in 'url' of {ctx.where}.",
            key="url",
        )


@check(
    "settings.secret_in_args",
    "entry",
    "warning",
    "a credential is passed in 'args', where every local user can read it in the process table",
)
def _secret_in_args(ctx: ServerContext) -> Iterator[Finding]:
    from codebot_mcp.core.envexpand import referenced
    from codebot_mcp.core.secrets.credentials import is_credential_name
    from codebot_mcp.core.secrets.redact import expandable_values

    for key, text in expandable_values(ctx.config.raw):
        if not key.startswith("args["):
            continue
        names = [n for n in referenced(text) if is_credential_name(n)]
        if not names:
            continue
        variable = names[0]
        yield ctx.finding(
            "settings.secret_in_args",
            "warning",
            f"server '{ctx.name}': '{key}' expands ${{{variable}}}, a credential; command-line "
            "arguments are visible to every local user in the process table (ps)",
            f'Pass it in \'env\' instead, e.g. "env": {{"{variable}": "${{{variable}}}"}}, '
            f"and let the server read it from there ({ctx.where}).",
            key=key,
        )


@check(
    "settings.expands_api_key",
    "entry",
    "warning",
    "an entry expands the model's API key (or a credential) into what it sends a server",
)
def _expands_api_key(ctx: ServerContext) -> Iterator[Finding]:
    """Every string the loader expands (core.envexpand.EXPANDED_STRINGS: oauth included) is
    looked at: the model API key sent to a server is almost always a mistake or an attack."""
    from codebot_mcp.core.config import trust

    api_key_env = ctx.settings.api_key_env
    for item in trust.expansions(ctx.config, api_key_env, ctx.environ):
        if not item.api_key:
            continue
        yield ctx.finding(
            "settings.expands_api_key",
            "warning",
            f"server '{ctx.name}': '{item.key}' expands ${{{item.variable}}}, your model API "
            "key; the server receives it",
            f"Give the server its own credential in {ctx.where} (a variable of its own), "
            "never the model's key.",
            key=item.key,
        )
