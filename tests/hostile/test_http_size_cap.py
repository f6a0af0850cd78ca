"""Class 13: the 32 MB cap on one message holds over Streamable HTTP too."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from codebot_mcp.mcpbridge.transport.stdio import MAX_MESSAGE_BYTES
from tests.helpers import run_measured, write_settings
from tests.servers.util import run_http_server


@pytest.fixture(scope="module")
def web_url() -> Iterator[str]:
    """The Streamable HTTP test server, shared by the module's tests (stateless: each
    ``mcp call`` is a session of its own; an SDK server's start is about 1.4 s of CPU)."""
    with run_http_server("--token", "t0ken-abc") as url:
        yield url


def test_an_oversized_http_result_is_refused_with_bounded_memory(
    tmp_path: Path, web_url: str
) -> None:
    """Peak memory is measured in fresh processes (a small answer, then the oversized one):
    in a test worker the peak may already be past any figure, so the check could not fail."""
    entry = {"url": web_url, "headers": {"Authorization": "Bearer t0ken-abc"}, "timeout": 30}
    write_settings(tmp_path, {"mcp_servers": {"web": entry}})
    argv = ["--cwd", str(tmp_path), "mcp", "call", "web", "huge"]
    code, output, baseline = run_measured([*argv, "size=1000"], CODEBOT_TRUST_PROJECT="1")
    assert (code, output) == (0, "x" * 1000 + "\n")
    began = time.monotonic()
    size = MAX_MESSAGE_BYTES + 8 * 2**20
    code, output, peak = run_measured([*argv, f"size={size}"], CODEBOT_TRUST_PROJECT="1")
    took = time.monotonic() - began
    assert code in (1, 4), output
    assert "larger than 32 MB" in output
    assert took < 25, f"took {took:.1f}s"
    grown = peak - baseline
    assert grown < 3 * MAX_MESSAGE_BYTES, f"grew by {grown / 2**20:.0f} MB"


def test_a_large_result_of_one_long_word_is_scrubbed_in_linear_time(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    web_url: str,
) -> None:
    """The URL-credential patterns once backtracked quadratically over a run of letters:
    a 1 MB answer without a space would have held codebot for hours."""
    monkeypatch.setenv("CODEBOT_TRUST_PROJECT", "1")
    entry = {"url": web_url, "headers": {"Authorization": "Bearer t0ken-abc"}, "timeout": 30}
    write_settings(tmp_path, {"mcp_servers": {"web": entry}})
    began = time.monotonic()
    code = run(["--cwd", str(tmp_path), "mcp", "call", "web", "huge", "size=1000000"])
    took = time.monotonic() - began
    assert code == 0
    assert capsys.readouterr().out == "x" * 1_000_000 + "\n"
    assert took < 30, f"took {took:.1f}s"
