"""Cursor: ``~/.cursor/mcp.json`` (global) and ``<project>/.cursor/mcp.json``.

Entries are ``mcpServers`` like Claude's; values may say ``${env:VAR}``, ``${userHome}`` and
``${workspaceFolder}``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from codebot_mcp.core.config.importers import (
    Imported,
    Source,
    common_entry,
    env_refs,
    map_strings,
    read_json,
    servers_table,
)

NAME = "cursor"


def sources(cwd: Path, home: Path) -> list[Source]:
    """The nearest project ``.cursor/mcp.json`` and the global one."""
    project = next(
        (
            d / ".cursor" / "mcp.json"
            for d in (cwd, *cwd.parents)
            if (d / ".cursor" / "mcp.json").is_file()
        ),
        None,
    )
    out = [Source(NAME, project, "project")] if project and project.parent.parent != home else []
    return [*out, Source(NAME, home / ".cursor" / "mcp.json", "global")]


def workspace_of(source: Source) -> Path:
    return source.path.parent.parent


def read(source: Source) -> list[Imported]:
    """The servers of one ``mcp.json``."""
    table = servers_table(read_json(source.path), "mcpServers", source.path)
    home = str(Path.home())
    workspace = str(workspace_of(source))

    def fix(value: str) -> str:
        value = value.replace("${userHome}", home).replace("${workspaceFolder}", workspace)
        return env_refs(value)

    out: list[Imported] = []
    for name, raw in table.items():
        if not isinstance(raw, dict):
            out.append(Imported(name, {}, source, skipped="the entry is not an object"))
            continue
        item = Imported(name, {}, source)
        fixed: Any = map_strings(raw, fix)
        item.entry = common_entry(fixed, item.notes, known=("envFile",))
        if "envFile" in raw:
            item.notes.append("'envFile' is not imported: add its variables to 'env' as ${VAR}")
        out.append(item)
    return out
