"""The targets of issue 15 (one stdio server against native clients; the warm path).

- 11: ``mcp list`` of server-everything against Claude Code's ``claude mcp list`` (installed from
  npm into the bench's temp dir when it can be), and always against the recorded floor: the
  server's own time to answer ``initialize`` plus ``codebot --version``.
- 12: ``mcp call everything echo`` against the minimal SDK script (``sdk_call.py``, legacy).
- 13: warm ``mcp call`` (after ``mcp warm``) end to end, and 100 sequential warm calls against
  100 × (``codebot --version`` + the server's own call time).
- 14: peak RSS of a cold ``mcp list`` against the same command on the SDK path
  (``CODEBOT_SDK_PATH=1``, what ``mcp list`` ran before the hot path).

Every pair runs interleaved (A B A B ...) after an unrecorded warm-up round.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time

from tests.bench.harness import (
    EVERYTHING_BIN,
    PYTHON,
    REPO_ROOT,
    Row,
    Run,
    codebot_argv,
    median,
    run,
)
from tests.bench.workspace import (
    Log,
    Workspace,
    everything_entry,
    interleave,
    run_failures,
    walls,
)

CLAUDE_PACKAGE = "@anthropic-ai/claude-code"
NPM_TIMEOUT = 300


def _claude(ws: Workspace, log: Log) -> tuple[list[str], dict[str, str]] | str:
    """``claude`` installed into the workspace, configured with server-everything; or why not."""
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not on PATH"
    prefix = ws.root / "claude"
    log(f"  installing {CLAUDE_PACKAGE} from npm into {prefix} ...")
    try:
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix",
             str(prefix), CLAUDE_PACKAGE],
            capture_output=True, text=True, timeout=NPM_TIMEOUT,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"npm install failed: {exc}"
    binary = prefix / "node_modules" / ".bin" / "claude"
    if done.returncode != 0 or not binary.exists():
        return f"npm install failed: {done.stderr.strip()[-200:]}"
    home = ws.root / "claude-home"
    home.mkdir()
    env = {
        **ws.env,
        "HOME": str(home),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
    }
    add = [
        str(binary),
        "mcp",
        "add",
        "-s",
        "user",
        "everything",
        "--",
        str(EVERYTHING_BIN),
        "stdio",
    ]
    added = subprocess.run(add, capture_output=True, text=True, env=env, timeout=120)
    if added.returncode != 0:
        return f"claude mcp add failed: {added.stderr.strip()[-200:]}"
    return [str(binary), "mcp", "list"], env


def _server_initialize(env: dict[str, str]) -> Run:
    """server-everything's own time from spawn to its ``initialize`` answer."""
    script = REPO_ROOT / "tests" / "bench" / "server_init.py"
    return run([PYTHON, str(script), str(EVERYTHING_BIN), "stdio"], env=env)


def target_11(ws: Workspace, n: int, log: Log) -> list[Row]:
    project = ws.project("everything11", {"mcp_servers": {"everything": everything_entry()}})
    cb = [*codebot_argv(), "--cwd", str(project)]
    env = ws.env
    variants = {
        "list": lambda: run([*cb, "mcp", "list", "--no-warm"], env=env),
        "version": lambda: run([*cb, "--version"], env=env),
        "init": lambda: _server_initialize(env),
    }
    claude = _claude(ws, log)
    if not isinstance(claude, str):
        claude_argv, claude_env = claude
        variants["claude"] = lambda: run(claude_argv, env=claude_env, cwd=project)
    runs = interleave(n, variants, log, "mcp list vs claude mcp list")
    for r in runs["init"]:
        if r.returncode == 0:
            r.wall = float(r.stdout.strip() or "nan")  # the server's own time, not the script's
    floor = [v + i for v, i in zip(walls(runs["version"]), walls(runs["init"]), strict=True)]
    rows = []
    if isinstance(claude, str):
        rows.append(
            Row("11", "mcp list everything vs claude mcp list", "s", float("nan"), failed=claude)
        )
    else:
        a, b = walls(runs["list"]), walls(runs["claude"])
        rows.append(
            Row(
                "11",
                "mcp list, server-everything, vs Claude Code's claude mcp list",
                "s",
                median(a),
                median(b),
                limit=0.9,
                codebot_samples=a,
                baseline_samples=b,
                note=f"{CLAUDE_PACKAGE} from npm, `claude mcp add -s user` in a temp HOME, "
                "non-essential traffic off",
                failed=run_failures(runs["list"]) or run_failures(runs["claude"]),
            )
        )
    rows.append(
        Row(
            "11" if isinstance(claude, str) else "",
            "mcp list vs the floor: server initialize + codebot --version",
            "s",
            median(walls(runs["list"])),
            median(floor),
            limit=0.9 if isinstance(claude, str) else None,
            codebot_samples=walls(runs["list"]),
            baseline_samples=floor,
            note=f"server initialize median {median(walls(runs['init'])):.3f} s, --version "
            f"{median(walls(runs['version'])):.3f} s",
            failed=run_failures(runs["list"])
            or run_failures(runs["init"])
            or run_failures(runs["version"]),
        )
    )
    return rows


