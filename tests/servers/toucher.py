"""A server whose tools touch the world, to show a sandboxed server cannot (server "toucher").

Tools:

- ``write_file(path, text)``: writes ``text`` to ``path``; ``wrote <path>`` or the OS error;
- ``connect(port)``: opens a TCP connection to ``127.0.0.1:<port>``; ``connected`` or the error;
- ``tmpdir()``: ``$TMPDIR`` as the server sees it.

Run: ``python -m tests.servers.toucher``
"""

from __future__ import annotations

import os
import socket

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("toucher", version="0.1.0")


@mcp.tool(structured_output=False)
def write_file(path: str, text: str) -> str:
    """Write text to a file."""
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        return f"error: {exc}"
    return f"wrote {path}"


@mcp.tool(structured_output=False)
def connect(port: int) -> str:
    """Connect to a TCP port on the loopback."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    except OSError as exc:
        return f"error: {exc}"
    return "connected"


@mcp.tool(structured_output=False)
def tmpdir() -> str:
    """The temporary directory this server was given."""
    return os.environ.get("TMPDIR", "<unset>")


def main() -> None:
    mcp.run("stdio")


if __name__ == "__main__":
    main()
