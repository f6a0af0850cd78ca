"""A loopback OpenAI-compatible Chat Completions server for tests, e2e runs and benchmarks.

Real HTTP on ``127.0.0.1:<free port>`` (stdlib ``ThreadingHTTPServer`` in a daemon thread), so
the real ``openai`` client and its parser are exercised. Each ``POST /v1/chat/completions``
pops one scripted turn; ``"stream": true`` gets SSE, otherwise JSON. Every request is recorded.

Turns are plain JSON-able dicts (build them with :func:`text`, :func:`tool_calls`,
:func:`error`, :func:`drop`, :func:`raw_sse`, :func:`hang`, :func:`stall`), so a script file
works too::

    python -m tests.fakes.openai_server --script turns.json [--llama] [--port 0]

prints ``READY <base_url>`` and serves until killed. The file is ``{"turns": [...]}`` or a list.

``llama=True`` behaves like llama.cpp's Python server: an assistant message with
``tool_calls`` and ``content`` null or missing is rejected with 400; tools are ignored unless
``tool_choice`` is ``"auto"``; a streamed request that carries tools ends empty, no error.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

Turn = dict[str, Any]


def text(content: str, *, chunks: int = 3, delay: float = 0.0) -> Turn:
    """A plain answer; streamed in ``chunks`` pieces."""
    return {"text": content, "chunks": chunks, "delay": delay}


def tool_calls(*calls: tuple[str, Any], content: str = "", delay: float = 0.0) -> Turn:
    """One assistant turn calling ``(name, arguments)`` pairs; a str argument is sent verbatim."""
    return {
        "tool_calls": [{"name": n, "arguments": a} for n, a in calls],
        "text": content,
        "delay": delay,
    }


def error(status: int, message: str = "scripted error", **headers: str) -> Turn:
    """An HTTP error status with an OpenAI-shaped error body."""
    return {"error": status, "message": message, "headers": headers}


def overflow(window: int = 8192) -> Turn:
    """A 400 ``context_length_exceeded``, worded like OpenAI's."""
    message = (
        f"This model's maximum context length is {window} tokens. However, your messages "
        "resulted in more tokens. Please reduce the length of the messages."
    )
    return {"error": 400, "message": message, "headers": {}, "code": "context_length_exceeded"}


def llama_cpp_overflow(n_ctx: int = 4096, n_prompt: int = 5000) -> Turn:
    """A 400 as llama.cpp's own server (``llama-server``) words it: its type and ``n_ctx``."""
    error = {
        "code": 400,
        "message": "the request exceeds the available context size, try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": n_prompt,
        "n_ctx": n_ctx,
    }
    return {"error": 400, "message": error["message"], "headers": {}, "body": {"error": error}}


def served_as(model: str, turn: Turn) -> Turn:
    """``turn``, but the server reports ``model`` as the one that answered."""
    return {**turn, "served_model": model}


def no_usage(turn: Turn) -> Turn:
    """``turn`` without a usage chunk or field (servers that ignore ``include_usage``)."""
    return {**turn, "no_usage": True}


def stream_error(message: str, *, after_text: str = "") -> Turn:
    """A stream that sends some text, then an in-band ``{"error": ...}`` event."""
    return {"stream_error": message, "text": after_text}


def drop(*, after_text: str = "partial") -> Turn:
    """A stream that sends some text, then closes the connection without finishing."""
    return {"drop": True, "text": after_text}


def raw_sse(*events: str) -> Turn:
    """Send exactly these SSE ``data:`` payloads (for malformed or unusual streams)."""
    return {"raw_sse": list(events)}


def hang(seconds: float = 30.0) -> Turn:
    """Send the stream's first chunk and then nothing for ``seconds`` (cancellation tests)."""
    return {"hang": seconds}


def stall(seconds: float = 30.0) -> Turn:
    """Send nothing at all (not even headers) for ``seconds``, then a plain answer."""
    return {"stall": seconds, "text": "late"}


@dataclass
class Recorded:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class _State:
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


def count_tokens(body: dict[str, Any]) -> int:
    """The fake's token count of a request: 1 per 3.5 characters of messages and tools
    (harsher than codebot's estimate of 4, as real tokenizers are for code and JSON)."""
    text = json.dumps(body.get("messages", [])) + json.dumps(body.get("tools", []))
    return int(len(text) / 3.5) + 1


