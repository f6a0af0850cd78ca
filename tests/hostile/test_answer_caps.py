"""Every answer codebot reads has a cap, and the cap counts the right thing.

- the model: an endless stream, or a 400 MB body, is dropped at 64 MB with exit 5 and bounded
  memory (measured on a real ``codebot`` process);
- an MCP server over HTTP: a long stream of small SSE events framed with CRLF (or CR) is not
  one 32 MB "message"; each event is.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from codebot_mcp.core.model.cap import MAX_ANSWER_BYTES
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.procs import codebot_env
from tests.helpers import run_measured, write_settings
from tests.servers.util import run_http_server


def peak_of_child(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str, int]:
    """Run codebot with ``argv`` in a fresh process; its exit code, output and peak RSS in
    bytes (its own: ``tests.helpers.PEAK``), killed after 120 s."""
    return run_measured(argv, cwd=cwd, full_env=env)


@pytest.fixture(scope="module")
def plain_peak(tmp_path_factory: pytest.TempPathFactory) -> int:
    """The peak RSS of the same command answered plainly: what the process needs anyway
    (measured once for the module: the same command in a directory of its own)."""
    tmp_path = tmp_path_factory.mktemp("plain")
    with FakeOpenAI() as fake:
        fake.queue(fo.text("fine"))
        env = codebot_env(tmp_path / "home", OPENAI_API_KEY="sk-test-key-000")
        argv = ["--cwd", str(tmp_path), "--base-url", fake.base_url, "chat", "-p", "hi"]
        code, err, rss = peak_of_child(argv, tmp_path, env)
    assert code == 0, err
    return rss


class TestAgainstOnePlainPeak:
    """The model answer caps, each against the one peak of :func:`plain_peak`: under xdist a
    test class is one unit of work (``tests/conftest.py``), so that run is made once."""

    @pytest.mark.parametrize(
        ("turn", "said"),
        [
            (fo.endless(), "kept streaming past max_tokens (8,192)"),
            (fo.huge_body(400 * 2**20), "more than 64 MB in one answer"),
        ],
        ids=["endless", "400MB"],
    )
    def test_the_model_answer_is_capped_with_a_clear_error_and_bounded_memory(
        self, tmp_path: Path, plain_peak: int, turn: fo.Turn, said: str
    ) -> None:
        baseline = plain_peak
        with FakeOpenAI() as fake:
            fake.queue(turn)
            env = codebot_env(tmp_path / "home", OPENAI_API_KEY="sk-test-key-000")
            argv = ["--cwd", str(tmp_path), "--base-url", fake.base_url, "chat", "-p", "hi"]
            began = time.monotonic()
            code, err, rss = peak_of_child(argv, tmp_path, env)
            took = time.monotonic() - began
        assert code == 5, err
        assert said in err
        assert took < 45, f"took {took:.0f}s"
        grown = rss - baseline
        assert grown < 3 * MAX_ANSWER_BYTES, f"grew by {grown / 2**20:.0f} MB"
        assert len(fake.requests) == 1  # not retried

    def test_a_compressed_model_answer_is_counted_decoded(
        self, tmp_path: Path, plain_peak: int
    ) -> None:
        """A gzip body that inflates past the cap is dropped as it inflates."""
        import gzip
        import json
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from threading import Thread

        pad = "a" * (80 * 2**20)
        blob = gzip.compress(json.dumps({"id": "x", "pad": pad}).encode(), compresslevel=1)

        class Bomb(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-encoding", "gzip")
                self.send_header("content-length", str(len(blob)))
                self.end_headers()
                self.wfile.write(blob)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Bomb)
        Thread(target=server.serve_forever, daemon=True).start()
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}/v1"
            env = codebot_env(tmp_path / "home", OPENAI_API_KEY="sk-test-key-000")
            # a model is named: the bomb serves no GET /models to choose one from
            argv = ["--cwd", str(tmp_path), "--base-url", url, "--model", "m", "chat", "-p", "hi"]
            code, err, rss = peak_of_child(argv, tmp_path, env)
        finally:
            server.shutdown()
            server.server_close()
        assert code == 5, err
        assert "more than 64 MB in one answer" in err
        grown = rss - plain_peak
        assert grown < 3 * MAX_ANSWER_BYTES, f"grew by {grown / 2**20:.0f} MB"


@pytest.mark.parametrize("framing", ["--crlf", "--cr", "--lf"])
def test_a_long_stream_of_small_sse_events_is_not_one_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], framing: str
) -> None:
    args = [] if framing == "--crlf" else [framing]
    with run_http_server(*args, module="sse_crlf") as url:
        write_settings(tmp_path, {"mcp_servers": {"sse": {"url": url, "timeout": 60}}})
        argv = ["--cwd", str(tmp_path), "--trust-project", "mcp", "call", "sse", "stream"]
        code = run([*argv, "megabytes=40", "--no-warm"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.out == "streamed 40 MB\n"
