"""``glob``: files whose path matches a pattern, with ``.gitignore`` respected."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio

from codebot_mcp.core.tools.base import Capability, Origin, Permission, ToolInfo, ToolResult
from codebot_mcp.core.tools.builtin._common import BadArgumentError, string
from codebot_mcp.core.tools.builtin._files import FileTool, walk
from codebot_mcp.core.tools.globmatch import PatternError, compiled

MAX_RESULTS = 500


def shown(path: Path, cwd: Path) -> str:
    """A path as the model should write it back: relative to the cwd when inside it."""
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        return str(path)


def find_files(base: Path, pattern: str, root: Path | None = None) -> list[Path]:
    """Files under ``base`` whose path relative to ``base`` matches ``pattern``, sorted
    (symlinked files whose target leaves ``root`` and ``base`` are left out)."""
    matcher = compiled(pattern)  # linear time: a pattern cannot pin the CPU (globmatch)
    return [p for p in walk(base, root) if matcher.match(p.relative_to(base).as_posix())]


class GlobTool(FileTool):
    """Find files by name pattern."""

    name = "glob"
    description = (
        "Find files by glob pattern, relative to path (default: the working directory): "
        "'*.py' matches in that directory only, '**/*.py' at any depth, 'src/**/test_*.py', "
        "'*.{js,ts}'. Files ignored by .gitignore and the .git directory are left out. "
        f"Returns at most {MAX_RESULTS} paths, sorted."
    )

    def schema(self) -> dict[str, Any]:
        """Arguments: ``pattern`` and optional ``path``."""
        return {
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Glob pattern, e.g. '**/*.py'."},
                "path": {"type": "string", "description": "Directory to search (default cwd)."},
            },
            "required": ["pattern"],
        }

    @property
    def info(self) -> ToolInfo:
        """Listing changes nothing."""
        return ToolInfo(
            Origin.BUILTIN,
            Permission(Capability.READ, "built-in glob: only lists files"),
            reach=self.reach,
        )

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        """List the matching files."""
        try:
            pattern = string(arguments, "pattern").strip().removeprefix("./")
            where = arguments.get("path")
            if where is not None and not isinstance(where, str):
                raise BadArgumentError("'path' must be a string")
            base = self.boundary.reach(where).resolved if where else self.cwd
            compiled(pattern)
        except (BadArgumentError, PatternError) as exc:
            return ToolResult(f"glob: {exc}", is_error=True)
        if pattern.startswith("/"):
            return ToolResult(
                "glob: the pattern must be relative; put the directory in 'path'", is_error=True
            )
        if not base.is_dir():
            return ToolResult(f"glob: {base} is not a directory", is_error=True)
        found = await anyio.to_thread.run_sync(find_files, base, pattern, self.boundary.root)
        if not found:
            return ToolResult(f"No files match {pattern!r} under {shown(base, self.cwd) or '.'}")
        lines = [shown(p, self.cwd) for p in found[:MAX_RESULTS]]
        if len(found) > MAX_RESULTS:
            lines.append(f"[{len(found) - MAX_RESULTS} more files; use a narrower pattern]")
        return ToolResult("\n".join(lines), data={"count": len(found)})
