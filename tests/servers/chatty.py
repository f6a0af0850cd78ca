"""Raw JSON-RPC stdio server (no SDK, boots fast) that talks during calls: server name "chatty".

For the differential tests of the hot path (``tests/mcpbridge/test_lite_wire.py``): every
case runs once on each path, and what both sent on the wire is compared.

``--era``:
- ``legacy`` (default): answers ``initialize``; ``server/discover`` and unknown methods get
  ``-32601``;
- ``modern``: answers ``server/discover`` at 2026-07-28 (server info in ``_meta``) and refuses
  ``initialize``; unknown methods get ``-32601``;
- ``silent``: a handshake-era server that drops every request it does not know, the probe
  included (no answer at all).

``--log-at-start`` sends a ``notifications/message`` right after the handshake's answer;
``--no-cache-hints`` leaves ``ttlMs`` and ``cacheScope`` (required at 2026-07-28) out of the
``tools/list`` result; ``--odd-listing`` lists ``echo`` with ``"readOnlyHint": 1`` (the SDK's
model reads it as true; the hot path leaves such a listing to it); ``--refuse-initialize``
answers ``initialize`` with an error (``-32603 not ready``). ``--discover-shape``: ``legacy``
(a handshake-era server) answers ``server/discover`` with handshake-era versions only;
``bare`` (modern) answers it without the server info in ``_meta``. ``--ask-first``: before
answering ``tools/list``, asks the client ``elicitation/create`` (a form),
``sampling/createMessage``, an ``elicitation/create`` without its schema and ``chatty/unknown``,
and logs each answer to stderr. ``--handshake-version V``: answers ``initialize`` with ``V``
whatever was asked.

Tools:
- ``echo(text)``: the text;
- ``log(count)``: ``count`` log messages (every level in turn; string and object data, with
  and without a logger name, one with a line break, one carrying the value of ``CHATTY_TOKEN``
  from its environment), one malformed (level ``loud``: a client's model rejects it), then
  ``logged <count>``;
- ``junk()``: a line that is not JSON, a JSON array, a ``"jsonrpc": "1.0"`` message, then the
  answer ``after junk``;
- ``huge(mb)``: a text of ``mb`` megabytes;
- ``bad_block()``: a content block of unknown type ``bogus``;
- ``die()``: exits (code 3) without answering;
- ``ask()``: legacy: asks ``roots/list``, then ``elicitation/create`` (a form), mid-call, and
  answers with what it got; modern: an ``InputRequiredResult`` with both requests and a
  ``requestState``, then, called again, answers with the responses and the state it got back;
- ``sample()``: ``sampling/createMessage``, mid-call (legacy) or inside an
  ``InputRequiredResult`` (modern); answers with what it got;
- ``wait_state()`` (modern): an ``InputRequiredResult`` with only a ``requestState``, then
  ``state <state>``;
- ``ask_plain()``: in any era, asks ``ping``, ``roots/list``, ``elicitation/create`` (a form)
  and ``chatty/unknown`` as plain requests, mid-call, and answers with what it got.

Run: ``python -m tests.servers.chatty [--era legacy|modern|silent] [--log-at-start]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from tests.servers._raw import initialize_result, send, text_result, write_line

MODERN = "2026-07-28"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
OBJECT = {"type": "object", "properties": {}}
TOOLS = [
    {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
    {
        "name": "log",
        "inputSchema": {"type": "object", "properties": {"count": {"type": "integer"}}},
    },
    {"name": "junk", "inputSchema": OBJECT},
    {"name": "huge", "inputSchema": {"type": "object", "properties": {"mb": {"type": "integer"}}}},
    {"name": "bad_block", "inputSchema": OBJECT},
    {"name": "die", "inputSchema": OBJECT},
    {"name": "ask", "inputSchema": OBJECT},
    {"name": "sample", "inputSchema": OBJECT},
    {"name": "wait_state", "inputSchema": OBJECT},
    {"name": "ask_plain", "inputSchema": OBJECT},
]
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
FORM = {
    "mode": "form",
    "message": "Who are you?",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
}
SAMPLING = {
    "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
    "maxTokens": 10,
}


class Server:
    def __init__(
        self,
        era: str,
        log_at_start: bool,
        hints: bool,
        odd: bool = False,
        refuse: bool = False,
        discover_shape: str | None = None,
        ask_first: bool = False,
        handshake_version: str | None = None,
    ) -> None:
        self.era = era
        self.handshake_version = handshake_version
        self.discover_shape = discover_shape
        self.ask_first = ask_first
        self.log_at_start = log_at_start
        self.hints = hints
        self.odd = odd
        self.refuse = refuse
        self.asked = 0

    def lines(self) -> Any:
        for raw in sys.stdin.buffer:
            try:
                message = json.loads(raw)
            except ValueError:
                continue
            if isinstance(message, dict):
                yield message

    def ask_client(self, method: str, params: dict[str, Any] | None) -> Any:
        """A request of ours, mid-call: wait for its answer (nothing else comes meanwhile)."""
        self.asked += 1
        request_id = f"chatty-{self.asked}"
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        send(message)
        for answer in self.lines():
            if answer.get("id") == request_id and "method" not in answer:
                return answer.get("result", answer.get("error"))
        return None

    def log(self, level: str, data: Any, logger: str | None = None) -> None:
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        send({"jsonrpc": "2.0", "method": "notifications/message", "params": params})

    def call(self, params: dict[str, Any]) -> dict[str, Any]:
        name, arguments = params.get("name"), params.get("arguments") or {}
        if name == "echo":
            return text_result(str(arguments.get("text")))
        if name == "log":
            return self.chatter(int(arguments.get("count", 8)))
        if name == "junk":
            write_line("this is not JSON")
            write_line("[1, 2, 3]")
            write_line('{"jsonrpc": "1.0", "method": "notifications/message"}')
            return text_result("after junk")
        if name == "huge":
            return text_result("x" * (int(arguments.get("mb", 1)) * 1024 * 1024))
        if name == "bad_block":
            return {"content": [{"type": "bogus", "text": "?"}]}
        if name == "die":
            os._exit(3)
        if name == "ask_plain":
            asked = [("ping", None), ("roots/list", None), ("elicitation/create", FORM)]
            got = [self.ask_client(m, p) for m, p in [*asked, ("chatty/unknown", None)]]
            return text_result(json.dumps(got, sort_keys=True))
        if name in ("ask", "sample") and self.era != "modern":
            return self.ask_mid_call(str(name))
        if name in ("ask", "sample", "wait_state"):
            return self.input_required(str(name), params)
        raise LookupError(name)

    def chatter(self, count: int) -> dict[str, Any]:
        token = os.environ.get("CHATTY_TOKEN", "none")
        for i in range(count):
            level = LEVELS[i % len(LEVELS)]
            if i % 3 == 0:
                self.log(level, f"line {i}", "chatty")
            elif i % 3 == 1:
                self.log(level, {"i": i, "text": "two\nlines", "token": token})
            else:
                self.log(level, f"plain {i} token={token}")
        self.log("loud", "a level no one defined")
        return text_result(f"logged {count}")

    def ask_mid_call(self, name: str) -> dict[str, Any]:
        if name == "ask":
            got = {
                "roots": self.ask_client("roots/list", None),
                "form": self.ask_client("elicitation/create", FORM),
            }
        else:
            got = {"sample": self.ask_client("sampling/createMessage", SAMPLING)}
        return text_result(json.dumps(got, sort_keys=True))

    def input_required(self, name: str, params: dict[str, Any]) -> dict[str, Any]:
        state = params.get("requestState")
        if state is not None:
            got = {"responses": params.get("inputResponses"), "state": state}
            return text_result(json.dumps(got, sort_keys=True))
        asked: dict[str, Any] = {}
        if name == "ask":
            asked = {
                "form": {"method": "elicitation/create", "params": FORM},
                "roots": {"method": "roots/list"},
            }
        elif name == "sample":
            asked = {"model": {"method": "sampling/createMessage", "params": SAMPLING}}
        result: dict[str, Any] = {"resultType": "input_required", "requestState": "s-1"}
        if asked:
            result["inputRequests"] = asked
        return result

    def answer(self, message: dict[str, Any]) -> dict[str, Any] | None:
        method, params = message["method"], message.get("params") or {}
        if method == "initialize" and self.era != "modern":
            if self.refuse:
                raise RuntimeError("not ready")
            result = initialize_result(params, name="chatty")
            if self.handshake_version:
                result["protocolVersion"] = self.handshake_version
            return result
        if method == "server/discover" and self.era != "modern" and self.discover_shape:
            info = {SERVER_INFO: {"name": "chatty", "version": "0.1.0"}}
            versions = ["2025-06-18", "2025-11-25"]
            return {"supportedVersions": versions, "capabilities": {}, "_meta": info}
        if method == "server/discover" and self.era == "modern":
            result = {
                "resultType": "complete",
                "supportedVersions": [MODERN],
                "capabilities": {"tools": {}, "logging": {}},
                "_meta": {SERVER_INFO: {"name": "chatty", "version": "0.1.0"}},
            }
            if self.discover_shape == "bare":
                del result["_meta"]
            return result
        if method == "ping":
            return {}
        if method == "tools/list" and self.ask_first:
            self.ask_first = False
            asked = [
                ("elicitation/create", FORM),
                ("sampling/createMessage", SAMPLING),
                ("elicitation/create", {"message": "no schema"}),
                ("chatty/unknown", None),
            ]
            for asked_method, asked_params in asked:
                got = self.ask_client(asked_method, asked_params)
                print(f"{asked_method}: {json.dumps(got, sort_keys=True)}", file=sys.stderr)
        if method == "tools/list":
            hints = {"ttlMs": 0, "cacheScope": "private"}
            tools = TOOLS
            if self.odd:
                tools = [{**TOOLS[0], "annotations": {"readOnlyHint": 1}}, *TOOLS[1:]]
            return {"tools": tools, **(hints if self.era == "modern" and self.hints else {})}
        if method == "tools/call":
            return self.call(params)
        return None

    def serve(self) -> None:
        for message in self.lines():
            if "method" not in message or "id" not in message:
                continue
            request_id = message["id"]
            try:
                result = self.answer(message)
            except LookupError:
                error = {"code": -32602, "message": "no such tool"}
                send({"jsonrpc": "2.0", "id": request_id, "error": error})
                continue
            except RuntimeError as exc:
                send(
                    {
                        "jsonrpc": "2.0",
                        "id": request_id,
                        "error": {"code": -32603, "message": str(exc)},
                    }
                )
                continue
            if result is None:
                if self.era == "silent":
                    continue
                error = {"code": -32601, "message": "Method not found"}
                send({"jsonrpc": "2.0", "id": request_id, "error": error})
                continue
            if "resultType" not in result and self.era == "modern":
                result["resultType"] = "complete"
            send({"jsonrpc": "2.0", "id": request_id, "result": result})
            if self.log_at_start and message["method"] in ("initialize", "server/discover"):
                self.log("info", "started", "chatty")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--era", choices=("legacy", "modern", "silent"), default="legacy")
    parser.add_argument("--log-at-start", action="store_true")
    parser.add_argument("--no-cache-hints", action="store_true")
    parser.add_argument("--odd-listing", action="store_true")
    parser.add_argument("--refuse-initialize", action="store_true")
    parser.add_argument("--discover-shape", choices=("legacy", "bare"))
    parser.add_argument("--ask-first", action="store_true")
    parser.add_argument("--handshake-version")
    args = parser.parse_args()
    Server(
        args.era,
        args.log_at_start,
        not args.no_cache_hints,
        args.odd_listing,
        args.refuse_initialize,
        args.discover_shape,
        args.ask_first,
        args.handshake_version,
    ).serve()


if __name__ == "__main__":
    main()
