"""A server with many tools and real cursor pagination on ``tools/list`` (server "many_tools").

On the raw two-era base (:mod:`tests.servers._era`), answering as the same server on the SDK's
low-level ``Server`` did (only tools: no prompts or resources, ``tools.listChanged`` false).
Options:

- ``--count N`` (default 100): tools ``tool_0000`` ... ``tool_{N-1:04d}``;
- ``--page-size P`` (default 50): at most P tools per ``tools/list`` page; the
  cursor is the opaque string ``"offset:<i>"``, and ``nextCursor`` is absent
  on the last page. A malformed cursor is answered with ``-32602``;
- ``--long-names``: every name is padded with ``_x`` to exactly 80 characters
  (valid MCP names, but longer than OpenAI's 64-character limit).

Each tool accepts any arguments and echoes them back as JSON text
(``{"tool": <name>, "arguments": {...}}``, keys sorted).

Run: ``python -m tests.servers.many_tools [--count N] [--page-size P] [--long-names]``
"""

from __future__ import annotations

import argparse
import json
from typing import Any, ClassVar

from tests.servers._era import (
    Call,
    EraServer,
    InvalidParams,
    MethodNotFound,
    RpcError,
    text_result,
)

LONG_NAME_LENGTH = 80
INPUT_SCHEMA = {
    "type": "object",
    "properties": {"value": {"type": "string", "description": "Anything"}},
}


def tool_name(index: int, *, long_names: bool) -> str:
    name = f"tool_{index:04d}"
    if long_names:
        name = (name + "_" + "x" * LONG_NAME_LENGTH)[:LONG_NAME_LENGTH]
    return name


class ManyTools(EraServer):
    name = "many_tools"
    capabilities: ClassVar[dict[str, Any]] = {"tools": {"listChanged": False}}
    modern_capabilities = capabilities

    def __init__(self, count: int, page_size: int, long_names: bool) -> None:
        super().__init__()
        self.page_size = page_size
        self._tools = [
            {
                "description": f"Test tool number {i}; echoes its arguments.",
                "inputSchema": INPUT_SCHEMA,
                "name": tool_name(i, long_names=long_names),
            }
            for i in range(count)
        ]
        self._names = {t["name"] for t in self._tools}

    def list_tools(self, call: Call) -> dict[str, Any]:
        cursor = call.params.get("cursor")
        start = 0
        if cursor is not None:
            if not isinstance(cursor, str):
                raise InvalidParams
            prefix, _, number = cursor.partition(":")
            if prefix != "offset" or not number.isdecimal() or int(number) > len(self._tools):
                raise RpcError(-32602, f"Invalid cursor: {cursor!r}")
            start = int(number)
        end = start + self.page_size
        page: dict[str, Any] = {"tools": self._tools[start:end]}
        if end < len(self._tools):
            page["nextCursor"] = f"offset:{end}"
        return page

    def handle(self, method: str, call: Call) -> dict[str, Any]:
        raise MethodNotFound(method)  # the low-level Server serves tools only

    def known_tool(self, name: str) -> bool:
        return name in self._names

    def call_tool(self, name: str, arguments: dict[str, Any], call: Call) -> dict[str, Any]:
        return text_result(json.dumps({"tool": name, "arguments": arguments}, sort_keys=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--page-size", type=int, default=50)
    parser.add_argument("--long-names", action="store_true")
    args = parser.parse_args()
    if args.count < 0 or args.page_size < 1:
        parser.error("--count must be >= 0 and --page-size >= 1")
    ManyTools(args.count, args.page_size, args.long_names).serve()


if __name__ == "__main__":
    main()
