"""Checks of the managed settings (``core.config.managed``): which policy is in force, and
which configured servers it leaves out, and why."""

from __future__ import annotations

from collections.abc import Iterator

from codebot_mcp.mcpbridge.doctor.checks.check_base import Finding, TotalsContext, check


@check(
    "policy.managed",
    "settings",
    "info",
    "managed settings are in force: the file, the keys it locks, whether it requires a lock",
)
def _managed(ctx: TotalsContext) -> Iterator[Finding]:
    settings = ctx.settings
    if settings.managed_file is None:
        return
    locked = sorted(settings.managed_locked)
    parts = [f"locks {', '.join(locked)}" if locked else "locks no key"]
    if settings.require_mcp_lock:
        parts.append("requires every server to be pinned in .codebot/mcp-lock.json")
    yield Finding(
        "policy.managed",
        "info",
        f"managed settings are in force: {settings.managed_file} ({'; '.join(parts)})",
        "Whoever manages this machine sets them; your and the project's settings cannot "
        "change what they lock.",
        file=settings.managed_file,
    )


@check(
    "policy.server",
    "settings",
    "warning",
    "a configured server is left out by the managed settings (denied, or not allowed)",
)
def _removed(ctx: TotalsContext) -> Iterator[Finding]:
    settings = ctx.settings
    for name, reason in settings.policy_removed.items():
        yield Finding(
            "policy.server",
            "warning",
            f"server '{name}' is left out by the managed settings: {reason}",
            f"Remove it from your settings (`codebot mcp remove {name}`), or ask whoever "
            f"manages {settings.managed_file} to allow it.",
            server=name,
            file=settings.managed_file,
        )
