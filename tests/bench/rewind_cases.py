"""Issue 21's measurements of checkpoints and long turns (targets 16 and 17).

16: the checkpoint before a turn's first change, on a 5,000-file project with 3 files changed
    per turn, through the real ``Checkpoints`` (the same call the agent makes before a ``bash``
    call). The first (a cold store) is reported apart; the snapshot after each turn runs off
    the critical path (in a thread, while the answer is read) and is reported as information.
    For comparison, the same turns through a second git directory (``GIT_DIR``/
    ``GIT_WORK_TREE``: ``add -A`` then ``write-tree``), the design the store was chosen over.
17: one prompt of 60 steps reading 40 files of 20 kB each, against the loopback model with a
    16,000-token window that refuses longer requests: the largest request, by the server's
    own (harsher) count, and whether every step was answered.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from codebot_mcp.core.agent.context import ContextBudget
from codebot_mcp.core.agent.loop import Agent
from codebot_mcp.core.agent.permissions import PermissionGate
from codebot_mcp.core.agent.session import Session
from codebot_mcp.core.checkpoints.turns import Checkpoints
from codebot_mcp.core.model.client import ChatModel, create_client
from codebot_mcp.core.model.config import ModelConfig
from codebot_mcp.core.model.stream import ToolCall
from codebot_mcp.core.tools.builtin import builtin_tools
from tests.bench.harness import Row
from tests.fakes import openai_turns as fo
from tests.fakes.openai_handler import count_tokens
from tests.fakes.openai_server import FakeOpenAI

Log = Callable[[str], None]

FILES = 5_000
CHANGED = 3
TURNS = 15


def make_project(root: Path) -> list[Path]:
    """5,000 source files of 2 to 8 kB in 50 packages, a .gitignore, an ignored
    node_modules of 2,000 files; mtimes an hour old, as in a project that existed before."""
    root.mkdir(parents=True)
    (root / ".gitignore").write_text("node_modules/\n*.log\nbuild/\n")
    files: list[Path] = []
    for i in range(FILES):
        directory = root / f"pkg{i // 1000}" / f"mod{i // 100}"
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"file{i}.py"
        path.write_text(f"value_{i} = {i}  # a line of code\n" * (60 + (i * 7) % 200))
        files.append(path)
    deps = root / "node_modules" / "dep"
    deps.mkdir(parents=True)
    for i in range(2000):
        (deps / f"f{i}.js").write_text("module.exports = 1;\n")
    old = time.time() - 3600
    for path in root.rglob("*"):
        os.utime(path, (old, old))
    return files


async def _turns(root: Path, files: list[Path], turns: int) -> dict[str, Any]:
    checkpoints = Checkpoints(root, "bench")
    tools = {t.name: t for t in builtin_tools(root)}
    bash = [ToolCall("c1", "bash", '{"command": "true"}')]
    before: list[float] = []
    cpu: list[float] = []
    after: list[float] = []
    for turn in range(turns + 1):
        await checkpoints.begin(f"turn {turn}")
        began, used = time.perf_counter(), time.process_time()
        await checkpoints.before_calls(bash, tools.get)
        before.append((time.perf_counter() - began) * 1000)
        cpu.append((time.process_time() - used) * 1000)
        for k in range(CHANGED):  # what the turn's bash call changed
            path = files[(turn * 97 + k * 1009) % len(files)]
            path.write_text(path.read_text() + f"# turn {turn}\n")
        began = time.perf_counter()
        checkpoints.end()
        await checkpoints.settle()
        after.append((time.perf_counter() - began) * 1000)
    store = checkpoints.store.pack_path.stat().st_size
    return {
        "first": before[0],
        "before": before[1:],
        "cpu": cpu[1:],
        "after": after[1:],
        "pack": store,
    }


def _git_turns(root: Path, files: list[Path], turns: int) -> dict[str, Any] | None:
    git = shutil.which("git")
    if git is None:
        return None
    shadow = root.parent / "shadow.git"
    env = {
        **os.environ,
        "GIT_DIR": str(shadow),
        "GIT_WORK_TREE": str(root),
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    subprocess.run([git, "init", "-q"], env=env, check=True)

    def snapshot() -> float:
        began = time.perf_counter()
        subprocess.run([git, "add", "-A", "."], env=env, check=True, cwd=root)
        subprocess.run([git, "write-tree"], env=env, check=True, cwd=root, capture_output=True)
        return (time.perf_counter() - began) * 1000

    first = snapshot()
    later = []
    for turn in range(turns):
        for k in range(CHANGED):
            path = files[(turn * 89 + k * 1013) % len(files)]
            path.write_text(path.read_text() + f"# git turn {turn}\n")
        later.append(snapshot())
    return {"first": first, "later": later}


def target_16(ws: Any, n: int, log: Log) -> list[Row]:
    root = Path(ws.root) / "checkpoints" / "project"
    files = make_project(root)
    home = os.environ.get("CODEBOT_HOME")
    os.environ["CODEBOT_HOME"] = str(ws.home)  # the store goes to the workspace
    try:
        done = anyio.run(_turns, root, files, max(TURNS, n * 2))
    finally:
        if home is None:
            os.environ.pop("CODEBOT_HOME", None)
        else:
            os.environ["CODEBOT_HOME"] = home
    git = _git_turns(root, files, max(5, n))
    before, after = statistics.median(done["before"]), statistics.median(done["after"])
    log(f"target 16: first {done['first']:.0f} ms, before {before:.1f} ms, after {after:.1f} ms")
    rows = [
        Row(
            "16",
            f"checkpoint before a turn's first change: {FILES:,} files, {CHANGED} changed",
            "ms",
            before,
            limit=100.0,
            absolute=True,
            codebot_samples=done["before"],
            note=f"median of {len(done['before'])} turns after the first (p90 "
            f"{sorted(done['before'])[int(len(done['before']) * 0.9)]:.0f} ms; CPU "
            f"{statistics.median(done['cpu']):.0f} ms: the rest is waiting for a core); "
            ".gitignore'd node_modules of 2,000 files not entered",
        ),
        Row(
            "16",
            "the first checkpoint (a cold store: every file read, compressed, packed)",
            "ms",
            done["first"],
            note=f"pack after all turns: {done['pack'] / 1e6:.1f} MB",
        ),
        Row(
            "16",
            "the snapshot after each turn (in a thread, off the critical path)",
            "ms",
            after,
            codebot_samples=done["after"],
        ),
    ]
    if git is not None:
        rows.append(
            Row(
                "16",
                "for comparison: a shadow git dir (add -A, write-tree), later turns",
                "ms",
                statistics.median(git["later"]),
                codebot_samples=git["later"],
                note=f"its first snapshot: {git['first']:.0f} ms (a loose object per file)",
            )
        )
    return rows


# -- 17: one 60-step prompt over 40 files of 20 kB, in a 16,000-token window -----------------

WINDOW = 16_000
STEPS = 60


def _stepper(names: list[str]) -> Callable[[dict[str, Any]], fo.Turn]:
    state = {"step": 0}

    def respond(body: dict[str, Any]) -> fo.Turn:
        if body["messages"][0]["content"].startswith("You are compacting"):
            return fo.text("Summary: files were read one by one; nothing is wrong so far.")
        if state["step"] == STEPS:
            return fo.text("done")
        path = names[state["step"] % len(names)]
        state["step"] += 1
        return fo.tool_calls(("read", {"path": path}))

    return respond


async def _long_turn(root: Path) -> dict[str, Any]:
    names = []
    for i in range(40):
        line = f"def function_{i}(value):  # module {i}\n    return value * {i}\n"
        (root / f"module_{i:02d}.py").write_text((line * (20_000 // len(line) + 1))[:20_000])
        names.append(f"module_{i:02d}.py")
    with FakeOpenAI(respond=_stepper(names), window=WINDOW) as server:
        config = ModelConfig("fake-model", server.base_url, "sk-bench", None)
        model = ChatModel(create_client(config), config)
        session = Session(builtin_tools(root), cwd=root)
        budget = ContextBudget(WINDOW, reserve=min(config.max_tokens, WINDOW // 4))
        agent = Agent(session, model, PermissionGate(assume_yes=True), budget=budget)
        agent.max_turns = STEPS + 5
        session.set_context_window(WINDOW)
        began = time.perf_counter()
        error = ""
        try:
            result = await agent.run("Read every module, one at a time, and review it.")
            answered = sum(1 for r in result.tool_calls if not r.result.is_error)
            finished = result.text == "done"
        except Exception as exc:  # the measurement reports, it does not stop
            error, answered, finished = f"{type(exc).__name__}: {exc}", 0, False
        seconds = time.perf_counter() - began
        sizes = [count_tokens(r.body) for r in server.requests]
        await model.aclose()
        return {
            "largest": max(sizes),
            "requests": len(sizes),
            "rejected": server.rejected,
            "answered": answered,
            "finished": finished,
            "summaries": agent.budget.summary_requests,
            "seconds": seconds,
            "error": error,
        }


def target_17(ws: Any, n: int, log: Log) -> list[Row]:
    runs = []
    for i in range(max(1, n // 3)):
        root = Path(ws.root) / f"long-turn-{i}"
        root.mkdir(parents=True)
        runs.append(anyio.run(_long_turn, root))
    done = runs[-1]
    log(f"target 17: {done}")
    failed = done["error"]
    if not failed and done["rejected"]:
        failed = f"{done['rejected']} request(s) were refused as too long"
    if not failed and (done["answered"] != STEPS or not done["finished"]):
        failed = f"{done['answered']} of {STEPS} steps answered"
    return [
        Row(
            "17",
            f"one {STEPS}-step prompt, 40 files of 20 kB, {WINDOW:,}-token window: largest request",
            "tokens",
            float(max(r["largest"] for r in runs)),
            limit=float(WINDOW),
            absolute=True,
            failed=failed,
            note=f"{done['answered']}/{STEPS} steps answered, {done['requests']} requests, "
            f"{done['summaries']} of them summaries, {done['rejected']} refused; "
            f"median {statistics.median(r['seconds'] for r in runs):.1f} s a run over "
            f"{len(runs)} run(s) (the server counts 3.5 characters a token, codebot 4)",
        ),
    ]


TARGETS = {"16": target_16, "17": target_17}
