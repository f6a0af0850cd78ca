"""A stdio server whose answers nest 100,000 levels deep, where the client must read them.

``--where result``: a ``tools/call`` result whose ``structuredContent`` nests that deep;
``--where list``: the ``tools/list`` answer does. Standard library only.

Run: ``python -m tests.servers.deep_json [--where result|list]``
"""

from __future__ import annotations

import argparse
import json
import sys

from tests.servers._raw import initialize_result, send, write_line

DEPTH = 100_000
TOOL = {
    "name": "deep",
    "description": "Answers with a deeply nested value.",
    "inputSchema": {"type": "object", "properties": {}},
}


NESTED = "[" * DEPTH + "]" * DEPTH


def answer(ident: object, result_text: str) -> str:
    """One JSON-RPC answer line with ``result_text`` (JSON text) as its result."""
    return json.dumps({"jsonrpc": "2.0", "id": ident})[:-1] + f', "result": {result_text}}}'


def deep_list(ident: object) -> str:
    return answer(ident, '{"tools": ' + NESTED + "}")


def deep_result(ident: object) -> str:
    return answer(ident, '{"content": [], "structuredContent": {"v": ' + NESTED + "}}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--where", default="result", choices=["result", "list"])
    where = parser.parse_args().where
    for raw in sys.stdin.buffer:
        if not raw.strip():
            continue
        message = json.loads(raw)
        method, ident = message.get("method"), message.get("id")
        if method == "initialize":
            result = initialize_result(message.get("params") or {}, name="deep")
            send({"jsonrpc": "2.0", "id": ident, "result": result})
        elif method == "tools/list":
            if where == "list":
                write_line(deep_list(ident))
            else:
                send({"jsonrpc": "2.0", "id": ident, "result": {"tools": [TOOL]}})
        elif method == "tools/call":
            write_line(deep_result(ident))
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": ident, "result": {}})
        elif ident is not None:
            send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "no"}})


if __name__ == "__main__":
    main()
