"""Background jobs (issue 32 item 5) at the tool level: ``bash`` with ``run_in_background``,
``bash_output`` and ``bash_kill`` over a real :class:`JobTable`, with real shells (and the real
sandbox where the machine has one). The chat around them: ``tests/cli/test_jobs_chat.py``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import anyio
import pytest

from codebot_mcp.core.jobs.jobtable import OUTPUT_BYTES, READ_BYTES, JobTable, Ring
from codebot_mcp.core.jobs.jobtools import BashKillTool, BashOutputTool
from codebot_mcp.core.sandbox.confinement import Sandbox, support
from codebot_mcp.core.tools.builtin.bash import BashTool
from tests.fakes.procs import alive

pytestmark = pytest.mark.anyio

NO_SANDBOX = not sys.platform.startswith("linux") or bool(support().missing(network=False))


def job_id(text: str) -> str:
    found = re.search(r"Started background job (\d+)", text)
    assert found, text
    return found.group(1)


def _line(path: Path) -> str:
    return path.read_text() if path.exists() else ""


async def wait_file(path: Path, seconds: float = 20) -> str:
    """The file's text once its line is complete (the job writes it)."""
    with anyio.fail_after(seconds):
        while not _line(path).endswith("\n"):  # noqa: ASYNC110 - another process writes it
            await anyio.sleep(0.02)
    return _line(path)


async def gone(pids: list[int], seconds: float = 10) -> None:
    """Every one of ``pids`` has ended (a killed process still needs the CPU to exit: on a
    loaded machine that is not at once, so wait, bounded far above the 2 s grace)."""
    with anyio.fail_after(seconds):
        while any(alive(p) for p in pids):  # noqa: ASYNC110 - other processes end
            await anyio.sleep(0.02)


def pids_in(path: Path) -> list[int]:
    return [int(p) for p in path.read_text().split()]


async def test_a_job_runs_beside_the_calls_and_its_output_is_read_in_parts(tmp_path: Path) -> None:
    async with JobTable() as jobs:
        bash, output = BashTool(tmp_path, jobs=jobs), BashOutputTool(jobs)
        assert "run_in_background" in bash.schema()["properties"]
        started = await bash.execute(
            {
                "command": "echo first; while [ ! -e go ]; do sleep 0.02; done; echo second; "
                "echo noise; exit 3",
                "run_in_background": True,
            }
        )
        assert not started.is_error, started.text
        ident = job_id(started.text)
        assert "first" in started.text  # what it printed in the first moment
        nothing = await output.execute({"job_id": ident})
        assert "[no new output]" in nothing.text and "is running" in nothing.text
        (tmp_path / "go").touch()
        read = await output.execute({"job_id": ident, "wait": 20, "filter": "sec"})
        # `wait` returns on the first new output: wait for the end before the last look
        job = jobs.find(ident)
        assert job is not None
        with anyio.fail_after(20):
            await job.finished.wait()
        rest = await output.execute({"job_id": ident})
        seen = read.text + rest.text
        assert "second" in seen and "first" not in seen
        assert "noise" not in read.text  # filtered out (consumed, not kept for later)
        assert "exited with code 3" in rest.text, rest.text
        assert rest.data["job"]["state"] == "exited"
        missing = await output.execute({"job_id": "99"})
        assert missing.is_error and "no background job '99'" in missing.text


