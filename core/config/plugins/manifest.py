"""One plugin folder in Claude Code's format, read: its manifest, its components, and what
it runs.

::

    my-plugin/
      .claude-plugin/plugin.json   {"name": "my-plugin", "version": "1.0.0", ...} (optional)
      commands/*.md                /my-plugin:NAME
      agents/*.md                  my-plugin:NAME
      skills/NAME/SKILL.md
      hooks/hooks.json             {"hooks": {"PreToolUse": [...]}}
      .mcp.json                    {"mcpServers": {...}}

``plugin.json`` may move a component (``"commands": "./cmds"``, a list of paths, ``skills``
adds to the default folder) or give ``hooks`` and ``mcpServers`` inline. Paths start with
``./`` and stay inside the plugin. A manifest that is wrong is a :class:`PluginError` naming
the file and the key.

:func:`runs` lists everything the plugin makes codebot run (hook commands, server commands
and URLs, ``!`cmd``` lines of its commands, its scripts by content, its symlinks by target):
installing shows it and asks, and an update that changes it asks again (:func:`changes`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codebot_mcp.core.errors import SettingsError
from codebot_mcp.core.jsonutil import json_type

MANIFEST = Path(".claude-plugin") / "plugin.json"
MARKETPLACE = Path(".claude-plugin") / "marketplace.json"
NAME_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_)){0,63}$")
"""A plugin name (kebab-case in Claude Code); it becomes part of server names
(``plugin_NAME_SERVER``), so no ``.`` and no ``__``."""
ROOT_VARIABLE = "CLAUDE_PLUGIN_ROOT"
DATA_VARIABLE = "CLAUDE_PLUGIN_DATA"
SCRIPT_SUFFIXES = frozenset(
    {".sh", ".bash", ".zsh", ".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".ps1", ".php"}
)
MAX_FILES = 5_000
"""Files looked at in one plugin (scripts, command files)."""
MAX_JSON_BYTES = 1024 * 1024
_SHELL_LINE = re.compile(r"(?:^|(?<=\s))!`([^`\n]+)`")


class PluginError(SettingsError):
    """A plugin's manifest or component file is wrong (exit 3), naming file and key."""


@dataclass(frozen=True, slots=True)
class Plugin:
    """A plugin folder, read (nothing is run)."""

    name: str
    root: Path
    version: str | None = None
    description: str = ""
    manifest: Path | None = None
    commands: tuple[Path, ...] = ()
    """Folders (or single ``.md`` files) of commands."""
    agents: tuple[Path, ...] = ()
    skills: tuple[Path, ...] = ()
    """Folders holding ``NAME/SKILL.md`` (or a folder that is one skill)."""
    hooks: tuple[tuple[Path, Mapping[str, Any]], ...] = ()
    """(the file they are written in, ``{"hooks": {...}}``), as written."""
    servers: tuple[tuple[Path, Mapping[str, Any]], ...] = ()
    """(the file, ``{name: entry}``) in Claude Code's ``mcpServers`` shape, as written."""
    warnings: tuple[str, ...] = field(default=())


def read_json(path: Path, what: str = "plugin file") -> dict[str, Any]:
    """A JSON object from ``path``.

    Raises:
        PluginError: unreadable, too large, not JSON, or not an object.
    """
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            raise PluginError(f"{what} {path} is larger than {MAX_JSON_BYTES} bytes")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PluginError(f"cannot read {what} {path}: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PluginError(
            f"invalid JSON in {path} at line {exc.lineno}, column {exc.colno}: {exc.msg}",
            hint="Fix the JSON syntax there (trailing commas and comments are not allowed).",
        ) from None
    if not isinstance(data, dict):
        raise PluginError(f"{path} must hold a JSON object, found {json_type(data)}")
    return data


def check_name(name: Any, path: Path | str, key: str = "name") -> str:
    """A usable plugin name, or a :class:`PluginError` naming where it was written."""
    if not isinstance(name, str) or not NAME_RE.match(name):
        shown = json.dumps(name) if isinstance(name, str) else json_type(name)
        raise PluginError(
            f"'{key}' in {path} must be a plugin name in kebab-case (letters, digits, '-'), "
            f"found {shown}",
            hint='Write it as "name": "my-plugin".',
        )
    return name


