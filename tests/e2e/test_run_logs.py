"""Each run of a server logs to a file of its own, and its failure quotes only its own lines.

Two ``mcp list`` runs in two projects, at once, each with a server named ``s`` whose stderr
says which run it belongs to (``tests.servers.stderr_gate``): both lines are out before either
server dies, so a shared log file would hold only one of them.
"""

from __future__ import annotations

import json
import subprocess
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
    env = codebot_env(tmp_path / "home", CODEBOT_TRUST_PROJECT="1")
    write_settings(tmp_path, {"mcp_servers": {"s": server_entry("crash_on_start")}})
    for _ in range(KEEP_LOGS + 3):
        done = subprocess.run(
            [str(CODEBOT), "mcp", "list", "--json"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 4, done.stderr
    failure = json.loads(done.stdout)["servers"][0]["failure"]
    latest = Path(failure["log_file"])
    assert "database connection refused" in latest.read_text()
    kept = list(latest.parent.glob("*.log"))
    assert latest in kept and len(kept) <= KEEP_LOGS, kept
