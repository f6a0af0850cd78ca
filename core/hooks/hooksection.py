"""The ``hooks`` settings section, declared by the feature, and how a hook's matcher matches.

The section's model (the docs' key reference and ``docs/settings.schema.json`` come from it)
is registered with the kernel's registry (``core.config.sections``). Its entries are read by
the kernel, which needs them before any hook runs: settings loading, Claude Code's files and
the plugins parse them (``core.config.hooks``, the grammar) and trust fingerprints the
scripts they name; the loaded entries are ``Settings.hooks``. What a matcher means when a
hook point fires is this feature's (:func:`matches`, used by :mod:`.runner`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING

from codebot_mcp.core.config.hooks import DEFAULT_TIMEOUT
from codebot_mcp.core.config.sections import NOT_SET, Section, register, row

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["matches"]


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
