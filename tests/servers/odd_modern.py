"""Raw JSON-RPC stdio server (no SDK) speaking only 2026-07-28, with results the SDK cannot
parse: server name "oddmodern".

``server/discover`` is answered at 2026-07-28 (``initialize`` is refused). Tools:

- ``plain()``: ``{"content": [text "plain ok"]}`` with no ``resultType``: the spec says a client
  assumes "complete";
- ``weird_type()``: ``resultType: "weird"``, a result type no one defined;
- ``bad_block()``: a content block of unknown type ``"bogus"``;
- ``no_content()``: ``resultType: "complete"`` and no ``content``;
- ``endless()``: always ``input_required`` (an elicitation), whatever the answers: the client
  must give up after its round limit;
- ``odd_request()``: ``input_required`` with an input request of a method no one defined;
- ``prompt_no_type``: the prompt ``hello`` (``prompts/get``) answers without ``resultType``;
  resource ``note://a`` (``resources/read``) too.

Run: ``python -m tests.servers.odd_modern``
"""

from __future__ import annotations

from typing import Any

from tests.servers._raw import RpcError, serve

VERSION = "2026-07-28"
EMPTY = {"type": "object", "properties": {}}
TOOLS = [
    {"name": name, "description": f"Odd result: {name}.", "inputSchema": EMPTY}
    for name in ("plain", "weird_type", "bad_block", "no_content", "endless", "odd_request")
]
LISTING = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
ELICIT = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Again?",
        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
    },
}


def discover(_params: dict[str, Any]) -> dict[str, Any]:
    return {
        **LISTING,
        "supportedVersions": [VERSION],
        "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
        "serverInfo": {"name": "oddmodern", "version": "0.1.0"},
    }


def refuse_initialize(_params: dict[str, Any]) -> dict[str, Any]:
    raise RpcError(-32022, "Unsupported protocol version")


def call(params: dict[str, Any]) -> dict[str, Any]:
    text = [{"type": "text", "text": f"{params.get('name')} ok"}]
    results: dict[str, dict[str, Any]] = {
        "plain": {"content": text},
        "weird_type": {"resultType": "weird", "content": text},
        "bad_block": {"resultType": "complete", "content": [{"type": "bogus"}]},
        "no_content": {"resultType": "complete"},
        "endless": {"resultType": "input_required", "inputRequests": {"again": ELICIT}},
        "odd_request": {
            "resultType": "input_required",
            "inputRequests": {"x": {"method": "no/such/method", "params": {}}},
        },
    }
    name = params.get("name")
    if name not in results:
        raise RpcError(-32602, f"unknown tool {name}")
    return results[name]


def main() -> None:
    serve(
        {
            "server/discover": discover,
            "initialize": refuse_initialize,
            "ping": lambda _p: {},
            "tools/list": lambda _p: {**LISTING, "tools": TOOLS},
            "tools/call": call,
            "prompts/list": lambda _p: {**LISTING, "prompts": [{"name": "hello"}]},
            "prompts/get": lambda _p: {
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi there"}}]
            },
            "resources/list": lambda _p: {
                **LISTING,
                "resources": [{"uri": "note://a", "name": "a"}],
            },
            "resources/templates/list": lambda _p: {**LISTING, "resourceTemplates": []},
            "resources/read": lambda _p: {
                **LISTING,
                "contents": [{"uri": "note://a", "text": "note a"}],
            },
        }
    )


if __name__ == "__main__":
    main()
