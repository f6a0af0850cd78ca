"""Raw JSON-RPC stdio server (no SDK) speaking only 2026-07-28, slow to answer the probe.

Like a real server that answers requests concurrently: ``server/discover`` is answered from a
thread after ``--delay`` seconds (default 1.5), while everything else is answered at once, in
order: ``ping``, and ``-32601`` for any method it does not know (as JSON-RPC requires).
``initialize`` is refused (-32022), so a client that takes the slow probe for "no answer"
cannot connect at all. Tools: ``hello()`` answers ``hello from slow discover``.

Run: ``python -m tests.servers.slow_discover [--delay SECONDS]``
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from typing import Any

VERSION = "2026-07-28"
LISTING = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
TOOLS = [
    {
        "name": "hello",
        "description": "Say hello.",
        "inputSchema": {"type": "object", "properties": {}},
    }
]
_lock = threading.Lock()


def send(message: dict[str, Any]) -> None:
    with _lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def discover_later(request_id: Any, delay: float) -> None:
    time.sleep(delay)
    result = {
        **LISTING,
        "supportedVersions": [VERSION],
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "slowdiscover", "version": "0.1.0"},
    }
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def answer(request_id: Any, method: str, params: dict[str, Any]) -> None:
    if method == "ping":
        send({"jsonrpc": "2.0", "id": request_id, "result": {}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": request_id, "result": {**LISTING, "tools": TOOLS}})
    elif method == "tools/call" and params.get("name") == "hello":
        text = [{"type": "text", "text": "hello from slow discover"}]
        send({"jsonrpc": "2.0", "id": request_id, "result": {**LISTING, "content": text}})
    elif method == "initialize":
        error = {"code": -32022, "message": "Unsupported protocol version"}
        send({"jsonrpc": "2.0", "id": request_id, "error": error})
    else:
        error = {"code": -32601, "message": "Method not found"}
        send({"jsonrpc": "2.0", "id": request_id, "error": error})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--delay", type=float, default=1.5)
    args = parser.parse_args()
    for raw in sys.stdin.buffer:
        try:
            message = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(message, dict) or "id" not in message or "method" not in message:
            continue
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        if message["method"] == "server/discover":
            thread = threading.Thread(
                target=discover_later, args=(message["id"], args.delay), daemon=True
            )
            thread.start()
        else:
            answer(message["id"], message["method"], params)


if __name__ == "__main__":
    main()
