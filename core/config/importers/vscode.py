"""VS Code: ``<project>/.vscode/mcp.json`` with ``servers`` and ``inputs``.

``${env:VAR}`` becomes ``${VAR}``; ``${input:id}`` (a value VS Code prompts for) becomes
``${ID}`` with a note to export it; ``${workspaceFolder}`` becomes the project's path and
``${userHome}`` your home.
"""

from __future__ import annotations

import re
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

NAME = "vscode"
_INPUT = re.compile(r"\$\{input:([^}]+)\}")


def sources(cwd: Path, home: Path) -> list[Source]:
    """The nearest ``.vscode/mcp.json`` from the working directory upward."""
    for directory in (cwd, *cwd.parents):
        path = directory / ".vscode" / "mcp.json"
        if path.is_file():
            return [Source(NAME, path, "project")]
    return [Source(NAME, cwd / ".vscode" / "mcp.json", "project")]


def _variable(input_id: str) -> str:
    name = re.sub(r"[^A-Za-z0-9]+", "_", input_id).strip("_").upper() or "INPUT"
    return "_" + name if name[0].isdigit() else name


def read(source: Source) -> list[Imported]:
    """The servers of one ``mcp.json``; prompted inputs become variables to export."""
    data = read_json(source.path)
    table = servers_table(data, "servers", source.path)
    inputs = {
        str(i.get("id")): i
        for i in (data.get("inputs") or [] if isinstance(data, dict) else [])
        if isinstance(i, dict)
    }
    workspace = str(source.path.parent.parent)
    out: list[Imported] = []
    for name, raw in table.items():
        if not isinstance(raw, dict):
            out.append(Imported(name, {}, source, skipped="the entry is not an object"))
            continue
        item = Imported(name, {}, source)
        used: list[str] = []

        def fix(value: str, used: list[str] = used) -> str:
            def input_ref(match: re.Match[str]) -> str:
                used.append(match.group(1))
                return "${" + _variable(match.group(1)) + "}"

            value = value.replace("${workspaceFolder}", workspace)
            value = value.replace("${userHome}", str(Path.home()))
            return _INPUT.sub(input_ref, env_refs(value))

        fixed: Any = map_strings(raw, fix)
        item.entry = common_entry(fixed, item.notes, known=("envFile", "dev"))
        for input_id in dict.fromkeys(used):
            described = inputs.get(input_id, {}).get("description")
            what = f" ({described})" if isinstance(described, str) else ""
            item.notes.append(
                f"${{input:{input_id}}}{what} is prompted for by VS Code: written as "
                f"${{{_variable(input_id)}}}; export {_variable(input_id)}"
            )
        if "envFile" in raw:
            item.notes.append("'envFile' is not imported: add its variables to 'env' as ${VAR}")
        out.append(item)
    return out
