"""The built-in tools: ``read``, ``write`` and ``bash``, all relative to the working directory."""

from __future__ import annotations

from pathlib import Path

from core.builtin.bash import BashTool
from core.builtin.read import ReadTool
from core.builtin.write import WriteTool
from core.tools import Tool

__all__ = ["BashTool", "ReadTool", "WriteTool", "builtin_tools"]


def builtin_tools(cwd: Path, root: Path | None = None) -> list[Tool]:
    """The local tool layer, in a fixed order (it is part of the cached prompt). The file
    tools stay inside ``root`` (the project root; default ``cwd``) unless the user approves."""
    return [ReadTool(cwd, root), WriteTool(cwd, root), BashTool(cwd)]
