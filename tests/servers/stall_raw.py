"""An SDK-free server that stops answering: after ``poke`` it announces ``list_changed`` and never
answers ``tools/list`` again; ``stall`` is never answered at all.

Handshake era only (``initialize``). Run: ``python -m tests.servers.stall_raw``
"""

from __future__ import annotations

import json
import sys

from tests.servers._raw import initialize_result, send, text_result

TOOLS = [
    {"name": name, "description": text, "inputSchema": {"type": "object", "properties": {}}}
    for name, text in (("poke", "Shows a value."), ("stall", "Shows another value."))
]


def main() -> None:
    poked = False
    for raw in sys.stdin.buffer:
        try:
            message = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(message, dict) or "id" not in message or "method" not in message:
            continue
        method, request_id = message["method"], message["id"]
        params = message.get("params") or {}
        if method == "initialize":
            result = initialize_result(params, name="stall")
            result["capabilities"] = {"tools": {"listChanged": True}}
        elif method == "ping":
            result = {}
        elif method == "tools/list" and not poked:
            result = {"tools": TOOLS}
        elif method == "tools/call" and params.get("name") == "poke":
            poked = True
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            result = text_result("poked")
        else:
            continue  # never answered
        send({"jsonrpc": "2.0", "id": request_id, "result": result})


if __name__ == "__main__":
    main()