async def test_bash_kill_ends_the_whole_tree_even_what_left_the_group(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    async with JobTable() as jobs:
        bash, kill = BashTool(tmp_path, jobs=jobs), BashKillTool(jobs)
        started = await bash.execute(
            {
                # TERM ignored by all three (inherited): only the SIGKILL that follows ends them
                "command": "trap '' TERM; setsid sleep 301 & a=$!; sleep 302 & b=$!; "
                f"echo $$ $a $b > {pids}; wait",
                "run_in_background": True,
            }
        )
        ident = job_id(started.text)
        await wait_file(pids)
        tree = pids_in(pids)
        assert all(alive(p) for p in tree)
        result = await kill.execute({"job_id": ident})
        assert not result.is_error and f"Killed background job {ident}" in result.text
        assert "was killed" in result.text
        await gone(tree)  # SIGTERM ignored by all: only the SIGKILL ends them
        again = await kill.execute({"job_id": ident})
        assert "had ended" in again.text


async def test_leaving_the_table_kills_every_job(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    async with JobTable() as jobs:
        bash = BashTool(tmp_path, jobs=jobs)
        await bash.execute(
            {"command": f"sleep 303 & echo $$ $! > {pids}; wait", "run_in_background": True}
        )
        await wait_file(pids)
        tree = pids_in(pids)
        assert all(alive(p) for p in tree)
    await gone(tree)
    assert not jobs.open
    refused = await bash.execute({"command": "true", "run_in_background": True})
    assert refused.is_error and "only in a chat session" in refused.text


async def test_output_is_bounded_with_a_marker(tmp_path: Path) -> None:
    async with JobTable() as jobs:
        bash, output = BashTool(tmp_path, jobs=jobs), BashOutputTool(jobs)
        started = await bash.execute(
            {
                "command": "sleep 0.2; head -c 3000000 /dev/zero | tr '\\0' a; echo; echo END",
                "run_in_background": True,
            }
        )
        ident = job_id(started.text)
        job = jobs.find(ident)
        assert job is not None
        with anyio.fail_after(30):
            await job.finished.wait()
        assert len(job.output.data) == OUTPUT_BYTES  # the last megabyte, no more
        read = await output.execute({"job_id": ident})
        assert "bytes of older output dropped" in read.text
        assert "bytes skipped" in read.text
        assert read.text.count("a") <= READ_BYTES
        assert "END" in read.text and "exited with code 0" in read.text


def test_the_ring_keeps_the_newest_bytes_and_counts_what_it_dropped() -> None:
    ring = Ring(10)
    ring.add(b"0123456789")
    ring.add(b"abcde")
    assert ring.total == 15
    data, dropped = ring.since(2)
    assert data == b"56789abcde" and dropped == 3
    assert ring.since(15) == (b"", 0)


async def test_a_limit_on_jobs_running_at_once(tmp_path: Path) -> None:
    async with JobTable(max_running=2) as jobs:
        bash = BashTool(tmp_path, jobs=jobs)
        for _ in range(2):
            ok = await bash.execute({"command": "sleep 304", "run_in_background": True})
            assert not ok.is_error
        refused = await bash.execute({"command": "touch nope", "run_in_background": True})
        assert refused.is_error and "2 background jobs are running already" in refused.text
        assert "bash_kill" in refused.text
        assert not (tmp_path / "nope").exists()


async def test_the_approval_note_says_background(tmp_path: Path) -> None:
    jobs = JobTable()
    bash = BashTool(tmp_path, jobs=jobs)
    assert "BACKGROUND JOB" in bash.sandbox_note({"command": "x", "run_in_background": True})
    assert "BACKGROUND" not in bash.sandbox_note({"command": "x"})
    # without a table (mcp serve) the argument does not exist
    assert "run_in_background" not in BashTool(tmp_path).schema()["properties"]


@pytest.mark.skipif(NO_SANDBOX, reason="the sandbox is unavailable here")
async def test_the_sandbox_confines_a_background_job(tmp_path: Path) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    sandbox = Sandbox("workspace-write", workspace=project)
    try:
        async with JobTable() as jobs:
            bash, output = BashTool(project, sandbox=sandbox, jobs=jobs), BashOutputTool(jobs)
            started = await bash.execute(
                {
                    "command": f"echo in > inside.txt; echo out > {outside}/escape.txt; "
                    "mkdir .codebot; echo tried; sleep 300",
                    "run_in_background": True,
                }
            )
            assert started.data["sandbox"] == "workspace-write"
            ident = job_id(started.text)
            job = jobs.find(ident)
            assert job is not None
            with anyio.fail_after(20):
                while b"tried" not in job.output.data:  # noqa: ASYNC110 - the job prints it
                    await anyio.sleep(0.02)
            # (.codebot exists now, before the next call's watch begins: a confined call or
            # job moves away what appeared while it ran, whoever made it)
            assert (project / ".codebot").is_dir()
            assert (project / "inside.txt").read_text() == "in\n"
            assert not (outside / "escape.txt").exists()
            # A job the sandbox made fail gets bash's note on how to run it outside.
            failed = await bash.execute(
                {"command": f"echo out > {outside}/again.txt", "run_in_background": True}
            )
            failing = jobs.find(job_id(failed.text))
            assert failing is not None
            with anyio.fail_after(20):
                await failing.finished.wait()
            told = failed.text + (await output.execute({"job_id": failing.id})).text
            assert "[sandbox: " in told and '"sandbox": false' in told, told
            assert not (outside / "again.txt").exists()
            # A watched name it made leaves the project at the turn's end, and is told.
            assert (project / ".codebot").is_dir()
            jobs.turn_ended()
            assert not (project / ".codebot").exists()
            read = await output.execute({"job_id": ident})
            assert ".codebot" in read.text and "moved to" in read.text, read.text
    finally:
        sandbox.close()


async def test_jobs_and_their_tools_are_offered_by_the_session(tmp_path: Path) -> None:
    """The job tools reach the session through the kernel's registry, over its job table."""
    from codebot_mcp.core.agent.session import Session
    from codebot_mcp.core.tools.featuretools import Place, ToolContext, feature_tools

    jobs = JobTable()
    made = feature_tools(ToolContext(tmp_path, provided=(jobs,)), Place.AFTER_SESSION)
    session = Session([BashTool(tmp_path, jobs=jobs)], cwd=tmp_path, jobs=jobs, feature_tools=made)
    names = [t.name for t in session.all_tools]
    assert names[-2:] == ["bash_output", "bash_kill"]
    session.set_plan_mode(True)
    assert {"bash_output", "bash_kill"} <= {t.name for t in session.active_tools}
    assert feature_tools(ToolContext(tmp_path), Place.AFTER_SESSION) == []  # no jobs: no tools
    assert "bash_output" not in [t.name for t in Session([], cwd=tmp_path).all_tools]


def test_hooks_know_the_job_tools_by_their_claude_code_names(tmp_path: Path) -> None:
    from codebot_mcp.core.config.hookcontract import CODEBOT_NAMES, claude_input, claude_name

    assert claude_name("bash_output") == "BashOutput" and claude_name("bash_kill") == "KillShell"
    assert CODEBOT_NAMES["KillBash"] == "bash_kill"  # the older name
    assert claude_input("bash_output", {"job_id": "1"}, tmp_path) == {"bash_id": "1"}
    assert claude_input("bash_kill", {"job_id": "1"}, tmp_path) == {"shell_id": "1"}
    background = claude_input("bash", {"command": "x", "run_in_background": True}, tmp_path)
    assert background["run_in_background"] is True
