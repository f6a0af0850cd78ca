"""Each run of a server logs to a file of its own, and its failure quotes only its own lines.

Two ``mcp list`` runs in two projects, at once, each with a server named ``s`` whose stderr
says which run it belongs to (``tests.servers.stderr_gate``): both lines are out before either
server dies, so a shared log file would hold only one of them.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from codebot_mcp.mcpbridge.transport.runlog import KEEP_LOGS
from tests.fakes.procs import CODEBOT, codebot_env, wait_until
from tests.helpers import server_entry, write_settings


def _start(root: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(CODEBOT), "mcp", "list", "--json"],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_concurrent_runs_quote_their_own_stderr(tmp_path: Path) -> None:
    env = codebot_env(tmp_path / "home", CODEBOT_TRUST_PROJECT="1")
    gate = tmp_path / "gate"
    tags = ("run-A-line", "run-B-line")
    runs = {}
    for tag in tags:
        entry = server_entry("stderr_gate", "--say", tag, "--gate", str(gate))
        write_settings(tmp_path / tag, {"mcp_servers": {"s": entry}})
        runs[tag] = _start(tmp_path / tag, env)
    try:
        ready = [Path(f"{gate}.{tag}.ready") for tag in tags]
        wait_until(lambda: all(p.exists() for p in ready), 30, "both servers to write stderr")
        gate.touch()
        outputs = {tag: run.communicate(timeout=60) for tag, run in runs.items()}
    finally:
        for run in runs.values():
            if run.poll() is None:
                run.kill()
                run.wait()
    logs = set()
    for tag, (out, err) in outputs.items():
        (other,) = set(tags) - {tag}
        assert runs[tag].returncode == 4, err
        failure = json.loads(out)["servers"][0]["failure"]
        assert tag in failure["stderr_tail"] and other not in failure["stderr_tail"], failure
        log = Path(failure["log_file"])
        assert log.read_text().splitlines() == [tag], (tag, log)
        assert log.stat().st_mode & 0o777 == 0o600
        logs.add(log)
    assert len(logs) == 2


def test_old_logs_are_pruned(tmp_path: Path) -> None:
    """A new run prunes the server's logs to the newest KEEP_LOGS, sparing a running writer's.
    The logs before it: a real run's (its codebot gone), planted ones of a dead writer, and the
    oldest of all, planted with a live writer's pid (two processes, not KEEP_LOGS + 3)."""
    env = codebot_env(tmp_path / "home", CODEBOT_TRUST_PROJECT="1")
    write_settings(tmp_path, {"mcp_servers": {"s": server_entry("crash_on_start")}})

    def mcp_list() -> Path:
        done = subprocess.run(
            [str(CODEBOT), "mcp", "list", "--json"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 4, done.stderr
        return Path(json.loads(done.stdout)["servers"][0]["failure"]["log_file"])

    directory = mcp_list().parent
    now = time.time()
    first = list(directory.glob("*.log"))  # the real run's (one per launch it made)
    for path in first:
        os.utime(path, (now - 1000, now - 1000))
    gone = subprocess.Popen(["true"])  # a writer that has exited
    gone.wait()
    planted = []
    for i in range(KEEP_LOGS):
        path = directory / f"20200101T0000{i:02d}Z-{gone.pid}-{i}.log"
        path.write_text("old\n")
        os.utime(path, (now - 900 + i, now - 900 + i))
        planted.append(path)
    running = directory / f"20190101T000000Z-{os.getpid()}-1.log"  # its writer runs: spared
    running.write_text("still being written\n")
    os.utime(running, (now - 2000, now - 2000))

    latest = mcp_list()
    assert "database connection refused" in latest.read_text()
    kept = set(directory.glob("*.log"))
    assert running in kept and latest in kept
    assert not kept & set(first), "the real run's logs are the oldest of the dead writers'"
    assert len(kept) == KEEP_LOGS + 1, sorted(p.name for p in kept)
    survivors = [p for p in planted if p in kept]
    assert survivors == planted[len(planted) - len(survivors) :], "the newest planted stay"
