"""A stdio server that asks the client for its roots as soon as it is initialized, and writes
what it was told to a file: the test sees what ``roots/list`` answered on every path (doctor,
the warm holder, ``mcp call``), not what codebot says it answered.

Tool ``roots()`` asks again and returns the root URIs, one per line. Standard library only.

Run: ``python -m tests.servers.roots_probe OUT_FILE``
"""

from __future__ import annotations

import json
import sys
from typing import Any

from tests.servers._raw import initialize_result, send, text_result

ROOTS_TOOL = {
    "name": "roots",
    "description": "The client's roots, one URI per line.",
    "inputSchema": {"type": "object", "properties": {}},
}


def main() -> None:
    out = sys.argv[1]
    asked = 0
    pending_call: Any = None

    def ask() -> None:
        nonlocal asked
        asked += 1
        send({"jsonrpc": "2.0", "id": f"roots-{asked}", "method": "roots/list"})

    for raw in sys.stdin.buffer:
        if not raw.strip():
            continue
        message = json.loads(raw)
        method, ident = message.get("method"), message.get("id")
        if method is None and isinstance(ident, str) and ident.startswith("roots-"):
            uris = [r.get("uri") for r in (message.get("result") or {}).get("roots", [])]
            with open(out, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(uris) + "\n")
            if pending_call is not None:
                send({"jsonrpc": "2.0", "id": pending_call, "result": text_result("\n".join(uris))})
                pending_call = None
            continue
        if method == "initialize":
            result = initialize_result(message.get("params") or {}, name="roots-probe")
            send({"jsonrpc": "2.0", "id": ident, "result": result})
        elif method == "notifications/initialized":
            ask()
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": ident, "result": {"tools": [ROOTS_TOOL]}})
        elif method == "tools/call":
            pending_call = ident
            ask()
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": ident, "result": {}})
        elif ident is not None:
            error = {"code": -32601, "message": f"Method not found: {method}"}
            send({"jsonrpc": "2.0", "id": ident, "error": error})


if __name__ == "__main__":
    main()
