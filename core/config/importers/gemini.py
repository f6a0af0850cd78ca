"""Gemini CLI: ``~/.gemini/settings.json`` and ``<project>/.gemini/settings.json``.

``mcpServers`` entries: ``command``/``args``/``env``/``cwd``, ``httpUrl`` (Streamable HTTP),
``url`` (SSE), ``headers``, ``timeout`` in **milliseconds**, ``includeTools``/``excludeTools``,
``trust``. ``$VAR`` and ``${VAR}`` both expand in Gemini; codebot writes ``${VAR}``.
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
)
from codebot_mcp.core.config.importers import servers_table as _table

NAME = "gemini"


def sources(cwd: Path, home: Path) -> list[Source]:
    """The nearest project ``.gemini/settings.json`` and the user's."""
    user = home / ".gemini" / "settings.json"
    project = next(
        (
            d / ".gemini" / "settings.json"
            for d in (cwd, *cwd.parents)
            if (d / ".gemini" / "settings.json").is_file()
            and d / ".gemini" / "settings.json" != user
        ),
        None,
    )
    return ([Source(NAME, project, "project")] if project else []) + [Source(NAME, user, "global")]


def read(source: Source) -> list[Imported]:
    """The servers of one settings file."""
    table = _table(read_json(source.path), "mcpServers", source.path)
    out: list[Imported] = []
    for name, raw in table.items():
        if not isinstance(raw, dict):
            out.append(Imported(name, {}, source, skipped="the entry is not an object"))
            continue
        item = Imported(name, {}, source)
        fixed: Any = map_strings(raw, lambda v: env_refs(v, bare=True))
        if "httpUrl" in fixed:
            fixed = {**fixed, "type": "http"}
        elif "url" in fixed:
            fixed = {**fixed, "type": "sse"}
        item.entry = common_entry(
            fixed,
            item.notes,
            url_keys=("httpUrl", "url"),
            timeout_ms_key="timeout",
            known=("includeTools", "excludeTools", "trust", "description"),
        )
        for theirs, ours in (("includeTools", "include_tools"), ("excludeTools", "exclude_tools")):
            if isinstance(raw.get(theirs), list):
                item.entry[ours] = [str(t) for t in raw[theirs]]
        if isinstance(raw.get("description"), str):
            item.entry["description"] = raw["description"]
        if raw.get("trust") is True:
            item.notes.append("'trust': true is not imported: codebot's permission rules decide")
        out.append(item)
    return out