class FakeOpenAI:
    """The server; a context manager. ``base_url`` ends in ``/v1``."""

    def __init__(
        self,
        turns: list[Turn] | None = None,
        *,
        llama: bool = False,
        port: int = 0,
        respond: Callable[[dict[str, Any]], Turn] | None = None,
        window: int | None = None,
    ):
        self._state = _State(turns=deque(turns or []), llama=llama, respond=respond, window=window)
        state = self._state

        class Handler(_Handler):
            shared = state

        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def requests(self) -> list[Recorded]:
        """Requests received so far (completions only)."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies of the completion requests so far."""
        return [r.body for r in self.requests]

    @property
    def rejected(self) -> int:
        """Requests refused for passing ``window``."""
        with self._state.lock:
            return self._state.rejected

    @property
    def remaining(self) -> int:
        """Scripted turns not consumed yet."""
        with self._state.lock:
            return len(self._state.turns)

    def queue(self, *turns: Turn) -> None:
        """Append scripted turns."""
        with self._state.lock:
            self._state.turns.extend(turns)

    def start(self) -> FakeOpenAI:
        """Start serving in a daemon thread."""
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and release the port."""
        self._state.closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class _Handler(BaseHTTPRequestHandler):
    shared: _State
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # silence stderr noise
        pass

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})
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
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        with state.lock:
            state.requests.append(Recorded("POST", self.path, headers, body))
        if state.llama and (problem := _llama_rejects(body)):  # rejected before any turn is used
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
        if turn is None:
            self._json(
                500,
                {"error": {"message": "fake server: script exhausted", "type": "server_error"}},
                {"x-should-retry": "false"},
            )
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
        if body.get("stream"):
            if self.shared.llama and body.get("tools"):
                # The turn is not consumed: the client's non-streamed retry gets it.
                with self.shared.lock:
                    self.shared.turns.appendleft(turn)
                self._sse([_chunk({"role": "assistant", "content": ""}, None)], {})
                return
            self._stream(body, turn)
        else:
            self._json(200, self._completion(body, turn))

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
                    "function": {"name": c["name"], "arguments": _args(c["arguments"])},
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
            "usage": None if turn.get("no_usage") else _usage(turn),
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
        yield _chunk({"role": "assistant", "content": ""}, None)
        content: str = turn.get("text") or ""
        for piece in _split(content, int(turn.get("chunks") or 3)):
            yield _chunk({"content": piece}, None)
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
            yield _chunk({"tool_calls": [header]}, None)
            for piece in _split(_args(call["arguments"]), 2):
                yield _chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            finish = "tool_calls"
        yield _chunk({}, finish)
        if (body.get("stream_options") or {}).get("include_usage") and not turn.get("no_usage"):
            yield {**_chunk({}, None), "choices": [], "usage": _usage(turn)}

    def _sse(self, events: list[dict[str, Any]], turn: Turn) -> None:
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
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
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

    def _call_id(self) -> str:
        with self.shared.lock:
            self.shared.call_counter += 1
            return f"call_{self.shared.call_counter}"


def _llama_rejects(body: dict[str, Any]) -> str | None:
    for i, message in enumerate(body.get("messages", [])):
        if message.get("role") == "assistant" and message.get("tool_calls"):
            if message.get("content") is None:
                return f"messages[{i}].content: assistant content must be a string, got null"
    return None


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "fake-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _usage(turn: Turn | None = None) -> dict[str, int]:
    prompt = int((turn or {}).get("prompt_tokens") or 10)
    return {"prompt_tokens": prompt, "completion_tokens": 5, "total_tokens": prompt + 5}


def _args(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def _split(value: str, parts: int) -> list[str]:
    if not value:
        return []
    size = max(1, -(-len(value) // max(1, parts)))
    return [value[i : i + size] for i in range(0, len(value), size)]


def main(argv: list[str] | None = None) -> int:
    """Serve a script file until killed; prints ``READY <base_url>``."""
    parser = argparse.ArgumentParser(prog="python -m tests.fakes.openai_server")
    parser.add_argument("--script", required=True, help='JSON: {"turns": [...]} or a list')
    parser.add_argument("--llama", action="store_true", help="behave like llama.cpp")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", help="append each request body as one JSON line to this file")
    args = parser.parse_args(argv)
    with open(args.script, encoding="utf-8") as fh:
        script = json.load(fh)
    turns = script["turns"] if isinstance(script, dict) else script
    llama = args.llama or (isinstance(script, dict) and bool(script.get("llama")))
    with FakeOpenAI(turns, llama=llama, port=args.port) as server:
        print(f"READY {server.base_url}", flush=True)
        seen = 0
        try:
            while True:
                time.sleep(0.1)
                if args.log and len(server.requests) > seen:
                    with open(args.log, "a", encoding="utf-8") as log:
                        for request in server.requests[seen:]:
                            log.write(json.dumps(request.body) + "\n")
                    seen = len(server.requests)
        except KeyboardInterrupt:
            return 0


if __name__ == "__main__":
    sys.exit(main())
