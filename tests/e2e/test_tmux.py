"""``codebot chat`` in a real terminal: tmux drives the REPL like a person would.

The model is the loopback server run as a subprocess from a script file; the MCP server is the
echo test server. Every wait polls ``capture-pane`` against a deadline (no fixed sleeps), so
the tests are as fast as the machine allows and fail with the screen in the message.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import openai_turns as fo
from tests.fakes.procs import CODEBOT, alive, codebot_env, wait_until
from tests.helpers import children_of, server_entry, write_settings
from tests.servers.util import REPO_ROOT

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

DEADLINE = 20.0
"""Seconds any one expected screen may take (startup imports the SDK and openai)."""
SOCKET_PATH_MAX = 100
"""Bytes of a tmux socket's path past which it goes to a short folder (the limit is 107)."""


class Terminal:
    """One tmux server (private socket) with one session running one command."""

    def __init__(self, socket: Path) -> None:
        self.status_file = socket.with_name("exit-status")
        self._short: Path | None = None
        if len(os.fsencode(socket)) > SOCKET_PATH_MAX:
            # A Unix socket's path may not pass 107 bytes; pytest's temporary folder under a
            # long TMPDIR or test name may, so the socket goes to a short folder of its own.
            self._short = Path(tempfile.mkdtemp(prefix="codebot-tmux-"))
            socket = self._short / "s"
        self.socket = socket

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-f", "/dev/null", "-S", str(self.socket), *args],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        )
        return done.stdout

    def start(self, command: list[str], cwd: Path, env: dict[str, str]) -> int:
        """Run ``command`` in a 160x50 pane; returns the pid of the command itself.

        A wrapper shell runs it and writes its exit status to a file: tmux itself does not
        always reap an exited pane process promptly (seen with tmux 3.3a), so ``pane_dead``
        is not a reliable exit signal. The shell's ``trap`` keeps Ctrl-C from killing the
        shell while leaving SIGINT's default disposition for the command.
        """
        env = {k: v for k, v in env.items() if k not in ("TMUX", "TMUX_PANE")}
        self.status_file.unlink(missing_ok=True)
        script = (
            f"trap true INT; {shlex.join(command)}; echo $? > {shlex.quote(str(self.status_file))}"
        )
        new_session = ["new-session", "-d", "-s", "t", "-x", "160", "-y", "50", "-c", str(cwd)]
        keep_pane = [";", "set-option", "-t", "t", "remain-on-exit", "on"]
        subprocess.run(
            [
                "tmux",
                "-f",
                "/dev/null",
                "-S",
                str(self.socket),
                *new_session,
                "sh",
                "-c",
                script,
                *keep_pane,
            ],
            env=env,
            check=True,
            timeout=10,
        )
        shell = int(self.tmux("display-message", "-p", "-t", "t", "#{pane_pid}").strip())
        wait_until(lambda: bool(direct_children(shell)), DEADLINE, "the command to start")
        (pid,) = direct_children(shell)
        return pid

    def screen(self) -> str:
        """The pane with its scrollback, wrapped lines joined."""
        return self.tmux("capture-pane", "-p", "-J", "-t", "t", "-S", "-500")

    def expect(self, text: str, seconds: float = DEADLINE, *, count: int = 1) -> str:
        """Wait until ``text`` appears ``count`` times on the screen; returns the screen."""
        deadline = time.monotonic() + seconds
        while True:
            screen = self.screen()
            if screen.count(text) >= count:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} not on screen after {seconds}s:\n{screen}")
            time.sleep(0.05)

    def send(self, *keys: str) -> None:
        """Type ``keys`` (tmux key names such as ``Enter`` or ``C-c``, or literal text)."""
        self.tmux("send-keys", "-t", "t", *keys)

    def type_line(self, text: str) -> None:
        """Type ``text`` literally, then Enter."""
        self.tmux("send-keys", "-t", "t", "-l", text)
        self.send("Enter")

    def exit_status(self) -> int | None:
        """The command's exit status once it has ended, else None."""
        try:
            text = self.status_file.read_text().strip()
        except OSError:
            return None
        return int(text) if text else None

    def close(self) -> None:
        subprocess.run(
            ["tmux", "-S", str(self.socket), "kill-server"], capture_output=True, timeout=10
        )
        if self._short is not None:
            shutil.rmtree(self._short, ignore_errors=True)


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    term = Terminal(tmp_path / "tmux.sock")
    yield term
    term.close()


