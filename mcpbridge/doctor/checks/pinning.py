"""Checks against rug pulls and tool poisoning: drift from ``.codebot/mcp-lock.json``, and
instructions hidden in tool descriptions."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from codebot_mcp.mcpbridge.doctor.checks.base import Finding, ServerContext, ToolContext, check
from codebot_mcp.mcpbridge.tools.pinning import (
    LockfileError,
    drift,
    lock_path,
    read,
    registry_drift,
)

_ADDRESSED = re.compile(
    r"ignore (all |any )?(previous|prior|above) instructions|disregard (the |all )?(previous|"
    r"above)|<\s*/?\s*(important|system|instructions?)\s*>|do not (tell|mention|inform) the user|"
    r"you must (always|first)|before (using|calling|answering)[^.]{0,40}(read|send|call)",
    re.IGNORECASE,
)
_CREDENTIALS = re.compile(
    r"~/\.ssh|\bid_(rsa|ed25519|ecdsa)\b|(^|[\s'\"`/])\.env\b|\.aws/credentials|\.netrc|"
    r"\.npmrc|\.pypirc|private key|api[_ -]?key|/etc/(passwd|shadow)",
    re.IGNORECASE,
)
_OTHER_TOOL = re.compile(r"\bmcp__([A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*)__[A-Za-z0-9_-]+")


def _invisible(text: str) -> list[str]:
    found: list[str] = []
    for char in text:
        code = ord(char)
        if 0xE0000 <= code <= 0xE007F:
            found.append("Unicode tag characters")
        elif code in (0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF):
            found.append("zero-width characters")
        elif 0x202A <= code <= 0x202E or 0x2066 <= code <= 0x2069:
            found.append("bidi overrides")
        elif unicodedata.category(char) == "Cc" and char not in "\n\t":
            found.append("control characters")
    return sorted(set(found))


@check(
    "tools.lock",
    "server",
    "error",
    "a server's tools changed since `codebot mcp lock` (rug pull; an error with --strict), "
    "or the lock cannot be read (an error)",
)
def _lock(ctx: ServerContext) -> Iterator[Finding]:
    settings = ctx.settings
    try:
        recorded = read(lock_path(settings.project_root, settings.cwd))
    except LockfileError as exc:
        yield ctx.finding("tools.lock", "error", exc.message, exc.hint or "")
        return
    if recorded is None or ctx.client is None:
        return
    info = ctx.client.info
    entry = recorded.get(ctx.name)
    if not isinstance(entry, dict):
        yield ctx.finding(
            "tools.lock",
            "warning",
            f"server '{ctx.name}' is not in the lock file",
            "Review its tools, then run `codebot mcp lock` to pin them.",
        )
        return
    origin = ctx.config.provenance.as_dict() if ctx.config.provenance else None
    changes = registry_drift(entry, origin)  # pyright: ignore[reportUnknownArgumentType]
    changes += drift(entry, info.version if info else None, list(ctx.client.tools))  # pyright: ignore[reportUnknownArgumentType]
    for change in changes:
        yield ctx.finding(
            "tools.lock",
            "warning",
            f"server '{ctx.name}' differs from the lock: {change}",
            "Review what changed (`codebot mcp list --server "
            f"{ctx.name} --schemas`), then `codebot mcp lock` to accept it.",
        )


@check(
    "tool.hidden_instructions",
    "tool",
    "warning",
    "a description hides instructions: invisible Unicode, text addressed to the model, "
    "other servers' tools, credential files",
)
def _hidden(ctx: ToolContext) -> Iterator[Finding]:
    text = ctx.tool.description
    reasons: list[str] = [f"it contains {what}" for what in _invisible(text)]
    if match := _ADDRESSED.search(text):
        reasons.append(f"it addresses the model ('{match.group(0)}')")
    server = ctx.server.name
    others = sorted({m.group(0) for m in _OTHER_TOOL.finditer(text) if m.group(1) != server})
    if others:
        reasons.append(f"it mentions other servers' tools ({', '.join(others)})")
    if match := _CREDENTIALS.search(text):
        reasons.append(f"it asks about credentials ('{match.group(0).strip()}')")
    for reason in reasons:
        yield ctx.finding(
            "tool.hidden_instructions",
            "warning",
            f"tool '{ctx.tool.original_name}' of server '{server}': {reason} (tool poisoning)",
            f'Do not use it unless you trust the server; hide it with "exclude_tools": '
            f'["{ctx.tool.original_name}"] in {ctx.server.where}.',
        )
