"""Results first, shutdown after: the detached reaper, through the real console script.

A one-shot command prints its result and exits; a small reaper finishes stopping its servers
(stdin closed → grace → SIGTERM → SIGKILL). These tests find the servers by a marker in their
environment and check the process table after codebot has exited.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from codebot_mcp.mcpbridge.transport import reaper
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.procs import CODEBOT, alive, codebot_env, wait_until
from tests.helpers import server_entry, write_settings

GONE_SECONDS = 10.0
"""Grace (2 s) + SIGTERM grace (2 s) + a loaded machine's slack."""


def marked_pids(mark: str) -> list[int]:
    """Live processes whose environment carries ``CODEBOT_TEST_MARK=<mark>``."""
    needle = f"CODEBOT_TEST_MARK={mark}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0") and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def tagged_path(mark: str) -> str:
    """A ``PATH`` carrying the test's mark: the reaper keeps only ``PATH`` of codebot's
    environment, so the mark tells this test's reaper from those of tests running beside it."""
    return f"{os.environ.get('PATH', '/usr/bin:/bin')}:/nonexistent/codebot-test-{mark}"


def reapers(mark: str) -> list[int]:
    """Live reaper processes started from this checkout by a codebot run with ``mark``."""
    script = os.path.abspath(reaper.__file__).encode()
    needle = f"PATH={tagged_path(mark)}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if script not in argv:
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if needle in environ and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def project_with(tmp_path: Path, server: str, *args: str) -> tuple[Path, str]:
    mark = uuid.uuid4().hex
    root = tmp_path / "repo"
    entry = server_entry(server, *args, env={"CODEBOT_TEST_MARK": mark})
    write_settings(root, {"mcp_servers": {"s": entry}})
    return root, mark


def codebot(root: Path, mark: str, *argv: str) -> subprocess.CompletedProcess[str]:
    env = codebot_env(root.parent / "home", CODEBOT_TRUST_PROJECT="1", PATH=tagged_path(mark))
    return subprocess.run(
        [str(CODEBOT), *argv], cwd=root, env=env, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    "argv",
    [["mcp", "list"], ["mcp", "call", "s", "echo", "text=hi"], ["mcp", "doctor"]],
    ids=["list", "call", "doctor"],
)
def test_server_ignoring_eof_and_sigterm_is_killed_after_codebot_exits(
    tmp_path: Path, argv: list[str]
) -> None:
    root, mark = project_with(tmp_path, "faulty", "--ignore-term")
    done = codebot(root, mark, *argv)
    assert done.returncode == 0, done.stderr
    if argv[1] == "call":
        assert done.stdout == "hi\n"
    # codebot is gone with its output complete (capture_output read EOF: the reaper does not
    # hold our pipes); the server, which ignores EOF and SIGTERM, is still there for now ...
    left = marked_pids(mark)
    assert left, "the server was stopped before codebot exited: no reaper was needed?"
    assert reapers(mark), "a server is left and no reaper is finishing its shutdown"
    # ... and the reaper SIGKILLs it, then ends itself.
    wait_until(lambda: not marked_pids(mark), GONE_SECONDS, "the server to be killed")
    wait_until(lambda: not reapers(mark), GONE_SECONDS, "the reaper to exit")


def test_well_behaved_server_exits_on_eof_and_no_reaper_lingers(tmp_path: Path) -> None:
    root, mark = project_with(tmp_path, "faulty")
    done = codebot(root, mark, "mcp", "call", "s", "echo", "text=hi")
    assert done.returncode == 0 and done.stdout == "hi\n", done.stderr
    wait_until(lambda: not marked_pids(mark), GONE_SECONDS, "the server to exit on EOF")
    wait_until(lambda: not reapers(mark), GONE_SECONDS, "the reaper to exit")


def test_server_that_ignores_eof_gets_sigterm(tmp_path: Path) -> None:
    """``hang --ignore-eof`` exits on SIGTERM: the reaper's second step."""
    mark = uuid.uuid4().hex
    root = tmp_path / "repo"
    entry = server_entry("hang", "--ignore-eof", env={"CODEBOT_TEST_MARK": mark}, timeout=1)
    write_settings(root, {"mcp_servers": {"s": entry}})
    done = codebot(root, mark, "mcp", "list")
    assert done.returncode == 4  # it never answers the handshake
    wait_until(lambda: not marked_pids(mark), GONE_SECONDS, "the server to be stopped")


