"""The protocol era is decided by what the server answers, never by how fast.

``server/discover`` goes out with two requests of our own behind it: a method no server has,
then ``ping``. A server that answers the unknown method answers the probe too, however late
(``slow_discover``: a 2026-07-28 server that answers it after 1.5 s and refuses
``initialize``); one that drops the unknown method dropped the probe, and falls back to
``initialize`` at once (``silent_discover``). Both paths (the SDK's, and the hot path without
it) decide alike.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from tests.helpers import server_entry, write_settings


def codebot(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = run(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(params=["", "1"], ids=["hot-path", "sdk-path"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("CODEBOT_SDK_PATH", request.param)
    return str(request.param)


@pytest.mark.parametrize("delay", ["0.8", "2.5"])
def test_a_slow_2026_server_is_not_taken_for_a_legacy_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], path: str, delay: str
) -> None:
    entry = server_entry("slow_discover", "--delay", delay)
    write_settings(tmp_path, {"mcp_servers": {"slow": entry}})
    code, out, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "list", "--json")
    assert code == 0, err
    [view] = json.loads(out)["servers"]
    assert (view["status"], view["protocol_version"]) == ("connected", "2026-07-28"), view
    code, out, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "call", "slow", "hello")
    assert (code, out) == (0, "hello from slow discover\n"), err


def test_a_server_that_drops_unknown_methods_falls_back_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], path: str
) -> None:
    write_settings(tmp_path, {"mcp_servers": {"old": server_entry("silent_discover")}})
    started = time.monotonic()
    code, out, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "list", "--json")
    assert code == 0, err
    [view] = json.loads(out)["servers"]
    assert (view["status"], view["protocol_version"]) == ("connected", "2025-11-25"), view
    assert time.monotonic() - started < 8  # not the SDK's 10 s wait for the probe
