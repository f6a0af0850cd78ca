"""``glob`` and ``grep`` cannot pin the CPU, ignore SIGTERM or hold unbounded output.

- glob patterns (the model's, and a repository's ``.gitignore`` lines) are matched in linear
  time: ``*a*a*…*b`` against a long name of ``a``\\ s answers at once;
- the Python search of ``grep`` (no ripgrep) runs in a child that is stopped at its timeout,
  or when codebot is terminated: ``(a+)+$`` costs seconds, not hours;
- ripgrep's output is read as it comes and the search stopped at the output cap.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from codebot_mcp.core.tools.builtin import grep as grep_module
from codebot_mcp.core.tools.builtin.glob import GlobTool
from codebot_mcp.core.tools.builtin.grep import GrepTool
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.procs import CODEBOT, codebot_env
from tests.helpers import children_of

HOSTILE_GLOB = "*a" * 30 + "b"
HOSTILE_REGEX = "(a+)+$"


def hostile_tree(root: Path) -> None:
    (root / "dir").mkdir(parents=True, exist_ok=True)
    (root / ("a" * 200)).write_text("x")
    (root / "dir" / ("a" * 200 + ".txt")).write_text("a" * 60 + "!\n")


def is_pygrep(pid: int) -> bool:
    """``pid`` is a live Python search (a zombie's cmdline is empty)."""
    try:
        return b"codebot_mcp.core.tools.builtin.pygrep" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def pygrep_children(under: int) -> list[int]:
    """The Python searches among the descendants of ``under``. Scoped: tests beside this one,
    in other workers, run Python searches of their own."""
    return [pid for pid in children_of(under) if is_pygrep(pid)]


@pytest.mark.anyio
async def test_a_backtracking_glob_answers_at_once(tmp_path: Path) -> None:
    hostile_tree(tmp_path)
    tool = GlobTool(tmp_path)
    began = time.monotonic()
    with anyio.fail_after(10):
        result = await tool.execute({"pattern": HOSTILE_GLOB})
        nested = await tool.execute({"pattern": "**/" + HOSTILE_GLOB + ".txt"})
        braces = await tool.execute({"pattern": "{" + HOSTILE_GLOB + ",x}"})
    assert time.monotonic() - began < 5  # backtracking would take hours; a loaded machine, 5 s
    assert "No files match" in result.text and "No files match" in nested.text
    assert "No files match" in braces.text


@pytest.mark.anyio
async def test_a_backtracking_gitignore_line_cannot_stall_a_walk(tmp_path: Path) -> None:
    hostile_tree(tmp_path)
    (tmp_path / ".gitignore").write_text(HOSTILE_GLOB + "\n" + "dir/" + HOSTILE_GLOB + "\n")
    tool = GlobTool(tmp_path)
    with anyio.fail_after(10):
        result = await tool.execute({"pattern": "**/*"})
    assert "a" * 200 in result.text  # not ignored: the line does not match, and says so fast


@pytest.mark.anyio
async def test_a_backtracking_glob_filter_of_grep_answers_at_once(tmp_path: Path) -> None:
    hostile_tree(tmp_path)
    with anyio.fail_after(20):
        result = await GrepTool(tmp_path).execute({"pattern": "zzz", "glob": HOSTILE_GLOB})
    assert not result.is_error, result.text


@pytest.mark.anyio
async def test_the_python_search_is_stopped_at_its_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hostile_tree(tmp_path)
    monkeypatch.setattr(grep_module, "rg_path", lambda: None)  # the Python search
    monkeypatch.setattr(grep_module, "SEARCH_TIMEOUT_SECONDS", 2.0)
    began = time.monotonic()
    with anyio.fail_after(20):
        result = await GrepTool(tmp_path).execute({"pattern": HOSTILE_REGEX})
    assert result.is_error and "took longer than 2 s" in result.text
    assert time.monotonic() - began < 10
    assert pygrep_children(os.getpid()) == []  # killed and reaped, not left to run


def test_sigterm_stops_codebot_during_a_runaway_python_search(tmp_path: Path) -> None:
    hostile_tree(tmp_path)
    bin_dir = tmp_path / "bin"  # a PATH without ripgrep: the Python search runs
    bin_dir.mkdir()
    with FakeOpenAI() as fake:
        fake.queue(fo.tool_calls(("grep", {"pattern": HOSTILE_REGEX})), fo.text("done"))
        env = codebot_env(tmp_path / "home", OPENAI_API_KEY="sk-test-000", PATH=str(bin_dir))
        child = subprocess.Popen(
            [str(CODEBOT), "--cwd", str(tmp_path), "--base-url", fake.base_url,
             "chat", "-p", "search", "--yes"],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 30
            while not pygrep_children(child.pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            searches = pygrep_children(child.pid)
            assert searches, "the Python search never started"
            time.sleep(0.5)  # deep in the backtracking
            child.send_signal(signal.SIGTERM)
            began = time.monotonic()
            child.wait(timeout=15)
            took = time.monotonic() - began
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
            child.stdout.close()  # type: ignore[union-attr]
            child.stderr.close()  # type: ignore[union-attr]
    assert took < 5, f"SIGTERM took {took:.1f}s"
    time.sleep(0.5)
    assert [pid for pid in searches if is_pygrep(pid)] == []


@pytest.mark.skipif(grep_module.rg_path() is None, reason="ripgrep is not installed")
def test_ripgrep_output_is_streamed_and_cut_not_held(tmp_path: Path) -> None:
    """5 million matching lines: ripgrep's --json output would be about 800 MB."""
    with (tmp_path / "many.txt").open("w") as handle:
        for _ in range(50):
            handle.write("a\n" * 100_000)
    probe = (
        "import json, sys, time\n"
        "from pathlib import Path\n"
        "import anyio\n"
        "from codebot_mcp.core.tools.builtin.grep import Query, search_lines\n"
        "began = time.monotonic()\n"
        f"query = Query('a', Path({str(tmp_path)!r}), None, 0, False)\n"
        "lines = anyio.run(lambda: search_lines(query, use_rg=True))\n"
        "print(json.dumps({'lines': len(lines), 'took': time.monotonic() - began,\n"
        "  'rss': next(int(l.split()[1]) * 1024 for l in open('/proc/self/status')\n"
        "              if l.startswith('VmHWM:'))}))\n"
    )  # VmHWM, this program's own peak (ru_maxrss would carry the test worker's: PEAK)
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    facts = json.loads(done.stdout)
    assert facts["lines"] == grep_module.MAX_LINES + 1
    assert facts["rss"] < 200 * 2**20, f"peak {facts['rss'] / 2**20:.0f} MB"


def test_no_search_child_is_left_behind() -> None:
    """Nothing the in-process searches of this worker started is still running."""
    assert pygrep_children(os.getpid()) == []
