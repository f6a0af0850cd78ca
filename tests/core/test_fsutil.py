"""core.fsutil.atomic_write: the one way codebot writes a file (issue 20, 24)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from codebot_mcp.core.fsutil import SymlinkRefusedError, atomic_write


def test_a_new_file_gets_the_umask_mode_and_an_existing_one_keeps_its_own(tmp_path: Path) -> None:
    new = tmp_path / "new.txt"
    assert atomic_write(new, "one") is False
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(new.stat().st_mode) == 0o666 & ~mask
    new.chmod(0o640)
    assert atomic_write(new, b"two") is True
    assert new.read_bytes() == b"two"
    assert stat.S_IMODE(new.stat().st_mode) == 0o640
    private = tmp_path / "private.json"
    atomic_write(private, "{}", mode=0o600)
    assert stat.S_IMODE(private.stat().st_mode) == 0o600


def test_a_symlink_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("mine")
    link = tmp_path / "settings.json"
    link.symlink_to(victim)
    with pytest.raises(SymlinkRefusedError):
        atomic_write(link, "attacker's")
    assert victim.read_text() == "mine"
    assert link.is_symlink()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_follow_symlinks_writes_the_target(tmp_path: Path) -> None:
    target = tmp_path / "real"
    target.write_text("old")
    link = tmp_path / "link"
    link.symlink_to(target)
    atomic_write(link, "new", follow_symlinks=True)
    assert link.is_symlink() and target.read_text() == "new"


def test_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        atomic_write(fifo, "x")


WRITER = """
import json, sys
from pathlib import Path
from codebot_mcp.core.fsutil import atomic_write
path, who = Path(sys.argv[1]), sys.argv[2]
for i in range(300):
    atomic_write(path, json.dumps({"who": who, "i": i, "pad": who * 2000}))
"""


def test_two_processes_writing_one_file_never_leave_a_mix(tmp_path: Path) -> None:
    """Each had its own temporary name: every state of the file is one writer's whole JSON."""
    path = tmp_path / "shared.json"
    atomic_write(path, json.dumps({"who": "start", "i": -1, "pad": ""}))
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), who]) for who in ("a", "b")]
    seen = set()
    while any(p.poll() is None for p in procs):
        document = json.loads(path.read_text())
        assert document["pad"] == document["who"] * 2000 or document["who"] == "start"
        seen.add(document["who"])
    assert [p.wait() for p in procs] == [0, 0]
    final = json.loads(path.read_text())
    assert final["i"] == 299
    assert [p.name for p in tmp_path.iterdir()] == ["shared.json"]
