"""Trust for project settings: a cloned repository must not start commands on its own.

Servers defined by the project's ``.codebot/settings.json`` start only once the project is
trusted, and so do the project settings that decide where the API key goes (``base_url``,
``api_key_env``) or let tools run without asking (``permissions.allow``). Trust is recorded per
project file together with a hash of those entries, so a change needs trust again. Global
settings are always trusted.

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

from core import paths
from core.servers import ServerConfig
from core.settings import Settings

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
    servers: tuple[ServerConfig, ...]
    """Servers defined by the project file (they need trust); empty when there are none."""
    gated: Mapping[str, Any]
    """Trust-gated settings the project file sets (``Settings.project_gated``)."""
    trusted: bool
    reason: TrustReason

    @property
    def needs_trust(self) -> bool:
        """True when the project asks for something that needs trust, and is not trusted."""
        return (bool(self.servers) or bool(self.gated)) and not self.trusted

    @property
    def changed(self) -> bool:
        """True when the project was trusted before, for entries it no longer has."""
        return self.reason is TrustReason.CHANGED

    @property
    def state(self) -> str:
        """How an untrusted project is described to the user."""
        return "changed since it was trusted" if self.changed else "not trusted"


def project_servers(settings: Settings) -> tuple[ServerConfig, ...]:
    """The servers whose entry comes from the project file."""
    if settings.project_file is None:
        return ()
    sources = settings.project_sources or (settings.project_file,)
    return tuple(c for c in settings.servers.values() if c.source in sources)


def digest(servers: tuple[ServerConfig, ...], gated: Mapping[str, Any]) -> str:
    """A hash of the project's server entries and gated settings as written."""
    import hashlib  # deferred: 2-3 ms that `codebot --help` need not pay

    section = {"mcp_servers": {c.name: c.raw for c in servers}, "settings": dict(gated)}
    text = json.dumps(section, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


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
    file = settings.project_file
    value = digest(servers, gated)
    if (not servers and not gated) or file is None:
        return TrustCheck(file, value, (), {}, True, TrustReason.NOTHING)
    if assume_trusted:
        return TrustCheck(file, value, servers, gated, True, TrustReason.FLAG)
    if os.environ.get(TRUST_ENV, "") in ("1", "true", "yes"):
        return TrustCheck(file, value, servers, gated, True, TrustReason.ENV)
    recorded = _read_store().get(str(file.resolve()))
    if recorded == value:
        return TrustCheck(file, value, servers, gated, True, TrustReason.RECORDED)
    reason = TrustReason.CHANGED if recorded else TrustReason.UNTRUSTED
    return TrustCheck(file, value, servers, gated, False, reason)


def record(result: TrustCheck) -> Path:
    """Remember that the project's current server entries are trusted; returns the store path."""
    assert result.project_file is not None
    store = _read_store()
    store[str(result.project_file.resolve())] = result.digest
    path = _store_path()
    paths.private_dir(path.parent)
    temporary = path.with_suffix(".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(store, handle, indent=2, sort_keys=True)
    os.replace(temporary, path)
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
    parts = []
    if result.servers:
        parts.append(f"project servers ({', '.join(c.name for c in result.servers)})")
    if result.gated:
        parts.append(f"project settings ({', '.join(result.gated)})")
    return (
        f"skipping {' and '.join(parts)} from {result.project_file}: "
        f"the project is {result.state}; "
        f"run `codebot trust` to review and trust it, or pass --trust-project "
        f"(or set {TRUST_ENV}=1)"
    )
