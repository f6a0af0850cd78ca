"""Class 14: `mcp doctor` is linear in the number of entries (CPU time, not wall clock)."""

from __future__ import annotations

import json
import resource
import subprocess
from pathlib import Path

import pytest

from tests.fakes.procs import CODEBOT, codebot_env


def cpu_seconds(root: Path, count: int) -> float:
    project = root / f"p{count}"
    (project / ".codebot").mkdir(parents=True)
    servers = {f"s{i}": {"command": "true"} for i in range(count)}
    (project / ".codebot" / "settings.json").write_text(json.dumps({"mcp_servers": servers}))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [str(CODEBOT), "--cwd", str(project), "mcp", "doctor", "--format", "json"],
        capture_output=True,
        env=codebot_env(root / "home"),
        timeout=120,
        check=False,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.returncode == 1  # untrusted entries are errors; the run completes
    assert len(json.loads(done.stdout)["servers"]) == count
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


@pytest.mark.timeout(300)  # CPU time is what is measured; the wall clock waits on a busy machine
def test_doctor_cost_grows_linearly(tmp_path: Path) -> None:
    small = cpu_seconds(tmp_path, 300)
    large = cpu_seconds(tmp_path, 2400)
    # 8x the entries: linear work costs ~8x minus the fixed start-up; quadratic would be 64x.
    assert large < small * 16, f"300 entries: {small:.2f}s CPU, 2400: {large:.2f}s"
