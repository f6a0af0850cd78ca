"""The record of installed plugins and added marketplaces, and where plugins are copied.

The record is ``<state>/plugins.json`` (codebot's state directory)::

    {"plugins": {"NAME": {"version", "source", "marketplace", "commit", "digest", "runs",
                          "enabled", "scope", "project", "path", "installed_at"}},
     "marketplaces": {"NAME": {"source", "kind", "path", "added_at"}}}

Installed plugins are copied to ``<data>/plugins/cache/NAME/VERSION`` (the version, its git
commit beside it when there is one), so they keep working when their source goes away;
git marketplaces are cloned to ``<data>/plugins/marketplaces/NAME``. Each plugin has a data
folder of its own, ``<data>/plugins/data/NAME`` (``${CLAUDE_PLUGIN_DATA}``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from codebot_mcp.core.config import paths
from codebot_mcp.core.errors import SettingsError

STATE_FILE = "plugins.json"
PluginScope = Literal["user", "project"]
SCOPES: tuple[str, ...] = ("user", "project")


def state_file() -> Path:
    """``<state>/plugins.json``."""
    return paths.state_dir() / STATE_FILE


def plugins_dir() -> Path:
    """``<data>/plugins``: the cache, marketplaces, and each plugin's data folder."""
    return paths.data_dir() / "plugins"


def cache_dir(name: str, key: str) -> Path:
    """Where one version of a plugin is copied."""
    return plugins_dir() / "cache" / name / key


def data_dir(name: str) -> Path:
    """A plugin's own data folder (``${CLAUDE_PLUGIN_DATA}``), kept across updates."""
    return plugins_dir() / "data" / name


def marketplace_dir(name: str) -> Path:
    """Where a git marketplace is cloned."""
    return plugins_dir() / "marketplaces" / name


@dataclass(frozen=True, slots=True)
class Installed:
    """One installed plugin, as recorded."""

    name: str
    path: Path
    """Its copy in the cache."""
    version: str | None = None
    source: str = ""
    """Where it came from, as given (a folder, a git URL, ``NAME@MARKETPLACE``)."""
    marketplace: str | None = None
    commit: str | None = None
    digest: str = ""
    """Of what it runs (:func:`.manifest.digest`)."""
    runs: Mapping[str, str] = field(default_factory=dict[str, str])
    enabled: bool = True
    scope: PluginScope = "user"
    project: Path | None = None
    """For ``project`` scope: the project root it is enabled in."""
    installed_at: str = ""
    entry: Mapping[str, Any] | None = None
    """Its marketplace entry (its fields fill in what ``plugin.json`` does not say)."""

    def applies_to(self, project_root: Path | None) -> bool:
        """Whether it loads in a session whose project root is ``project_root``."""
        if self.scope == "user":
            return True
        return project_root is not None and self.project == project_root.resolve()

    def to_json(self) -> dict[str, Any]:
        """The record's entry."""
        return {
            "version": self.version,
            "source": self.source,
            "marketplace": self.marketplace,
            "commit": self.commit,
            "digest": self.digest,
            "runs": dict(self.runs),
            "enabled": self.enabled,
            "scope": self.scope,
            "project": str(self.project) if self.project else None,
            "path": str(self.path),
            "installed_at": self.installed_at,
            "entry": dict(self.entry) if self.entry is not None else None,
        }

    def manifest_entry(self) -> dict[str, Any]:
        """What :func:`.manifest.read` takes beside the copy: its name (a plugin without
        ``plugin.json`` is named by its marketplace entry or folder, not by the cache's
        folder) and its marketplace entry."""
        return {"name": self.name, **(self.entry or {})}


@dataclass(frozen=True, slots=True)
class Marketplace:
    """One added marketplace, as recorded."""

    name: str
    source: str
    """As given: a folder, a git URL, a URL to a ``marketplace.json``."""
    kind: Literal["directory", "git", "url"]
    path: Path
    """Its folder (the given one, or the clone), or the downloaded ``marketplace.json``."""
    added_at: str = ""

    def to_json(self) -> dict[str, Any]:
        """The record's entry."""
        return {
            "source": self.source,
            "kind": self.kind,
            "path": str(self.path),
            "added_at": self.added_at,
        }


@dataclass(slots=True)
class Record:
    """The whole record."""

    plugins: dict[str, Installed] = field(default_factory=dict[str, Installed])
    marketplaces: dict[str, Marketplace] = field(default_factory=dict[str, Marketplace])


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def read(path: Path | None = None) -> Record:
    """The record (empty when there is none).

    Raises:
        SettingsError: the file exists and cannot be read (naming it).
    """
    path = path or state_file()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Record()
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(
            f"cannot read the plugin record {path}: {exc}",
            hint=f"Fix its permissions, or remove {path} and install the plugins again.",
        ) from None
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise SettingsError(
            f"the plugin record {path} is not valid JSON (line {exc.lineno}): {exc.msg}",
            hint=f"Remove {path} and install the plugins again.",
        ) from None
    record = Record()
    plugins = data.get("plugins", {}) if isinstance(data, dict) else {}
    for name, raw in plugins.items() if isinstance(plugins, dict) else ():
        if not isinstance(raw, dict) or not isinstance(raw.get("path"), str):
            continue
        runs = raw.get("runs")
        project = _text(raw.get("project"))
        record.plugins[str(name)] = Installed(
            str(name),
            Path(raw["path"]),
            _text(raw.get("version")),
            str(raw.get("source", "")),
            _text(raw.get("marketplace")),
            _text(raw.get("commit")),
            str(raw.get("digest", "")),
            {str(k): str(v) for k, v in runs.items()} if isinstance(runs, dict) else {},
            raw.get("enabled", True) is not False,
            "project" if raw.get("scope") == "project" else "user",
            Path(project) if project else None,
            str(raw.get("installed_at", "")),
            raw.get("entry") if isinstance(raw.get("entry"), dict) else None,
        )
    markets = data.get("marketplaces", {}) if isinstance(data, dict) else {}
    for name, raw in markets.items() if isinstance(markets, dict) else ():
        if not isinstance(raw, dict) or raw.get("kind") not in ("directory", "git", "url"):
            continue
        record.marketplaces[str(name)] = Marketplace(
            str(name),
            str(raw.get("source", "")),
            raw["kind"],
            Path(str(raw.get("path", ""))),
            str(raw.get("added_at", "")),
        )
    return record


def write(record: Record, path: Path | None = None) -> Path:
    """Write the record atomically (mode 0600 in a 0700 folder); return its path."""
    path = path or state_file()
    paths.private_dir(path.parent)
    data = {
        "plugins": {n: p.to_json() for n, p in sorted(record.plugins.items())},
        "marketplaces": {n: m.to_json() for n, m in sorted(record.marketplaces.items())},
    }
    import tempfile  # only when writing: loading settings reads the record

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".plugins.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2)
            handle.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
