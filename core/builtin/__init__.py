"""The built-in tools, all relative to the working directory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from core.builtin.bash import BashTool
from core.builtin.edit import EditTool
from core.builtin.glob import GlobTool
from core.builtin.grep import GrepTool
from core.builtin.read import ReadTool
from core.builtin.write import WriteTool
from core.tools import Tool

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
