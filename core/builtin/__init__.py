"""The built-in tools, all relative to the working directory."""

from __future__ import annotations

from pathlib import Path

from core.builtin.bash import BashTool
from core.builtin.edit import EditTool
from core.builtin.glob import GlobTool
from core.builtin.grep import GrepTool
from core.builtin.read import ReadTool
from core.builtin.write import WriteTool
from core.tools import Tool

__all__ = [
    "BashTool",
    "EditTool",
    "GlobTool",
    "GrepTool",
    "ReadTool",
    "WriteTool",
    "builtin_tools",
]


def builtin_tools(cwd: Path) -> list[Tool]:
    """The local tool layer, in a fixed order (it is part of the cached prompt)."""
    return [
        ReadTool(cwd),
        EditTool(cwd),
        WriteTool(cwd),
        GlobTool(cwd),
        GrepTool(cwd),
        BashTool(cwd),
    ]
