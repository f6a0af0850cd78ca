"""Trust for project settings: a cloned repository must not start commands on its own.

Servers defined by the project's ``.codebot/settings.json`` start only once the project is
trusted, its skills (``.codebot/skills/``, ``.claude/skills/``) are offered only then, and so
do the project settings that decide where the API key goes (``base_url``,
``api_key_env``) or let tools run without asking (``permissions.allow``). Trust is recorded per
project root as the user reached it (never through a symlinked settings file) together with
a hash of everything that decides what runs (see :func:`digest`), so a change needs trust
again. Global
settings are always trusted.

The store is ``<state dir>/trust.json`` (0600, in a 0700 directory).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

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
    definitions: Mapping[str, str] = field(default_factory=dict[str, str])
    """Project files that can run code beyond settings (skills): path relative to the project
    root → digest of the content (``core.config.skills.project_files``)."""

    @property
    def needs_trust(self) -> bool:
        """True when the project asks for something that needs trust, and is not trusted."""
        wants = bool(self.servers) or bool(self.gated) or bool(self.definitions)
        return wants and not self.trusted

    @property
    def skills(self) -> list[str]:
        """The project's skill folders among the definitions, relative to the project root."""
        return sorted({"/".join(p.split("/")[:3]) for p in self.definitions})

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
    return facts


def digest(
    servers: tuple[ServerConfig, ...],
    gated: Mapping[str, Any],
    root: Path | None = None,
    definitions: Mapping[str, str] | None = None,
) -> str:
    """A hash of everything that decides what the project runs: the project root, each server
    entry as written and its :func:`run_facts`, the gated settings, and the digest of every
    project definition file (skills; absent from the hash when there are none, so trust
    recorded before skills existed still holds)."""
    import hashlib  # deferred: 2-3 ms that `codebot --help` need not pay

    section: dict[str, Any] = {
        "root": os.path.realpath(root) if root else None,
        "mcp_servers": {c.name: {"raw": c.raw, "facts": run_facts(c)} for c in servers},
        "settings": dict(gated),
    }
    if definitions:
        section["definitions"] = dict(definitions)
    text = json.dumps(section, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def store_key(settings: Settings, root: Path | None = None) -> str | None:
    """The project as the user reached it: its root directory, not the file a symlinked
    ``.codebot/settings.json`` points to (that would borrow another project's trust)."""
    root = settings.project_root or root
    if root is None:
        return None
    return os.path.abspath(root)


def project_definitions(settings: Settings) -> tuple[Path | None, dict[str, str]]:
    """The project root (:func:`paths.project_home`) and its definition files that need
    trust: the project's skills. Empty when it has none."""
    from codebot_mcp.core.config.skills import project_files

    root = paths.project_home(settings.cwd, settings.project_root)
    return root, project_files(root)


def _store_path() -> Path:
    return paths.state_dir() / STORE_NAME


def _read_store() -> dict[str, str]:
    try:
        data = json.loads(_store_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): str(v) for k, v in data.items()}  # pyright: ignore[reportUnknownVariableType]


def check(settings: Settings, *, assume_trusted: bool = False) -> TrustCheck:
    """Decide whether the project's servers may start."""
    servers = project_servers(settings)
    gated = settings.project_gated
    root, defs = project_definitions(settings)
    file = settings.project_file
    if file is None and defs:
        file = root / next(iter(defs)).split("/", 2)[0] if root else None
    value = digest(servers, gated, settings.project_root or (root if defs else None), defs)
    key = store_key(settings, root if defs else None)
    api = settings.untrusted_fallback.get("api_key_env") or settings.api_key_env
    if (not servers and not gated and not defs) or file is None or key is None:
        return TrustCheck(file, value, key, api, (), {}, True, TrustReason.NOTHING)
    if assume_trusted:
        reason = TrustReason.FLAG
    elif os.environ.get(TRUST_ENV, "") in ("1", "true", "yes"):
        reason = TrustReason.ENV
    else:
        recorded = _read_store().get(key)
        if recorded == value:
            reason = TrustReason.RECORDED
        else:
            reason = TrustReason.CHANGED if recorded else TrustReason.UNTRUSTED
            return TrustCheck(file, value, key, api, servers, gated, False, reason, defs)
    return TrustCheck(file, value, key, api, servers, gated, True, reason, defs)


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
    if result.definitions:
        names = ", ".join(printable(s, one_line=True) for s in result.skills)
        parts.append(f"project skills ({names})")
    return (
        f"skipping {' and '.join(parts)} from {result.project_file}: "
        f"the project is {result.state}; "
        f"run `codebot trust` to review and trust it, or pass --trust-project "
        f"(or set {TRUST_ENV}=1)"
    )
