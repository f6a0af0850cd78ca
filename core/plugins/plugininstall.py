"""Installing a plugin: fetch it into a staging folder, read it, list what it runs; then
(once the user accepted) move it into the cache and record it. Also enable, disable, remove
and update.

``codebot plugin install`` calls :func:`prepare`, shows :class:`Prepared` (its components and
everything it runs; for an update, what changed), asks, and calls :func:`commit` or
:meth:`Prepared.discard`.
"""

from __future__ import annotations

import datetime
import shutil
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from codebot_mcp.core.config.paths import private_dir
from codebot_mcp.core.config.plugins import manifest
from codebot_mcp.core.config.plugins import pluginstore as store
from codebot_mcp.core.config.plugins.pluginstore import PluginScope
from codebot_mcp.core.errors import UsageError
from codebot_mcp.core.plugins import fetch, marketplace


@dataclass(slots=True)
class Prepared:
    """A plugin fetched and read, not installed yet."""

    plugin: manifest.Plugin
    staging: Path
    """The folder holding the fetched copy (removed by :func:`commit` or :meth:`discard`)."""
    source: str
    marketplace: str | None
    commit: str | None
    runs: dict[str, str]
    digest: str
    previous: store.Installed | None = None
    changes: list[str] = field(default_factory=list[str])
    """What runs differently from the installed version (an update)."""
    entry: dict[str, Any] | None = None
    """Its marketplace entry, recorded: loading reads the copy with it."""

    @property
    def source_changed(self) -> bool:
        """It replaces an installed plugin of its name that came from elsewhere."""
        return self.previous is not None and self.previous.source != self.source

    @property
    def needs_consent(self) -> bool:
        """A new plugin, one from another source, or an update that changes what runs."""
        return self.previous is None or self.source_changed or self.previous.digest != self.digest

    def discard(self) -> None:
        """Remove the fetched copy."""
        shutil.rmtree(self.staging, ignore_errors=True)


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def split_spec(spec: str, cwd: Path) -> tuple[str, str] | None:
    """``NAME@MARKETPLACE`` → (name, marketplace); None for a path or a URL."""
    if fetch.is_git_url(spec) or (cwd / spec).expanduser().exists() or "/" in spec:
        return None
    name, sep, market = spec.rpartition("@")
    if not sep or not name or not market:
        return None
    return name, market


