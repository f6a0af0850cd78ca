"""Plugin marketplaces in Claude Code's format: ``.claude-plugin/marketplace.json``.

::

    {"name": "team-tools", "owner": {"name": "Team"},
     "plugins": [{"name": "formatter", "source": "./plugins/formatter", "version": "1.0.0"},
                 {"name": "remote", "source": {"source": "url", "url": "https://host/r.git"}}]}

A marketplace is added from a local folder (read where it is), a git URL (cloned into
codebot's data directory; ``#ref`` picks a branch or tag), ``owner/repo`` (GitHub), or the
URL of a ``marketplace.json`` (downloaded; its plugins must then have git sources). Plugin
``source`` forms read: a relative path (``./plugins/x``, below ``metadata.pluginRoot`` when it
is set), ``github``, ``url`` and ``git-subdir``; ``npm``, ``archive`` and ``command`` sources
are refused with a message naming the entry.
"""

from __future__ import annotations

import datetime
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codebot_mcp.core.config.paths import private_dir
from codebot_mcp.core.config.plugins import manifest
from codebot_mcp.core.config.plugins import pluginstore as store
from codebot_mcp.core.config.plugins.manifest import PluginError, check_name
from codebot_mcp.core.errors import UsageError
from codebot_mcp.core.jsonutil import json_type
from codebot_mcp.core.plugins import fetch


@dataclass(frozen=True, slots=True)
class Catalog:
    """A marketplace's ``marketplace.json``, read."""

    name: str
    path: Path
    """The ``marketplace.json``."""
    root: Path | None
    """The marketplace's folder (None for one added by URL: no relative sources)."""
    plugins: Mapping[str, Mapping[str, Any]]
    """Entries by plugin name."""
    description: str = ""
    plugin_root: str = ""


def read_catalog(path: Path, root: Path | None) -> Catalog:
    """Read a ``marketplace.json``.

    Raises:
        PluginError: it is wrong, naming the file and the key.
    """
    data = manifest.read_json(path, "marketplace file")
    name = check_name(data.get("name"), path)
    entries = data.get("plugins")
    if not isinstance(entries, list):
        raise PluginError(
            f"'plugins' in {path} must be a list of plugin entries, found {json_type(entries)}",
            hint='Write it as "plugins": [{"name": "my-plugin", "source": "./plugins/my-plugin"}].',
        )
    plugins: dict[str, Mapping[str, Any]] = {}
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise PluginError(
                f"'plugins[{i}]' in {path} must be an object, found {json_type(entry)}"
            )
        plugin = check_name(entry.get("name"), path, f"plugins[{i}].name")
        if "source" not in entry:
            raise PluginError(
                f"'plugins[{i}].source' in {path} is missing (where the plugin '{plugin}' is)",
                hint='Add "source": "./plugins/NAME" or {"source": "url", "url": "https://...git"}.',
            )
        plugins[plugin] = entry
    raw_metadata = data.get("metadata")
    metadata: dict[str, Any] = raw_metadata if isinstance(raw_metadata, dict) else {}
    description = data.get("description") or metadata.get("description") or ""
    plugin_root = metadata.get("pluginRoot") or ""
    return Catalog(name, path, root, plugins, str(description), str(plugin_root))


def catalog_of(market: store.Marketplace) -> Catalog:
    """The catalog of a recorded marketplace.

    Raises:
        PluginError: its file is gone or wrong.
    """
    if market.kind == "url":
        return read_catalog(market.path, None)
    path = market.path / manifest.MARKETPLACE
    if not path.is_file():
        raise PluginError(
            f"marketplace '{market.name}' has no {manifest.MARKETPLACE} any more ({market.path})",
            hint=f"Run `codebot plugin marketplace remove {market.name}` and add it again.",
        )
    return read_catalog(path, market.path)


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def _github(source: str) -> str | None:
    import re

    match = re.fullmatch(r"([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:@([^\s]+))?", source)
    if match is None:
        return None
    url = f"https://github.com/{match.group(1)}/{match.group(2)}.git"
    return f"{url}#{match.group(3)}" if match.group(3) else url


