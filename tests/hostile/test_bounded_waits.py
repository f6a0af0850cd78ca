"""Class 12: every request to a server has a bound, listings and calls alike."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import server_entry, write_settings


def test_a_server_that_stops_answering_cannot_hang_chat(
    tmp_path: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CODEBOT_TRUST_PROJECT", "1")
    monkeypatch.setenv("CODEBOT_TOOL_TIMEOUT", "2")  # the default call bound, made short
    entry = server_entry("stall_raw", timeout=3, protocol="legacy")
    write_settings(tmp_path, {"base_url": fake.base_url, "mcp_servers": {"s": entry}})
    fake.queue(
        fo.tool_calls(("mcp__s__poke", {})),  # announces list_changed, then never lists again
        fo.tool_calls(("mcp__s__stall", {})),  # never answered
        fo.text("done"),
    )
    began = time.monotonic()
    code = run(["--cwd", str(tmp_path), "chat", "-p", "go", "--yes"])
    took = time.monotonic() - began
    err = capsys.readouterr().err
    assert code == 0, err
    assert took < 30, f"took {took:.1f}s"
    results = [m["content"] for m in fake.bodies[-1]["messages"] if m["role"] == "tool"]
    assert results[0] == "poked"
    assert "gave no answer within 2 s" in results[1]