def test_in_process_run_waits_for_its_servers(tmp_path: Path) -> None:
    """``cli.app.run`` (tests, embedding) is not armed: it stops servers before returning."""
    from codebot_mcp.cli.app import run

    root, mark = project_with(tmp_path, "faulty")
    assert run(["--cwd", str(root), "mcp", "call", "s", "echo", "text=hi"]) == 0
    assert not marked_pids(mark)
    assert not reaper.pending()


def test_reaper_never_signals_a_recycled_pid() -> None:
    """A target whose start time no longer matches is treated as gone, not signalled."""
    sleeper = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        ticks = reaper.start_ticks(sleeper.pid)
        assert ticks is not None
        target = {"pid": sleeper.pid, "ticks": ticks + 1, "grace": 0.1, "term": 0.1}
        reaper.reap([target])
        assert sleeper.poll() is None  # untouched
        target["ticks"] = ticks
        reaper.reap([target])
        assert sleeper.wait(5) == -15  # SIGTERM after the grace
    finally:
        sleeper.kill()
        sleeper.wait()


def test_sigkill_of_codebot_mid_command_leaves_no_server(tmp_path: Path) -> None:
    """One-shot servers get no parent-death signal (it would kill them with no grace): the
    reaper's pipe ends when codebot dies, however it dies, and the reaper stops them."""
    import signal

    from tests.fakes.procs import Running

    mark = uuid.uuid4().hex
    root = tmp_path / "repo"
    entry = server_entry("hang", "--ignore-eof", env={"CODEBOT_TEST_MARK": mark}, timeout=60)
    write_settings(root, {"mcp_servers": {"s": entry}})
    env = codebot_env(root.parent / "home", CODEBOT_TRUST_PROJECT="1", PATH=tagged_path(mark))
    run = Running(["mcp", "list"], root, env)
    try:
        wait_until(lambda: bool(marked_pids(mark)), 20, "the server to start")
        run.proc.send_signal(signal.SIGKILL)
        run.wait(10)
        wait_until(lambda: not marked_pids(mark), GONE_SECONDS, "the server to be stopped")
        wait_until(lambda: not reapers(mark), GONE_SECONDS, "the reaper to exit")
    finally:
        run.close()


@pytest.mark.parametrize(
    "argv",
    [
        ["mcp", "resources"],
        ["mcp", "resources", "s"],
        ["mcp", "read", "s", "note://x"],
        ["mcp", "prompts"],
        ["mcp", "prompt", "s", "p"],
        ["mcp", "lock"],
        ["chat", "-p", "hi"],
    ],
    ids=["resources", "resources-server", "read", "prompts", "prompt", "lock", "chat-p"],
)
def test_every_one_shot_command_exits_before_its_servers_are_stopped(
    tmp_path: Path, fake: FakeOpenAI, argv: list[str]
) -> None:
    """Not only list, call and doctor: whatever the command answers (a listing, an error),
    it answers and exits; the reaper stops the server that ignores EOF and SIGTERM."""
    root, mark = project_with(tmp_path, "faulty", "--ignore-term")
    fake.queue(fo.text("hello"))
    done = codebot(root, mark, "--base-url", fake.base_url, *argv)
    assert "Traceback" not in done.stderr
    if argv[0] == "chat":
        assert (done.returncode, done.stdout) == (0, "hello\n"), done.stderr
    assert marked_pids(mark), "the server was stopped before codebot exited"
    assert reapers(mark), "a server is left and no reaper is finishing its shutdown"
    wait_until(lambda: not marked_pids(mark), GONE_SECONDS, "the server to be killed")
    wait_until(lambda: not reapers(mark), GONE_SECONDS, "the reaper to exit")


HANDED_OFF_EXITS_LATE = """
import os, sys, time
import anyio
from codebot_mcp.mcpbridge.transport import reaper

async def main():
    process = await anyio.open_process(["sleep", "0.3"])
    print(process.pid, flush=True)
    reaper.handoff(process.pid, process)  # as ServerProcess.stop does in a one-shot command

anyio.run(main)
time.sleep(1.0)  # codebot's exit path (the sweep), slowed: the server exits in the meantime
sys.stderr.flush()
os._exit(0)
"""


def test_a_handed_off_server_exiting_after_the_loop_prints_nothing() -> None:
    """The cause of a flake (`mcp list` under load): asyncio's child watcher, still waiting in
    a thread for a handed-off server, warned "Loop ... that handles pid N is closed" on stderr
    when the server exited between the end of the event loop and codebot's exit."""
    done = subprocess.run(
        [sys.executable, "-c", HANDED_OFF_EXITS_LATE],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout.strip().isdigit(), done.stderr
    assert done.stderr == ""
