"""Other clients' server entries in codebot's terms: what every importer shares, and Claude
Code's ``mcpServers`` entry, which the settings loader (``.mcp.json``) and the plugins loader
read too, so it lives here, below them and below :mod:`.importers`.

Common translations: ``${env:VAR}`` and ``$VAR`` become ``${VAR}``; milliseconds become seconds;
``sse`` and ``streamable-http`` transports become ``http`` (codebot speaks Streamable HTTP; an
SSE URL gets a note); a value that looks like a secret is never copied: it becomes a ``${VAR}``
reference and the note says which variable to export. Translation is plain data: nothing here
writes a file or starts a server.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from codebot_mcp.core import jsonutil

Scope = Literal["global", "project"]
FORMATS: tuple[str, ...] = (
    "claude-code",
    "claude-desktop",
    "cursor",
    "vscode",
    "gemini",
    "codex",
)


class ImportFormatError(Exception):
    """A config file that exists but cannot be read as its client's format."""


@dataclass(frozen=True, slots=True)
class Source:
    """One config file another client reads."""

    client: str
    path: Path
    scope: Scope
    """Where its servers belong in codebot: a user-level file → global, a repository's → project."""
    section: str | None = None
    """A part of the file (``~/.claude.json`` holds per-project entries), for display."""


@dataclass(slots=True)
class Imported:
    """One server found in another client's config, translated."""

    name: str
    entry: dict[str, Any]
    source: Source
    notes: list[str] = field(default_factory=list[str])
    """What was translated or dropped, for the report."""
    skipped: str | None = None
    """Why this server cannot be imported (then ``entry`` is empty)."""


_ENV_REF = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
_BARE_REF = re.compile(r"(?<![$\\{])\$([A-Za-z_][A-Za-z0-9_]*)")


def env_refs(value: str, *, bare: bool = False) -> str:
    """``${env:VAR}`` (VS Code, Cursor) and, with ``bare``, ``$VAR`` (Gemini) as ``${VAR}``."""
    value = _ENV_REF.sub(r"${\1}", value)
    if bare:
        value = _BARE_REF.sub(r"${\1}", value)
    return value


def map_strings(value: Any, fn: Callable[[str], str]) -> Any:
    """``fn`` applied to every string inside lists and dict values."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [map_strings(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: map_strings(v, fn) for k, v in value.items()}
    return value


def common_entry(
    raw: Mapping[str, Any],
    notes: list[str],
    *,
    url_keys: tuple[str, ...] = ("url",),
    timeout_ms_key: str | None = None,
    known: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The shared shape of ``mcpServers`` entries (command/args/env/cwd/url/headers/type)."""
    entry: dict[str, Any] = {}
    kind = raw.get("type") or raw.get("transport")
    url = next((raw[k] for k in url_keys if isinstance(raw.get(k), str)), None)
    if isinstance(raw.get("command"), str):
        entry["command"] = raw["command"]
        if isinstance(raw.get("args"), list):
            entry["args"] = [str(a) for a in raw["args"]]
        if isinstance(raw.get("env"), dict) and raw["env"]:
            entry["env"] = {str(k): str(v) for k, v in raw["env"].items()}
        if isinstance(raw.get("cwd"), str):
            entry["cwd"] = raw["cwd"]
    elif url is not None:
        entry["type"] = "http"
        entry["url"] = url
        if isinstance(kind, str) and kind.lower() == "sse":
            notes.append(
                "was an SSE server: codebot speaks Streamable HTTP; many servers serve it at "
                "/mcp beside /sse — check the URL"
            )
        if isinstance(raw.get("headers"), dict) and raw["headers"]:
            entry["headers"] = {str(k): str(v) for k, v in raw["headers"].items()}
    timeout = raw.get(timeout_ms_key) if timeout_ms_key else None
    if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
        entry["timeout"] = round(timeout / 1000, 3) if timeout % 1000 else int(timeout // 1000)
        notes.append(f"'{timeout_ms_key}' {timeout:g} ms → 'timeout' {entry['timeout']:g} s")
    if raw.get("disabled") is True or raw.get("enabled") is False:
        entry["enabled"] = False
    base = {"type", "transport", "command", "args", "env", "cwd", "headers", "disabled", "enabled"}
    dropped = [
        k
        for k in raw
        if k not in base and k not in url_keys and k != timeout_ms_key and k not in known
    ]
    if dropped:
        notes.append("not imported: " + ", ".join(f"'{k}'" for k in dropped))
    return entry


def no_clear_secrets(item: Imported) -> None:
    """Replace every secret-looking literal with a ``${VAR}`` reference, noting the variable."""
    from codebot_mcp.core.secrets.scan import looks_secret

    entry = item.entry
    for section in ("env", "headers"):
        values = entry.get(section)
        if not isinstance(values, dict):
            continue
        for key, value in list(values.items()):
            if isinstance(value, str) and looks_secret(str(key), value):
                variable = _variable_for(item.name, str(key))
                scheme = (
                    value.split()[0] + " " if re.match(r"(?i)(bearer|basic|token)\s", value) else ""
                )
                values[key] = f"{scheme}${{{variable}}}"
                item.notes.append(
                    f"{section}.{key} held a secret: written as ${{{variable}}}; export "
                    f"{variable} before starting codebot"
                )
    args = entry.get("args")
    if isinstance(args, list):
        for i, arg in enumerate(args):
            flag, sep, value = str(arg).partition("=")
            if sep and flag.startswith("-") and looks_secret(flag.lstrip("-"), value):
                variable = _variable_for(item.name, flag.lstrip("-"))
                args[i] = f"{flag}=${{{variable}}}"
                item.notes.append(
                    f"args[{i}] held a secret: written as ${{{variable}}}; export {variable}"
                )


def _variable_for(server: str, key: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_]", "_", key).upper().strip("_") or "TOKEN"
    if name in ("AUTHORIZATION", "TOKEN", "KEY"):
        name = re.sub(r"[^A-Za-z0-9_]", "_", server).upper() + "_TOKEN"
    return "_" + name if name[0].isdigit() else name


def servers_table(data: Any, key: str, path: Path) -> dict[str, Any]:
    """``data[key]`` as a mapping of server names to entries (empty when absent)."""
    if not isinstance(data, dict):
        raise ImportFormatError(f"{path} does not hold a JSON object")
    table = data.get(key, {})
    if not isinstance(table, dict):
        raise ImportFormatError(f"'{key}' in {path} is not an object")
    return table


def read_json(path: Path) -> Any:
    """A JSON file, with ``//`` comments and trailing commas allowed (VS Code writes them).

    Raises:
        ImportFormatError: it cannot be read or parsed.
    """
    import json

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ImportFormatError(f"cannot read {path}: {exc}") from None
    try:
        return jsonutil.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        return jsonutil.loads(_strip_jsonc(text))
    except json.JSONDecodeError as exc:
        raise ImportFormatError(
            f"invalid JSON in {path} at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None


def _strip_jsonc(text: str) -> str:
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            i = text.find("\n", i) if "\n" in text[i:] else n
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        else:
            out.append(c)
            i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


CLAUDE_CODE = "claude-code"
"""Claude Code's format name (``.mcp.json``, ``~/.claude.json``, a plugin's servers)."""


def claude_entry(name: str, raw: Any, source: Source) -> Imported:
    """One ``mcpServers`` entry in Claude Code's format as a codebot entry."""
    if not isinstance(raw, dict):
        return Imported(name, {}, source, skipped="the entry is not an object")
    item = Imported(name, {}, source)
    item.entry = common_entry(raw, item.notes)
    return item
