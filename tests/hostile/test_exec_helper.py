"""The exec helper every child starts through (``core/proc/exec_helper.c``): real runs of it.

Parent-death and the reaper's announcement used to be ``preexec_fn`` (Python between fork and
exec of a threaded process); the helper does them now. ``tests/hostile/test_signals.py`` and
``tests/e2e/test_reaper.py`` check the effects end to end; these check the helper itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from codebot_mcp.core.proc import helper, spawn
from codebot_mcp.core.proc.spawn import Announcement, Confinement, ConfinementError

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")


def located() -> str:
    path = helper.locate()
    assert path is not None, helper.problem()
    return str(path)


def test_the_command_line_it_gets() -> None:
    argv = spawn.helper_argv(
        ["bash", "-c", "true"],
        announce=Announcement(7, 2.0, 0.5),
        confine=Confinement(("/p", "/t"), ("/p/.git/hooks",), network=False),
        helper_path="/h",
    )
    assert argv == [
        "/h",
        *("--parent", str(os.getpid())),
        *("--announce", "7:2:0.5"),
        *("--sandbox", "--no-network"),
        *("--write", "/p", "--write", "/t", "--protect", "/p/.git/hooks"),
        *("--", "bash", "-c", "true"),
    ]
    plain = spawn.helper_argv(["x"], die_with_parent=False, helper_path="/h")
    assert plain == ["/h", "--", "x"]


def test_it_execs_the_command_in_place_and_reports_what_it_cannot_run() -> None:
    done = subprocess.run([located(), "--", "sh", "-c", "echo $$"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip().isdigit()
    missing = subprocess.run([located(), "--", "no-such-program-x"], capture_output=True, text=True)
    assert missing.returncode == 127 and "cannot run no-such-program-x" in missing.stderr
    bad = subprocess.run([located(), "--bogus", "--", "true"], capture_output=True, text=True)
    assert bad.returncode == 125 and "unknown" in bad.stderr


def test_a_parent_already_gone_means_nothing_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    # The "parent" named is not our pid: as if codebot died before the signal was set.
    done = subprocess.run(
        [located(), "--parent", "1", "--", "touch", str(marker)], capture_output=True
    )
    assert done.returncode == 125 and not marker.exists()


def test_the_announcement_names_the_child_before_it_execs() -> None:
    read, write = os.pipe()
    try:
        child = subprocess.Popen(
            [located(), "--announce", f"{write}:2:0.5", "--", "sleep", "5"], pass_fds=(write,)
        )
        os.close(write)
        line = os.read(read, 4096).decode()
        rest = os.read(read, 4096)  # the helper closed its copy: EOF before the command ends
        announced = json.loads(line)
        stat = Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()
        assert announced == {"pid": child.pid, "ticks": int(stat[19]), "grace": 2, "term": 0.5}
        assert rest == b"" and child.poll() is None
        child.kill()
        child.wait()
    finally:
        os.close(read)


def test_a_wheel_install_builds_it_on_first_use(tmp_path: Path) -> None:
    target = tmp_path / "cache" / "codebot-exec-test"
    helper.build(target)
    probe = subprocess.run([str(target), "--probe"], capture_output=True, text=True, check=True)
    facts = json.loads(probe.stdout)
    assert {"landlock_abi", "userns", "netns", "seccomp"} <= set(facts)
    assert not [p for p in target.parent.iterdir() if p.name.startswith(".codebot-exec-")]


def test_without_make_install_the_first_use_builds_it_into_the_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CODEBOT_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(helper, "INSTALLED", tmp_path / "not-installed")
    for name in ("_located", "_problem", "_probe"):
        monkeypatch.setattr(helper, name, None)
    found = helper.locate()
    assert found is not None and found.parent == tmp_path / "home" / "cache", helper.problem()
    assert "landlock_abi" in helper.probe()
    done = subprocess.run([str(found), "--", "true"], check=False)
    assert done.returncode == 0


def test_the_cached_build_is_named_by_the_source(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEBOT_HOME", "/somewhere")
    path = helper.cached_path()
    assert path.parent == Path("/somewhere/cache") and path.name.startswith("codebot-exec-")


@pytest.mark.anyio
async def test_without_a_helper_a_confined_start_is_refused_never_unconfined(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(helper, "_located", None)
    monkeypatch.setattr(helper, "_problem", "the exec helper is not built (test)")
    marker = tmp_path / "ran"
    with pytest.raises(ConfinementError, match="not built"):
        await spawn.open_process(["touch", str(marker)], confine=Confinement((str(tmp_path),)))
    assert not marker.exists()
    # An unconfined child still starts (without the parent-death signal).
    process = await spawn.open_process(["touch", str(marker)])
    with anyio.fail_after(10):
        await process.wait()
    assert marker.exists()
