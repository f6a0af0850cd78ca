"""``read``: a text file with line numbers, from an offset, up to a limit of lines; an image
file (PNG, JPEG, GIF or WebP, known by its bytes) as an image the model sees.

A file that is not UTF-8 is read in its own encoding (:mod:`._text`), and the output says
which, so the model knows the text it sees is what ``edit`` will match."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from codebot_mcp.core.media import images
from codebot_mcp.core.tools.base import Capability, Origin, Permission, ToolInfo, ToolResult
from codebot_mcp.core.tools.boundary import MAX_READ_BYTES, BoundaryError
from codebot_mcp.core.tools.builtin._common import BadArgumentError, integer, string
from codebot_mcp.core.tools.builtin._files import FileTool
from codebot_mcp.core.tools.builtin._text import decode, has_bom

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
"""Longer lines (minified files) are cut so one line cannot flood the context."""


class ReadTool(FileTool):
    """Read a file relative to the working directory, inside the boundary (:mod:`core.boundary`)."""

    name = "read"
    description = (
        "Read a text file. Lines are numbered from 1. Use offset (first line) and limit "
        f"(number of lines, default {DEFAULT_LIMIT}) to page through large files. An image "
        "file (PNG, JPEG, GIF, WebP) is returned as an image you can see."
    )

    def schema(self) -> dict[str, Any]:
        """Arguments: ``path``, optional ``offset`` and ``limit``."""
        return {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the cwd."},
                "offset": {"type": "integer", "minimum": 1, "description": "First line (1)."},
                "limit": {"type": "integer", "minimum": 1, "description": "Lines to read."},
            },
            "required": ["path"],
        }

    @property
    def info(self) -> ToolInfo:
        """Reading changes nothing."""
        return ToolInfo(
            Origin.BUILTIN,
            Permission(Capability.READ, "built-in read: only reads files"),
            reach=self.reach,
        )

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        """Read the file; missing, binary, special or directory paths are error results."""
        try:
            path = self.boundary.reach(string(arguments, "path")).resolved
            offset = integer(arguments, "offset", 1)
            limit = integer(arguments, "limit", DEFAULT_LIMIT)
        except BadArgumentError as exc:
            return ToolResult(f"read: {exc}", is_error=True)
        if self.files is not None and not images.named_like_image(path):
            # the editor's buffer (ACP): what the user sees; an image is read from the disk
            try:
                text = await self.files.read_text(path)
            except OSError as exc:
                return ToolResult(f"read: cannot read {path} in the editor: {exc}", is_error=True)
            return _numbered(path, text, offset, limit, more=False, encoding=None)
        try:
            data, more = await anyio.to_thread.run_sync(self.boundary.read_bytes, path)
        except BoundaryError as exc:
            return ToolResult(f"read: {exc}", is_error=True)
        except FileNotFoundError:
            return ToolResult(f"read: {path} does not exist", is_error=True)
        except IsADirectoryError:
            return ToolResult(
                f"read: {path} is a directory; use bash (ls) to list it", is_error=True
            )
        except OSError as exc:
            return ToolResult(f"read: cannot read {path}: {exc.strerror}", is_error=True)
        if (found := images.sniff(data[: images.SNIFF_BYTES])) is not None:
            return _image(path, data, found, more=more)
        if images.named_like_image(path):
            return ToolResult(
                f"read: {path} is named like an image, but its content is not a PNG, JPEG, GIF "
                "or WebP image (images are recognised by their bytes, not their name)",
                is_error=True,
            )
        if b"\0" in data[:8192] and not has_bom(data):
            return ToolResult(f"read: {path} looks binary ({len(data)} bytes)", is_error=True)
        decoded = await anyio.to_thread.run_sync(lambda: decode(data, partial=more))
        encoding = None if decoded.plain_utf8 else decoded.name
        return _numbered(path, decoded.text, offset, limit, more=more, encoding=encoding)


def _numbered(
    path: Path, text: str, offset: int, limit: int, *, more: bool, encoding: str | None
) -> ToolResult:
    """The lines ``offset`` to ``offset + limit`` of ``text``, numbered (``encoding``: the
    file's, when it is not plain UTF-8)."""
    lines = text.splitlines()
    if offset > max(len(lines), 1):
        return ToolResult(
            f"read: offset {offset} is past the end of {path} ({len(lines)} lines)",
            is_error=True,
        )
    chosen = lines[offset - 1 : offset - 1 + limit]
    out = [
        f"{n:>6}\t{line[:MAX_LINE_CHARS]}{' [line cut]' if len(line) > MAX_LINE_CHARS else ''}"
        for n, line in enumerate(chosen, start=offset)
    ]
    rest = len(lines) - (offset - 1 + len(chosen))
    if rest > 0:
        out.append(f"[{rest} more lines; read again with offset={offset + len(chosen)}]")
    if more and rest <= 0:
        out.append(f"[the file is larger than {MAX_READ_BYTES} bytes; the rest was not read]")
    if not lines:
        out.append("[empty file]")
    facts: dict[str, Any] = {"path": str(path), "lines": len(chosen)}
    if encoding is not None:
        out.insert(0, f"[encoding: {encoding}; shown decoded, edit keeps it]")
        facts["encoding"] = encoding
    return ToolResult("\n".join(out), data=facts)


def _image(path: Path, data: bytes, found: tuple[str, int, int], *, more: bool) -> ToolResult:
    """An image file as an image (its size checked against ``images.max_bytes`` later, by
    the agent, which downscales it or says why it cannot)."""
    if more:
        return ToolResult(
            f"read: {path} is an image larger than {MAX_READ_BYTES // 2**20} MB; make a "
            "smaller copy to look at",
            is_error=True,
        )
    image = images.Image(data, found[0], found[1], found[2], path.name)
    facts: dict[str, Any] = {"path": str(path), "image": image.mime, "bytes": len(data)}
    return ToolResult(f"[image: {image.describe()}]", data=facts, images=(image,))
