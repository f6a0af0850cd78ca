"""Checks of entries ``codebot mcp install`` wrote: a newer version in their registry, a
version the registry deprecated, a ``provenance`` codebot cannot read."""

from __future__ import annotations

from collections.abc import Iterator

from codebot_mcp.core.config import paths
from codebot_mcp.core.secrets.redact import printable
from codebot_mcp.mcpbridge.doctor.checks.check_base import Finding, ServerContext, check


def _scope(ctx: ServerContext) -> str:
    is_global = ctx.config.source.resolve() == paths.global_settings_path().resolve()
    return "global" if is_global else "project"


@check(
    "registry.newer",
    "registry",
    "warning",
    "an installed server has a newer version in its registry, or its version is deprecated "
    "or gone there (--offline skips it)",
)
def _newer(ctx: ServerContext) -> Iterator[Finding]:
    update = ctx.update
    if update is None:
        return
    origin = update.provenance
    name = printable(origin.name, one_line=True)
    registry = printable(origin.registry, one_line=True)
    installed = printable(origin.version, one_line=True)
    if update.error is not None:
        yield ctx.finding(
            "registry.newer",
            "info",
            f"server '{ctx.name}': could not ask {registry} for newer versions of {name}: "
            f"{printable(update.error, one_line=True)}",
            "Check your connection, or pass --offline to skip the registry.",
        )
        return
    if update.latest is None:
        yield ctx.finding(
            "registry.newer",
            "warning",
            f"server '{ctx.name}' was installed from {name} {installed}, which {registry} no "
            "longer lists",
            "It may have been removed (deleted); look for a replacement with `codebot mcp search`.",
            key="provenance",
        )
        return
    status = update.installed.status if update.installed else "deleted"
    if status != "active":
        message = update.installed.status_message if update.installed else None
        why = f": {printable(message, one_line=True)}" if message else ""
        yield ctx.finding(
            "registry.newer",
            "warning",
            f"server '{ctx.name}': {name} {installed} is {status} in {registry}{why}",
            "Install another version (or the server the message names).",
            key="provenance",
        )
    newer = update.newer
    if newer is not None:
        version = printable(newer, one_line=True)
        yield ctx.finding(
            "registry.newer",
            "warning",
            f"server '{ctx.name}' runs {name} {installed}; {version} is the latest in {registry}",
            f"Review it and update: codebot mcp install {name}@{version} --name {ctx.name} "
            f"--scope {_scope(ctx)} --force",
            key="provenance",
        )


@check(
    "registry.provenance",
    "entry",
    "warning",
    "an entry's 'provenance' (what `mcp install` recorded) cannot be read",
)
def _provenance(ctx: ServerContext) -> Iterator[Finding]:
    for warning in ctx.config.warnings:
        if warning.kind == "provenance":
            yield ctx.finding(
                "registry.provenance",
                "warning",
                f"server '{ctx.name}': {warning.message}",
                f"{warning.hint} ({ctx.where})",
                key="provenance",
            )
