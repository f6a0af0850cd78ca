"""Trust for project settings: a cloned repository must not start commands on its own.

Servers defined by the project's ``.codebot/settings.json`` start only once the project is
trusted. Trust is recorded per project file together with a hash of its server entries, so a
changed section needs trust again. Global settings are always trusted.

The store is ``<state dir>/trust.json`` (0600, in a 0700 directory).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from pathlib import Path

from core import paths
from core.settings import ServerConfig, Settings

TRUST_ENV = "CODEBOT_TRUST_PROJECT"
STORE_NAME = "trust.json"


@dataclass(frozen=True, slots=True)
class TrustCheck:
    """Whether the project's servers may start, and which servers that concerns."""

    project_file: Path | None
    digest: str
    servers: tuple[ServerConfig, ...]
    """Servers defined by the project file (they need trust); empty when there are none."""
    trusted: bool
    reason: str
    """Why: "no project servers", "recorded", "--trust-project", "CODEBOT_TRUST_PROJECT=1",
    "changed since trusted" or "not trusted"."""

    @property
    def needs_trust(self) -> bool:
        """True when project servers exist and are not trusted."""
        return bool(self.servers) and not self.trusted


def project_servers(settings: Settings) -> tuple[ServerConfig, ...]:
    """The servers whose entry comes from the project file."""
    if settings.project_file is None:
        return ()
    return tuple(c for c in settings.servers.values() if c.source == settings.project_file)


def digest(servers: tuple[ServerConfig, ...]) -> str:
    """A hash of the project's server entries as written (before variable expansion)."""
    import hashlib  # deferred: 2-3 ms that `codebot --help` need not pay

    section = {c.name: c.raw for c in servers}
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
    file = settings.project_file
    value = digest(servers)
    if not servers or file is None:
        return TrustCheck(file, value, (), True, "no project servers")
    if assume_trusted:
        return TrustCheck(file, value, servers, True, "--trust-project")
    if os.environ.get(TRUST_ENV, "") in ("1", "true", "yes"):
        return TrustCheck(file, value, servers, True, f"{TRUST_ENV}=1")
    recorded = _read_store().get(str(file.resolve()))
    if recorded == value:
        return TrustCheck(file, value, servers, True, "recorded")
    reason = "changed since trusted" if recorded else "not trusted"
    return TrustCheck(file, value, servers, False, reason)


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
    """The settings with the project's servers dropped when they are not trusted."""
    if not result.needs_trust:
        return settings
    names = {c.name for c in result.servers}
    kept = {n: c for n, c in settings.servers.items() if n not in names}
    return replace(settings, servers=kept)


def untrusted_message(result: TrustCheck) -> str:
    """One line naming the skipped servers and the fixes."""
    names = ", ".join(c.name for c in result.servers)
    state = (
        "changed since it was trusted"
        if result.reason == "changed since trusted"
        else ("not trusted")
    )
    return (
        f"skipping project servers ({names}) from {result.project_file}: the project is {state}; "
        f"run `codebot trust` to review and trust it, or pass --trust-project "
        f"(or set {TRUST_ENV}=1)"
    )
