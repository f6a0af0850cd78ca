"""Raw JSON-RPC stdio server (no SDK, boots fast) that misbehaves on request.

Handshake era only (answers ``initialize``; ``server/discover`` gets -32601). Tools:

- ``echo(text)``: answers the text;
- ``bad_bytes()``: answers with a line that is not valid UTF-8;
- ``huge(mb)``: answers with a text block of ``mb`` megabytes;
- ``storm(count)``: sends ``count`` ``notifications/tools/list_changed``, then answers;
- ``list_count()``: how many ``tools/list`` requests were served so far;
- ``die()``: exits at once without answering (a crash during a call);
- ``ts_error()``: a JSON-RPC error whose message already names its code, as servers built on
  the TypeScript SDK word them ("MCP error -32602: ...").

``--ignore-term`` makes the process ignore SIGTERM and stdin EOF (a server that hangs on
shutdown and must be killed).

Run: ``python -m tests.servers.faulty``
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from typing import Any

from tests.servers._raw import initialize_result, send, text_result

TOOLS = [
    {"name": name, "description": description, "inputSchema": schema}
    for name, description, schema in [
        ("echo", "Echo text.", {"type": "object", "properties": {"text": {"type": "string"}}}),
        ("bad_bytes", "Answer with invalid UTF-8.", {"type": "object", "properties": {}}),
        (
            "huge",
            "Answer with MB megabytes.",
            {"type": "object", "properties": {"mb": {"type": "integer"}}},
        ),
        (
            "storm",
            "Send COUNT list_changed notifications.",
            {"type": "object", "properties": {"count": {"type": "integer"}}},
        ),
        ("list_count", "Count tools/list requests.", {"type": "object", "properties": {}}),
        ("die", "Exit without answering.", {"type": "object", "properties": {}}),
        ("ts_error", "Fail as the TypeScript SDK words it.", {"type": "object", "properties": {}}),
    ]
]


def write_raw(data: bytes) -> None:
    sys.stdout.buffer.write(data + b"\n")
    sys.stdout.buffer.flush()


def call(request_id: Any, name: str, arguments: dict[str, Any], state: dict[str, int]) -> None:
    if name == "echo":
        send(
            {"jsonrpc": "2.0", "id": request_id, "result": text_result(str(arguments.get("text")))}
        )
    elif name == "bad_bytes":
        head = json.dumps({"jsonrpc": "2.0", "id": request_id}).encode()[:-1]
        write_raw(head + b', "result": {"content": [{"type": "text", "text": "\xff\xfe\xfa"}]}}')
    elif name == "huge":
        text = "x" * (int(arguments.get("mb", 1)) * 1024 * 1024)
        send({"jsonrpc": "2.0", "id": request_id, "result": text_result(text)})
    elif name == "storm":
        for _ in range(int(arguments.get("count", 100))):
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        send({"jsonrpc": "2.0", "id": request_id, "result": text_result("stormed")})
    elif name == "list_count":
        send({"jsonrpc": "2.0", "id": request_id, "result": text_result(str(state["lists"]))})
    elif name == "die":
        os._exit(7)
    elif name == "ts_error":
        message = "MCP error -32602: Invalid arguments for tool ts_error"
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32602, "message": message}})
    else:
        send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "error": {"code": -32602, "message": "no such tool"},
            }
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ignore-term", action="store_true")
    args = parser.parse_args()
    if args.ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    state = {"lists": 0}
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
            result = initialize_result(params, name="faulty")
            result["capabilities"] = {"tools": {"listChanged": True}}
            send({"jsonrpc": "2.0", "id": request_id, "result": result})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": request_id, "result": {}})
        elif method == "tools/list":
            state["lists"] += 1
            send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": TOOLS}})
        elif method == "tools/call":
            call(request_id, params.get("name"), params.get("arguments") or {}, state)
        else:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {"code": -32601, "message": "Method not found"},
                }
            )
    while args.ignore_term:  # EOF on stdin: a well-behaved server exits, this one hangs
        time.sleep(1)


if __name__ == "__main__":
    main()
