"""A secret split across streamed pieces is still scrubbed: the model's answer streamed to the
terminal, a server's stderr written to its log read by read, its log and progress messages."""

from __future__ import annotations

import os
import pty
import select
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from tests.e2e.test_tmux import Terminal, model_server
from tests.fakes import openai_turns as fo
from tests.fakes import zygote
from tests.fakes.procs import CODEBOT, codebot_env
from tests.helpers import server_entry, server_logs, write_settings

SECRET = "hs-canary-5d1f0c2b9e7a4c1d8f3b"
API_KEY = "sk-canary-api-7a2c91d04be3f5e6a8"


def project(root: Path, **settings: object) -> Path:
    entry = server_entry("hostile", env={"HOSTILE_SECRET": SECRET}, log_level="info")
    write_settings(root, {"mcp_servers": {"h": entry}, **settings})
    return root


def test_server_stderr_and_log_messages_split_in_two_are_scrubbed_in_its_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEBOT_TRUST_PROJECT", "1")
    root = project(tmp_path / "repo")
    assert run(["--cwd", str(root), "mcp", "call", "h", "leak_split"]) == 0
    assert "leaked" in capsys.readouterr().out
    log = server_logs("h")
    assert SECRET not in log
    head, tail = SECRET[: len(SECRET) // 2], SECRET[len(SECRET) // 2 :]
    assert head not in log and tail not in log
    assert "split=*** end" in log  # the two writes, 0.3 s apart
    assert "x" * 1000 + "*** end" in log  # the same after 70,000 characters of one line
    # The second message's end may wait for a third (it could begin another known secret).
    assert "[info] log=" in log and "[info] ***" in log.split("[info] log=", 1)[1]


def _read_all(fd: int, proc: subprocess.Popen[bytes], seconds: float) -> bytes:
    out = b""
    while True:
        ready, _, _ = select.select([fd], [], [], seconds)
        if not ready:
            raise AssertionError(f"no output for {seconds}s; so far: {out[-2000:]!r}")
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not data:
            break
        out += data
    proc.wait(30)
    return out


def test_progress_messages_split_in_two_are_scrubbed_on_the_terminal(tmp_path: Path) -> None:
    """``mcp call`` on a terminal shows progress; every byte written to it is checked."""
    root = project(tmp_path / "repo")
    env = codebot_env(tmp_path / "home", CODEBOT_TRUST_PROJECT="1")
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [*zygote.command(), "mcp", "call", "h", "leak_split"],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
    )
    os.close(slave)
    try:
        raw = _read_all(master, proc, 60).decode("utf-8", "replace")
    finally:
        os.close(master)
    assert proc.returncode == 0, raw
    assert "leaked" in raw
    assert "progress=" in raw and "*** end" in raw  # the progress line was shown
    head, tail = SECRET[: len(SECRET) // 2], SECRET[len(SECRET) // 2 :]
    assert SECRET not in raw and head not in raw and tail not in raw


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_the_model_streaming_the_api_key_in_pieces_shows_no_piece(tmp_path: Path) -> None:
    """The REPL streams the answer as it comes, 40 pieces; the pane's raw output is recorded."""
    answer = f"Here it is: {API_KEY} and again {API_KEY}. Done."
    terminal = Terminal(tmp_path / "tmux.sock")
    try:
        with model_server(tmp_path, [fo.text(answer, chunks=40)]) as (base_url, _):
            root = tmp_path / "repo"
            write_settings(root, {"base_url": base_url})
            env = codebot_env(tmp_path / "home", OPENAI_API_KEY=API_KEY, CODEBOT_TRUST_PROJECT="1")
            terminal.start([str(CODEBOT), "chat"], root, env)
            raw = tmp_path / "pane.raw"
            terminal.tmux("pipe-pane", "-t", "t", "-o", f"cat >> {raw}")
            terminal.expect("›")
            terminal.type_line("what is the key?")
            screen = terminal.expect("Done.")
            terminal.send("C-d")
    finally:
        terminal.close()
    recorded = raw.read_text(errors="replace")
    assert "Here it is: *** and again ***. Done." in screen
    for text in (screen, recorded):
        assert API_KEY not in text
    # No piece of the key that is long enough to tell reached the terminal at all.
    assert "7a2c91" not in recorded and "d04be3" not in recorded and "f5e6a8" not in recorded


if sys.platform != "linux":  # pty and /proc: Linux only
    pytestmark = pytest.mark.skip(reason="Linux only")
