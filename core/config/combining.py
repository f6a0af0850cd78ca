"""Keys a feature combines itself: the loader and the managed policy ask the feature's
:class:`Combiner` instead of naming its type.

Most keys are parsed by their row (``core.config.sections.Key``) and a project's value
replaces yours, or goes over it part by part (a row's ``merge``). A key whose files combine
with rules of their own registers a :class:`Combiner` beside its section
(:func:`register_combiner`, at import of the feature's module): ``sandbox``
(``core.sandbox.sandboxsettings``), where a project may tighten at once but widens only once
trusted, Claude Code's files add hidden paths and reachable hosts, and the managed policy
locks parts in its own values. The loader (``core.config.settings``) holds the combined value
in ``Settings.sections`` under the key's name, the feature reads it back through its own
``of(settings)``, and the kernel never imports the feature.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codebot_mcp.core.config import sections

__all__ = ["ClaudeParts", "Combined", "Combiner", "combiner", "combiners", "register_combiner"]


@dataclass(frozen=True, slots=True)
class ClaudeParts:
    """What Claude Code's files add to a combined key (``core.config.claudefiles`` reads
    them): the paths of ``Read(...)`` deny rules, ``sandbox.network.allowedDomains``."""

    deny_read: tuple[Path, ...] = ()
    domains: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Combined:
    """A combined key's value, trusted and not."""

    value: Any
    """With the project trusted."""
    untrusted: Any
    """While the project is not trusted (what only tightens already holds)."""
    gated: bool
    """The project's value waits for trust (the trust review shows it as written)."""


@dataclass(frozen=True, slots=True)
class Combiner:
    """How a feature's key combines its files, Claude Code's and the managed policy."""

    name: str
    """The top-level key (``sandbox``); its value is held in ``Settings.sections``."""
    parse: Callable[[Path, Any], Mapping[str, Any]]
    """One file's value: the parts it sets, checked (``SettingsError`` naming file and key);
    the managed file's too."""
    combine: Callable[
        [Mapping[str, Any], Mapping[str, Any] | None, ClaudeParts, ClaudeParts], Combined
    ]
    """``combine(yours, project's, claude, claude_untrusted)``: the parts of your file and of
    the project's (None: it sets none), what Claude Code's files add once trusted, and what
    they add meanwhile (your own ``~/.claude`` file's)."""
    tighten: Callable[[Any, Mapping[str, Any], frozenset[str], Callable[[str], None]], Any]
    """``tighten(value, policy_parts, locked, overridden)``: the value with the parts the
    managed policy locks (``<name>.<part>`` in ``locked``) in the policy's values (or the
    defaults); ``overridden(key)`` for each value of the user's files it overrides."""


_COMBINERS: dict[str, Combiner] = {}


def register_combiner(combiner: Combiner) -> Combiner:
    """Add a feature's combiner; called once, at import of the feature's module."""
    _COMBINERS[combiner.name] = combiner
    return combiner


def combiners() -> tuple[Combiner, ...]:
    """Every registered combiner (the features are imported with the sections)."""
    sections.sections()
    return tuple(_COMBINERS.values())


def combiner(name: str) -> Combiner | None:
    """The combiner of the key ``name``, if a feature registered one."""
    return next((c for c in combiners() if c.name == name), None)
