"""Trust for project settings: a cloned repository must not start commands on its own.

Servers defined by the project's ``.codebot/settings.json`` start only once the project is
trusted, and so do the project settings that decide where the API key goes (``base_url``,
``api_key_env``), let tools run without asking (``permissions.allow``) or run commands
(``hooks``), and the project's definition files: agents, commands and skills in ``.codebot/``
and ``.claude/`` (:mod:`core.config.definitions`), and every project file a hook command
names. Trust is recorded per project root as the user reached it (never through a symlinked
settings file) together with a hash of everything that decides what runs (see
:func:`digest`: entries, settings and each file's content), so a change needs trust again.
Global settings and your own definitions are always trusted.

The store is ``<state dir>/trust.json`` (0600, in a 0700 directory).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from codebot_mcp.core import jsonutil
from codebot_mcp.core.config import paths
from codebot_mcp.core.config.servers import ServerConfig
from codebot_mcp.core.config.settings import Settings
from codebot_mcp.core.fsutil import atomic_write
from codebot_mcp.core.proc.lookup import find_command
from codebot_mcp.core.secrets.credentials import is_credential_name
from codebot_mcp.core.secrets.redact import expandable_values

TRUST_ENV = "CODEBOT_TRUST_PROJECT"
STORE_NAME = "trust.json"


class TrustReason(StrEnum):
    """Why a project is trusted or not."""

    NOTHING = "nothing to trust"
    RECORDED = "recorded"
    FLAG = "--trust-project"
    ENV = f"{TRUST_ENV}=1"
    CHANGED = "changed since trusted"
    """Trust was recorded for other server entries or gated settings than the current ones."""
    UNTRUSTED = "not trusted"


@dataclass(frozen=True, slots=True)
class TrustCheck:
    """Whether the project's servers may start, and which servers that concerns."""

    project_file: Path | None
    digest: str
    key: str | None
    api_key_env: str | None
    """The variable holding the model's API key (``api_key_env`` of the trusted settings)."""
    servers: tuple[ServerConfig, ...]
    """Servers defined by the project file (they need trust); empty when there are none."""
    gated: Mapping[str, Any]
    """Trust-gated settings the project file sets (``Settings.project_gated``)."""
    trusted: bool
    reason: TrustReason
    files: tuple[Path, ...] = ()
    """Project files that need trust: definitions (agents, commands, skills) and the files
    its hooks name; their content is part of :attr:`digest`."""
    root: Path | None = None
    """The project root the files are in."""

    @property
    def needs_trust(self) -> bool:
        """True when the project asks for something that needs trust, and is not trusted."""
        return self.asks and not self.trusted

    @property
    def asks(self) -> bool:
        """True when the project has anything that needs trust (trusted or not)."""
        return bool(self.servers) or bool(self.gated) or bool(self.files)

    @property
    def changed(self) -> bool:
        """True when the project was trusted before, for entries it no longer has."""
        return self.reason is TrustReason.CHANGED

    @property
    def state(self) -> str:
        """How an untrusted project is described to the user."""
        return "changed since it was trusted" if self.changed else "not trusted"


DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"


@dataclass(frozen=True, slots=True)
class Expansion:
    """One ``${VAR}`` an entry expands, where, and what kind of value it is."""

    variable: str
    key: str
    """Where in the entry: ``args[1]``, ``env.TOKEN``, ``headers.Authorization``, ``url``..."""
    credential: bool
    """The name looks like a credential (``*KEY*``, ``*TOKEN*``, ``*SECRET*``...)."""
    api_key: bool
    """It holds the model's API key (by name, or by the same value)."""
    is_set: bool


