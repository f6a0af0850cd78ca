"""Issue 21's sandbox cost: ``bash`` ``true`` sandboxed against unconfined, per call.

In this process, through the real ``bash`` tool (the exec helper, ``core/proc/exec_helper.c``):

- unconfined: the helper sets the parent-death signal and execs ``bash -c true``;
- sandboxed: the same, plus the default sandbox (``workspace-write``, no network: a user and
  a network namespace with its loopback up, a mount namespace keeping ``.git/hooks`` and
  ``.git/config`` read-only, seccomp, Landlock);
- and, for the helper's own share, a plain ``anyio.open_process`` of ``bash -c true`` with no
  helper at all (what ``preexec_fn`` used to do in Python costs about as much as nothing).

The three run interleaved (A B C A B C ...) after an unrecorded warm-up round, so a busy
shared machine slows all of them alike. Target: the sandbox adds at most 30 ms per call.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

from codebot_mcp.core.sandbox.confinement import Sandbox, support
from codebot_mcp.core.tools.builtin import BashTool
from tests.bench.harness import Row
from tests.bench.workspace import Log, Workspace

CALLS_PER_RUN = 20
LIMIT_MS = 30.0


async def _plain() -> None:
    process = await anyio.open_process(
        ["bash", "-c", "true"], stdin=subprocess.DEVNULL, start_new_session=True
    )
    await process.wait()


async def _measure(root: Path, calls: int) -> dict[str, list[float]]:
    sandbox = Sandbox("workspace-write", network=False, workspace=root)
    confined = BashTool(root, root, sandbox)
    unconfined = BashTool(root, root, None)

    async def run_bash(tool: BashTool) -> None:
        result = await tool.execute({"command": "true"})
        assert not result.is_error, result.text

    cases: dict[str, Callable[[], Awaitable[None]]] = {
        "plain": _plain,
        "unconfined": lambda: run_bash(unconfined),
        "sandboxed": lambda: run_bash(confined),
    }
    samples: dict[str, list[float]] = {name: [] for name in cases}
    try:
        for run in cases.values():  # warm-up, unrecorded
            await run()
        for _ in range(calls):
            for name, run in cases.items():
                began = time.perf_counter()
                await run()
                samples[name].append((time.perf_counter() - began) * 1000)
    finally:
        sandbox.close()
    return samples


def target_15(ws: Workspace, n: int, log: Log) -> list[Row]:
    missing = support().missing(network=False) if sys.platform.startswith("linux") else ["Linux"]
    if missing:
        why = "; ".join(missing)
        return [Row("15", "bash true, sandboxed", "ms", float("nan"), failed=f"no sandbox: {why}")]
    root = ws.root / "sandbox-project"
    (root / ".git" / "hooks").mkdir(parents=True, exist_ok=True)
    (root / ".git" / "config").write_text("[core]\n")
    calls = CALLS_PER_RUN * n
    log(f"  {calls} calls of each, interleaved")
    samples = anyio.run(_measure, root, calls)
    plain, unconfined, sandboxed = (
        statistics.median(samples[k]) for k in ("plain", "unconfined", "sandboxed")
    )
    extra = [s - u for s, u in zip(samples["sandboxed"], samples["unconfined"], strict=True)]
    return [
        Row(
            "15",
            "bash `true` per call: sandboxed (workspace-write, no network) vs unconfined",
            "ms",
            sandboxed,
            baseline=unconfined,
            codebot_samples=samples["sandboxed"],
            baseline_samples=samples["unconfined"],
            note=f"medians of {calls} calls each through the bash tool; without the exec "
            f"helper at all (plain open_process) {plain:.2f} ms",
        ),
        Row(
            "15",
            "the sandbox's extra cost per bash call (median of paired differences)",
            "ms",
            statistics.median(extra),
            limit=LIMIT_MS,
            absolute=True,
            codebot_samples=extra,
        ),
    ]


async def _measure_domains(root: Path, calls: int) -> dict[str, list[float]]:
    """``bash true`` confined with ``network: false`` and with a domain list, interleaved."""
    none = Sandbox("workspace-write", network=False, workspace=root)
    listed = Sandbox(
        "workspace-write",
        workspace=root,
        domains=("pypi.org", "files.pythonhosted.org", "*.npmjs.org"),
    )
    tools = {"no network": BashTool(root, root, none), "domains": BashTool(root, root, listed)}
    samples: dict[str, list[float]] = {name: [] for name in tools}
    try:
        for tool in tools.values():  # warm-up, unrecorded (it starts the proxy)
            result = await tool.execute({"command": "true"})
            assert not result.is_error, result.text
        for _ in range(calls):
            for name, tool in tools.items():
                began = time.perf_counter()
                result = await tool.execute({"command": "true"})
                samples[name].append((time.perf_counter() - began) * 1000)
                assert not result.is_error, result.text
    finally:
        none.close()
        listed.close()
    return samples


def target_20(ws: Workspace, n: int, log: Log) -> list[Row]:
    """Issue 32: what ``sandbox.network`` as a domain list adds to a confined call (the
    forwarder the exec helper forks in the namespace, the proxy variables) over
    ``network: false``; the proxy itself starts once per session (the warm-up call)."""
    missing = support().missing(network=False) if sys.platform.startswith("linux") else ["Linux"]
    if missing:
        why = "; ".join(missing)
        return [
            Row("20", "bash true, domain list", "ms", float("nan"), failed=f"no sandbox: {why}")
        ]
    root = ws.root / "sandbox-domains-project"
    (root / ".git" / "hooks").mkdir(parents=True, exist_ok=True)
    (root / ".git" / "config").write_text("[core]\n")
    calls = CALLS_PER_RUN * n
    log(f"  {calls} calls of each, interleaved")
    samples = anyio.run(_measure_domains, root, calls)
    none, listed = (statistics.median(samples[k]) for k in ("no network", "domains"))
    extra = [d - o for d, o in zip(samples["domains"], samples["no network"], strict=True)]
    return [
        Row(
            "20",
            "bash `true` per call: sandbox with a domain list vs network: false",
            "ms",
            listed,
            baseline=none,
            codebot_samples=samples["domains"],
            baseline_samples=samples["no network"],
            note=f"medians of {calls} calls each through the bash tool (workspace-write)",
        ),
        Row(
            "20",
            "a domain list's extra cost per confined call (median of paired differences)",
            "ms",
            statistics.median(extra),
            limit=LIMIT_MS,
            absolute=True,
            codebot_samples=extra,
        ),
    ]
