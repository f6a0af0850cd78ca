"""The one HTTP answer cap (``core.httpcap``), in process against a real loopback server: a
sync and an async client, the declared and the counted size, SSE counted event by event, a
compressed answer counted decoded, a refused encoding, and the registry's refusal of a
redirect from https. The end-to-end bounds (memory of a whole run, proxies) are in
``tests/hostile``."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from threading import Thread

import anyio
import httpx2
import pytest

from codebot_mcp.core.httpcap import (
    MODEL_WORDING,
    AnswerCap,
    AnswerTooLargeError,
    EventSizes,
    tls_context,
)

LIMIT = 100_000
"""Bodies go past it in several reads (httpcore reads at most 64 KiB at a time)."""
PAGES: dict[str, tuple[dict[str, str], bytes]] = {
    "/small": ({"Content-Type": "application/json"}, b"x" * 90_000),
    "/declared": ({"Content-Type": "application/json", "Content-Length": "500000"}, b""),
    "/chunked": ({"Content-Type": "application/json"}, b"x" * 150_000),
    "/events": (
        {"Content-Type": "text/event-stream"},
        (b"data: " + b"x" * 60_000 + b"\r\n\r\n") * 5,
    ),
    "/one-event": ({"Content-Type": "text/event-stream"}, b"data: " + b"x" * 150_000 + b"\n\n"),
    "/bomb": ({"Content-Encoding": "gzip"}, gzip.compress(b"x" * 100_000)),
    "/brotli": ({"Content-Encoding": "br"}, b"whatever"),
}
SEEN: list[str | None] = []
"""The ``Accept-Encoding`` of each request the server answered."""


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        headers, body = PAGES[self.path]
        self.send_response(200)
        for key, value in headers.items():
            self.send_header(key, value)
        if "Content-Length" not in headers:
            self.send_header("Connection", "close")  # the body ends with the connection
        self.end_headers()
        if self.path != "/declared":
            self.wfile.write(body)
        SEEN.append(self.headers.get("Accept-Encoding"))

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _get(base: str, path: str, cap: AnswerCap) -> bytes:
    with httpx2.Client(event_hooks=cap.sync_hooks(), verify=tls_context()) as client:
        return client.get(base + path).content


def test_an_answer_within_the_cap_is_read_and_asks_for_no_compression(base: str) -> None:
    cap = AnswerCap(LIMIT)
    assert _get(base, "/small", cap) == b"x" * 90_000
    assert not cap.tripped
    assert SEEN[-1] == "identity"


@pytest.mark.parametrize(
    ("path", "declared"), [("/declared", 500_000), ("/chunked", None), ("/one-event", None)]
)
def test_an_answer_over_the_cap_is_dropped_in_the_readers_words(
    base: str, path: str, declared: int | None
) -> None:
    cap = AnswerCap(LIMIT, per_event=True)
    with pytest.raises(AnswerTooLargeError) as caught:
        _get(base, path, cap)
    assert (caught.value.limit, caught.value.declared) == (LIMIT, declared)
    assert str(caught.value) == "the server's answer is larger than 0 MB and was dropped"
    assert cap.tripped


@pytest.mark.parametrize("cut", [0, 1, 6, 65_536, 99_999, 100_010, 150_000, 150_007])
def test_an_event_over_the_cap_is_seen_however_the_reads_cut_it(cut: int) -> None:
    """Its end in the same read as most of it (the read that made this fail at random over
    the network above, now cut on purpose), or split anywhere else."""
    event = b"data: " + b"x" * 150_000 + b"\n\n"
    sizes = EventSizes()
    assert max(sizes.add(event[:cut]), sizes.add(event[cut:])) > LIMIT
    assert sizes.current == 0  # the next event starts afresh
    stream = (b"data: " + b"x" * 60_000 + b"\r\n\r\n") * 5  # five events under the cap
    for step in (1_000, 65_536, len(stream)):
        sizes = EventSizes()
        counts = [sizes.add(stream[i : i + step]) for i in range(0, len(stream), step)]
        assert 60_000 < max(counts) <= 60_010, step


def test_an_event_stream_is_counted_event_by_event_only_when_asked(base: str) -> None:
    events = PAGES["/events"][1]
    assert _get(base, "/events", AnswerCap(LIMIT, per_event=True)) == events  # 5 events of 60 KB
    with pytest.raises(AnswerTooLargeError):  # a model's stream counts whole
        _get(base, "/events", AnswerCap(LIMIT, wording=MODEL_WORDING))


def test_a_compressed_answer_is_counted_decoded(base: str) -> None:
    with pytest.raises(AnswerTooLargeError, match="the answer is larger than"):
        _get(base, "/bomb", AnswerCap(50_000, wording=MODEL_WORDING))
    assert _get(base, "/bomb", AnswerCap(200_000)) == b"x" * 100_000


def test_an_encoding_it_cannot_decode_is_refused(base: str) -> None:
    with pytest.raises(httpx2.DecodingError, match=r"the model server answered in an encoding"):
        _get(base, "/brotli", AnswerCap(LIMIT, wording=MODEL_WORDING))


@pytest.mark.anyio
async def test_the_async_hooks_cap_as_the_sync_ones(base: str) -> None:
    cap = AnswerCap(LIMIT, per_event=True)
    with anyio.fail_after(10):
        async with httpx2.AsyncClient(event_hooks=cap.hooks()) as client:
            assert (await client.get(base + "/small")).content == b"x" * 90_000
            with pytest.raises(AnswerTooLargeError):
                await client.get(base + "/chunked")
    assert cap.tripped


def test_the_registry_refuses_a_redirect_from_https_to_http() -> None:
    from codebot_mcp.core.registry import http

    request = httpx2.Request("GET", "https://registry.example/v0.1/servers")
    moved = httpx2.Response(302, headers={"Location": "http://elsewhere.example/"}, request=request)
    with pytest.raises(http._DowngradeError, match="refused a redirect from https to http://"):
        http._no_downgrade(moved)
    kept = httpx2.Response(302, headers={"Location": "/v0.1/next"}, request=request)
    http._no_downgrade(kept)


def test_a_proxy_httpx_cannot_use_is_an_http_error_naming_the_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from codebot_mcp.core.httpcap import async_client, sync_client

    monkeypatch.setenv("ALL_PROXY", "bogus://proxy.example:1")
    for make in (sync_client, async_client):
        with pytest.raises(httpx2.ProxyError, match=r"cannot use the proxy from the environment"):
            make(AnswerCap(LIMIT))