def expansions(
    config: ServerConfig,
    api_key_env: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[Expansion]:
    """Every variable the entry expands, flagged when it is a credential or the API key."""
    from codebot_mcp.core.envexpand import referenced

    environ = os.environ if environ is None else environ
    key_names = {api_key_env or DEFAULT_API_KEY_ENV, DEFAULT_API_KEY_ENV}
    key_values = {environ[n] for n in key_names if environ.get(n)}
    out: list[Expansion] = []
    for key, text in expandable_values(config.raw):
        for name in referenced(text):
            value = environ.get(name)
            holds_key = name in key_names or (bool(value) and value in key_values)
            out.append(Expansion(name, key, is_credential_name(name), holds_key, value is not None))
    return out


def project_servers(settings: Settings) -> tuple[ServerConfig, ...]:
    """The servers whose entry comes from the project file."""
    if settings.project_file is None:
        return ()
    sources = settings.project_sources or (settings.project_file,)
    return tuple(c for c in settings.servers.values() if c.source in sources)


def run_facts(config: ServerConfig) -> dict[str, Any]:
    """What decides what an entry runs, beyond its text: the resolved program, ``cwd``, the
    names of its ``env`` and any ``PATH`` it sets (a changed file on disk changes these)."""
    facts: dict[str, Any] = {"env_keys": sorted(config.env)}
    if config.type == "stdio":
        found = find_command(config.command, config.cwd, config.env) if config.command else None
        facts["executable"] = os.path.realpath(found) if found else None
        facts["cwd"] = os.path.realpath(config.cwd) if config.cwd else None
        facts["path"] = config.env.get("PATH")
    else:
        facts["url"] = config.url
        command = config.oauth.id_token_command
        if command:  # a program the entry runs too: which file it is counts (absent otherwise)
            found = find_command(command[0], config.cwd, {})
            facts["id_token_command"] = os.path.realpath(found) if found else None
    return facts


def digest(
    servers: tuple[ServerConfig, ...],
    gated: Mapping[str, Any],
    root: Path | None = None,
    files: tuple[Path, ...] = (),
) -> str:
    """A hash of everything that decides what the project runs: the project root, each server
    entry as written and its :func:`run_facts`, the gated settings, and each project file
    (definitions, hook scripts) by path and content."""
    import hashlib  # deferred: 2-3 ms that `codebot --help` need not pay

    section: dict[str, Any] = {
        "root": os.path.realpath(root) if root else None,
        "mcp_servers": {c.name: {"raw": c.raw, "facts": run_facts(c)} for c in servers},
        "settings": dict(gated),
    }
    if files:  # absent otherwise: trust recorded before files were covered stays valid
        section["files"] = {_relative(p, root): _file_digest(p) for p in files}
    text = json.dumps(section, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _relative(path: Path, root: Path | None) -> str:
    try:
        return path.relative_to(root).as_posix() if root else str(path)
    except ValueError:
        return str(path)


MAX_HASHED_BYTES = 16 * 1024 * 1024
"""Of a larger project file, its size and this many first bytes are fingerprinted."""


def _file_digest(path: Path) -> str:
    """``sha256:<hex>`` of the content (a symlink also by its target, a huge file by its size
    and head), or why it is not read."""
    import hashlib

    prefix = f"link:{os.readlink(path)}:" if path.is_symlink() else ""
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > MAX_HASHED_BYTES:
                head = hashlib.sha256(handle.read(MAX_HASHED_BYTES)).hexdigest()
                return f"{prefix}size:{size}:head-sha256:{head}"
            return prefix + "sha256:" + hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError as exc:
        return prefix + f"unreadable:{exc.errno}"


def project_files(settings: Settings) -> tuple[Path | None, tuple[Path, ...]]:
    """The root of the project's definition folders, and the files that need trust there:
    its definitions and the files its hooks name."""
    from codebot_mcp.core.config import discovery
    from codebot_mcp.core.config.hooks import script_files

    root = discovery.project_root(settings.cwd, settings.project_root)
    if root is None:
        return None, ()
    found = discovery.definition_files(root)
    sources = settings.project_sources or (
        (settings.project_file,) if settings.project_file else ()
    )
    for hook in settings.hooks:
        if hook.source in sources:
            found += [p for p in script_files(hook.command, root) if p not in found]
    return root, tuple(found)


def held_digests(files: tuple[Path, ...]) -> dict[Path, str]:
    """Each file's digest as :func:`digest` takes it, by resolved path: what a load of a
    project definition is held to (a file edited after trust is refused, not used)."""
    return {p.resolve(): _file_digest(p) for p in files if not p.is_symlink()}


def store_key(settings: Settings, root: Path | None = None) -> str | None:
    """The project as the user reached it: its root directory, not the file a symlinked
    ``.codebot/settings.json`` points to (that would borrow another project's trust).
    ``root``: the definitions' root, for a project without a settings file."""
    found = settings.project_root or root
    if found is None:
        return None
    return os.path.abspath(found)


def _store_path() -> Path:
    return paths.state_dir() / STORE_NAME


def _read_store() -> dict[str, str]:
    try:
        data = jsonutil.loads(_store_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): str(v) for k, v in data.items()}  # pyright: ignore[reportUnknownVariableType]


def check(settings: Settings, *, assume_trusted: bool = False) -> TrustCheck:
    """Decide whether the project's servers, gated settings and files may take effect."""
    servers = project_servers(settings)
    gated = settings.project_gated
    file = settings.project_file
    root, files = project_files(settings)
    value = digest(servers, gated, settings.project_root or root, files)
    key = store_key(settings, root)
    api = settings.untrusted_fallback.get("api_key_env") or settings.api_key_env

    def result(trusted: bool, reason: TrustReason) -> TrustCheck:
        return TrustCheck(file, value, key, api, servers, gated, trusted, reason, files, root)

    if (not servers and not gated and not files) or key is None:
        return TrustCheck(file, value, key, api, (), {}, True, TrustReason.NOTHING)
    if assume_trusted:
        return result(True, TrustReason.FLAG)
    if os.environ.get(TRUST_ENV, "") in ("1", "true", "yes"):
        return result(True, TrustReason.ENV)
    recorded = _read_store().get(key)
    if recorded == value:
        return result(True, TrustReason.RECORDED)
    return result(False, TrustReason.CHANGED if recorded else TrustReason.UNTRUSTED)


def record(result: TrustCheck) -> Path:
    """Remember that the project's current server entries are trusted; returns the store path."""
    assert result.key is not None
    store = _read_store()
    store[result.key] = result.digest
    path = _store_path()
    paths.private_dir(path.parent)
    atomic_write(path, json.dumps(store, indent=2, sort_keys=True), mode=0o600)
    return path


def without_untrusted(settings: Settings, result: TrustCheck) -> Settings:
    """The settings without what an untrusted project asks for: its servers are dropped and
    the gated settings fall back to the global values (its deny and ask rules stay: they only
    make codebot more careful).
    """
    if not result.needs_trust:
        return settings
    names = {c.name for c in result.servers}
    kept = {n: c for n, c in settings.servers.items() if n not in names}
    kept.update({n: settings.shadowed[n] for n in names if n in settings.shadowed})
    kept = dict(sorted(kept.items()))
    fallback = dict(settings.untrusted_fallback)
    return replace(settings, servers=kept, project_gated={}, **fallback)


def untrusted_message(result: TrustCheck) -> str:
    """One line naming what is skipped and the fixes."""
    from codebot_mcp.core.secrets.redact import printable

    parts = []
    if result.servers:
        names = ", ".join(printable(c.name, one_line=True) for c in result.servers)
        parts.append(f"project servers ({names})")
    if result.gated:
        parts.append(f"project settings ({', '.join(result.gated)})")
    if result.files:
        shown = [printable(_relative(p, result.root), one_line=True) for p in result.files[:3]]
        more = f" and {len(result.files) - 3} more" if len(result.files) > 3 else ""
        parts.append(f"project files ({', '.join(shown)}{more})")
    return (
        f"skipping {' and '.join(parts)} from {result.project_file or result.root}: "
        f"the project is {result.state}; "
        f"run `codebot trust` to review and trust it, or pass --trust-project "
        f"(or set {TRUST_ENV}=1)"
    )
