"""Claude Code: a project's ``.mcp.json`` and ``~/.claude.json`` (user and per-project entries).

Both use ``mcpServers`` with ``type`` ``stdio`` / ``http`` / ``sse``, ``command``, ``args``,
``env``, ``url``, ``headers``; variables are written ``${VAR}`` / ``${VAR:-default}`` as in
codebot.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from codebot_mcp.core import jsonutil
from codebot_mcp.core.config.translate import (
    CLAUDE_CODE,
    Imported,
    Source,
    claude_entry,
    read_json,
    servers_table,
)

NAME = CLAUDE_CODE


def sources(cwd: Path, home: Path) -> list[Source]:
    """``<project>/.mcp.json`` (project) and ``~/.claude.json`` (global, plus this project's)."""
    found = [Source(NAME, d / ".mcp.json", "project") for d in (cwd, *cwd.parents)]
    project = next((s for s in found if s.path.is_file()), None)
    out = [project] if project else []
    user = home / ".claude.json"
    out.append(Source(NAME, user, "global"))
    out.append(Source(NAME, user, "project", section=_project_key(user, cwd)))
    return out


def _project_key(user: Path, cwd: Path) -> str:
    """The key of ``projects`` in ``~/.claude.json`` for ``cwd``: Claude Code keys them by the
    directory it was started in, usually the repository root, so the nearest one upward."""

    try:
        projects = jsonutil.loads(user.read_text(encoding="utf-8")).get("projects")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        return str(cwd)  # an unreadable file is reported when it is read
    if not isinstance(projects, dict):
        return str(cwd)
    for directory in (cwd, *cwd.parents, *cwd.resolve().parents, cwd.resolve()):
        if str(directory) in projects:
            return str(directory)
    return str(cwd)


def translate(name: str, raw: Any, source: Source) -> Imported:
    """One ``mcpServers`` entry as a codebot entry (``core.config.translate.claude_entry``)."""
    return claude_entry(name, raw, source)


def read(source: Source) -> list[Imported]:
    """The servers of one source (raises ``ImportFormatError`` for a malformed file)."""
    data = read_json(source.path)
    if source.section is not None:
        projects = data.get("projects", {}) if isinstance(data, dict) else {}
        project = projects.get(source.section, {}) if isinstance(projects, dict) else {}
        table = servers_table(project or {}, "mcpServers", source.path)
    else:
        table = servers_table(data, "mcpServers", source.path)
    return [translate(n, e, source) for n, e in table.items()]
