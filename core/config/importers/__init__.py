"""Read other MCP clients' configurations and translate their server entries to codebot's.

One module per client format (:mod:`.claude_code`, :mod:`.claude_desktop`, :mod:`.cursor`,
:mod:`.vscode`, :mod:`.gemini`, :mod:`.codex`); each has ``NAME``, ``sources(cwd, home)`` (the
files it reads, with their natural scope) and ``read(path)`` (the servers found, translated).
Which imported servers go where, and the write: :mod:`.plan`. ``codebot import claude`` (a
whole Claude Code setup: :mod:`.claude_setup`) also translates Claude Code's front matter
(:mod:`.claude_frontmatter`) and permissions (:mod:`.claude_permissions`).

What they share (sources, translated entries, the common translations) is
``core.config.translate``, re-exported here; the settings loader reads ``.mcp.json`` through
it without importing this package.
"""

from __future__ import annotations

from codebot_mcp.core.config.translate import (
    FORMATS,
    Imported,
    ImportFormatError,
    Scope,
    Source,
    common_entry,
    env_refs,
    map_strings,
    no_clear_secrets,
    read_json,
    servers_table,
)

__all__ = [
    "FORMATS",
    "ImportFormatError",
    "Imported",
    "Scope",
    "Source",
    "common_entry",
    "env_refs",
    "map_strings",
    "no_clear_secrets",
    "read_json",
    "servers_table",
]
