"""Is there a newer version of an installed server? What ``mcp doctor`` asks the registry.

An entry ``codebot mcp install`` wrote records its ``provenance``; the registry's ``latest``
of that name is compared with the installed version (semantic versions compared as such,
anything else by the registry's word that it is the latest), and the installed version's
own status (deprecated, deleted) is read too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from codebot_mcp.core.config.provenance import Provenance
from codebot_mcp.core.registry.http import NotFoundError, RegistryError, get_json
from codebot_mcp.core.registry.readapi import Fetch, get_version
from codebot_mcp.core.registry.serverjson import ServerInfo

_SEMVER = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")


def _semver(version: str) -> tuple[tuple[int, int, int], list[str]] | None:
    match = _SEMVER.match(version)
    if match is None:
        return None
    major, minor, patch, pre = match.groups()
    return (int(major), int(minor), int(patch)), pre.split(".") if pre else []


def is_newer(candidate: str, installed: str) -> bool:
    """``candidate`` is a later version than ``installed``: by semantic versioning when both
    are semantic versions (a pre-release sorts before its release), else when they differ
    (the registry marked the candidate latest). Written here: ``packaging`` is not a
    dependency, and it reads PEP 440, not semver."""
    if candidate == installed:
        return False
    new, old = _semver(candidate), _semver(installed)
    if new is None or old is None:
        return True
    if new[0] != old[0]:
        return new[0] > old[0]
    if not new[1] or not old[1]:
        return not new[1] and bool(old[1])  # a release is newer than its pre-releases

    def key(part: str) -> tuple[int, int, str]:
        return (0, int(part), "") if part.isdigit() else (1, 0, part)

    return [key(p) for p in new[1]] > [key(p) for p in old[1]]


@dataclass(frozen=True, slots=True)
class UpdateCheck:
    """What the registry says about an installed server."""

    provenance: Provenance
    latest: ServerInfo | None = None
    """The registry's latest version; None when it has none (or was not reached)."""
    installed: ServerInfo | None = None
    """The installed version as the registry has it now (its status); None: gone."""
    error: str | None = None
    """Why the registry could not be asked."""

    @property
    def newer(self) -> str | None:
        """The latest version when it is newer than the installed one."""
        if self.latest is None or not is_newer(self.latest.version, self.provenance.version):
            return None
        return self.latest.version


def check_update(provenance: Provenance, *, fetch: Fetch = get_json) -> UpdateCheck:
    """Ask the entry's registry for the latest version and the installed one (never raises)."""
    try:
        latest = get_version(provenance.registry, provenance.name, fetch=fetch)
    except NotFoundError:
        return UpdateCheck(provenance)
    except RegistryError as exc:
        return UpdateCheck(provenance, error=exc.message)
    if latest.version == provenance.version:
        return UpdateCheck(provenance, latest, latest)
    try:
        installed = get_version(
            provenance.registry, provenance.name, provenance.version, fetch=fetch
        )
    except RegistryError:
        installed = None
    return UpdateCheck(provenance, latest, installed)
