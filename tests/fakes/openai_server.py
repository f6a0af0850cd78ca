"""A loopback OpenAI-compatible Chat Completions server for tests, e2e runs and benchmarks.

Real HTTP on ``127.0.0.1:<free port>`` (stdlib ``ThreadingHTTPServer`` in a daemon thread), so
the real ``openai`` client and its parser are exercised. Each ``POST /v1/chat/completions``
pops one scripted turn; ``"stream": true`` gets SSE, otherwise JSON. Every request is recorded.
``POST /v1/responses`` pops from the same script and answers in the Responses API's shape
(:mod:`tests.fakes.openai_responses`: its SSE events, or one JSON response).

Turns are plain JSON-able dicts (build them with :mod:`tests.fakes.openai_turns`: ``text``,
``tool_calls``, ``error``, ``drop``, ``raw_sse``, ``hang``, ``stall``, ...), so a script file
works too::

    python -m tests.fakes.openai_server --script turns.json [--llama] [--port 0]

prints ``READY <base_url>`` and serves until killed. The file is ``{"turns": [...]}`` or a list.

``no_images=True`` answers a request that holds an image part with OpenAI's 400 for a model
without vision ("Invalid content type. image_url is only supported by certain models.").

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
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from types import TracebackType
from typing import Any

from tests.fakes.openai_handler import Handler, Recorded, State
from tests.fakes.openai_turns import Turn


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
        models: list[str] | None = None,
        no_images: bool = False,
    ):
        self._state = State(turns=deque(turns or []), llama=llama, respond=respond, window=window)
        if models is not None:
            self._state.model_ids = list(models)
        self._state.no_images = no_images
        state = self._state

        class Bound(Handler):
            shared = state

        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), Bound)
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
    def gets(self) -> list[Recorded]:
        """GET requests so far (``/models``)."""
        with self._state.lock:
            return list(self._state.gets)

    def list_models(self, ids: list[Any]) -> None:
        """What ``GET /models`` answers from now on."""
        with self._state.lock:
            self._state.model_ids = list(ids)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies of the completion requests so far."""
        return [r.body for r in self.requests]

    def serve_models(self, models: list[str] | None, meta: dict[str, Any] | None = None) -> None:
        """What ``GET /v1/models`` lists from now on (None: 404), with ``meta`` in each."""
        with self._state.lock:
            self._state.model_ids = None if models is None else list(models)
            self._state.models_404 = models is None
            self._state.model_meta = meta

    @property
    def rejected(self) -> int:
        """Requests refused for passing ``window``."""
        with self._state.lock:
            return self._state.rejected

    @property
    def image_rejections(self) -> int:
        """Requests refused for holding an image (``no_images=True``)."""
        with self._state.lock:
            return self._state.image_rejections

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
                # What arrived by now: a request appended while these are written waits for
                # the next round (counting the list again after writing would skip it for good).
                if args.log and (new := server.requests[seen:]):
                    with open(args.log, "a", encoding="utf-8") as log:
                        for request in new:
                            log.write(json.dumps(request.body) + "\n")
                    seen += len(new)
        except KeyboardInterrupt:
            return 0


if __name__ == "__main__":
    sys.exit(main())
