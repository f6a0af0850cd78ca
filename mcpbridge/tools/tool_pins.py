"""Pinned tool definitions: ``.codebot/mcp-lock.json`` records, per server, its version and a hash
of each tool's description, input schema and annotations (and, since the lock held them, the
definitions themselves, for a diff), so a server that changes a tool after you reviewed it (a
"rug pull") is caught: :class:`Pins` is the one check every session asks as a server connects
and re-lists (``chat``, ``mcp call`` on every path, ``mcp list``, ``mcp serve``, the warm
holder), and ``mcp doctor`` reports the same drift (``tools.lock``).

A server whose tools drifted (a changed description, schema or annotations) or that offers a
tool the lock does not know is *held back* with a diff and the fixes (``codebot mcp lock``
again, or ``--allow-drift`` for one run). A version change alone, or a tool that is gone, is
not held back (``doctor`` still says so). Managed settings may require every server to be in
the lock (``require_mcp_lock``)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codebot_mcp.core import jsonutil
from codebot_mcp.core.config import paths, projectfiles
from codebot_mcp.core.errors import SettingsError

if TYPE_CHECKING:
    import mcp_types as types

    from codebot_mcp.core.config.settings import Settings

LOCK_FILE = "mcp-lock.json"
LOCK_VERSION = 1


def lock_path(project_root: Path | None, cwd: Path) -> Path:
    """``<project root>/.codebot/mcp-lock.json`` (the working directory without a project)."""
    return (project_root or cwd) / paths.PROJECT_DIR / LOCK_FILE


ANNOTATION_FIELDS = {
    "title": "title",
    "readOnlyHint": "read_only_hint",
    "destructiveHint": "destructive_hint",
    "idempotentHint": "idempotent_hint",
    "openWorldHint": "open_world_hint",
}
"""The SDK's ``ToolAnnotations`` fields as the wire names them, and as its dump names them (the
hash is over the dump; a test holds this table to the SDK's model)."""


def sdk_definition(tool: types.Tool) -> dict[str, Any]:
    """What the model is told about a tool (SDK type): description, input schema, annotations."""
    annotations = (
        tool.annotations.model_dump(mode="json", exclude_none=True) if tool.annotations else None
    )
    return {
        "description": tool.description,
        "input_schema": tool.input_schema,
        "annotations": annotations,
    }


def raw_definition(raw: dict[str, Any]) -> dict[str, Any]:
    """:func:`sdk_definition` of a tool as the wire carries it (the SDK-free hot path). Where
    the SDK's model would read a value differently the hashes differ, and the hot path hands
    the server to the SDK path, which decides."""
    hints = raw.get("annotations")
    annotations = (
        {
            dumped: hints[wire]
            for wire, dumped in ANNOTATION_FIELDS.items()
            if hints.get(wire) is not None
        }
        if isinstance(hints, dict)
        else None
    )
    return {
        "description": raw.get("description"),
        "input_schema": raw.get("inputSchema"),
        "annotations": annotations,
    }


def definition_hash(definition: dict[str, Any]) -> str:
    """sha256 of a definition (:func:`sdk_definition`, :func:`raw_definition`)."""
    text = json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def tool_hash(tool: types.Tool) -> str:
    """sha256 of what the model is told about a tool: description, input schema, annotations."""
    return definition_hash(sdk_definition(tool))


