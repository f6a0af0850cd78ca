"""Unified diffs for approvals: what an ``edit`` or a ``write`` over a file would change."""

from __future__ import annotations

import difflib
from pathlib import Path

from codebot_mcp.core.tools.boundary import BoundaryError, read_regular

MAX_DIFF_LINES = 400
"""A longer diff is cut: the approval must fit a screen or two."""
MAX_PREVIEW_BYTES = 2 * 1024 * 1024
"""Files larger than this get a summary instead of a diff."""


def unified(path: Path | str, before: str, after: str) -> str:
    """``--- a/path`` / ``+++ b/path`` diff with three lines of context (cut when long)."""
    lines = list(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a/{path}",
            tofile=f"b/{path}",
        )
    )
    if not lines:
        return "(no change)"
    text = [
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    ]
    if len(text) > MAX_DIFF_LINES:
        rest = len(text) - MAX_DIFF_LINES
        text = [*text[:MAX_DIFF_LINES], f"[... {rest} more diff lines ...]\n"]
    return "".join(text).rstrip("\n")


def read_for_preview(path: Path) -> str | None:
    """The file's text for a diff, or None when it is missing, huge, binary or not a regular
    file (a preview must never block on a FIFO or read ``/dev/zero``)."""
    try:
        data, more = read_regular(path, MAX_PREVIEW_BYTES)
    except (OSError, BoundaryError):
        return None
    if more:
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")
