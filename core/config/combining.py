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

``hooks`` combines too, but its entries are the kernel's to read (:mod:`.hooks`, the grammar:
your file, the installed plugins, the project's file and Claude Code's files are all read
before any hook runs), so its feature registers an :class:`EntryCombiner`
(:func:`register_entries`, ``core.hooks.hooksection``): given the :class:`HookSources` the
loader read, it makes the value; given a value, it lists the commands trust fingerprints and
confines (:class:`RunCommand`), and confines those it is told to (``core.config.trust``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codebot_mcp.core.config import sections

if TYPE_CHECKING:
    from codebot_mcp.core.config.hooks import HookCommand

__all__ = [
    "ClaudeParts",
    "Combined",
    "Combiner",
    "EntryCombiner",
    "HookSources",
    "RunCommand",
    "combiner",
    "combiners",
    "entry_combiners",
    "register_combiner",
    "register_entries",
]


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


@dataclass(frozen=True, slots=True)
class HookSources:
    """The hook entries the loader read (``core.config.hooks``), by where they come from,
    each in its files' order."""

    yours: tuple[HookCommand, ...]
    """Your settings file's, then the installed plugins' (accepted when installed)."""
    project: tuple[HookCommand, ...]
    """The project's settings file's (they run only once the project is trusted)."""
    claude: tuple[HookCommand, ...]
    """Claude Code's files', once the project is trusted."""
    claude_untrusted: tuple[HookCommand, ...]
    """Claude Code's files' while it is not (your own ``~/.claude`` file's)."""


@dataclass(frozen=True, slots=True)
class RunCommand:
    """A command a key's value runs, as trust sees it: the files it names are fingerprinted
    (a project's), or confined while the project is not trusted (yours that run one of its
    files; ``core.config.trust.global_runs``)."""

    label: str
    """How trust names it: ``hook <key> of <file>``."""
    source: Path
    """The settings file that configured it."""
    command: str
    confined: bool
    """It runs in a sandbox of its own already."""


@dataclass(frozen=True, slots=True)
class EntryCombiner:
    """How a feature's key whose entries the kernel reads (``hooks``) becomes its value, and
    what trust needs of the value."""

    name: str
    """The top-level key; its value is held in ``Settings.sections``."""
    combine: Callable[[HookSources], Combined]
    """The value with the project trusted, without it, and whether the project's part waits
    for trust (its section as written is then fingerprinted)."""
    commands: Callable[[Any], Iterable[RunCommand]]
    """The commands of a value (None: the key's value was never loaded; none)."""
    confine: Callable[[Any, Collection[str]], Any]
    """The value with the commands of these labels run confined (``workspace-write``)."""


_ENTRIES: dict[str, EntryCombiner] = {}


def register_entries(combiner: EntryCombiner) -> EntryCombiner:
    """Add a feature's entry combiner; called once, at import of the feature's module."""
    _ENTRIES[combiner.name] = combiner
    return combiner


def entry_combiners() -> tuple[EntryCombiner, ...]:
    """Every registered entry combiner (the features are imported with the sections)."""
    sections.sections()
    return tuple(_ENTRIES.values())