def prepare(spec: str, cwd: Path) -> Prepared:
    """Fetch and read the plugin ``spec`` names: a folder, a git URL (``#ref``), or
    ``NAME@MARKETPLACE``.

    Raises:
        UsageError: ``spec`` is none of those, or names an unknown marketplace or plugin.
        PluginError: the plugin (or marketplace entry) is wrong, naming file and key.
        FetchError: it could not be fetched.
    """
    private_dir(store.plugins_dir())
    staging = Path(tempfile.mkdtemp(dir=store.plugins_dir(), prefix=".staging-"))
    try:
        return _prepare(spec, cwd, staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _prepare(spec: str, cwd: Path, staging: Path) -> Prepared:
    target = staging / "plugin"
    commit: str | None = None
    market: str | None = None
    entry = None
    entry_source: Path | None = None
    named = split_spec(spec, cwd)
    local = Path(spec).expanduser()
    local = local if local.is_absolute() else cwd / local
    if named is not None:
        name, market = named
        recorded = marketplace.get(market)
        catalog = marketplace.catalog_of(recorded)
        where = marketplace.resolve(catalog, name)
        entry, entry_source = catalog.plugins[name], catalog.path
        if where.folder is not None:
            fetch.copy_tree(where.folder, target)
            commit = fetch.head(recorded.path) if recorded.kind == "git" else None
        else:
            assert where.url is not None
            commit = _from_git(where.url, where.ref, where.sha, where.subdir, staging, target)
    elif local.is_dir():
        fetch.copy_tree(local.resolve(), target)
        spec = str(local.resolve())
    elif fetch.is_git_url(spec):
        base, ref = fetch.split_ref(spec)
        commit = _from_git(base, ref, None, "", staging, target)
    else:
        raise UsageError(
            f"'{spec}' is not a folder, a git URL, or NAME@MARKETPLACE",
            hint="e.g. codebot plugin install ./my-plugin, or formatter@team-tools "
            "(after `codebot plugin marketplace add`).",
        )
    if entry is None:  # without plugin.json, named after its folder (not the staging one)
        base = local.name if local.is_dir() else fetch.split_ref(spec)[0].rstrip("/")
        entry = {"name": base.rpartition("/")[2].removesuffix(".git")}
    plugin = manifest.read(target, entry, entry_source=entry_source)
    runs = manifest.runs(plugin)
    previous = store.read().plugins.get(plugin.name)
    prepared = Prepared(
        plugin, staging, spec, market, commit, runs, manifest.digest(runs), previous
    )
    prepared.entry = {**(entry or {}), "name": plugin.name}
    if previous is not None:
        prepared.changes = manifest.changes(previous.runs, runs)
    return prepared


def _from_git(
    url: str, ref: str | None, sha: str | None, subdir: str, staging: Path, target: Path
) -> str:
    clone = staging / "clone"
    commit = fetch.clone(url, clone, ref=ref, sha=sha)
    folder = (clone / subdir).resolve() if subdir else clone
    if not folder.is_relative_to(clone.resolve()) or not folder.is_dir():
        raise UsageError(f"{fetch.shown(url)} has no folder {subdir!r}")
    fetch.copy_tree(folder, target)
    shutil.rmtree(clone, ignore_errors=True)
    return commit


def commit(
    prepared: Prepared, *, scope: PluginScope = "user", project: Path | None = None
) -> store.Installed:
    """Move the fetched copy into the cache and record the plugin (an update keeps whether it
    was enabled)."""
    plugin = prepared.plugin
    key = plugin.version or "unversioned"
    if prepared.commit:
        key = f"{key}-{prepared.commit[:12]}"
    target = store.cache_dir(plugin.name, key)
    if target.exists():
        shutil.rmtree(target)
    private_dir(target.parent)
    (prepared.staging / "plugin").replace(target)
    prepared.discard()
    private_dir(store.data_dir(plugin.name))
    previous = prepared.previous
    installed = store.Installed(
        plugin.name,
        target,
        plugin.version,
        prepared.source,
        prepared.marketplace,
        prepared.commit,
        prepared.digest,
        prepared.runs,
        previous.enabled if previous is not None else True,
        scope,
        project.resolve() if scope == "project" and project is not None else None,
        _now(),
        prepared.entry,
    )
    record = store.read()
    record.plugins[plugin.name] = installed
    store.write(record)
    if previous is not None and previous.path != target and _ours(previous.path):
        shutil.rmtree(previous.path, ignore_errors=True)
    return installed


def _ours(path: Path) -> bool:
    return path.resolve().is_relative_to((store.plugins_dir() / "cache").resolve())


def get(name: str) -> store.Installed:
    """An installed plugin.

    Raises:
        UsageError: none of that name.
    """
    record = store.read()
    if name not in record.plugins:
        known = ", ".join(sorted(record.plugins)) or "none"
        raise UsageError(
            f"no plugin named '{name}' is installed (installed: {known})",
            hint="Run `codebot plugin list` to see them.",
        )
    return record.plugins[name]


def set_enabled(name: str, enabled: bool) -> store.Installed:
    """Enable or disable an installed plugin.

    Raises:
        UsageError: none of that name.
    """
    installed = replace(get(name), enabled=enabled)
    record = store.read()
    record.plugins[name] = installed
    store.write(record)
    return installed


def remove(name: str) -> store.Installed:
    """Uninstall a plugin: its record and its cached copy (its data folder is kept).

    Raises:
        UsageError: none of that name.
    """
    installed = get(name)
    record = store.read()
    del record.plugins[name]
    store.write(record)
    if _ours(installed.path):
        shutil.rmtree(installed.path, ignore_errors=True)
    return installed


def update_spec(installed: store.Installed) -> str:
    """What to fetch to update an installed plugin (its marketplace is fetched again first)."""
    if installed.marketplace:
        market = marketplace.get(installed.marketplace)
        if market.kind != "directory":
            marketplace.update(market.name)
        return f"{installed.name}@{installed.marketplace}"
    return installed.source
