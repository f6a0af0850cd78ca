"""The built-in tools, all relative to the working directory: :mod:`.read`, :mod:`.write`,
:mod:`.edit`, :mod:`.glob`, :mod:`.grep` (with :mod:`.pygrep` when ripgrep is missing),
:mod:`.bash`, :mod:`.jobtools` (``bash_output``, ``bash_kill``) and :mod:`.todo`
(``todo_write``); what they share: :mod:`._common` (argument checks), :mod:`._files` (the
file tools' base), :mod:`._text` (encodings) and :mod:`._diff` (diffs for approvals).

The features' tools live in their packages: ``skill`` in ``core.skills.skilltool``, ``task``
in ``core.subagents.tasktool``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from codebot_mcp.core.tools.base import Tool
from codebot_mcp.core.tools.builtin.bash import BashTool
from codebot_mcp.core.tools.builtin.edit import EditTool
from codebot_mcp.core.tools.builtin.glob import GlobTool
from codebot_mcp.core.tools.builtin.grep import GrepTool
from codebot_mcp.core.tools.builtin.read import ReadTool
from codebot_mcp.core.tools.builtin.write import WriteTool

__all__ = [
    "BUILTIN_TOOLS",
    "BashTool",
    "EditTool",
    "GlobTool",
    "GrepTool",
    "ReadTool",
    "WriteTool",
    "builtin_tools",
]

BUILTIN_TOOLS: tuple[Callable[[Path, Path | None], Tool], ...] = (
    ReadTool,
    EditTool,
    WriteTool,
    GlobTool,
    GrepTool,
    BashTool,
)
"""The local tool layer, in a fixed order (it is part of the cached prompt)."""


def builtin_tools(cwd: Path, root: Path | None = None) -> list[Tool]:
    """The built-in tools, working relative to ``cwd``; the file tools stay inside ``root``
    (the project root; default ``cwd``) unless the user approves (see ``core.boundary``)."""
    return [make(cwd, root) for make in BUILTIN_TOOLS]
