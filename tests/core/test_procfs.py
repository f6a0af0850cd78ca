"""core.proc.procfs: the one /proc reader (issue 20), against real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from codebot_mcp.core.proc import procfs


def test_stat_of_a_child_with_a_hostile_name(tmp_path: Path) -> None:
    """The command name may hold spaces and ')': fields are read after the last one."""
    script = tmp_path / "a) b (c"
    script.write_text("import time\ntime.sleep(30)\n")
    child = subprocess.Popen([sys.executable, str(script)], process_group=0)
    try:
        stat = procfs.read_stat(child.pid)
        assert stat is not None and stat.live
        assert stat.ppid == os.getpid() and stat.pgid == child.pid
        assert procfs.start_ticks(child.pid) == stat.start_ticks > 0
        assert child.pid in procfs.children(os.getpid())
        assert child.pid in procfs.pids()
    finally:
        child.kill()
    deadline = time.monotonic() + 10
    while (s := procfs.read_stat(child.pid)) is not None and s.live:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    # a zombie until reaped: read, but not live, and no start ticks
    zombie = procfs.read_stat(child.pid)
    assert zombie is not None and zombie.state == "Z" and not zombie.live
    assert procfs.start_ticks(child.pid) is None
    child.wait()
    assert procfs.read_stat(child.pid) is None


def test_the_reaper_script_loads_the_same_reader_by_path() -> None:
    """The reaper runs as a bare script (-I -S: no site, no package) and loads procfs from
    beside the package; with its pipe closed at once it exits cleanly."""
    from codebot_mcp.mcpbridge.transport import reaper

    out = subprocess.run(
        [sys.executable, "-I", "-S", reaper.__file__, "1", "1"],
        input=b"",
        capture_output=True,
        timeout=30,
    )
    assert (out.returncode, out.stderr) == (0, b"")
    assert reaper.procfs.__name__ == "codebot_mcp.core.proc.procfs"  # inside: the package's
