"""A tiny offline MCP server for the codebot demo: server "notes" (stdio).

Tools:

- ``add_note(text)``: store a note in memory and return its number;
- ``list_notes()`` (read-only): list the notes stored so far;
- ``roll_dice(sides=6)`` (read-only): roll one die with ``sides`` sides.

Notes live in memory only, so they vanish when codebot exits.
Needs the ``mcp`` package (SDK 2.x): the demo settings run it on codebot's own interpreter.

Run by hand: ``python3 notes_server.py`` (speaks MCP on stdin/stdout).
"""

from __future__ import annotations

import random

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

mcp = MCPServer(
    "notes",
    version="0.1.0",
    instructions="Keep short notes for the user with add_note and list_notes.",
)

NOTES: list[str] = []


@mcp.tool(structured_output=False)
def add_note(text: str) -> str:
    """Save a short note for later."""
    if not text.strip():
        raise ToolError("a note needs some text")
    NOTES.append(text.strip())
    return f"saved note #{len(NOTES)}"


@mcp.tool(annotations=ToolAnnotations(read_only_hint=True), structured_output=False)
def list_notes() -> str:
    """Show every note saved so far, numbered."""
    if not NOTES:
        return "(no notes yet)"
    return "\n".join(f"{number}. {text}" for number, text in enumerate(NOTES, start=1))


@mcp.tool(annotations=ToolAnnotations(read_only_hint=True), structured_output=False)
def roll_dice(sides: int = 6) -> str:
    """Roll one die with the given number of sides (default 6)."""
    if sides < 2:
        raise ToolError("a die needs at least 2 sides")
    return f"rolled a {random.randint(1, sides)} (d{sides})"


if __name__ == "__main__":
    mcp.run("stdio")
