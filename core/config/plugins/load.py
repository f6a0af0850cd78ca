"""What the enabled plugins add to a session: MCP servers, hooks, definition folders.

Settings loading (:mod:`core.config.settings`) adds their servers and hooks beside yours, and
the definitions reader (:mod:`core.config.definitions`) their ``commands/``, ``agents/`` and
``skills/`` folders after yours. A plugin was shown and accepted when it was installed
(``codebot plugin install``), so, like your own settings, nothing of it waits for project
trust; a project-scope plugin loads only in its project.

- servers are named ``plugin_PLUGIN_SERVER`` (so their tools are
  ``mcp__plugin_PLUGIN_SERVER__TOOL``, as in Claude Code), from its ``.mcp.json`` read in
  Claude Code's format; ``${CLAUDE_PLUGIN_ROOT}`` and ``${CLAUDE_PLUGIN_DATA}`` expand in
  ``command``, ``args``, ``env``, ``url`` and ``headers``, and both are set in its
  environment;
- hooks: ``${CLAUDE_PLUGIN_ROOT}`` and ``${CLAUDE_PLUGIN_DATA}`` expand in the command, and
  are set in its environment;
- commands are ``/PLUGIN:NAME`` (and ``/NAME`` when no other command has that name), agents
  ``PLUGIN:NAME``, skills keep their names (yours and the project's win a clash).

A plugin that cannot be read any more (its cache removed, a broken file) is a warning naming
it; the others load.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from codebot_mcp.core.config.hooks import HookCommand, parse_hooks
from codebot_mcp.core.config.keys import SettingWarning
from codebot_mcp.core.config.plugins import manifest
from codebot_mcp.core.config.plugins import pluginstore as store
from codebot_mcp.core.config.servers import ServerConfig, parse_server
from codebot_mcp.core.errors import SettingsError


@dataclass(frozen=True, slots=True)
class FolderSpec:
    """A plugin's definition folder (or file), for :func:`core.config.definitions.folders`."""

    label: str
    """``plugin:NAME/commands``."""
    path: Path
    root: Path
    namespace: str
    only: tuple[Path, ...] = ()
    """Single files given in ``plugin.json``: only these are read from ``path``."""


@dataclass(frozen=True, slots=True)
class Loaded:
    """What the enabled plugins add."""

    plugins: tuple[tuple[store.Installed, manifest.Plugin], ...] = ()
    servers: Mapping[str, ServerConfig] = field(default_factory=dict[str, ServerConfig])
    hooks: tuple[HookCommand, ...] = ()
    folders: Mapping[str, tuple[FolderSpec, ...]] = field(
        default_factory=dict[str, tuple[FolderSpec, ...]]
    )
    warnings: tuple[SettingWarning, ...] = ()


_cache: dict[tuple[Any, ...], tuple[tuple[store.Installed, manifest.Plugin | str], ...]] = {}


server_name = manifest.server_name


def forget() -> None:
    """Read every plugin afresh next time: a long-lived process (the warm holder) resolving a
    caller's settings sees the manifests as a new process would."""
    _cache.clear()


def _enabled(
    project_root: Path | None,
) -> tuple[tuple[store.Installed, manifest.Plugin | str], ...]:
    """The enabled plugins for this project, read (or why not), cached on the record's
    modification time."""
    path = store.state_file()
    try:
        info = path.stat()
        stamp: Any = (info.st_mtime_ns, info.st_size)
    except OSError:
        return ()
    key = (str(path), stamp, str(project_root))
    if key in _cache:
        return _cache[key]
    out: list[tuple[store.Installed, manifest.Plugin | str]] = []
    for installed in store.read(path).plugins.values():
        if not installed.enabled or not installed.applies_to(project_root):
            continue
        if not installed.path.is_dir():
            out.append((installed, f"its copy {installed.path} is gone; reinstall it"))
            continue
        try:
            out.append((installed, manifest.read(installed.path, installed.manifest_entry())))
        except SettingsError as exc:
            out.append((installed, exc.message))
    _cache.clear()
    _cache[key] = tuple(out)
    return _cache[key]


def variables(plugin: manifest.Plugin) -> dict[str, str]:
    """``CLAUDE_PLUGIN_ROOT`` and ``CLAUDE_PLUGIN_DATA`` for this plugin."""
    return plugin_variables(plugin.name, plugin.root)


def plugin_of(path: Path) -> str | None:
    """The installed plugin whose copy holds ``path`` (a server's ``.mcp.json``), or None."""
    try:
        parts = path.resolve().relative_to((store.plugins_dir() / "cache").resolve()).parts
    except (OSError, ValueError):
        return None
    return parts[0] if len(parts) > 1 else None


def variables_at(directory: Path) -> dict[str, str]:
    """The plugin variables for a folder inside an installed plugin's copy (a skill's), or
    {} for a folder that is not in one."""
    cache = (store.plugins_dir() / "cache").resolve()
    try:
        parts = directory.resolve().relative_to(cache).parts
    except ValueError:
        return {}
    if len(parts) < 2:
        return {}
    return plugin_variables(parts[0], cache / parts[0] / parts[1])


