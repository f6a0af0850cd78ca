"""A server that fetches URLs, to show a sandboxed server reaches only the hosts its
``sandbox.network`` lists (server "fetcher").

On the raw two-era base (:mod:`tests.servers._era`). Tools:

- ``fetch(url)``: ``urllib.request.urlopen`` (which honours the proxy variables); the body,
  or ``error: `` and the reason (an HTTP error's body included).

Run: ``python -m tests.servers.fetcher``
"""

from __future__ import annotations

import urllib.error
import urllib.request
from typing import Any

from tests.servers._era import Call, EraServer, text_result, tool, tool_error
from tests.servers._mcpserver import ToolFailure, check_arguments

TOOLS = [tool("fetch", "Fetch a URL and return its body.", {"url": "string"})]


def fetch(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.read(65536).decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return f"error: {exc}: {exc.read(4096).decode('utf-8', 'replace')}"
    except OSError as exc:
        return f"error: {exc}"


class Fetcher(EraServer):
    name = "fetcher"
    tools = TOOLS

    def call_tool(self, name: str, arguments: dict[str, Any], call: Call) -> dict[str, Any]:
        try:
            args = check_arguments(name, TOOLS[0]["inputSchema"], arguments)
        except ToolFailure as exc:
            return tool_error(name, str(exc))
        return text_result(fetch(args["url"]))


def main() -> None:
    Fetcher().serve()


if __name__ == "__main__":
    main()
