"""``edit``: replace an exact string in a file, keeping its encoding, line endings and mode.

The model sends text with ``\\n`` line endings; a file that uses ``\\r\\n`` throughout is
matched and written back with ``\\r\\n``. A UTF-8 BOM stays; a file that is not UTF-8 is read
and written as Latin-1, which maps every byte to itself, so untouched bytes stay as they were.
The new content goes to a temporary file beside the original, gets its mode, and replaces it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio

from codebot_mcp.core.fsutil import atomic_write
from codebot_mcp.core.tools.base import Capability, Origin, Permission, ToolInfo, ToolResult
from codebot_mcp.core.tools.boundary import BoundaryError, Reach
from codebot_mcp.core.tools.builtin._common import BadArgumentError, string
from codebot_mcp.core.tools.builtin._diff import MAX_PREVIEW_BYTES, unified
from codebot_mcp.core.tools.builtin._files import FileTool
from codebot_mcp.core.tools.builtin._text import Decoded, UnencodableError, decode, has_bom

MAX_EDIT_BYTES = 10 * 1024 * 1024
"""Files larger than this are not edited in memory."""
MAX_LINES_LISTED = 10


class EditError(Exception):
    """Why the edit cannot be made; the message is for the model."""


def _line_numbers(text: str, needle: str) -> list[int]:
    lines: list[int] = []
    start = text.find(needle)
    while start != -1:
        lines.append(text.count("\n", 0, start) + 1)
        start = text.find(needle, start + max(1, len(needle)))
    return lines


def apply_edit(text: str, old: str, new: str, replace_all: bool) -> tuple[str, list[int]]:
    """The new text and the lines (1-based, in the old text) where replacements start.

    Raises:
        EditError: ``old`` is missing, or not unique without ``replace_all``.
    """
    if old == new:
        raise EditError("old_string and new_string are the same; there is nothing to change")
    lines = _line_numbers(text, old)
    if not lines:
        hint = ""
        if old.strip() and old.strip() in text:
            hint = " (it does occur with different leading/trailing whitespace)"
        raise EditError(
            f"old_string was not found in the file{hint}. Read the file again and copy the "
            "exact text, including indentation."
        )
    if len(lines) > 1 and not replace_all:
        shown = ", ".join(map(str, lines[:MAX_LINES_LISTED]))
        more = f" and {len(lines) - MAX_LINES_LISTED} more" if len(lines) > MAX_LINES_LISTED else ""
        raise EditError(
            f"old_string occurs {len(lines)} times (lines {shown}{more}); include more "
            "surrounding lines to make it unique, or set replace_all to true"
        )
    if replace_all:
        return text.replace(old, new), lines
    return text.replace(old, new, 1), lines


class EditTool(FileTool):
    """Replace text in a file."""

    name = "edit"
    description = (
        "Replace an exact string in a file: old_string must match the file exactly (whitespace "
        "included) and be unique, unless replace_all is true. Read the file first. Line endings, "
        "encoding and the file mode are kept. To create a file, use write."
    )

    def schema(self) -> dict[str, Any]:
        """Arguments: ``path``, ``old_string``, ``new_string``, optional ``replace_all``."""
        return {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the cwd."},
                "old_string": {"type": "string", "description": "The exact text to replace."},
                "new_string": {"type": "string", "description": "The replacement text."},
                "replace_all": {
                    "type": "boolean",
                    "description": "Replace every occurrence (default false).",
                },
            },
            "required": ["path", "old_string", "new_string"],
        }

    @property
    def info(self) -> ToolInfo:
        """Editing changes files."""
        return ToolInfo(
            Origin.BUILTIN,
            Permission(Capability.WRITE, "built-in edit: changes files"),
            reach=self.reach,
            preview=self.preview,
        )

    def _arguments(self, arguments: Mapping[str, Any]) -> tuple[Reach, str, str, bool]:
        reach = self.boundary.reach(string(arguments, "path"))
        old = string(arguments, "old_string")
        new = string(arguments, "new_string", allow_empty=True)
        replace_all = arguments.get("replace_all", False)
        if not isinstance(replace_all, bool):
            raise BadArgumentError("'replace_all' must be true or false")
        return reach, old, new, replace_all

    def _load(self, path: Path) -> Decoded:
        try:
            data, more = self.boundary.read_bytes(path, MAX_EDIT_BYTES)
        except BoundaryError as exc:
            raise EditError(str(exc)) from None
        except FileNotFoundError:
            raise EditError(f"{path} does not exist; use write to create it") from None
        except IsADirectoryError:
            raise EditError(f"{path} is a directory") from None
        except OSError as exc:
            raise EditError(f"cannot read {path}: {exc.strerror}") from None
        if more:
            raise EditError(f"{path} is larger than {MAX_EDIT_BYTES // 2**20} MiB")
        if b"\0" in data[:8192] and not has_bom(data):
            raise EditError(f"{path} looks binary; edit only changes text files")
        return decode(data)

    def preview(self, arguments: Mapping[str, Any]) -> str | None:
        """The diff the approval shows (or why the edit would fail)."""
        try:
            reach, old, new, replace_all = self._arguments(arguments)
            path = self.boundary.writable(reach)
            if path.is_file() and path.stat().st_size > MAX_PREVIEW_BYTES:
                return None
            decoded = self._load(path)
            after, _ = apply_edit(decoded.text, old, new, replace_all)
        except (BadArgumentError, BoundaryError, EditError, OSError) as exc:
            return f"(this edit will fail: {exc})"
        return unified(_shown(path, self.cwd), decoded.text, after)

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        """Make the replacement; a missing or ambiguous ``old_string`` is an error result."""
        try:
            reach, old, new, replace_all = self._arguments(arguments)
            path = reach.resolved
            self.boundary.writable(reach)  # no edit through a symlink that leaves the root
            if self.files is not None:  # the editor's buffer (ACP), unsaved changes included
                return await self._edit_in_editor(path, old, new, replace_all)
            decoded = await anyio.to_thread.run_sync(self._load, path)
            after, lines = apply_edit(decoded.text, old, new, replace_all)
            try:
                data = decoded.encode(after)
            except UnencodableError as exc:
                raise EditError(str(exc)) from None
            await anyio.to_thread.run_sync(_replace_file, path, data)
        except BadArgumentError as exc:
            return ToolResult(f"edit: {exc}", is_error=True)
        except BoundaryError as exc:
            return ToolResult(f"edit: {exc}", is_error=True)
        except EditError as exc:
            return ToolResult(f"edit: {path}: {exc}", is_error=True)
        except OSError as exc:
            return ToolResult(f"edit: cannot write {path}: {exc.strerror or exc}", is_error=True)
        where = ", ".join(map(str, lines[:MAX_LINES_LISTED]))
        count = f"{len(lines)} occurrence{'s' if len(lines) != 1 else ''}"
        kept = "" if decoded.plain_utf8 else f"; written as {decoded.name}, as it was"
        facts: dict[str, Any] = {"path": str(path), "replacements": len(lines)}
        if not decoded.plain_utf8:
            facts["encoding"] = decoded.name
        return ToolResult(f"Edited {path}: replaced {count} (line {where}){kept}", data=facts)

    async def _edit_in_editor(
        self, path: Path, old: str, new: str, replace_all: bool
    ) -> ToolResult:
        """The edit made on the editor's text (:attr:`files`): read, replace, write back."""
        assert self.files is not None
        try:
            text = await self.files.read_text(path)
            after, lines = apply_edit(text, old, new, replace_all)
            await self.files.write_text(path, after)
        except EditError as exc:
            return ToolResult(f"edit: {path}: {exc}", is_error=True)
        except OSError as exc:
            return ToolResult(f"edit: {path} in the editor: {exc}", is_error=True)
        where = ", ".join(map(str, lines[:MAX_LINES_LISTED]))
        count = f"{len(lines)} occurrence{'s' if len(lines) != 1 else ''}"
        facts: dict[str, Any] = {"path": str(path), "replacements": len(lines), "editor": True}
        return ToolResult(f"Edited {path}: replaced {count} (line {where})", data=facts)


def _shown(path: Path, cwd: Path) -> str:
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        return str(path)


def _replace_file(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, copy the mode, then rename."""
    atomic_write(path, data)
