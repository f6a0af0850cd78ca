"""Ctrl-C (SIGINT) during a handshake and during a tool call: exit 130 at once, no child left."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.fakes.procs import CODEBOT, alive, wait_until
from tests.helpers import children_of, server_entry, write_settings

REAPED_SECONDS = 8.0
"""The reaper's stdin grace (2 s) and SIGTERM grace (2 s), with a loaded machine's slack."""


def interrupt(argv: list[str], *, when_children: int, cwd: Path) -> tuple[int, list[int]]:
    """Run codebot, send SIGINT once its servers run; the exit code and the server pids.

    What is interrupted would last far longer than the 30 s the exit is waited for (a server
    that never answers, with a 600 s handshake timeout; a 60 s call), so only the interrupt
    can end it in time.
    """
    process = subprocess.Popen(
        [str(CODEBOT), "--cwd", str(cwd), *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    kids: list[int] = []
    while time.monotonic() < deadline and len(kids) < when_children:
        time.sleep(0.1)
        kids = children_of(process.pid)
    time.sleep(1.0)  # well inside the handshake / the call
    kids = children_of(process.pid)
    assert len(kids) >= when_children
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert "Traceback" not in err
    return process.returncode, kids


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_settings(
        tmp_path,
        {
            "mcp_servers": {
                "echo": server_entry("echo"),
                "hang": server_entry("hang", timeout=600),
            }
        },
    )
    return tmp_path


def test_ctrl_c_during_a_handshake(project: Path) -> None:
    code, kids = interrupt(["mcp", "list", "--server", "hang"], when_children=1, cwd=project)
    assert code == 130
    # Results first: the reaper finishes the servers' shutdown within its grace periods.
    wait_until(lambda: not any(alive(k) for k in kids), REAPED_SECONDS, f"{kids} to exit")


def test_ctrl_c_during_a_tool_call(project: Path) -> None:
    code, kids = interrupt(
        ["mcp", "call", "echo", "sleep", "seconds=60"], when_children=1, cwd=project
    )
    assert code == 130
    # Results first: the reaper finishes the servers' shutdown within its grace periods.
    wait_until(lambda: not any(alive(k) for k in kids), REAPED_SECONDS, f"{kids} to exit")
    assert children_of(os.getpid()) == []
