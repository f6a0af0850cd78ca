"""Pinned tool definitions: ``.codebot/mcp-lock.json`` records, per server, its version and a hash
of each tool's description, input schema and annotations, so a server that changes a tool after
you reviewed it (a "rug pull") is caught by ``mcp doctor`` (``tools.lock``)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codebot_mcp.core import jsonutil
from codebot_mcp.core.config import paths, projectfiles
from codebot_mcp.core.errors import SettingsError

if TYPE_CHECKING:
    import mcp_types as types

LOCK_FILE = "mcp-lock.json"
LOCK_VERSION = 1


def lock_path(project_root: Path | None, cwd: Path) -> Path:
    """``<project root>/.codebot/mcp-lock.json`` (the working directory without a project)."""
    return (project_root or cwd) / paths.PROJECT_DIR / LOCK_FILE


def tool_hash(tool: types.Tool) -> str:
    """sha256 of what the model is told about a tool: description, input schema, annotations."""
    annotations = (
        tool.annotations.model_dump(mode="json", exclude_none=True) if tool.annotations else None
    )
    data = {
        "description": tool.description,
        "input_schema": tool.input_schema,
        "annotations": annotations,
    }
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def server_entry(version: str | None, tools: list[types.Tool]) -> dict[str, Any]:
    """One server's record in the lock."""
    return {
        "version": version,
        "tools": {t.name: tool_hash(t) for t in sorted(tools, key=lambda t: t.name)},
    }


def write(path: Path, servers: dict[str, dict[str, Any]]) -> None:
    """Write the lock atomically (sorted, so a re-lock of the same tools changes no byte),
    never outside the project (:mod:`core.config.projectfiles`: a symlinked ``.codebot`` or
    a planted link in place of the lock is refused).

    Raises:
        ProjectWriteError: the lock would land outside the project or in codebot's own files.
        OSError: it cannot be written.
    """
    document = {"lock_version": LOCK_VERSION, "servers": dict(sorted(servers.items()))}
    text = json.dumps(document, indent=2, sort_keys=True) + "\n"
    projectfiles.write(path, text, root=path.parent.parent)


class LockfileError(SettingsError):
    """The lock exists but cannot be read: pins must not silently switch off (exit 3)."""


def read(path: Path) -> dict[str, Any] | None:
    """The servers recorded in the lock, or None when there is no lock.

    Raises:
        LockfileError: the file exists but cannot be read, is not JSON (or is nested too
            deeply to read), or has no ``servers`` object. A broken lock is an error, not
            "no pins": a repository must not switch pinning off by corrupting its lock.
    """
    hint = (
        f"Fix {path}, or delete it and run `codebot mcp lock` again (review the servers' "
        "tools first: the lock pins what they are now)."
    )
    try:
        data = jsonutil.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise LockfileError(
            f"cannot read the lock file {path}: {exc.strerror or exc}", hint=hint
        ) from None
    except ValueError as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise LockfileError(f"cannot read the lock file {path}: {reason}", hint=hint) from None
    servers = data.get("servers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise LockfileError(f"the lock file {path} has no 'servers' object", hint=hint)
    return servers  # pyright: ignore[reportUnknownVariableType]


def drift(recorded: dict[str, Any], version: str | None, tools: list[types.Tool]) -> list[str]:
    """How a server differs from its record, one sentence per difference (empty: no drift)."""
    out: list[str] = []
    if recorded.get("version") != version:
        out.append(f"its version changed from {recorded.get('version')} to {version}")
    pinned: dict[str, Any] = recorded.get("tools") or {}
    now = {t.name: tool_hash(t) for t in tools}
    for name in sorted(now):
        if name not in pinned:
            out.append(f"tool '{name}' is new")
        elif pinned[name] != now[name]:
            out.append(f"tool '{name}' changed its description, schema or annotations")
    out.extend(f"tool '{name}' is gone" for name in sorted(set(pinned) - set(now)))
    return out


def registry_drift(recorded: dict[str, Any], provenance: dict[str, Any] | None) -> list[str]:
    """How the entry's registry origin differs from the one pinned (empty: none pinned, or
    the same)."""
    pinned = recorded.get("registry")
    if not isinstance(pinned, dict) or pinned == provenance:
        return []
    if provenance is None:
        return [f"it no longer records where it came from (the lock pins {_origin(pinned)})"]  # pyright: ignore[reportUnknownArgumentType]
    return [f"it was installed from {_origin(provenance)}, the lock pins {_origin(pinned)}"]  # pyright: ignore[reportUnknownArgumentType]


def _origin(record: dict[str, Any]) -> str:
    chosen = record.get("package") or record.get("remote") or {}
    what = chosen.get("identifier") or chosen.get("url") or "?"
    return f"{record.get('name')} {record.get('version')} ({what})"


def pins(project_root: Path | None, cwd: Path) -> dict[tuple[str, str], str]:
    """(server, tool) → pinned hash, from the project's lock (empty without one)."""
    servers = read(lock_path(project_root, cwd)) or {}
    out: dict[tuple[str, str], str] = {}
    for server, entry in servers.items():
        tools = entry.get("tools") if isinstance(entry, dict) else None
        if isinstance(tools, dict):
            out.update({(server, name): str(h) for name, h in tools.items()})  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    return out
