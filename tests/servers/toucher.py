"""A server whose tools touch the world, to show a sandboxed server cannot (server "toucher").

On the raw two-era base (:mod:`tests.servers._era`), answering as the same server on the SDK's
``MCPServer`` did. Tools:

- ``write_file(path, text)``: writes ``text`` to ``path``; ``wrote <path>`` or the OS error;
- ``connect(port)``: opens a TCP connection to ``127.0.0.1:<port>``; ``connected`` or the error;
- ``tmpdir()``: ``$TMPDIR`` as the server sees it.

Run: ``python -m tests.servers.toucher``
"""

from __future__ import annotations

import os
import socket
from typing import Any

from tests.servers._era import (
    Call,
    EraServer,
    text_result,
    tool,
    tool_error,
)
from tests.servers._mcpserver import ToolFailure, check_arguments

TOOLS = [
    tool("write_file", "Write text to a file.", {"path": "string", "text": "string"}),
    tool("connect", "Connect to a TCP port on the loopback.", {"port": "integer"}),
    tool("tmpdir", "The temporary directory this server was given."),
]
_BY_NAME = {t["name"]: t for t in TOOLS}


def write_file(path: str, text: str) -> str:
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        return f"error: {exc}"
    return f"wrote {path}"


def connect(port: int) -> str:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    except OSError as exc:
        return f"error: {exc}"
    return "connected"


class Toucher(EraServer):
    name = "toucher"
    tools = TOOLS

    def call_tool(self, name: str, arguments: dict[str, Any], call: Call) -> dict[str, Any]:
        try:
            args = check_arguments(name, _BY_NAME[name]["inputSchema"], arguments)
        except ToolFailure as exc:
            return tool_error(name, str(exc))
        if name == "write_file":
            return text_result(write_file(args["path"], args["text"]))
        if name == "connect":
            return text_result(connect(args["port"]))
        return text_result(os.environ.get("TMPDIR", "<unset>"))


def main() -> None:
    Toucher().serve()


if __name__ == "__main__":
    main()
