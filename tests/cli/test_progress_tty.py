"""``codebot mcp call`` shows a call's progress notifications on stderr when stderr is a
terminal (a real pty here), rewritten in place, and nothing when it is not; stdout holds the
result alone either way."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import server_entry, write_settings
from tests.servers.util import REPO_ROOT


def call_progress(project: Path, server: str, *, tty: bool) -> tuple[int, str, str]:
    argv = [sys.executable, "-m", "codebot_mcp.cli", "--cwd", str(project), "mcp", "call", server]
    argv += ["progress", "steps=3", "delay=0.2"]
    if not tty:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
        return done.returncode, done.stdout, done.stderr
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=follower, text=True, cwd=REPO_ROOT
        )
        os.close(follower)
        out, _ = proc.communicate(timeout=60)
        chunks: list[bytes] = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the last writer has gone
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
    return proc.returncode, out, b"".join(chunks).decode()


@pytest.mark.parametrize(("server", "protocol"), [("ask", "auto"), ("askl", "legacy")])
def test_progress_on_a_terminal_only(server: str, protocol: str, tmp_path: Path) -> None:
    write_settings(tmp_path, {"mcp_servers": {server: server_entry("asker", protocol=protocol)}})
    code, out, err = call_progress(tmp_path, server, tty=True)
    assert (code, out) == (0, "done\n"), err
    for percent, step in (("33%", 1), ("67%", 2), ("100%", 3)):
        assert f"\r\x1b[2K{server}: {percent} step {step}" in err
    assert err.endswith("\r\x1b[2K")  # the line is cleared before the result
    code, out, err = call_progress(tmp_path, server, tty=False)
    assert (code, out) == (0, "done\n"), err
    assert "step" not in err and "\x1b" not in err
