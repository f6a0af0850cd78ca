"""A server that records the ``params._meta`` of every request it receives, server name
"traced", without the MCP SDK (:mod:`tests.servers._era`).

Each request (``initialize``/``server/discover``, ``tools/list``, ``tools/call``...) appends one
JSON line ``{"method": ..., "meta": {...}, "tool": ...}`` to the file named by its first
argument, so a test sees the W3C trace context (``traceparent``, ``tracestate``, SEP-414) a
client put there. Tools: ``probe(text)`` answers ``probed: <text>``; ``broken()`` answers an
error result.

Run: ``python -m tests.servers.traced RECORD.jsonl``
"""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

from tests.servers._era import Call, EraServer, text_result, tool

_LOCK = threading.Lock()


class Traced(EraServer):
    name = "traced"
    tools = [  # noqa: RUF012 (the base's ClassVar)
        tool(
            "probe",
            "Answer the text back, prefixed.",
            {"text": "string"},
            annotations={"readOnlyHint": True},
        ),
        tool("broken", "Always fails.", {}, annotations={"readOnlyHint": True}),
    ]

    def __init__(self, record: str) -> None:
        super().__init__()
        self.record = record

    def received(self, method: str, params: dict[str, Any]) -> None:
        meta = params.get("_meta")
        line = {"method": method, "meta": meta if isinstance(meta, dict) else {}}
        if method == "tools/call":
            line["tool"] = params.get("name")
        with _LOCK, open(self.record, "a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")

    def call_tool(self, name: str, arguments: dict[str, Any], call: Call) -> dict[str, Any]:
        if name == "broken":
            return text_result("broken on purpose", is_error=True)
        return text_result(f"probed: {arguments.get('text', '')}")


def main() -> None:
    Traced(sys.argv[1]).serve()


if __name__ == "__main__":
    main()