def plugin_variables(name: str, root: Path) -> dict[str, str]:
    """``CLAUDE_PLUGIN_ROOT`` (its installed copy) and ``CLAUDE_PLUGIN_DATA`` (its data
    folder) of the plugin ``name``."""
    return {
        manifest.ROOT_VARIABLE: str(root),
        manifest.DATA_VARIABLE: str(store.data_dir(name)),
    }


def substitute(value: Any, names: Mapping[str, str]) -> Any:
    """``${CLAUDE_PLUGIN_ROOT}`` (and ``$CLAUDE_PLUGIN_ROOT``) replaced in every string."""
    if isinstance(value, str):
        for name, text in names.items():
            value = value.replace("${" + name + "}", text)
            value = re.sub(r"\$" + name + r"(?![A-Za-z0-9_])", text.replace("\\", "\\\\"), value)
        return value
    if isinstance(value, list):
        return [substitute(v, names) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, names) for k, v in value.items()}
    return value


def load(project_root: Path | None, environ: Mapping[str, str], base_dir: Path) -> Loaded:
    """What the enabled plugins add to a session in ``project_root``."""
    pairs: list[tuple[store.Installed, manifest.Plugin]] = []
    servers: dict[str, ServerConfig] = {}
    hooks: list[HookCommand] = []
    folders: dict[str, list[FolderSpec]] = {"commands": [], "agents": [], "skills": []}
    warnings: list[SettingWarning] = []
    for installed, plugin in _enabled(project_root):
        if isinstance(plugin, str):
            message = f"plugin '{installed.name}' is not loaded: {plugin}"
            warnings.append(SettingWarning(installed.path, installed.name, message))
            continue
        pairs.append((installed, plugin))
        names = variables(plugin)
        for source, table in plugin.servers:
            servers.update(_servers(plugin, source, table, environ, names, base_dir))
        for source, section in plugin.hooks:
            try:
                parsed, skipped = parse_hooks(source, substitute(section, names))
            except SettingsError as exc:
                warnings.append(SettingWarning(source, "hooks", f"plugin '{plugin.name}': {exc}"))
                continue
            env = tuple(sorted(names.items()))
            hooks += [replace(h, env=env) for h in parsed]
            warnings += skipped
        for kind, paths in (
            ("commands", plugin.commands),
            ("agents", plugin.agents),
            ("skills", plugin.skills),
        ):
            folders[kind] += _specs(plugin, kind, paths)
    return Loaded(
        tuple(pairs),
        servers,
        tuple(hooks),
        {k: tuple(v) for k, v in folders.items()},
        tuple(warnings),
    )


def _servers(
    plugin: manifest.Plugin,
    source: Path,
    table: Mapping[str, Any],
    environ: Mapping[str, str],
    names: Mapping[str, str],
    base_dir: Path,
) -> dict[str, ServerConfig]:
    from codebot_mcp.core.config.translate import CLAUDE_CODE, Source, claude_entry

    out: dict[str, ServerConfig] = {}
    where = Source(CLAUDE_CODE, source, "global")
    for server, raw in table.items():
        item = claude_entry(server, substitute(raw, names), where)
        entry: dict[str, Any] = dict(item.entry) if not item.skipped else dict(raw)
        if "url" not in entry:
            env: dict[str, Any] = dict(entry.get("env") or {})
            for key, value in names.items():
                env.setdefault(key, value)
            entry["env"] = env
        name = server_name(plugin.name, server)
        variables = {"CLAUDE_PROJECT_DIR": str(base_dir), **environ, **names}
        out[name] = parse_server(name, entry, source, variables, base_dir)
    return out


def _specs(plugin: manifest.Plugin, kind: str, paths: tuple[Path, ...]) -> list[FolderSpec]:
    label = f"plugin:{plugin.name}/{kind}"
    out: list[FolderSpec] = []
    files = [p for p in paths if p.is_file()]
    for path in paths:
        if path.is_dir():
            if kind == "skills" and (path / "SKILL.md").is_file():
                out.append(FolderSpec(label, path.parent, plugin.root, plugin.name, (path,)))
            else:
                out.append(FolderSpec(label, path, plugin.root, plugin.name))
    by_parent: dict[Path, list[Path]] = {}
    for path in files:
        by_parent.setdefault(path.parent, []).append(path)
    for parent, only in by_parent.items():
        out.append(FolderSpec(label, parent, plugin.root, plugin.name, tuple(only)))
    return out


def folders(kind: str, project_root: Path | None) -> tuple[FolderSpec, ...]:
    """The enabled plugins' folders of ``kind`` (``commands``, ``agents``, ``skills``)."""
    out: list[FolderSpec] = []
    for _installed, plugin in _enabled(project_root):
        if isinstance(plugin, manifest.Plugin):
            paths = {"commands": plugin.commands, "agents": plugin.agents, "skills": plugin.skills}
            out += _specs(plugin, kind, paths.get(kind, ()))
    return tuple(out)
