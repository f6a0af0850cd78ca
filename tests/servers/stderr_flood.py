"""A server that floods stderr (~20 MB) while serving normally (server "stderr_flood").

On the raw two-era base (:mod:`tests.servers._era`), answering as the same server on the SDK's
``MCPServer`` did. At start a background thread writes ``--megabytes`` MB (default 20) of log
lines to stderr (fd 2) as fast as it can. A client that pipes stderr without draining it would
deadlock the server; a client that sends it to a file or drains it keeps working. Tool:
``echo(text)`` returns ``text`` unchanged.

Run: ``python -m tests.servers.stderr_flood [--megabytes N]``
"""

from __future__ import annotations

import argparse
import os
import threading
from typing import Any, ClassVar

from tests.servers._era import (
    Call,
    EraServer,
    text_result,
    tool,
    tool_error,
)
from tests.servers._mcpserver import ToolFailure, check_arguments

ECHO = tool("echo", "Echo the given text back unchanged.", {"text": "string"})


class StderrFlood(EraServer):
    name = "stderr_flood"
    tools: ClassVar[list[dict[str, Any]]] = [ECHO]

    def call_tool(self, name: str, arguments: dict[str, Any], call: Call) -> dict[str, Any]:
        try:
            return text_result(check_arguments(name, ECHO["inputSchema"], arguments)["text"])
        except ToolFailure as exc:
            return tool_error(name, str(exc))


def flood(total_bytes: int) -> None:
    line = b"stderr_flood: " + b"." * 1009 + b"\n"  # 1024 bytes per line
    chunk = line * 64  # 64 KiB per write
    written = 0
    try:
        while written < total_bytes:
            written += os.write(2, chunk[: total_bytes - written])
    except OSError:
        pass  # stderr closed: the client went away


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--megabytes", type=float, default=20.0)
    args = parser.parse_args()
    threading.Thread(target=flood, args=(int(args.megabytes * 1024 * 1024),), daemon=True).start()
    StderrFlood().serve()


if __name__ == "__main__":
    main()