def read(
    root: Path, entry: Mapping[str, Any] | None = None, *, entry_source: Path | None = None
) -> Plugin:
    """Read the plugin in ``root``.

    Args:
        root: The plugin's folder.
        entry: Its marketplace entry, if it came from one: its fields fill in what
            ``plugin.json`` does not say (with ``"strict": false`` it is the whole manifest).
        entry_source: The marketplace file, to name in errors about ``entry``.

    Raises:
        PluginError: ``plugin.json`` (or the entry) is wrong, naming the file and the key.
    """
    root = root.resolve()
    manifest_path = root / MANIFEST
    data: dict[str, Any] = {}
    where: Path = manifest_path
    strict = True
    if entry is not None:
        strict = entry.get("strict", True) is not False
    if manifest_path.is_file() and strict:
        data = read_json(manifest_path, "plugin manifest")
    if entry is not None:
        extra = {k: v for k, v in entry.items() if k not in ("source", "strict")}
        if not data:
            where = entry_source or manifest_path
        data = {**extra, **data}
    if "name" not in data:
        data["name"] = root.name
    name = check_name(data["name"], where)
    version = data.get("version")
    if version is not None and not isinstance(version, str):
        raise PluginError(
            f"'version' in {where} must be a string, found {json_type(version)}",
            hint='Write it as "version": "1.0.0".',
        )
    description = data.get("description", "")
    if not isinstance(description, str):
        raise PluginError(
            f"'description' in {where} must be a string, found {json_type(description)}"
        )
    warnings: list[str] = []
    commands = _paths(root, where, data, "commands", replace_default=True, warnings=warnings)
    agents = _paths(root, where, data, "agents", replace_default=True, warnings=warnings)
    skills = _paths(root, where, data, "skills", replace_default=False, warnings=warnings)
    if (root / "SKILL.md").is_file() and root not in skills:
        skills = (*skills, root)  # a plugin that is one skill
    hooks = _sections(root, where, data, "hooks", root / "hooks" / "hooks.json")
    servers = _sections(root, where, data, "mcpServers", root / ".mcp.json")
    for source, section in hooks:
        if not isinstance(section.get("hooks", {}), dict):
            raise PluginError(
                f"'hooks' in {source} must be an object mapping event names to lists, "
                f"found {json_type(section.get('hooks'))}",
                hint='Write it as {"hooks": {"PreToolUse": [{"matcher": "Bash", '
                '"hooks": [...]}]}}.',
            )
    checked: list[tuple[Path, Mapping[str, Any]]] = []
    for source, section in servers:
        table = section.get("mcpServers", section)
        if not isinstance(table, dict):
            raise PluginError(
                f"'mcpServers' in {source} must be an object mapping server names to entries, "
                f"found {json_type(table)}"
            )
        checked.append((source, table))
    return Plugin(
        name,
        root,
        version,
        description,
        manifest_path if manifest_path.is_file() else None,
        commands,
        agents,
        skills,
        hooks,
        tuple(checked),
        tuple(warnings),
    )


def _inside(root: Path, where: Path, key: str, value: Any) -> Path:
    if not isinstance(value, str) or not value.strip():
        raise PluginError(
            f"'{key}' in {where} must be a path starting with ./, found {json_type(value)}",
            hint=f'Write it as "{key.split("[")[0]}": "./{key.split("[")[0]}".',
        )
    if not value.startswith("./"):
        raise PluginError(
            f"'{key}' in {where} is {json.dumps(value)}: plugin paths start with ./ "
            "(relative to the plugin's folder)",
            hint=f'Write it as "./{value.lstrip("/")}".',
        )
    path = (root / value).resolve()
    try:
        path.relative_to(root)
    except ValueError:
        raise PluginError(
            f"'{key}' in {where} is {json.dumps(value)}, which leads out of the plugin's folder",
            hint="Keep every path of a plugin inside its folder.",
        ) from None
    return path


def _paths(
    root: Path,
    where: Path,
    data: Mapping[str, Any],
    key: str,
    *,
    replace_default: bool,
    warnings: list[str],
) -> tuple[Path, ...]:
    default = root / key
    value = data.get(key)
    given: list[Path] = []
    if value is not None:
        items = value if isinstance(value, list) else [value]
        for i, item in enumerate(items):
            label = f"{key}[{i}]" if isinstance(value, list) else key
            path = _inside(root, where, label, item)
            if not path.exists():
                warnings.append(f"'{label}' in {where}: {item} does not exist; skipped")
                continue
            given.append(path)
    picked = any(p != default and p.is_relative_to(default) for p in given)
    if value is not None and (replace_default or picked):
        # `skills` adds to `skills/`, unless it picks skills inside it (Anthropic's skills
        # marketplace: "skills": ["./skills/xlsx", ...] means those, not every one)
        out = given
    else:
        out = [default, *given]
    return tuple(p for p in dict.fromkeys(out) if p.exists())


