"""``write``: create or overwrite a text file (parent directories are created)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio.to_thread

from codebot_mcp.core.tools.base import Capability, Origin, Permission, ToolInfo, ToolResult
from codebot_mcp.core.tools.boundary import BoundaryError
from codebot_mcp.core.tools.builtin._common import BadArgumentError, string
from codebot_mcp.core.tools.builtin._diff import read_for_preview, unified
from codebot_mcp.core.tools.builtin._files import FileTool


class WriteTool(FileTool):
    """Write a file relative to the working directory."""

    name = "write"
    description = (
        "Create a file or overwrite it with the given content. Parent directories are created. "
        "Read a file before overwriting it."
    )

    def schema(self) -> dict[str, Any]:
        """Arguments: ``path`` and ``content``."""
        return {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the cwd."},
                "content": {"type": "string", "description": "The complete new content."},
            },
            "required": ["path", "content"],
        }

    @property
    def info(self) -> ToolInfo:
        """Writing changes files."""
        return ToolInfo(
            Origin.BUILTIN,
            Permission(Capability.WRITE, "built-in write: creates or overwrites files"),
            reach=self.reach,
            preview=self.preview,
        )

    def preview(self, arguments: Mapping[str, Any]) -> str | None:
        """Over an existing file: the diff. A new file: its size. The path is the resolved
        one (what a symlink leads to), as the write itself uses."""
        try:
            path = self.boundary.reach(string(arguments, "path")).resolved
            content = string(arguments, "content", allow_empty=True)
        except BadArgumentError:
            return None
        if not path.exists():
            lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
            return f"(new file {path}: {lines} lines, {len(content.encode('utf-8'))} bytes)"
        before = read_for_preview(path)
        if before is None:
            return f"(overwrites {path}, which is large, binary or not a regular file: no diff)"
        try:
            shown = path.relative_to(self.cwd).as_posix()
        except ValueError:
            shown = str(path)
        return unified(shown, before, content)

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        """Write the file and say whether it was created or overwritten."""
        try:
            reach = self.boundary.reach(string(arguments, "path"))
            content = string(arguments, "content", allow_empty=True)
        except BadArgumentError as exc:
            return ToolResult(f"write: {exc}", is_error=True)
        path = reach.resolved
        if self.files is not None:  # the editor's buffer (ACP)
            try:
                await self.files.write_text(self.boundary.writable(reach), content)
            except BoundaryError as exc:
                return ToolResult(f"write: {exc}", is_error=True)
            except OSError as exc:
                return ToolResult(f"write: {path} in the editor: {exc}", is_error=True)
            size = len(content.encode("utf-8"))
            return ToolResult(
                f"Wrote {path} ({size} bytes)", data={"path": str(path), "editor": True}
            )
        try:
            existed = await anyio.to_thread.run_sync(self.boundary.write_text, reach, content)
        except BoundaryError as exc:
            return ToolResult(f"write: {exc}", is_error=True)
        except IsADirectoryError:
            return ToolResult(f"write: {path} is a directory", is_error=True)
        except OSError as exc:
            return ToolResult(f"write: cannot write {path}: {exc.strerror}", is_error=True)
        verb = "Overwrote" if existed else "Created"
        size = len(content.encode("utf-8"))
        return ToolResult(f"{verb} {path} ({size} bytes)", data={"path": str(path)})
