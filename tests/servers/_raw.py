"""A minimal newline-delimited JSON-RPC 2.0 stdio loop with no SDK import.

Used by the servers that must boot fast or misbehave on purpose
(``silent_discover``, ``garbage_stdout``). Only the standard library is used.

``serve(...)`` reads one JSON message per line from stdin and dispatches
requests to ``handlers`` (``method -> fn(params) -> result dict``). A handler
may raise ``RpcError`` to answer with a JSON-RPC error. Notifications and
responses from the client are ignored. For a request whose method has no
handler, ``unknown="ignore"`` sends nothing at all (an old server that drops
unknown methods; it says ``ignored request <method>`` on stderr) and
``unknown="error"`` answers ``-32601 Method not found``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from typing import Any, Literal

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_HANDSHAKE_VERSION = "2025-11-25"

Handler = Callable[[dict[str, Any]], dict[str, Any]]


class RpcError(Exception):
    """Raised by a handler to answer the request with a JSON-RPC error."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def write_line(text: str) -> None:
    """Write one raw line to stdout and flush it."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def send(message: dict[str, Any]) -> None:
    """Write one JSON-RPC message as a single line."""
    write_line(json.dumps(message, separators=(",", ":")))


def initialize_result(
    params: dict[str, Any], *, name: str, instructions: str | None = None
) -> dict[str, Any]:
    """An ``initialize`` result that echoes a known handshake version, else the latest one."""
    requested = params.get("protocolVersion")
    version = requested if requested in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE_VERSION
    result: dict[str, Any] = {
        "protocolVersion": version,
        "capabilities": {"tools": {}},
        "serverInfo": {"name": name, "version": "0.1.0"},
    }
    if instructions:
        result["instructions"] = instructions
    return result


def text_result(text: str, *, is_error: bool = False) -> dict[str, Any]:
    """A ``tools/call`` result with one text block."""
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def messages() -> Iterator[dict[str, Any]]:
    """Each JSON object on stdin, one per line, until it ends; blank lines, junk and JSON
    that is not an object are skipped (old servers often just drop what they cannot parse)."""
    for raw in sys.stdin.buffer:
        line = raw.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict):
            yield message


def serve(
    handlers: dict[str, Handler],
    *,
    unknown: Literal["ignore", "error"] = "error",
    before_response: Callable[[], None] | None = None,
) -> None:
    """Serve stdin/stdout until stdin reaches EOF."""
    for message in messages():
        if "method" not in message:
            continue  # a response: nothing to do
        if "id" not in message:
            continue  # a notification: ignored
        request_id = message["id"]
        handler = handlers.get(message["method"])
        if handler is None and unknown == "ignore":
            # Said on stderr, so a test can tell "never asked" from "asked and ignored".
            print(f"ignored request {message['method']}", file=sys.stderr, flush=True)
            continue
        if before_response is not None:
            before_response()
        if handler is None:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {"code": -32601, "message": "Method not found"},
                }
            )
            continue
        params = message.get("params") or {}
        try:
            result = handler(params)
        except RpcError as exc:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {"code": exc.code, "message": exc.message},
                }
            )
            continue
        send({"jsonrpc": "2.0", "id": request_id, "result": result})