def add(source: str, cwd: Path) -> tuple[store.Marketplace, Catalog]:
    """Add a marketplace (a folder, a git URL, ``owner/repo``, a ``marketplace.json`` URL) and
    record it.

    Raises:
        UsageError: the source is none of those, or a marketplace of its name exists.
        PluginError: its ``marketplace.json`` is wrong.
        FetchError: it could not be fetched.
    """
    record = store.read()
    local = (cwd / source).expanduser() if not source.startswith("/") else Path(source)
    staging: Path | None = None
    if local.is_dir():
        root = local.resolve()
        path = root / manifest.MARKETPLACE
        if not path.is_file():
            raise UsageError(
                f"{root} holds no {manifest.MARKETPLACE}",
                hint="A marketplace's folder has .claude-plugin/marketplace.json.",
            )
        catalog = read_catalog(path, root)
        _check_new(record, catalog.name, lambda: None)
        market = store.Marketplace(catalog.name, str(root), "directory", root, _now())
    elif source.startswith(("http://", "https://")) and source.split("#")[0].endswith(".json"):
        data = fetch.get_json(source)
        private_dir(store.plugins_dir())
        handle, name = tempfile.mkstemp(dir=store.plugins_dir(), suffix=".json")
        import json
        import os

        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(data, out)
        tmp = Path(name)
        try:
            catalog = read_catalog(tmp, None)
        except PluginError as exc:
            tmp.unlink(missing_ok=True)
            raise PluginError(
                exc.message.replace(str(tmp), fetch.shown(source)), hint=exc.hint
            ) from None
        target = store.plugins_dir() / "marketplaces" / f"{catalog.name}.json"
        _check_new(record, catalog.name, lambda: tmp.unlink(missing_ok=True))
        private_dir(target.parent)
        tmp.replace(target)
        catalog = read_catalog(target, None)
        market = store.Marketplace(catalog.name, source, "url", target, _now())
    else:
        url = source if fetch.is_git_url(source) else _github(source)
        if url is None:
            raise UsageError(
                f"'{source}' is not a folder, a git URL, owner/repo or a marketplace.json URL",
                hint="e.g. codebot plugin marketplace add ./my-marketplace, or a git URL.",
            )
        base, ref = fetch.split_ref(url)
        private_dir(store.plugins_dir())
        staging = Path(tempfile.mkdtemp(dir=store.plugins_dir(), prefix=".market-"))
        try:
            fetch.clone(base, staging / "repo", ref=ref)
            path = staging / "repo" / manifest.MARKETPLACE
            if not path.is_file():
                raise UsageError(
                    f"{fetch.shown(url)} holds no {manifest.MARKETPLACE}",
                    hint="A marketplace's repository has .claude-plugin/marketplace.json.",
                )
            catalog = read_catalog(path, staging / "repo")
            _check_new(record, catalog.name, lambda: None)
            target = store.marketplace_dir(catalog.name)
            if target.exists():
                shutil.rmtree(target)
            private_dir(target.parent)
            (staging / "repo").replace(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        catalog = read_catalog(target / manifest.MARKETPLACE, target)
        market = store.Marketplace(catalog.name, url, "git", target, _now())
    record = store.read()
    record.marketplaces[market.name] = market
    store.write(record)
    return market, catalog


def _check_new(record: store.Record, name: str, cleanup: Any) -> None:
    if name in record.marketplaces:
        cleanup()
        raise UsageError(
            f"a marketplace named '{name}' is already added "
            f"(from {record.marketplaces[name].source})",
            hint=f"Run `codebot plugin marketplace update {name}`, or remove it first.",
        )


def update(name: str) -> tuple[store.Marketplace, Catalog]:
    """Fetch a marketplace again (a git clone is pulled, a URL downloaded again).

    Raises:
        UsageError: no such marketplace.
        FetchError, PluginError: as for :func:`add`.
    """
    market = get(name)
    if market.kind == "git":
        base, _ref = fetch.split_ref(market.source)
        fetch.pull(market.path, base)
    elif market.kind == "url":
        import json

        data = fetch.get_json(market.source)
        tmp = market.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        read_catalog(tmp, None)
        tmp.replace(market.path)
    return market, catalog_of(market)


def get(name: str) -> store.Marketplace:
    """A recorded marketplace.

    Raises:
        UsageError: none of that name.
    """
    record = store.read()
    if name not in record.marketplaces:
        known = ", ".join(sorted(record.marketplaces)) or "none"
        raise UsageError(
            f"no marketplace named '{name}' (added: {known})",
            hint="Add it with `codebot plugin marketplace add SOURCE`.",
        )
    return record.marketplaces[name]


def remove(name: str) -> store.Marketplace:
    """Forget a marketplace (its clone is deleted; installed plugins stay).

    Raises:
        UsageError: none of that name.
    """
    market = get(name)
    record = store.read()
    del record.marketplaces[name]
    store.write(record)
    if market.kind == "git" and market.path.is_relative_to(store.plugins_dir()):
        shutil.rmtree(market.path, ignore_errors=True)
    elif market.kind == "url":
        market.path.unlink(missing_ok=True)
    return market


@dataclass(frozen=True, slots=True)
class Resolved:
    """Where a marketplace's plugin entry is: a local folder, or a git URL (and subfolder)."""

    folder: Path | None = None
    url: str | None = None
    ref: str | None = None
    sha: str | None = None
    subdir: str = ""


def resolve(catalog: Catalog, plugin: str) -> Resolved:
    """Where ``plugin`` of ``catalog`` comes from.

    Raises:
        UsageError: the marketplace has no such plugin.
        PluginError: its ``source`` is a form codebot does not fetch, or wrong.
    """
    if plugin not in catalog.plugins:
        known = ", ".join(sorted(catalog.plugins)) or "none"
        raise UsageError(
            f"marketplace '{catalog.name}' has no plugin '{plugin}' (it has: {known})",
            hint="Run `codebot plugin marketplace list` to see the marketplaces.",
        )
    entry = catalog.plugins[plugin]
    index = list(catalog.plugins).index(plugin)
    key = f"plugins[{index}].source"
    source = entry["source"]
    if isinstance(source, str):
        if catalog.root is None:
            raise PluginError(
                f"'{key}' in {catalog.path} is a relative path, and this marketplace was added "
                "by the URL of its marketplace.json, which has no folder",
                hint="Add the marketplace by its git URL (or a local folder) instead.",
            )
        relative = source
        if catalog.plugin_root and not source.startswith("./"):
            relative = f"{catalog.plugin_root.rstrip('/')}/{source}"
        folder = (catalog.root / relative).resolve()
        if not folder.is_relative_to(catalog.root.resolve()) or not folder.is_dir():
            raise PluginError(
                f"'{key}' in {catalog.path} is {source!r}, which is not a folder inside the "
                "marketplace",
                hint="Write it as ./plugins/NAME, relative to the marketplace's folder.",
            )
        return Resolved(folder=folder)
    if not isinstance(source, dict):
        raise PluginError(f"'{key}' in {catalog.path} must be a path or an object")
    kind = source.get("source")
    ref = source.get("ref")
    sha = source.get("sha")
    if kind == "github" and isinstance(source.get("repo"), str):
        return Resolved(url=f"https://github.com/{source['repo']}.git", ref=ref, sha=sha)
    if kind in ("url", "git") and isinstance(source.get("url"), str):
        return Resolved(url=source["url"], ref=ref, sha=sha)
    if kind == "git-subdir" and isinstance(source.get("url"), str):
        return Resolved(url=source["url"], ref=ref, sha=sha, subdir=str(source.get("path", "")))
    raise PluginError(
        f"'{key}' in {catalog.path} is a {kind!r} source, which codebot does not fetch "
        "(it fetches relative paths, github, url and git-subdir)",
        hint="Install the plugin from its folder or git URL instead.",
    )