def _sections(
    root: Path, where: Path, data: Mapping[str, Any], key: str, default: Path
) -> tuple[tuple[Path, Mapping[str, Any]], ...]:
    """``hooks`` / ``mcpServers``: the default file, or what ``plugin.json`` gives (a path, an
    inline object, or a list of them)."""
    value = data.get(key)
    if value is None:
        if default.is_file():
            return ((default, read_json(default, f"plugin {key} file")),)
        return ()
    items = value if isinstance(value, list) else [value]
    out: list[tuple[Path, Mapping[str, Any]]] = []
    for i, item in enumerate(items):
        label = f"{key}[{i}]" if isinstance(value, list) else key
        if isinstance(item, dict):
            inline: dict[str, Any] = dict(item)
            out.append(
                (where, inline if key != "hooks" or "hooks" in inline else {"hooks": inline})
            )
            continue
        path = _inside(root, where, label, item)
        if not path.is_file():
            raise PluginError(
                f"'{label}' in {where} names {item}, which is not a file in the plugin",
                hint=f"Add the file, or remove '{label}'.",
            )
        out.append((path, read_json(path, f"plugin {key} file")))
    return tuple(out)


# -- what it runs ------------------------------------------------------------------------------


def runs(plugin: Plugin) -> dict[str, str]:
    """Everything the plugin makes codebot run, by a stable key: hook commands, MCP server
    commands and URLs, ``!`cmd``` lines of its commands, and its scripts (by content)."""
    out: dict[str, str] = {}
    for source, section in plugin.hooks:
        out.update(_hook_runs(_rel(source, plugin.root), section.get("hooks", {})))
    for source, table in plugin.servers:
        for name, entry in table.items():
            if isinstance(entry, dict):
                key = f"server {server_name(plugin.name, name)} ({_rel(source, plugin.root)})"
                out[key] = _server_text(entry)
    for folder in plugin.commands:
        files = [folder] if folder.is_file() else sorted(folder.rglob("*.md"))[:MAX_FILES]
        for path in files:
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            for number, line in enumerate(text.splitlines(), 1):
                for match in _SHELL_LINE.finditer(line):
                    out[f"command line {_rel(path, plugin.root)}:{number}"] = match.group(1)
    for path in _scripts(plugin.root):
        if path.is_symlink():  # where it leads is what runs
            out[f"link {_rel(path, plugin.root)}"] = f"-> {os.readlink(path)}"
            continue
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        out[f"script {_rel(path, plugin.root)}"] = f"sha256 {digest}"
    return dict(sorted(out.items()))


def _hook_runs(rel: str, hooks: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    if not isinstance(hooks, dict):
        return out
    for event, groups in hooks.items():
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            if not isinstance(group, dict):
                continue
            matcher = group.get("matcher") or "*"
            for h, hook in enumerate(group.get("hooks") or []):
                if not isinstance(hook, dict):
                    continue
                what = hook.get("command") or hook.get("url") or json.dumps(hook, sort_keys=True)
                out[f"hook {event} ({rel} hooks.{event}[{g}].hooks[{h}])"] = (
                    f"{event} {matcher}: {what}"
                )
    return out


def _server_text(entry: Mapping[str, Any]) -> str:
    if entry.get("url"):
        return f"url {entry['url']}"
    argv = [str(entry.get("command", "")), *map(str, entry.get("args") or [])]
    text = shlex.join(argv)
    env = entry.get("env")
    if isinstance(env, dict) and env:
        text += "  (env " + ", ".join(sorted(str(k) for k in env)) + ")"
    return text


def server_name(plugin: str, server: str) -> str:
    """``plugin_PLUGIN_SERVER``: a plugin's server as codebot names it, so its tools are
    ``mcp__plugin_PLUGIN_SERVER__TOOL``, Claude Code's names for them."""
    clean = re.sub(r"[^A-Za-z0-9_-]", "_", server)
    name = f"plugin_{plugin}_{clean}"
    while "__" in name:
        name = name.replace("__", "_")
    return name


def _scripts(root: Path) -> list[Path]:
    found: list[Path] = []
    for path in sorted(root.rglob("*")):
        if len(found) >= MAX_FILES:
            break
        if ".git" in path.relative_to(root).parts:
            continue
        if path.is_symlink() or (
            path.is_file() and (path.suffix in SCRIPT_SUFFIXES or path.stat().st_mode & 0o111)
        ):
            found.append(path)
    return found


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def digest(run: Mapping[str, str]) -> str:
    """One digest of what runs (``sha256:...``)."""
    text = json.dumps(dict(sorted(run.items())), sort_keys=True)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def changes(old: Mapping[str, str], new: Mapping[str, str]) -> list[str]:
    """What an update changes in what runs, one line each (empty: nothing)."""
    out: list[str] = []
    for key in sorted({*old, *new}):
        if key not in old:
            out.append(f"added {key}: {new[key]}")
        elif key not in new:
            out.append(f"removed {key}: {old[key]}")
        elif old[key] != new[key]:
            out.append(f"changed {key}: {old[key]} -> {new[key]}")
    return out
