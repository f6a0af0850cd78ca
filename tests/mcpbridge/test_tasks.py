"""Tasks (SEP-2663) against a real task server of ours (tests/servers/tasker.py, stdio and
Streamable HTTP): codebot declares the extension, follows a ``CreateTaskResult`` by polling
``tasks/get`` at the server's ``pollIntervalMs``, answers ``input_required`` through
``tasks/update``, cancels with ``tasks/cancel`` on Ctrl-C, leaves the task running when it is
terminated, and ``--continue`` picks it up again from the session. The hot path of ``mcp
call`` hands a task server to the SDK path before ``tools/call`` is sent, never after."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run
from codebot_mcp.core.agent.history import SessionLog, pending_tasks
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import server_entry, write_settings
from tests.servers.util import REPO_ROOT, run_http_server

WAIT = 60.0


def codebot(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = run(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def requests(log: Path) -> list[dict[str, Any]]:
    """What the task server was asked, in order."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def methods(log: Path) -> list[str]:
    return [r["method"] for r in requests(log)]


def wait_for(check: Callable[[], bool], what: str, seconds: float = WAIT) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.05)


@pytest.fixture(params=["lite", "sdk"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """``mcp call`` has an SDK-free hot path and the SDK path: tasks go through the SDK."""
    if request.param == "sdk":
        monkeypatch.setenv("CODEBOT_SDK_PATH", "1")
    return str(request.param)


def tasker(project: Path, *args: str, name: str = "tasker") -> Path:
    """Configure the stdio task server in ``project``; returns its request log."""
    log = project / f"{name}.log"
    write_settings(
        project, {"mcp_servers": {name: server_entry("tasker", "--log", str(log), *args)}}
    )
    return log


def test_mcp_call_follows_a_task_to_its_result(
    tmp_path: Path, path: str, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tasker(tmp_path, "--poll-ms", "300")
    code, out, err = codebot(
        capsys, "--cwd", str(tmp_path), "mcp", "call", "tasker", "slow_compute", "seconds=1.2"
    )
    assert (code, out) == (0, "computed in 1.2s\n"), err
    seen = requests(log)
    # One tools/call, answered with a task; then tasks/get until it completed.
    assert [r["method"] for r in seen].count("tools/call") == 1
    gets = [r for r in seen if r["method"] == "tasks/get"]
    assert len(gets) >= 3
    assert len({g["params"]["taskId"] for g in gets}) == 1
    gaps = [b["t"] - a["t"] for a, b in itertools.pairwise(gets)]
    assert min(gaps) >= 0.25, gaps  # pollIntervalMs is 300: never faster
    # The progress while it polls (stderr is not a terminal: a line per change).
    lines = [ln for ln in err.splitlines() if ln.startswith("tasker: task ")]
    assert "(slow_compute): working" in lines[0]
    assert any(ln.endswith(": step 2 of 4") for ln in lines)
    assert "(slow_compute): completed" in lines[-1]


def test_a_task_that_needs_input_is_answered_with_tasks_update(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tasker(tmp_path)
    argv = ("--cwd", str(tmp_path), "mcp", "call", "tasker", "confirm_delete")
    code, out, err = codebot(capsys, *argv, "path=a.txt", "--elicit", "defaults")
    assert (code, out) == (0, "deleted a.txt\n"), err
    assert "input_required, " in err and ": waiting for your answer" in err
    code, out, err = codebot(capsys, *argv, "path=b.txt")  # --elicit decline, the default
    assert (code, out) == (0, "kept b.txt\n"), err
    updates = [r["params"] for r in requests(log) if r["method"] == "tasks/update"]
    assert len(updates) == 2  # one answer each: a key is never answered twice
    [accepted], [declined] = (list(u["inputResponses"].values()) for u in updates)
    assert accepted == {"action": "accept", "content": {"confirm": True}}
    assert declined == {"action": "decline"}


def test_how_tasks_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tasker(tmp_path)
    argv = ("--cwd", str(tmp_path), "mcp", "call", "tasker")
    code, out, err = codebot(capsys, *argv, "failing_job")  # completed, isError
    assert code == 1 and "the job failed" in out + err
    code, out, err = codebot(capsys, *argv, "protocol_error_job")  # failed: its JSON-RPC error
    assert code == 4
    assert "rejected the call to 'protocol_error_job': the job's backend broke" in err
    assert "MCP error -32603" in err


def test_the_hot_path_hands_a_task_server_over_before_calling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``required_task`` fails without the extension; the hot path does not declare it, so it
    must give the call to the SDK path before sending it: one tools/call, and it works."""
    log = tasker(tmp_path)
    code, out, err = codebot(
        capsys, "--cwd", str(tmp_path), "mcp", "call", "tasker", "required_task"
    )
    assert (code, out) == (0, "ran as a task\n"), err
    assert methods(log).count("tools/call") == 1


def test_a_task_nobody_declared_is_an_error_not_a_second_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A server that hides the extension and answers a task anyway: the hot path (which hands
    only servers that advertise it to the SDK path) reports the breach; it never runs the
    tool a second time."""
    log = tasker(tmp_path, "--rude")
    code, _, err = codebot(
        capsys, "--cwd", str(tmp_path), "mcp", "call", "tasker", "slow_compute", "seconds=0.2"
    )
    assert code == 4
    assert "answered 'slow_compute' with a task, but its server/discover does not advertise" in err
    assert methods(log) == ["tools/call"]


def test_codebot_declares_tasks_on_modern_requests_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A handshake-era connection gets no task: the same tool runs synchronously."""
    log = tmp_path / "legacy.log"
    entry = server_entry("tasker", "--log", str(log), protocol="legacy")
    write_settings(tmp_path, {"mcp_servers": {"old": entry}})
    code, out, err = codebot(
        capsys, "--cwd", str(tmp_path), "mcp", "call", "old", "slow_compute", "seconds=0.2"
    )
    assert (code, out) == (0, "computed in 0.2s\n"), err
    assert methods(log) == ["tools/call"]


def _codebot_process(project: Path, *argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "codebot_mcp.cli", "--cwd", str(project), *argv],
        cwd=REPO_ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "CODEBOT_SDK_PATH": "1"},
    )


def test_ctrl_c_cancels_the_task(tmp_path: Path) -> None:
    log = tasker(tmp_path)
    marker = tmp_path / "marker"
    proc = _codebot_process(tmp_path, "mcp", "call", "tasker", "wait_forever", f"marker={marker}")
    try:
        wait_for(lambda: "tasks/get" in methods(log), "codebot polls the task")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert methods(log)[-1] == "tasks/cancel"
    task_id = requests(log)[-1]["params"]["taskId"]
    assert task_id == requests(log)[1]["params"]["taskId"]
    wait_for(marker.exists, "the server cancelled the work", 10)  # it ran until its server
    assert marker.read_text() == "cancelled"  # was stopped, or the cancel reached it first


def test_the_session_journal_keeps_tasks_until_they_end(tmp_path: Path) -> None:
    log = SessionLog(tmp_path)
    for n in (1, 2, 3):
        log.task_started(
            {"server": "s", "tool": "t", "arguments": {"n": n}, "task_id": f"id{n}", "started": 0}
        )
    log.task_ended("id2", "completed")
    log.task_ended("unknown", "cancelled")  # never started here: ignored
    assert [r["task_id"] for r in pending_tasks(log.path)] == ["id1", "id3"]
    first = json.loads(log.path.read_text().splitlines()[0])
    assert first["type"] == "session" and first["id"] == log.id  # a valid session file


def test_continue_picks_up_a_task_left_running(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    """chat -p calls a task tool and is terminated (SIGTERM: a closed terminal) while the task
    runs: the task is not cancelled, and `chat --continue` follows it to its end by its id,
    the model then seeing the call and its result."""
    log = tmp_path / "http-tasker.log"
    with run_http_server("--http", "--log", str(log), module="tasker") as url:
        write_settings(
            tmp_path,
            {"base_url": fake.base_url, "mcp_servers": {"jobs": {"type": "http", "url": url}}},
        )
        fake.queue(fo.tool_calls(("mcp__jobs__slow_compute", {"seconds": 4, "steps": 8})))
        first = _codebot_process(tmp_path, "chat", "-p", "compute it", "--yes")
        try:
            wait_for(lambda: "tasks/get" in methods(log), "the first run polls the task")
            first.send_signal(signal.SIGTERM)
            _, err = first.communicate(timeout=WAIT)
        finally:
            if first.poll() is None:
                first.kill()
                first.wait()
        assert first.returncode == 130, err
        assert "tasks/cancel" not in methods(log)  # terminated, not interrupted
        [call] = [r for r in requests(log) if r["method"] == "tools/call"]
        assert call["params"] == {"name": "slow_compute", "arguments": {"seconds": 4, "steps": 8}}
        task_id = next(r["params"]["taskId"] for r in requests(log) if r["method"] == "tasks/get")

        fake.queue(fo.text("It computed in 4 s."))
        code, out, err = codebot(
            capsys, "--cwd", str(tmp_path), "chat", "-p", "so?", "--continue", "--yes"
        )
        assert (code, out) == (0, "It computed in 4 s.\n"), err
        assert f"task {task_id[:8]} (mcp__jobs__slow_compute), started in an earlier run, " in err
    assert [r["method"] for r in requests(log)].count("tools/call") == 1  # never called again
    messages = fake.bodies[-1]["messages"]
    resumed = [m for m in messages if m.get("tool_calls")][-1]
    assert resumed["tool_calls"][0]["function"] == {
        "name": "mcp__jobs__slow_compute",
        "arguments": '{"seconds": 4, "steps": 8}',
    }
    result = next(m for m in messages if m.get("tool_call_id") == resumed["tool_calls"][0]["id"])
    assert result["content"].endswith("computed in 4s")
    assert f"became task {task_id} on server 'jobs'" in result["content"]
    assert messages[-1] == {"role": "user", "content": "so?"}
    # Nothing is pending any more: a second --continue resumes nothing.
    fake.queue(fo.text("nothing left"))
    code, _, err = codebot(capsys, "--cwd", str(tmp_path), "chat", "-p", "and?", "--continue")
    assert code == 0 and "started in an earlier run" not in err


SERVER_SCENARIOS = (
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-dispatch-and-envelope",
    "tasks-request-headers",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
)
"""The suite's server scenarios of the tasks extension, minus ``tasks-status-notifications``
(optional notifications: it makes no check, so it could only pass vacuously)."""


def test_the_task_server_we_test_against_passes_the_suites_task_scenarios(
    tmp_path: Path,
) -> None:
    """The pinned conformance suite has no client scenario for tasks; it has server ones. Our
    task server passing them (every check, none skipped) is what makes the tests above a
    measure of codebot against the spec, not against a double of our own making."""
    from tests.conformance.run import NODE, SUITE

    if not NODE.exists() or not SUITE.exists():
        pytest.fail(f"{SUITE} is missing: run `make install` (the pinned conformance suite)")

    def scenario_run(url: str, scenario: str) -> subprocess.CompletedProcess[str]:
        (tmp_path / scenario).mkdir()
        return subprocess.run(
            [str(NODE), str(SUITE), "server", "--url", url, "--scenario", scenario],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path / scenario,
        )

    with run_http_server("--http", module="tasker") as url:
        # Three at a time, as several clients of one server (each scenario is its own session):
        # one after another they spent ~30-40 s mostly waiting on the tasks' poll intervals.
        with ThreadPoolExecutor(max_workers=3) as pool:
            runs = list(pool.map(lambda scenario: scenario_run(url, scenario), SERVER_SCENARIOS))
    for scenario, done in zip(SERVER_SCENARIOS, runs, strict=True):
        summary = [ln for ln in done.stdout.splitlines() if ln.startswith("Passed: ")]
        assert summary, done.stdout + done.stderr
        passed, total = summary[-1].split()[1].rstrip(",").split("/")
        assert int(total) > 0 and passed == total, f"{scenario}: {done.stdout}"
        assert done.returncode == 0, f"{scenario}: {done.stdout}"
