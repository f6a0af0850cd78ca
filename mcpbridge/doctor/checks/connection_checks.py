"""Checks over the connection to each server: launch, handshake, listing, filters."""

from __future__ import annotations

from collections.abc import Iterator
from fnmatch import fnmatchcase

from codebot_mcp.mcpbridge.connection.failures import Failure
from codebot_mcp.mcpbridge.doctor.checks.check_base import Finding, ServerContext, check

SLOW_FRACTION = 0.5
"""A handshake that uses more than this share of its timeout fails on a busier machine."""


def _failure(ctx: ServerContext) -> Failure | None:
    return ctx.client.failure if ctx.client is not None else None


def one_line(message: str) -> str:
    """A multi-line error (pydantic's, say) as one line, without its documentation links."""
    lines = [ln.strip() for ln in message.splitlines() if ln.strip()]
    return ": ".join(ln for ln in lines if not ln.startswith("For further information"))


def _log_hint(failure: Failure) -> str:
    return f"; the server's stderr is in {failure.log_file}" if failure.log_file else ""


@check(
    "connect.handshake",
    "connect",
    "error",
    "the server fails to launch or to complete the handshake",
)
def _handshake(ctx: ServerContext) -> Iterator[Finding]:
    failure = _failure(ctx)
    if failure is None or failure.stage in ("list", "auth") or failure.timed_out:
        return
    hint = failure.hint or f"Run the command of {ctx.where} by hand to see why it fails"
    yield ctx.finding(
        "connect.handshake",
        "error",
        f"server '{ctx.name}': {failure.stage} failed: {one_line(failure.message)}",
        hint.rstrip(".") + _log_hint(failure) + ".",
    )


@check("connect.auth", "connect", "error", "the server needs authorization (login or credentials)")
def _auth(ctx: ServerContext) -> Iterator[Finding]:
    failure = _failure(ctx)
    if failure is None or failure.stage != "auth":
        return
    what = "needs login" if failure.needs_login else "authorization failed"
    yield ctx.finding(
        "connect.auth",
        "error",
        f"server '{ctx.name}' {what}: {one_line(failure.message)}",
        failure.hint or f"Check 'headers' and 'oauth' of {ctx.where}.",
        key="oauth",
    )


@check("connect.timeout", "connect", "error", "the handshake does not finish within the timeout")
def _timeout(ctx: ServerContext) -> Iterator[Finding]:
    failure = _failure(ctx)
    if failure is None or not failure.timed_out:
        return
    hint = failure.hint or f"Raise 'timeout' of {ctx.where}."
    yield ctx.finding(
        "connect.timeout",
        "error",
        f"server '{ctx.name}': {failure.stage} got no answer within {ctx.config.timeout:g} s",
        f"{hint.rstrip('.')} (doctor also takes --timeout SECONDS){_log_hint(failure)}.",
        key="timeout",
    )


@check("connect.slow", "connect", "warning", "the handshake takes more than half its timeout")
def _slow(ctx: ServerContext) -> Iterator[Finding]:
    info = ctx.client.info if ctx.client is not None else None
    if info is None or ctx.client is None or ctx.client.failure is not None:
        return
    limit_ms = ctx.config.timeout * 1000
    if info.handshake_ms > SLOW_FRACTION * limit_ms:
        yield ctx.finding(
            "connect.slow",
            "warning",
            f"server '{ctx.name}' took {info.handshake_ms / 1000:.1f} s to connect, "
            f"{info.handshake_ms / limit_ms:.0%} of its {ctx.config.timeout:g} s timeout",
            f"Raise 'timeout' of {ctx.where}, so a busier machine does not fail it.",
            key="timeout",
        )


@check("tools.list", "connect", "error", "tools/list fails after a good handshake")
def _list(ctx: ServerContext) -> Iterator[Finding]:
    failure = _failure(ctx)
    if failure is None or failure.stage != "list" or failure.timed_out:
        return
    if "validation error" in failure.message:
        # The SDK validates the whole result: one malformed tool hides every tool.
        hint = (
            "One tool definition breaks the MCP schema at the path shown (tools.<index>...), "
            "so the SDK rejects the whole listing and none of the tools is usable. Ask the "
            "server's author to fix that tool"
        )
    else:
        hint = failure.hint or "The server connected but cannot list its tools; check its logs"
    yield ctx.finding(
        "tools.list",
        "error",
        f"server '{ctx.name}': listing its tools failed: {one_line(failure.message)}",
        hint.rstrip(".") + _log_hint(failure) + ".",
    )


@check(
    "settings.filter", "server", "warning", "an include_tools/exclude_tools pattern matches no tool"
)
def _filters(ctx: ServerContext) -> Iterator[Finding]:
    if ctx.listed is None:
        return
    names = [t.name for t in ctx.listed]
    config = ctx.config
    for key, patterns in (
        ("include_tools", config.include_tools or ()),
        ("exclude_tools", config.exclude_tools),
    ):
        for pattern in patterns:
            if not any(fnmatchcase(name, pattern) for name in names):
                yield ctx.finding(
                    "settings.filter",
                    "warning",
                    f"server '{ctx.name}': pattern '{pattern}' in '{key}' matches none of its "
                    f"{len(names)} tools",
                    f"Fix the pattern in '{key}' of {ctx.where} (patterns are case-sensitive "
                    "globs on the server's own tool names).",
                    key=key,
                )


@check(
    "tools.empty", "server", "warning", "the server offers no tools (or the filters hide them all)"
)
def _empty(ctx: ServerContext) -> Iterator[Finding]:
    if ctx.tools or (ctx.client is not None and ctx.client.app_tools):
        return  # tools.app_only speaks for a server whose every tool is app-only
    if ctx.listed:
        yield ctx.finding(
            "tools.empty",
            "warning",
            f"server '{ctx.name}': include_tools/exclude_tools hide all of its "
            f"{len(ctx.listed)} tools",
            f"Loosen 'include_tools' or 'exclude_tools' of {ctx.where}.",
            key="include_tools" if ctx.config.include_tools is not None else "exclude_tools",
        )
    else:
        yield ctx.finding(
            "tools.empty",
            "info",
            f"server '{ctx.name}' offers no tools",
            "Nothing to do if it serves only resources or prompts.",
        )


@check(
    "tools.app_only",
    "server",
    "warning",
    "every tool of the server is app-only (MCP Apps): the model gets none of them",
)
def _app_only(ctx: ServerContext) -> Iterator[Finding]:
    apps = ctx.client.app_tools if ctx.client is not None else []
    if ctx.tools or not apps:
        return
    names = ", ".join(f"'{t.name}'" for t in apps[:5]) + (", ..." if len(apps) > 5 else "")
    yield ctx.finding(
        "tools.app_only",
        "warning",
        f"server '{ctx.name}': all of its {len(apps)} tool{'s' if len(apps) != 1 else ''} "
        f'({names}) are app-only (_meta.ui.visibility leaves out "model"); codebot renders '
        "no MCP Apps, so the model gets none of them",
        "The server is built for hosts that render MCP Apps (an HTML page in a frame). "
        "`codebot mcp list --all` shows the tools and `codebot mcp call` can still call one; "
        f"to drop the server, run `codebot mcp disable {ctx.name}` or remove it from "
        f"{ctx.where}.",
    )