@contextmanager
def model_server(tmp_path: Path, turns: list[fo.Turn]) -> Iterator[tuple[str, Path]]:
    """The loopback model as a subprocess; yields its base URL and its request log."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": turns}))
    log = tmp_path / "requests.jsonl"
    command = [sys.executable, "-m", "tests.fakes.openai_server", "--script", str(script)]
    proc = subprocess.Popen(
        [*command, "--log", str(log)], cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("READY "), line
        yield line.split()[1], log
    finally:
        proc.terminate()
        proc.wait(10)
        assert proc.stdout is not None
        proc.stdout.close()


def project(root: Path, base_url: str) -> Path:
    write_settings(root, {"base_url": base_url, "mcp_servers": {"echo": server_entry("echo")}})
    return root


def direct_children(pid: int) -> list[int]:
    """Live processes whose parent is ``pid``."""
    return [k for k in children_of(pid) if _parent(k) == pid]


def _parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def requests(log: Path) -> list[dict[str, Any]]:
    """The request bodies the fake model server has logged so far: whole lines only (it
    appends a long body in several writes, so the last line may still be on its way)."""
    if not log.exists():
        return []
    whole, _, _partial = log.read_text().rpartition("\n")
    return [json.loads(line) for line in whole.splitlines() if line.strip()]


def leave(terminal: Terminal, pid: int, kids: list[int]) -> None:
    """Ctrl-D at the prompt: exit 0, and every child process is gone."""
    wait_until(lambda: terminal.screen().rstrip().endswith("›"), DEADLINE, "an empty prompt")
    terminal.send("C-d")
    wait_until(lambda: terminal.exit_status() is not None, DEADLINE, "codebot to exit")
    assert terminal.exit_status() == 0, terminal.screen()
    wait_until(lambda: not any(alive(k) for k in [pid, *kids]), 5, f"{kids} to exit")
    assert "Traceback" not in terminal.screen()


def test_trust_prompt_mcp_and_an_approved_tool_call(terminal: Terminal, tmp_path: Path) -> None:
    turns = [
        fo.tool_calls(("mcp__echo__delete_note", {"id": "7"})),
        fo.text("Deleted note 7 for you."),
    ]
    with model_server(tmp_path, turns) as (base_url, log):
        root = project(tmp_path / "repo", base_url)
        env = codebot_env(tmp_path / "home")  # no CODEBOT_TRUST_PROJECT: chat must ask
        pid = terminal.start([str(CODEBOT), "chat"], root, env)

        screen = terminal.expect("Trust this project and start them?")
        assert "would start or set:" in screen
        assert "echo: " in screen and "tests.servers.echo" in screen
        terminal.send("-l", "y")  # one key, no Enter
        terminal.expect("1 MCP server ready")
        kids = children_of(pid)
        assert kids, "the echo server should be a child of codebot"
        assert (tmp_path / "home" / "state" / "trust.json").exists()

        terminal.type_line("/mcp")
        terminal.expect("echo: connected, ")

        terminal.type_line("please delete note 7")
        screen = terminal.expect("allow? [y]es once")
        assert 'mcp__echo__delete_note id="7"' in screen
        assert "capability: write (" in screen
        assert "asks because: no permission rule matches, and write tools ask by default" in screen
        terminal.send("-l", "y")
        terminal.expect("Deleted note 7 for you.")
        wait_until(lambda: len(requests(log)) == 2, 5, "the request log")  # written every 0.1 s
        result = requests(log)[1]["messages"][-1]
        assert result["role"] == "tool" and result["content"] == "deleted 7"

        leave(terminal, pid, kids)


def test_ctrl_c_cancels_a_turn_and_the_prompt_comes_back(
    terminal: Terminal, tmp_path: Path
) -> None:
    turns = [
        fo.hang(60),
        fo.tool_calls(("mcp__echo__sleep", {"seconds": 60})),
        fo.text("Still here."),
    ]
    with model_server(tmp_path, turns) as (base_url, log):
        root = project(tmp_path / "repo", base_url)
        env = codebot_env(tmp_path / "home", CODEBOT_TRUST_PROJECT="1")
        pid = terminal.start([str(CODEBOT), "chat"], root, env)
        terminal.expect("1 MCP server ready")
        kids = children_of(pid)

        terminal.type_line("wait for the model")  # the stream starts, then goes silent
        wait_until(lambda: len(requests(log)) == 1, DEADLINE, "the first model request")
        terminal.send("C-c")
        terminal.expect("(interrupted)")

        terminal.type_line("sleep for a minute")  # a long MCP tool call
        terminal.expect("allow? [y]es once")
        terminal.send("y")
        terminal.expect("→ mcp__echo__sleep")
        terminal.send("C-c")
        terminal.expect("(interrupted)", count=2)
        assert all(alive(k) for k in kids), "the MCP server must survive a cancelled call"

        terminal.type_line("are you there?")
        terminal.expect("Still here.")
        wait_until(lambda: len(requests(log)) == 3, 5, "the request log")
        last = requests(log)[-1]["messages"]
        # Only complete turns are kept: the cancelled prompts left nothing dangling.
        assert [m["role"] for m in last] == ["system", "user"]
        leave(terminal, pid, kids)