def server_entry(version: str | None, tools: list[types.Tool]) -> dict[str, Any]:
    """One server's record in the lock: the hashes, and the definitions (for a diff)."""
    ordered = sorted(tools, key=lambda t: t.name)
    return {
        "version": version,
        "tools": {t.name: tool_hash(t) for t in ordered},
        "definitions": {t.name: sdk_definition(t) for t in ordered},
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
    return servers


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
        return [f"it no longer records where it came from (the lock pins {_origin(pinned)})"]
    return [f"it was installed from {_origin(provenance)}, the lock pins {_origin(pinned)}"]


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
            out.update({(server, name): str(h) for name, h in tools.items()})
    return out


# -- the check every session asks -------------------------------------------------------------

MAX_DIFF_LINES = 40
"""A drift's diff is cut after this many lines (a server may change a lot at once)."""
MAX_DIFF_LINE = 200
ACCEPT_HINT = (
    "Review the change; if you accept it, run `codebot mcp lock` (it pins the tools as they "
    "are now), or pass --allow-drift to use them for this run only."
)


@dataclass(frozen=True, slots=True)
class Held:
    """Why a server is held back: a message with the diff (several lines), and the fixes."""

    server: str
    message: str
    hint: str


@dataclass(frozen=True, slots=True)
class Pins:
    """The project's lock, as every session checks servers against it (see the module)."""

    path: Path
    require: bool = False
    """The managed settings require every server to be in the lock (``require_mcp_lock``)."""
    managed_file: Path | None = None

    def check(
        self, server: str, version: str | None, definitions: Mapping[str, dict[str, Any]]
    ) -> Held | None:
        """Whether ``server``, offering these tools (name → :func:`sdk_definition`), is held
        back. The lock is read on each check, so a re-lock applies to the next connection."""
        try:
            servers = read(self.path)
        except LockfileError as exc:
            return Held(server, exc.message, exc.hint or ACCEPT_HINT)
        lock_hint = "Review its tools, then run `codebot mcp lock` to pin them."
        if servers is None:
            if not self.require:
                return None
            return Held(
                server,
                f"held back: it is not pinned (there is no lock file {self.path}), and the "
                f"managed settings ({self.managed_file}) require every server to be",
                lock_hint,
            )
        entry = servers.get(server)
        if not isinstance(entry, dict):
            if not self.require:
                return None
            return Held(
                server,
                f"held back: it is not in the lock file {self.path}, and the managed "
                f"settings ({self.managed_file}) require every server to be pinned",
                lock_hint,
            )
        pinned: dict[str, Any] = entry.get("tools") or {}
        recorded: dict[str, Any] = entry.get("definitions") or {}
        changed: list[str] = []
        diff: list[str] = []
        for name in sorted(definitions):
            now = definitions[name]
            if name not in pinned:
                changed.append(f"tool '{name}' is new (the lock does not know it)")
                diff += _described(name, now)
            elif pinned[name] != definition_hash(now):
                before = recorded.get(name)
                parts = _changed_parts(before, now) if isinstance(before, dict) else []
                what = " and ".join(parts) if parts else "description, schema or annotations"
                changed.append(f"tool '{name}' changed its {what}")
                diff += (
                    _diff(name, before, now)
                    if isinstance(before, dict)
                    else [f"  {name}: the lock holds only its hash (lock again for diffs)"]
                )
        if not changed:
            return None
        if entry.get("version") != version:
            changed.append(f"its version changed from {entry.get('version')} to {version}")
        if len(diff) > MAX_DIFF_LINES:
            diff = [*diff[:MAX_DIFF_LINES], f"  ... {len(diff) - MAX_DIFF_LINES} more lines"]
        lines = [line[:MAX_DIFF_LINE] for line in diff]
        message = f"held back: its tools differ from {self.path}: " + "; ".join(changed)
        return Held(server, "\n".join([message, *lines]), ACCEPT_HINT)

    def digest(self) -> str:
        """What the warm holder's settings digest takes of the pins: the lock's bytes."""
        try:
            data = self.path.read_bytes()
        except OSError:
            data = b""
        text = f"{self.require}\0{self.path}\0"
        return hashlib.sha256(text.encode() + data).hexdigest()


def _changed_parts(before: dict[str, Any], now: dict[str, Any]) -> list[str]:
    names = {"description": "description", "input_schema": "schema", "annotations": "annotations"}
    return [label for key, label in names.items() if before.get(key) != now.get(key)]


def _text(key: str, value: Any) -> list[str]:
    if key == "description":
        return str(value or "").splitlines() or [""]
    return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False).splitlines()


def _diff(name: str, before: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """``-``/``+`` lines of what changed in each part of the tool."""
    import difflib

    out: list[str] = []
    for key in ("description", "input_schema", "annotations"):
        if before.get(key) == now.get(key):
            continue
        out.append(f"  {name} {key}:")
        lines = difflib.unified_diff(
            _text(key, before.get(key)), _text(key, now.get(key)), lineterm="", n=0
        )
        out += [f"    {line}" for line in lines if not line.startswith(("---", "+++", "@@"))]
    return out


def _described(name: str, now: dict[str, Any]) -> list[str]:
    described = _text("description", now.get("description"))
    return [f"  {name} description:", *(f"    + {line}" for line in described)]


def settings_pins(settings: Settings, *, allow_drift: bool = False) -> Pins | None:
    """:func:`load_pins` for these settings: the lock a session with them checks every server
    against (``chat``, ``mcp call``, ``mcp list``, the warm holder)."""
    return load_pins(
        settings.project_root,
        settings.cwd,
        require=settings.require_mcp_lock,
        managed_file=settings.managed_file,
        allow_drift=allow_drift,
    )


def load_pins(
    project_root: Path | None,
    cwd: Path,
    *,
    require: bool = False,
    managed_file: Path | None = None,
    allow_drift: bool = False,
) -> Pins | None:
    """The pins a session checks servers against, or None: ``--allow-drift``, or no lock and
    none required.

    Raises:
        LockfileError: the lock exists but cannot be read (pins must not switch off silently).
    """
    if allow_drift:
        return None
    path = lock_path(project_root, cwd)
    if read(path) is None and not require:
        return None
    return Pins(path, require, managed_file)
