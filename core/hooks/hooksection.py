"""The ``hooks`` setting, owned by the feature: its value, how its sources combine, what trust
needs of it, its section; and how a hook's matcher matches.

The section's model (the docs' key reference and ``docs/settings.schema.json`` come from it)
is registered with the kernel's registry (``core.config.sections``). Its entries are read by
the kernel, which needs them before any hook runs: settings loading, Claude Code's files and
the plugins parse them (``core.config.hooks``, the grammar). The kernel asks this module the
rest through the :class:`core.config.combining.EntryCombiner` it registers: the value made of
the sources (:func:`combine`: yours and the plugins', the project's, Claude Code's; the
project's only once trusted), held in ``Settings.sections`` and read with :func:`of`; the
commands trust fingerprints and confines (:func:`commands`), and the value with some of them
confined (:func:`confine`). What a matcher means when a hook point fires is this feature's
(:func:`matches`, used by :mod:`.runner`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import replace
from functools import cache
from typing import TYPE_CHECKING

from codebot_mcp.core.config import claudefiles
from codebot_mcp.core.config.combining import (
    Combined,
    EntryCombiner,
    HookSources,
    RunCommand,
    register_entries,
)
from codebot_mcp.core.config.hooks import DEFAULT_TIMEOUT
from codebot_mcp.core.config.sections import NOT_SET, Section, register, row

if TYPE_CHECKING:
    from pydantic import BaseModel

    from codebot_mcp.core.config.hooks import HookCommand
    from codebot_mcp.core.config.settings import Settings

__all__ = ["CONFINED_MODE", "combine", "commands", "confine", "label", "matches", "of"]

CONFINED_MODE = "workspace-write"
"""How a hook of yours that runs a file of an untrusted project runs meanwhile."""


def of(settings: Settings) -> tuple[HookCommand, ...]:
    """The command hooks of loaded settings, yours first (none where none were loaded)."""
    return settings.section("hooks", tuple)


def combine(sources: HookSources) -> Combined:
    """The hooks of every source, yours first, a handler identical to an earlier one left
    out (``core.config.claudefiles.unique``); while the project is not trusted, yours and
    your own Claude Code file's. The project's section waits for trust when it holds any."""
    return Combined(
        claudefiles.unique(sources.yours + sources.project + sources.claude),
        claudefiles.unique(sources.yours + sources.claude_untrusted),
        bool(sources.project),
    )


def label(hook: HookCommand) -> str:
    """How trust names a hook: ``hook <key> of <file>``."""
    return f"hook {hook.key} of {hook.source}"


def commands(value: tuple[HookCommand, ...] | None) -> list[RunCommand]:
    """The commands of ``value`` (loaded hooks), for trust."""
    return [RunCommand(label(h), h.source, h.command, h.sandbox is not None) for h in value or ()]


def confine(
    value: tuple[HookCommand, ...] | None, labels: Collection[str]
) -> tuple[HookCommand, ...]:
    """``value`` with the hooks trust names in ``labels`` run confined."""
    return tuple(
        replace(h, sandbox=CONFINED_MODE) if label(h) in labels else h for h in value or ()
    )


def matches(matcher: str, values: Iterable[str]) -> bool:
    """Claude Code's matcher rules: ``""`` or ``*`` match everything; only letters, digits,
    ``_``, ``-``, spaces, ``,`` and ``|`` is a list of exact names; anything else is a
    regular expression searched in the name. ``values`` are the names of the one thing (a
    tool's name and its Claude Code alias), any of which may match."""
    if matcher in ("", "*"):
        return True
    if re.fullmatch(r"[A-Za-z0-9_|, -]+", matcher):
        names = {n.strip() for n in re.split(r"[|,]", matcher)}
        return any(v in names for v in values)
    pattern = re.compile(matcher)
    return any(pattern.search(v) for v in values)


@cache
def section_model() -> type[BaseModel]:
    """The ``hooks`` section as a pydantic model (built on demand: see ``core.config.sections``):
    events by name, each a list of matcher groups of hooks, in Claude Code's format. The
    loader reads it with ``core.config.hooks.parse_hooks``, its plain fields (types, values,
    bounds) through the table generated from this model; fields of Claude Code's hooks that
    codebot does not honour are let through here and warned about there."""
    from typing import Literal

    from pydantic import BaseModel, ConfigDict, Field

    class HookEntry(BaseModel):
        model_config = ConfigDict(extra="allow", populate_by_name=True)
        type: str = "command"  # codebot runs "command" hooks; other types warn and are skipped
        command: str = Field(default=NOT_SET, min_length=1, examples=["./check.sh"])
        timeout: float = Field(default=DEFAULT_TIMEOUT, gt=0)  # over MAX_TIMEOUT warns
        if_: str = Field(default="", alias="if", examples=["Bash(git commit:*)"])
        async_: bool = Field(default=False, alias="async")
        sandbox: Literal["workspace-write", "read-only"] = NOT_SET
        shell: str = "bash"  # another shell warns: codebot runs hooks with bash

    class HookGroup(BaseModel):
        model_config = ConfigDict(extra="allow")
        matcher: str | None = ""
        hooks: list[HookEntry]

    class HooksSection(BaseModel):
        model_config = ConfigDict(extra="forbid")
        hooks: dict[str, list[HookGroup]] = Field(
            default_factory=dict[str, list[HookGroup]],
            description="Commands run around tool calls and prompts (Claude Code's hooks format).",
            examples=[{"PreToolUse": [{"matcher": "bash", "hooks": [{"command": "./check"}]}]}],
        )

    return HooksSection


register(Section("hooks", (row("hooks", trust="own"),), section_model, order=50))
register_entries(EntryCombiner("hooks", combine, commands, confine))
