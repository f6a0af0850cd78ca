"""The tools ``codebot mcp serve`` offers, as MCP tool definitions with truthful annotations.

The tools are ``core``'s own objects (the ``bash`` that ``chat`` runs, with its confinement);
this module only says, for each, what MCP clients are told: its name, description, input
schema and hints. The hints are what the tool really does, so a client's own approval rules
can rely on them:

- ``read``, ``glob``, ``grep``: read only, never destructive, idempotent, closed world;
- ``write``: replaces a file's content (destructive), idempotent (the same call twice leaves
  the same file);
- ``edit``: changes a file in place (destructive), not idempotent (a second identical edit
  fails or changes more);
- ``bash`` and ``ask``: may do anything, reach the network (``ask`` calls the model's API),
  and are neither read only nor idempotent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import mcp_types as types

from codebot_mcp.core.tools.base import Tool

TOOL_NAMES = ("read", "edit", "write", "glob", "grep", "bash", "ask")
"""The served tools, in the order listed (a contract: clients call them by these names)."""


@dataclass(frozen=True, slots=True)
class Hints:
    """What a served tool does, as MCP ``ToolAnnotations`` say it."""

    title: str
    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool
    long_running: bool = False
    """Reports progress while it runs, and stops when the client cancels."""


HINTS: dict[str, Hints] = {
    "read": Hints("Read a file", True, False, True, False),
    "glob": Hints("Find files by pattern", True, False, True, False),
    "grep": Hints("Search file contents", True, False, True, False),
    "write": Hints("Write a file", False, True, True, False),
    "edit": Hints("Edit a file", False, True, False, False),
    "bash": Hints("Run a shell command", False, True, False, True, long_running=True),
    "ask": Hints("Ask codebot (an agent session)", False, True, False, True, long_running=True),
}


def definition(tool: Tool) -> types.Tool:
    """The MCP definition of one served tool."""
    hints = HINTS[tool.name]
    return types.Tool(
        name=tool.name,
        title=hints.title,
        description=tool.description,
        input_schema=tool.schema(),
        annotations=types.ToolAnnotations(
            title=hints.title,
            read_only_hint=hints.read_only,
            destructive_hint=hints.destructive,
            idempotent_hint=hints.idempotent,
            open_world_hint=hints.open_world,
        ),
    )


def ordered(tools: Sequence[Tool]) -> list[Tool]:
    """The served tools in :data:`TOOL_NAMES` order; any other tool is a programming error."""
    by_name = {t.name: t for t in tools}
    unknown = set(by_name) - set(TOOL_NAMES)
    if unknown:
        raise ValueError(f"mcp serve has no annotations for {sorted(unknown)}")
    return [by_name[name] for name in TOOL_NAMES if name in by_name]
