"""Claude Desktop: ``claude_desktop_config.json`` (``mcpServers``: command, args, env)."""

from __future__ import annotations

import sys
from pathlib import Path

from codebot_mcp.core.config.importers import (
    Imported,
    Source,
    claude_code,
    read_json,
    servers_table,
)

NAME = "claude-desktop"


def config_paths(home: Path) -> list[Path]:
    """Linux (``~/.config/Claude``, or ``$XDG_CONFIG_HOME``) and macOS locations."""
    import os

    xdg = os.environ.get("XDG_CONFIG_HOME")
    linux = (Path(xdg) if xdg else home / ".config") / "Claude" / "claude_desktop_config.json"
    mac = home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    return [mac, linux] if sys.platform == "darwin" else [linux, mac]


def sources(cwd: Path, home: Path) -> list[Source]:
    """Every location Claude Desktop reads, user-level (global)."""
    return [Source(NAME, p, "global") for p in config_paths(home)]


def read(source: Source) -> list[Imported]:
    """The servers of the config file."""
    table = servers_table(read_json(source.path), "mcpServers", source.path)
    return [claude_code.translate(n, e, source) for n, e in table.items()]
