"""Class 13: the 32 MB cap on one message holds over Streamable HTTP too."""

from __future__ import annotations

import resource
import time
from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from codebot_mcp.mcpbridge.transport.stdio import MAX_MESSAGE_BYTES
from tests.helpers import write_settings
from tests.servers.util import run_http_server


def test_an_oversized_http_result_is_refused_with_bounded_memory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEBOT_TRUST_PROJECT", "1")
    with run_http_server("--token", "t0ken-abc") as url:
        entry = {"url": url, "headers": {"Authorization": "Bearer t0ken-abc"}, "timeout": 30}
        write_settings(tmp_path, {"mcp_servers": {"web": entry}})
        assert run(["--cwd", str(tmp_path), "mcp", "call", "web", "huge", "size=1000"]) == 0
        assert capsys.readouterr().out == "x" * 1000 + "\n"
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        began = time.monotonic()
        size = MAX_MESSAGE_BYTES + 8 * 2**20
        code = run(["--cwd", str(tmp_path), "mcp", "call", "web", "huge", f"size={size}"])
        took = time.monotonic() - began
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    err = capsys.readouterr().err
    assert code in (1, 4), err
    assert "larger than 32 MB" in err
    assert took < 25, f"took {took:.1f}s"
    assert grown < 3 * MAX_MESSAGE_BYTES, f"grew by {grown / 2**20:.0f} MB"


def test_a_large_result_of_one_long_word_is_scrubbed_in_linear_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The URL-credential patterns once backtracked quadratically over a run of letters:
    a 1 MB answer without a space would have held codebot for hours."""
    monkeypatch.setenv("CODEBOT_TRUST_PROJECT", "1")
    with run_http_server("--token", "t0ken-abc") as url:
        entry = {"url": url, "headers": {"Authorization": "Bearer t0ken-abc"}, "timeout": 30}
        write_settings(tmp_path, {"mcp_servers": {"web": entry}})
        began = time.monotonic()
        code = run(["--cwd", str(tmp_path), "mcp", "call", "web", "huge", "size=1000000"])
        took = time.monotonic() - began
    assert code == 0
    assert capsys.readouterr().out == "x" * 1_000_000 + "\n"
    assert took < 30, f"took {took:.1f}s"
