"""The request handler of the loopback model server: routing, recording, the wire formats.

Each ``POST /v1/chat/completions`` is recorded and pops one scripted turn
(:mod:`tests.fakes.openai_turns`); ``"stream": true`` gets it as SSE chunks, otherwise one JSON
completion. ``POST /v1/responses`` does the same in the Responses API's shape
(:mod:`tests.fakes.openai_responses`). ``llama`` and ``window`` in :class:`State` change what
is accepted, as the server's docstring (:mod:`tests.fakes.openai_server`) says.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes.openai_turns import Turn, overflow, text


@dataclass
class Recorded:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class State:
    turns: deque[Turn] = field(default_factory=deque[Turn])
    requests: list[Recorded] = field(default_factory=list[Recorded])
    llama: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)
    call_counter: int = 0
    closing: threading.Event = field(default_factory=threading.Event)
    """Set by close(): a hanging stream stops waiting, so close() does not wait for it."""
    respond: Callable[[dict[str, Any]], Turn] | None = None
    """Answers a request when no scripted turn is queued (long scripted sessions)."""
    window: int | None = None
    """Context window in tokens: longer requests get 400 ``context_length_exceeded``."""
    rejected: int = 0
    gets: list[Recorded] = field(default_factory=list[Recorded])
    """GET requests (``/models``), apart from the completions."""
    model_ids: list[Any] | None = None
    """What ``/models`` lists (default: one ``fake-model``)."""
    models_404: bool = False
    """``/models`` answers 404 (a server without the route)."""
    no_images: bool = False
    """Reject a request that holds an image part with 400, as OpenAI answers for a model
    without vision (counted in ``image_rejections``)."""
    image_rejections: int = 0
    model_meta: dict[str, Any] | None = None
    """Extra fields of each model entry (llama.cpp's ``meta``: ``{"n_ctx_train": ...}``)."""


def count_tokens(body: dict[str, Any]) -> int:
    """The fake's token count of a request: 1 per 3.5 characters of messages and tools
    (harsher than codebot's estimate of 4, as real tokenizers are for code and JSON)."""
    text = json.dumps(body.get("messages", [])) + json.dumps(body.get("tools", []))
    if "input" in body:  # the Responses API
        from tests.fakes.openai_responses import input_text

        text += input_text(body)
    return int(len(text) / 3.5) + 1


NO_IMAGES = "Invalid content type. image_url is only supported by certain models."
"""OpenAI's answer to an image sent to a model without vision."""


def holds_image(body: dict[str, Any]) -> bool:
    """Whether a request (either wire) carries an image content part."""
    for message in [*body.get("messages", []), *body.get("input", [])]:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(
            isinstance(p, dict) and p.get("type") in ("image_url", "input_image") for p in content
        ):
            return True
    return False


class Handler(BaseHTTPRequestHandler):
    shared: State
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # silence stderr noise
        pass

    def do_GET(self) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        with self.shared.lock:
            self.shared.gets.append(Recorded("GET", self.path, headers, {}))
        if self.path.rstrip("/").endswith("/models") and not self.shared.models_404:
            ids = self.shared.model_ids if self.shared.model_ids is not None else ["fake-model"]
            extra = self.shared.model_meta or {}
            data = [{"id": i, "object": "model", **extra} for i in ids]
            self._json(200, {"object": "list", "data": data})
        else:
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        try:
            body: dict[str, Any] = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._json(400, {"error": {"message": "invalid JSON body", "type": "bad_request"}})
            return
        state = self.shared
        route = self.path.rstrip("/")
        if not route.endswith(("/chat/completions", "/responses")):
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        with state.lock:
            state.requests.append(Recorded("POST", self.path, headers, body))
        if state.llama and (problem := llama_rejects(body)):  # rejected before any turn is used
            self._json(400, {"error": {"message": problem, "type": "invalid_request_error"}})
            return
        if state.no_images and holds_image(body):  # rejected before any turn is used
            with state.lock:
                state.image_rejections += 1
            self._json(400, {"error": {"message": NO_IMAGES, "type": "invalid_request_error"}})
            return
        if route.endswith("/responses"):
            from tests.fakes.openai_responses import rejects

            if problem := rejects(body):
                self._json(400, {"error": {"message": problem, "type": "invalid_request_error"}})
                return
        with state.lock:
            turn = state.turns.popleft() if state.turns else None
        if state.window is not None and count_tokens(body) > state.window:
            with state.lock:
                state.rejected += 1
                if turn is not None:  # not consumed: the retry after compaction gets it
                    state.turns.appendleft(turn)
            turn = overflow(state.window)
        elif turn is None and state.respond is not None:
            turn = state.respond(body)
        if turn is not None and state.window is not None:
            turn = {**turn, "prompt_tokens": count_tokens(body)}
        try:
            self._serve(body, turn)
        except (BrokenPipeError, ConnectionResetError):  # the client aborted the stream
            pass

    def _serve(self, body: dict[str, Any], turn: Turn | None) -> None:
        if turn is not None and self._hostile(turn):
            return
        if turn is None:
            self._json(
                500,
                {"error": {"message": "fake server: script exhausted", "type": "server_error"}},
                {"x-should-retry": "false"},
            )
            return
        if "hang_up" in turn:
            if not body.get("stream"):
                turn = turn["then"]
            else:  # no status line, not a byte: the connection just closes
                with self.shared.lock:
                    self.shared.turns.appendleft(turn["then"])
                self.close_connection = True
                return
        if "closed_at_start" in turn:
            if not body.get("stream"):
                turn = turn["then"]
            else:
                with self.shared.lock:
                    self.shared.turns.appendleft(turn["then"])
                self._close_at_start(turn["closed_at_start"] == "chunked")
                return
        if "stall" in turn:
            self.shared.closing.wait(float(turn["stall"]))
        if "error" in turn:
            status = int(turn["error"])
            code = turn.get("code", status)
            payload = turn.get("body") or {
                "error": {"message": turn["message"], "type": "scripted", "code": code}
            }
            self._json(status, payload, {"x-should-retry": "false", **turn["headers"]})
            return
        tools_seen = bool(body.get("tools")) and (
            not self.shared.llama or body.get("tool_choice") == "auto"
        )
        if "tool_calls" in turn and not tools_seen:
            # Like a server that dropped the tools: the model can only answer in text.
            turn = text("I have no tools to call.")
        if self.path.rstrip("/").endswith("/responses"):
            self._responses(body, turn)
            return
        if body.get("stream"):
            if self.shared.llama and body.get("tools"):
                # The turn is not consumed: the client's non-streamed retry gets it.
                with self.shared.lock:
                    self.shared.turns.appendleft(turn)
                self._sse([chunk({"role": "assistant", "content": ""}, None)], {})
                return
            self._stream(body, turn)
        else:
            self._json(200, self._completion(body, turn))

    def _hostile(self, turn: Turn) -> bool:
        """Answers no model gives: endless, huge or raw. True when one was sent."""
        if "endless" in turn:
            self._headers(200, "text/event-stream", None)
            piece = f"data: {json.dumps(chunk({'content': 'more '}, None))}\n\n".encode()
            burst = piece * 256
            while not self.shared.closing.is_set():
                self.wfile.write(burst)  # BrokenPipeError ends it when the client leaves
            return True
        if "huge_body" in turn:
            size = int(turn["huge_body"])
            head, tail = b'{"id": "x", "object": "chat.completion", "pad": "', b'"}'
            self._headers(200, "application/json", size)
            self.wfile.write(head)
            left = size - len(head) - len(tail)
            block = b"a" * (1 << 20)
            while left > 0 and not self.shared.closing.is_set():
                self.wfile.write(block[: min(left, len(block))])
                left -= len(block)
            self.wfile.write(tail)
            return True
        if "raw_body" in turn:
            raw = str(turn["raw_body"]).encode()
            if turn.get("raw_stream"):
                self._headers(200, "text/event-stream", None)
                self.wfile.write(b"data: " + raw + b"\n\ndata: [DONE]\n\n")
            else:  # closed after it, and said so: a client must not reuse the connection
                self._headers(200, "application/json", len(raw), close=True)
                self.wfile.write(raw)
            return True
        return False

    def _headers(
        self, status: int, content_type: str, length: int | None, *, close: bool = False
    ) -> None:
        """The status and headers; ``length`` None or ``close``: the connection closes after
        the body, announced. (Closing a keep-alive connection unannounced races the client's
        next request on it: "Server disconnected" under load.)"""
        self.send_response(status)
        self.send_header("content-type", content_type)
        if length is not None:
            self.send_header("content-length", str(length))
        if length is None or close:
            self.send_header("connection", "close")
            self.close_connection = True
        self.end_headers()

    # --- JSON -------------------------------------------------------------------------------

    def _completion(self, body: dict[str, Any], turn: Turn) -> dict[str, Any]:
        time.sleep(float(turn.get("delay") or 0))
        message: dict[str, Any] = {"role": "assistant", "content": turn.get("text") or None}
        finish = "stop"
        if "tool_calls" in turn:
            message["tool_calls"] = [
                {
                    "id": self._call_id(),
                    "type": "function",
                    "function": {"name": c["name"], "arguments": arguments_text(c["arguments"])},
                }
                for c in turn["tool_calls"]
            ]
            finish = "tool_calls"
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": turn.get("served_model") or body.get("model", "fake-model"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": None if turn.get("no_usage") else usage(turn),
        }

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    # --- SSE --------------------------------------------------------------------------------

    def _stream(self, body: dict[str, Any], turn: Turn) -> None:
        if "raw_sse" in turn:
            self._sse_raw(turn["raw_sse"])
            return
        served = turn.get("served_model") or body.get("model") or "fake-model"
        events = list(self._events(body, turn))
        for event in events:
            if event.get("object") == "chat.completion.chunk":
                event["model"] = served
        self._sse(events, turn)

    def _events(self, body: dict[str, Any], turn: Turn) -> Iterator[dict[str, Any]]:
        yield chunk({"role": "assistant", "content": ""}, None)
        content: str = turn.get("text") or ""
        for piece in split(content, int(turn.get("chunks") or 3)):
            yield chunk({"content": piece}, None)
        if "hang" in turn:
            yield {"__hang__": float(turn["hang"])}
        if "stream_error" in turn:
            yield {"error": {"message": turn["stream_error"], "type": "server_error"}}
            return
        if "drop" in turn:
            yield {"__drop__": True}
            return
        finish = "stop"
        for index, call in enumerate(turn.get("tool_calls", [])):
            header = {
                "index": index,
                "id": self._call_id(),
                "type": "function",
                "function": {"name": call["name"], "arguments": ""},
            }
            yield chunk({"tool_calls": [header]}, None)
            for piece in split(arguments_text(call["arguments"]), 2):
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            finish = "tool_calls"
        yield chunk({}, finish)
        if (body.get("stream_options") or {}).get("include_usage") and not turn.get("no_usage"):
            yield {**chunk({}, None), "choices": [], "usage": usage(turn)}

    def _sse(
        self,
        events: list[dict[str, Any]],
        turn: Turn,
        *,
        encode: Callable[[dict[str, Any]], bytes] | None = None,
        done: bytes | None = b"data: [DONE]\n\n",
    ) -> None:
        """Stream ``events`` (Chat Completions chunks by default; ``encode`` and ``done``
        give another wire's framing), with the turn's delay, hangs and drops."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        delay = float(turn.get("delay") or 0)
        for event in events:
            if "__hang__" in event:
                self.wfile.flush()
                self.shared.closing.wait(event["__hang__"])
                continue
            if "__drop__" in event:
                self.wfile.flush()
                self.close_connection = True
                return
            time.sleep(delay)
            line = encode(event) if encode else f"data: {json.dumps(event)}\n\n".encode()
            self.wfile.write(line)
            self.wfile.flush()
        if done is not None:
            self.wfile.write(done)
            self.wfile.flush()
        self.close_connection = True

    def _close_at_start(self, chunked: bool) -> None:
        """``200 OK``, then the connection ends before the first chunk of the stream."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        if chunked:
            self.send_header("transfer-encoding", "chunked")
        else:
            self.send_header("connection", "close")
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True

    def _sse_raw(self, payloads: list[str]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        for payload in payloads:
            self.wfile.write(f"data: {payload}\n\n".encode())
        self.wfile.flush()
        self.close_connection = True

    def _responses(self, body: dict[str, Any], turn: Turn) -> None:
        """A turn in the Responses API's shape: SSE events, or one JSON response."""
        from tests.fakes import openai_responses as wire

        if not body.get("stream"):
            time.sleep(float(turn.get("delay") or 0))
            self._json(200, wire.json_answer(body, turn, self._next_id))
            return
        events = list(wire.events(body, turn, self._next_id))
        self._sse(events, turn, encode=wire.sse_lines, done=None)  # no [DONE] on this wire

    def _next_id(self, prefix: str) -> str:
        with self.shared.lock:
            self.shared.call_counter += 1
            return f"{prefix}_{self.shared.call_counter}"

    def _call_id(self) -> str:
        with self.shared.lock:
            self.shared.call_counter += 1
            return f"call_{self.shared.call_counter}"


def llama_rejects(body: dict[str, Any]) -> str | None:
    for i, message in enumerate(body.get("messages", [])):
        if message.get("role") == "assistant" and message.get("tool_calls"):
            if message.get("content") is None:
                return f"messages[{i}].content: assistant content must be a string, got null"
    return None


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "fake-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def usage(turn: Turn | None = None) -> dict[str, int]:
    prompt = int((turn or {}).get("prompt_tokens") or 10)
    return {"prompt_tokens": prompt, "completion_tokens": 5, "total_tokens": prompt + 5}


def arguments_text(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def split(value: str, parts: int) -> list[str]:
    if not value:
        return []
    size = max(1, -(-len(value) // max(1, parts)))
    return [value[i : i + size] for i in range(0, len(value), size)]
