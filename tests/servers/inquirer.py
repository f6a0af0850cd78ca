"""Raw JSON-RPC stdio server (no SDK) that asks the client things before it lists its tools.

A 2025-11-25 server ("inquirer"). When the client sends ``notifications/initialized`` it sends
four requests of its own: ``roots/list``, a form-mode ``elicitation/create``, a URL-mode one
and ``sampling/createMessage``. It holds back its answer to ``tools/list`` until the client
has answered all four, so a client that hangs on them (or ignores them) never gets its tools.

Every line it records goes to ``--record PATH`` as JSON: ``{"capabilities": ...}`` (what the
client declared in ``initialize``), then one ``{"method": ..., "result"|"error": ...}`` per
answer, then ``{"listed": true}``; a ``logging/setLevel`` request is recorded as
``{"request": "logging/setLevel", "params": ...}``. ``--asks q-roots,q-form`` sends only those
requests. On ``notifications/roots/list_changed`` it records ``{"notification": ...}`` and asks
``roots/list`` again. Tools: ``ping`` (returns ``pong``).

Run: ``python -m tests.servers.inquirer --record PATH [--asks IDS]``
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from tests.servers._raw import initialize_result, send, text_result

ASKS: dict[str, tuple[str, dict[str, Any]]] = {
    "q-roots": ("roots/list", {}),
    "q-form": (
        "elicitation/create",
        {
            "mode": "form",
            "message": "Your name?",
            "requestedSchema": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            },
        },
    ),
    "q-url": (
        "elicitation/create",
        {
            "mode": "url",
            "message": "Sign in",
            "url": "https://example.com/sign-in",
            "elicitationId": "e-1",
        },
    ),
    "q-sample": (
        "sampling/createMessage",
        {
            "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            "maxTokens": 10,
        },
    ),
}


class Inquirer:
    """The server's state: which of its requests the client answered, which listings wait."""

    def __init__(self, record_path: str, asks: list[str]) -> None:
        self.record_path = record_path
        self.asks = {k: v for k, v in ASKS.items() if k in asks}
        self.answered: set[str] = set()
        self.held: list[Any] = []  # ids of tools/list requests waiting for the answers

    def record(self, entry: dict[str, Any]) -> None:
        with open(self.record_path, "a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")

    def list_tools(self, request_id: Any) -> None:
        tool = {"name": "ping", "inputSchema": {"type": "object", "properties": {}}}
        send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": [tool]}})
        self.record({"listed": True})

    def answer(self, message: dict[str, Any]) -> None:
        """The client answered one of our requests."""
        request_id = message["id"]
        self.answered.add(request_id)
        outcome = {k: message[k] for k in ("result", "error") if k in message}
        self.record({"method": ASKS[request_id][0], "id": request_id, **outcome})
        if self.answered >= set(self.asks):
            for held_id in self.held:
                self.list_tools(held_id)
            self.held.clear()

    def handle(self, message: dict[str, Any]) -> None:
        method, request_id = message.get("method"), message.get("id")
        if method is None and request_id in ASKS:
            self.answer(message)
        elif method == "initialize":
            params = message.get("params") or {}
            self.record({"capabilities": params.get("capabilities")})
            result = initialize_result(params, name="inquirer")
            send({"jsonrpc": "2.0", "id": request_id, "result": result})
        elif method == "notifications/initialized":
            for ask_id, (ask, params) in self.asks.items():
                send({"jsonrpc": "2.0", "id": ask_id, "method": ask, "params": params})
        elif method == "notifications/roots/list_changed":
            self.record({"notification": method})
            self.answered.discard("q-roots")  # ask again, as a server that follows roots does
            send({"jsonrpc": "2.0", "id": "q-roots", "method": "roots/list", "params": {}})
        elif method == "tools/list":
            if self.answered >= set(self.asks):
                self.list_tools(request_id)
            else:
                self.held.append(request_id)
        elif method == "logging/setLevel":
            self.record({"request": method, "params": message.get("params")})
            send({"jsonrpc": "2.0", "id": request_id, "result": {}})
        elif method == "tools/call":
            send({"jsonrpc": "2.0", "id": request_id, "result": text_result("pong")})
        elif request_id is not None:
            error = {"code": -32601, "message": "Method not found"}
            send({"jsonrpc": "2.0", "id": request_id, "error": error})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--record", required=True)
    parser.add_argument("--asks", default=",".join(ASKS), help="which requests to send")
    args = parser.parse_args()
    server = Inquirer(args.record, args.asks.split(","))
    for raw in sys.stdin.buffer:
        try:
            message = json.loads(raw)
        except ValueError:
            continue
        if isinstance(message, dict):
            server.handle(message)


if __name__ == "__main__":
    main()
