"""A warm holder that accepts a call and then hangs cannot make ``mcp call`` wait forever;
one that is slow but alive is waited for."""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from codebot_mcp.mcpbridge.warm import holder_client as warm
from tests.cli.entry_point import codebot
from tests.helpers import server_entry


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    short = Path(tempfile.mkdtemp(prefix="cbh", dir="/tmp"))  # a Unix socket path is short
    monkeypatch.setenv("CODEBOT_HOME", str(short))
    (short / "settings.json").write_text(
        json.dumps({"mcp_servers": {"ask": server_entry("asker")}})
    )
    yield short
    shutil.rmtree(short, ignore_errors=True)


def test_a_holder_that_hangs_after_accepting_gives_a_clear_error_in_bounded_time(
    tmp_path: Path, home: Path
) -> None:
    path = warm.socket_path(None, tmp_path.resolve())
    path.parent.mkdir(mode=0o700, parents=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        listener.bind(str(path))
    finally:
        os.umask(old)
    listener.listen(4)
    held: list[socket.socket] = []

    def hang() -> None:
        listener.settimeout(60)
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        held.append(conn)
        request = json.loads(conn.makefile("rb").readline())
        accepted = {"digest": request.get("digest"), "accepted": True}
        conn.sendall(json.dumps(accepted).encode() + b"\n")  # ...and never another word

    thread = threading.Thread(target=hang, daemon=True)
    thread.start()
    began = time.monotonic()
    try:
        code, out, err = codebot("mcp", "call", "ask", "hello", cwd=tmp_path)
    finally:
        listener.close()
        for conn in held:
            conn.close()
    took = time.monotonic() - began
    assert code == 4, out + err
    assert "warm holder" in err and "said nothing" in err and "--no-warm" in err
    assert took < warm.SILENCE_SECONDS + 20, f"took {took:.0f}s"


def test_a_call_longer_than_the_silence_limit_still_completes(tmp_path: Path, home: Path) -> None:
    code, _, err = codebot("mcp", "warm", cwd=tmp_path)
    assert code == 0, err
    try:
        marker = tmp_path / "marker"
        seconds = warm.SILENCE_SECONDS + 2
        code, out, err = codebot(
            "mcp", "call", "ask", "wait", f"seconds={seconds}", f"marker={marker}", cwd=tmp_path
        )
        assert code == 0, err
        assert out.strip(), err
    finally:
        codebot("mcp", "warm", "--stop", cwd=tmp_path)
