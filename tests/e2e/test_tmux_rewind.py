"""``codebot rewind`` in a real terminal: it shows the plan and asks; "n" changes nothing
(exit 1), "y" restores (exit 0)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.test_tmux import DEADLINE, Terminal, model_server, terminal
from tests.fakes import openai_turns as fo
from tests.fakes import zygote
from tests.fakes.procs import CODEBOT, codebot_env, wait_until
from tests.helpers import write_settings

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
__all__ = ["terminal"]  # the fixture, used by name


def test_rewind_asks_in_a_terminal(terminal: Terminal, tmp_path: Path) -> None:
    turns = [fo.tool_calls(("bash", {"command": "echo changed > notes.txt"})), fo.text("done")]
    with model_server(tmp_path, turns) as (base_url, _log):
        root = tmp_path / "repo"
        write_settings(root, {"base_url": base_url})
        (root / "notes.txt").write_text("original\n")
        env = codebot_env(tmp_path / "home", CODEBOT_TRUST_PROJECT="1")
        done = subprocess.run(
            [*zygote.command(), "chat", "-p", "change the notes", "--yes"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
    assert (root / "notes.txt").read_text() == "changed\n"

    terminal.start([str(CODEBOT), "rewind"], root, env)
    screen = terminal.expect("Restore to before turn 1? [y/N]")
    assert "Rewind to before turn 1 (change the notes):" in screen
    assert "restore   notes.txt" in screen
    terminal.send("-l", "n")  # one key, no Enter
    wait_until(lambda: terminal.exit_status() is not None, DEADLINE, "codebot to exit")
    assert terminal.exit_status() == 1
    terminal.expect("nothing was restored")  # the pane may show the last line after the exit
    assert (root / "notes.txt").read_text() == "changed\n"

    second = Terminal(tmp_path / "tmux2.sock")
    try:
        second.start([str(CODEBOT), "rewind", "1"], root, env)
        second.expect("Restore to before turn 1? [y/N]")
        second.send("-l", "y")
        wait_until(lambda: second.exit_status() is not None, DEADLINE, "codebot to exit")
        assert second.exit_status() == 0, second.screen()
        second.expect("restored 1 file")
    finally:
        second.close()
    assert (root / "notes.txt").read_text() == "original\n"
