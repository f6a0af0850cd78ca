"""Raw stdio server (handshake era, no SDK) whose answer to ``tools/call`` breaks JSON-RPC.

``--answer MODE``: ``string-result`` (``"result": "oops"``), ``no-result`` (neither result nor
error), ``bad-error`` (an error without an integer code), ``not-jsonrpc`` (``"jsonrpc": "1.0"``).
Each ``tools/call`` appends a line to the file named by ``--count`` (a test checks that a tool
is never run twice). Tool: ``act()``.

Run: ``python -m tests.servers.malformed_call --answer string-result --count FILE``
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from tests.servers._raw import initialize_result, send

TOOLS = [{"name": "act", "description": "Do something once.", "inputSchema": {"type": "object"}}]


def broken(mode: str, request_id: Any) -> dict[str, Any]:
    if mode == "string-result":
        return {"jsonrpc": "2.0", "id": request_id, "result": "oops"}
    if mode == "no-result":
        return {"jsonrpc": "2.0", "id": request_id}
    if mode == "bad-error":
        return {"jsonrpc": "2.0", "id": request_id, "error": {"code": "x", "message": "m"}}
    return {"jsonrpc": "1.0", "id": request_id, "result": {"content": []}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--answer", required=True)
    parser.add_argument("--count", required=True)
    args = parser.parse_args()
    for raw in sys.stdin.buffer:
        try:
            message = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(message, dict) or "id" not in message or "method" not in message:
            continue
        method, request_id = message["method"], message["id"]
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": request_id, "result": initialize_result({}, name="m")})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": TOOLS}})
        elif method == "tools/call":
            with open(args.count, "a") as fh:
                fh.write("call\n")
            send(broken(args.answer, request_id))
        else:
            err = {"code": -32601, "message": "Method not found"}
            send({"jsonrpc": "2.0", "id": request_id, "error": err})


if __name__ == "__main__":
    main()
