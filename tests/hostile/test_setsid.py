"""A grandchild that calls ``setsid`` leaves its process group: codebot, a child subreaper,
still finds it and stops it when it exits, however it exits (real processes, real signals)."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.procs import Running, alive, codebot_env, wait_until
from tests.helpers import server_entry, write_settings

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")


@pytest.fixture
def runs() -> Iterator[list[Running]]:
    started: list[Running] = []
    yield started
    for run in started:
        run.close()


@pytest.fixture
def escaped() -> Iterator[list[int]]:
    """Pids the tests found; whatever is still running afterwards is killed (and fails)."""
    found: list[int] = []
    yield found
    for pid in found:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def read_pid(path: Path, run: Running) -> int:
    try:
        wait_until(path.exists, 30, f"{path.name} to be written")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; codebot's stderr:\n{run.stderr}") from None
    return int(path.read_text())


def session_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[3])


def start(tmp_path: Path, fake: FakeOpenAI, *, busy: bool) -> tuple[Running, Path, Path]:
    """chat -p: the server starts a setsid grandchild, then a bash command does the same."""
    root = tmp_path / "repo"
    # bash.pid in the project: bash runs in the workspace-write sandbox (it may write there).
    server_pid, bash_pid = tmp_path / "server.pid", root / "bash.pid"
    entry = server_entry("hostile", "--escape", str(server_pid))
    write_settings(root, {"base_url": fake.base_url, "mcp_servers": {"h": entry}})
    script = f"echo $$ > {bash_pid}.tmp && mv {bash_pid}.tmp {bash_pid} && exec sleep 300"
    wait = f"while [ ! -e {bash_pid} ]; do sleep 0.05; done"  # it has left the group by then
    command = f"setsid sh -c '{script}' >/dev/null 2>&1 & {wait}; echo started"
    calls: list[tuple[str, dict[str, object]]] = [("bash", {"command": command})]
    if busy:
        calls.append(("bash", {"command": "exec sleep 300", "timeout": 600}))
    fake.queue(fo.tool_calls(*calls), fo.text("done"))
    env = codebot_env(tmp_path / "home", CODEBOT_TRUST_PROJECT="1")
    return Running(["chat", "-p", "go", "--yes"], root, env), server_pid, bash_pid


def test_setsid_grandchildren_are_stopped_when_codebot_exits(
    tmp_path: Path, fake: FakeOpenAI, runs: list[Running], escaped: list[int]
) -> None:
    run, server_pid, bash_pid = start(tmp_path, fake, busy=False)
    runs.append(run)
    escaped += [read_pid(server_pid, run), read_pid(bash_pid, run)]
    assert all(session_of(pid) == pid for pid in escaped)  # each left its group and session
    assert run.wait(60) == 0, run.stderr
    wait_until(lambda: not any(alive(p) for p in escaped), 10, f"{escaped} to be stopped")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_setsid_grandchildren_are_stopped_on_a_signal(
    tmp_path: Path,
    fake: FakeOpenAI,
    runs: list[Running],
    escaped: list[int],
    sig: signal.Signals,
) -> None:
    run, server_pid, bash_pid = start(tmp_path, fake, busy=True)
    runs.append(run)
    escaped += [read_pid(server_pid, run), read_pid(bash_pid, run)]
    wait_until(lambda: run.stderr.count("→ bash") >= 2, 30, "the busy bash call")
    run.proc.send_signal(sig)
    assert run.wait(30) == 130, run.stderr
    assert "Traceback" not in run.stderr
    wait_until(lambda: not any(alive(p) for p in escaped), 10, f"{escaped} to be stopped")


def zombies_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] == "Z" and int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def test_adopted_orphans_that_exit_leave_no_zombie(
    tmp_path: Path, fake: FakeOpenAI, runs: list[Running]
) -> None:
    """codebot adopts them (a subreaper), so it must also collect them once they exit."""
    root = tmp_path / "repo"
    write_settings(root, {"base_url": fake.base_url})
    mark = root / "left"  # in the project: bash runs in the workspace-write sandbox
    quick = f"setsid sh -c 'touch {mark}; sleep 0.3' >/dev/null 2>&1 & "
    quick += f"while [ ! -e {mark} ]; do sleep 0.05; done"
    fake.queue(
        fo.tool_calls(("bash", {"command": quick})),
        fo.tool_calls(("bash", {"command": "sleep 1"})),  # the orphan has exited by its end
        fo.tool_calls(("bash", {"command": "exec sleep 300", "timeout": 600})),
        fo.text("done"),
    )
    env = codebot_env(tmp_path / "home", CODEBOT_TRUST_PROJECT="1")
    runs.append(run := Running(["chat", "-p", "go", "--yes"], root, env))
    wait_until(lambda: run.stderr.count("→ bash") >= 3, 60, "the third bash call")
    assert zombies_of(run.pid) == []
    run.proc.send_signal(signal.SIGTERM)
    assert run.wait(30) == 130, run.stderr