def target_12(ws: Workspace, n: int, log: Log) -> list[Row]:
    project = ws.project("everything12", {"mcp_servers": {"everything": everything_entry()}})
    cb = [*codebot_argv(), "--cwd", str(project), "mcp", "call", "--no-warm"]
    sdk_call = [PYTHON, str(REPO_ROOT / "tests" / "bench" / "sdk_call.py")]
    server = [str(EVERYTHING_BIN), "stdio"]
    runs = interleave(
        n,
        {
            "call": lambda: run([*cb, "everything", "echo", "message=hi"], env=ws.env),
            "sdk": lambda: run([*sdk_call, "legacy", "echo", "message=hi", *server], env=ws.env),
        },
        log,
        "mcp call vs SDK script",
    )
    for key in runs:
        for r in runs[key]:
            if r.returncode == 0 and "Echo: hi" not in r.stdout:
                r.returncode = -1000
    a, b = walls(runs["call"]), walls(runs["sdk"])
    cpu_a = median([r.cpu for r in runs["call"]])
    cpu_b = median([r.cpu for r in runs["sdk"]])
    return [
        Row(
            "12",
            "mcp call everything echo vs the minimal SDK script",
            "s",
            median(a),
            median(b),
            limit=0.6,
            codebot_samples=a,
            baseline_samples=b,
            note=f"SDK script mode=legacy; CPU (reaped tree) codebot {cpu_a:.2f} s, "
            f"SDK {cpu_b:.2f} s",
            failed=run_failures(runs["call"]) or run_failures(runs["sdk"]),
        )
    ]


def _server_call_seconds() -> float:
    """server-everything's ``echo`` on an open SDK connection: the median of 100 calls."""
    import anyio

    async def measure() -> float:
        from mcp import Client, StdioServerParameters, stdio_client

        params = StdioServerParameters(command=str(EVERYTHING_BIN), args=["stdio"])
        with open(os.devnull, "w") as devnull:  # noqa: ASYNC230 - once, before any timing
            async with Client(stdio_client(params, errlog=devnull), mode="legacy") as client:
                await client.list_tools()
                for _ in range(20):
                    await client.call_tool("echo", {"message": "warm up"})
                times = []
                for i in range(100):
                    t0 = time.perf_counter()
                    await client.call_tool("echo", {"message": f"hi {i}"})
                    times.append(time.perf_counter() - t0)
        return median(times)

    return anyio.run(measure)


def target_13(ws: Workspace, n: int, log: Log) -> list[Row]:
    project = ws.project("everything13", {"mcp_servers": {"everything": everything_entry()}})
    cb = [*codebot_argv(), "--cwd", str(project)]
    started = run([*cb, "mcp", "warm", "--idle-timeout", "600"], env=ws.env)
    if started.returncode != 0:
        fail = f"mcp warm exited {started.returncode}: {started.stderr.strip()[-200:]}"
        return [Row("13", "warm mcp call", "s", float("nan"), failed=fail)]
    try:
        call = [*cb, "mcp", "call", "everything", "echo", "message=hi"]
        runs = interleave(
            n,
            {
                "warm": lambda: run(call, env=ws.env),
                "version": lambda: run([*cb, "--version"], env=ws.env),
            },
            log,
            "warm mcp call",
        )
        for r in runs["warm"]:
            if r.returncode == 0 and r.stdout != "Echo: hi\n":
                r.returncode = -1000
        hundreds: list[float] = []
        failures = 0
        for i in range(3):  # 300 calls; the single calls above take the samples
            t0 = time.perf_counter()
            for _ in range(100):
                failures += run(call, env=ws.env).returncode != 0
            hundreds.append(time.perf_counter() - t0)
            log(f"  100 warm calls: round {i + 1}")
        server_call = _server_call_seconds()
    finally:
        run([*cb, "mcp", "warm", "--stop"], env=ws.env)
    version = median(walls(runs["version"]))
    baseline = 100 * (version + server_call)
    return [
        Row(
            "13",
            "warm mcp call everything echo, end to end",
            "s",
            median(walls(runs["warm"])),
            limit=0.1,
            absolute=True,
            codebot_samples=walls(runs["warm"]),
            note=f"codebot --version in the same rounds: {version:.3f} s",
            failed=run_failures(runs["warm"]),
        ),
        Row(
            "13",
            "warm mcp call vs codebot --version, same rounds",
            "s",
            median(walls(runs["warm"])),
            version,
            limit=1.2,
            codebot_samples=walls(runs["warm"]),
            baseline_samples=walls(runs["version"]),
            failed=run_failures(runs["warm"]),
        ),
        Row(
            "13",
            "100 sequential warm calls vs 100 x (--version + server call time)",
            "s",
            median(hundreds),
            baseline,
            limit=1.5,
            codebot_samples=hundreds,
            note=f"server-everything echo on an open SDK connection {server_call * 1000:.2f} ms",
            failed=f"{failures} warm calls failed" if failures else "",
        ),
    ]


def target_14(ws: Workspace, n: int, log: Log) -> list[Row]:
    project = ws.project("everything14", {"mcp_servers": {"everything": everything_entry()}})
    cb = [*codebot_argv(), "--cwd", str(project), "mcp", "list", "--no-warm"]
    sdk_env = {**ws.env, "CODEBOT_SDK_PATH": "1"}
    runs = interleave(
        n,
        {
            "hot": lambda: run(cb, env=ws.env, poll_rss=True),
            "sdk": lambda: run(cb, env=sdk_env, poll_rss=True),
        },
        log,
        "peak RSS, hot path vs SDK path",
    )
    a = [(r.peak_rss_kb or 0) / 1024 for r in runs["hot"]]
    b = [(r.peak_rss_kb or 0) / 1024 for r in runs["sdk"]]
    return [
        Row(
            "14",
            "peak RSS of a cold mcp list vs the same on the SDK path (today's)",
            "MB",
            median(a),
            median(b),
            limit=1.1,
            codebot_samples=a,
            baseline_samples=b,
            note="VmHWM of the codebot process, polled every ms; CODEBOT_SDK_PATH=1 is the "
            "path mcp list took before the hot path",
            failed=run_failures(runs["hot"]) or run_failures(runs["sdk"]),
        )
    ]


TARGETS = {"11": target_11, "12": target_12, "13": target_13, "14": target_14}
