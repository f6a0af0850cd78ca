"""The ``sandbox`` setting, owned by the feature: its value, how the files combine, what the
managed policy locks, its section.

A project file may tighten the sandbox at once (``deny_read`` only tightens: its paths add
up); what widens it (a looser mode, ``network`` true, more ``writable`` paths) needs trust
(``core.config.trust``), like ``roots``. Claude Code's files add the paths of their
``Read(...)`` deny rules (hidden from ``bash`` too) and ``sandbox.network.allowedDomains``
(where codebot's own files set no ``network``); the managed policy locks parts in its values.

The kernel reads one file's ``sandbox`` object with its own grammar
(``core.config.sandboxing.parse_sandbox``, shared with server entries) and asks this module
the rest through the :class:`core.config.combining.Combiner` it registers, beside its section
(``core.config.sections``): the loaded value is held in ``Settings.sections`` and read with
:func:`of`. The confinement that applies it is :mod:`.confinement`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codebot_mcp.core.config import sandboxing
from codebot_mcp.core.config.combining import ClaudeParts, Combined, Combiner, register_combiner
from codebot_mcp.core.config.sandboxing import DEFAULT_MODE, SANDBOX_KEYS, network_parts
from codebot_mcp.core.config.sections import Section, register, row

if TYPE_CHECKING:
    from pydantic import BaseModel

    from codebot_mcp.core.config.settings import Settings

__all__ = ["SandboxSettings", "combine", "merge", "of", "tighten"]

_RANK = {"off": 0, "workspace-write": 1, "read-only": 2}


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    """The ``sandbox`` setting, merged over the settings files."""

    mode: str | None = None
    """``read-only``, ``workspace-write`` or ``off``; None: the default (workspace-write where
    the machine supports it)."""
    network: bool = False
    """True lets commands reach the network; False: none at all, loopback included (but
    the ``domains``, when there are some)."""
    writable: tuple[Path, ...] = ()
    """Directories ``workspace-write`` may also write (absolute, resolved)."""
    deny_read: tuple[Path, ...] = ()
    """More paths hidden from confined commands (absolute, ``~`` expanded, symlinks kept:
    the sandbox follows them when a command starts)."""
    domains: tuple[str, ...] = ()
    """``network`` as a list: the host patterns reachable through the proxy (normalized)."""

    def widens(self, other: SandboxSettings) -> bool:
        """True when ``self`` allows something ``other`` does not (a project that does this
        needs trust)."""
        mine = _RANK[self.mode or DEFAULT_MODE]
        theirs = _RANK[other.mode or DEFAULT_MODE]
        return (
            mine < theirs
            or (self.network and not other.network)
            or (not other.network and bool(set(self.domains) - set(other.domains)))
            or bool(set(self.writable) - set(other.writable))
        )


def of(settings: Settings) -> SandboxSettings:
    """The ``sandbox`` of loaded settings (the defaults where none were loaded)."""
    return settings.section("sandbox", SandboxSettings)


def merge(global_part: Mapping[str, Any], project_part: Mapping[str, Any]) -> SandboxSettings:
    """The project's keys over the global ones; ``writable`` and ``deny_read`` add up (as
    ``roots`` does)."""
    merged = {**global_part, **project_part}
    writable = (*global_part.get("writable", ()), *project_part.get("writable", ()))
    deny_read = (*global_part.get("deny_read", ()), *project_part.get("deny_read", ()))
    network, domains = network_parts(merged.get("network", False))
    return SandboxSettings(
        mode=merged.get("mode"),
        network=network,
        writable=tuple(dict.fromkeys(writable)),
        deny_read=tuple(dict.fromkeys(deny_read)),
        domains=domains,
    )


def combine(
    mine: Mapping[str, Any],
    project: Mapping[str, Any] | None,
    claude: ClaudeParts,
    claude_untrusted: ClaudeParts,
) -> Combined:
    """Your file's parts and the project's (None: it sets none), and Claude Code's, combined:
    trusted, and while the project is not (its ``deny_read`` holds at once; what widens the
    sandbox waits, and is then ``gated``)."""
    theirs = project or {}
    sandbox = merge(mine, theirs)
    # deny_read only tightens: it holds even while the rest of the project's sandbox waits
    untrusted = merge(mine, {"deny_read": theirs.get("deny_read", ())})
    untrusted_theirs = theirs
    gated = sandbox.widens(untrusted)  # a cloned repo must not loosen the sandbox
    if gated:
        untrusted_theirs = {}
    else:
        untrusted = sandbox
    # Read(...) deny rules hide their paths from bash too (deny_read only tightens)
    sandbox = _hiding(sandbox, claude.deny_read)
    untrusted = _hiding(untrusted, claude_untrusted.deny_read)
    # Claude Code's sandbox.network.allowedDomains, where codebot's files set no network
    sandbox = _reaching(sandbox, (mine, theirs), claude.domains)
    untrusted = _reaching(untrusted, (mine, untrusted_theirs), claude_untrusted.domains)
    return Combined(sandbox, untrusted, gated)


def _hiding(sandbox: SandboxSettings, paths: tuple[Path, ...]) -> SandboxSettings:
    """``sandbox`` with ``paths`` added to its ``deny_read``."""
    if not paths:
        return sandbox
    return replace(sandbox, deny_read=tuple(dict.fromkeys((*sandbox.deny_read, *paths))))


def _reaching(
    sandbox: SandboxSettings, parts: Iterable[Mapping[str, Any]], domains: tuple[str, ...]
) -> SandboxSettings:
    """``sandbox`` reaching Claude Code's ``allowedDomains`` through the proxy, unless one of
    codebot's own files (``parts``) sets ``network``: codebot's value wins."""
    if any("network" in part for part in parts):
        return sandbox
    return replace(sandbox, domains=domains)


def tighten(
    sandbox: SandboxSettings | None,
    policy: Mapping[str, Any],
    locked: frozenset[str],
    overridden: Callable[[str], None],
) -> SandboxSettings:
    """``sandbox`` (None: the defaults) with the keys the managed policy sets or locks in its
    values (``policy``: the parts its file sets; ``network`` sets the host list too: a user's
    list, or Claude Code's ``allowedDomains``, is no way around it); ``overridden(key)`` for
    each value of the user's or project's files it overrides."""
    sandbox = sandbox or SandboxSettings()
    parts: dict[str, Any] = {}
    defaults = SandboxSettings()
    for name in SANDBOX_KEYS:
        if f"sandbox.{name}" in locked:
            default = getattr(defaults, name)
            value = policy.get(name, default)
            if name == "network":  # the whole network and the host list go together
                value, parts["domains"] = network_parts(value)
                if sandbox.domains not in (parts["domains"], ()):
                    overridden("sandbox.network")
            if getattr(sandbox, name) not in (value, default):
                overridden(f"sandbox.{name}")
            parts[name] = value
    return replace(sandbox, **parts)


@cache
def section_model() -> type[BaseModel]:
    """The ``sandbox`` section as a pydantic model."""
    from pydantic import BaseModel, ConfigDict, Field

    class SandboxSection(BaseModel):
        model_config = ConfigDict(extra="forbid")
        sandbox: sandboxing.sandbox_model() = Field(  # type: ignore[valid-type]
            default_factory=sandboxing.sandbox_model(),
            description="How bash runs confined: mode, network (true, false, or a list of "
            "host patterns reached through codebot's proxy), writable, deny_read. A project "
            "file may tighten it (deny_read only adds paths); widening it needs trust.",
            examples=[{"mode": "read-only", "network": ["pypi.org"]}],
        )

    return SandboxSection


register(Section("sandbox", (row("sandbox", trust="own", hints=True),), section_model, order=60))
register_combiner(Combiner("sandbox", sandboxing.parse_sandbox, combine, tighten))
