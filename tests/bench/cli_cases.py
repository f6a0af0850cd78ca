"""Issue 6's targets that time codebot's commands as processes: start-up, mcp list/call, --batch.

Child processes run interleaved (codebot, baseline, codebot, ...) after one unrecorded warm-up
round, so slow drifts of the machine's load hit both sides alike.
"""

from __future__ import annotations

import json
import os
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
    sleepy_entry,
    walls,
)

# -- 1: help and version ---------------------------------------------------------------------


def target_1(ws: Workspace, n: int, log: Log) -> list[Row]:
    cb = codebot_argv()
    cwd = ws.root
    rows = []
    for case in (["--help"], ["--version"], ["mcp", "--help"]):
        argv = [*cb, *case]

        def mine(argv: list[str] = argv) -> Run:
            return run(argv, env=ws.env, cwd=cwd)

        runs = interleave(
            n,
            {
                "codebot": mine,
                "typer": lambda: run([PYTHON, "-c", "import typer"], env=ws.env, cwd=cwd),
            },
            log,
            " ".join(case),
        )
        rows.append(
            Row(
                "1",
                f"codebot {' '.join(case)} vs python -c 'import typer'",
                "s",
                median(walls(runs["codebot"])),
                median(walls(runs["typer"])),
                limit=1.3,
                codebot_samples=walls(runs["codebot"]),
                baseline_samples=walls(runs["typer"]),
                failed=run_failures(runs["codebot"]) or run_failures(runs["typer"]),
            )
        )
    return rows


# -- 2 and 7: one stdio server (server-everything) ------------------------------------------------


def target_2(ws: Workspace, n: int, log: Log) -> list[Row]:
    project = ws.project("everything", {"mcp_servers": {"everything": everything_entry()}})
    cb = [*codebot_argv(), "--cwd", str(project), "mcp"]
    server = [str(EVERYTHING_BIN), "stdio"]
    sdk_list = [PYTHON, str(REPO_ROOT / "tests" / "bench" / "sdk_list.py")]
    sdk_call = [PYTHON, str(REPO_ROOT / "tests" / "bench" / "sdk_call.py")]
    env = ws.env
    runs = interleave(
        n,
        {
            "list": lambda: run([*cb, "list"], env=env),
            "sdk_list": lambda: run([*sdk_list, "legacy", *server], env=env),
            "sdk_list_auto": lambda: run([*sdk_list, "auto", *server], env=env),
            "call": lambda: run([*cb, "call", "everything", "echo", "message=hi"], env=env),
            "sdk_call": lambda: run([*sdk_call, "legacy", "echo", "message=hi", *server], env=env),
        },
        log,
        "mcp list / mcp call",
    )
    for key in ("call", "sdk_call"):
        for r in runs[key]:
            if r.returncode == 0 and "Echo: hi" not in r.stdout:
                r.returncode = -1000  # wrong output: counts as a failure
    rows = []
    for case, mine, theirs, limit, mode in (
        ("mcp list, 1 stdio server (everything)", "list", "sdk_list", 1.0, "legacy"),
        ("mcp list vs SDK script in auto mode", "list", "sdk_list_auto", None, "auto"),
        ("mcp call everything echo message=hi", "call", "sdk_call", 1.0, "legacy"),
    ):
        a, b = walls(runs[mine]), walls(runs[theirs])
        cpu_a, cpu_b = median([r.cpu for r in runs[mine]]), median([r.cpu for r in runs[theirs]])
        row = Row(
            "2" if limit else "",
            case,
            "s",
            median(a),
            median(b),
            limit=limit,
            codebot_samples=a,
            baseline_samples=b,
            note=f"SDK script mode={mode}; CPU (process tree) codebot {cpu_a:.2f} s, "
            f"SDK {cpu_b:.2f} s",
            failed=run_failures(runs[mine]) or run_failures(runs[theirs]),
        )
        if limit and not row.failed and row.ratio:
            gain = (1 - row.ratio) * 100
            row.note += f"; codebot {abs(gain):.0f}% {'faster' if gain >= 0 else 'slower'}"
        rows.append(row)
    return rows


def target_7(ws: Workspace, n: int, log: Log) -> list[Row]:
    project = ws.project("everything_rss", {"mcp_servers": {"everything": everything_entry()}})
    cb = [*codebot_argv(), "--cwd", str(project), "mcp", "list"]
    sdk = [PYTHON, str(REPO_ROOT / "tests" / "bench" / "sdk_list.py"), "legacy"]
    runs = interleave(
        n,
        {
            "codebot": lambda: run(cb, env=ws.env, poll_rss=True),
            "sdk": lambda: run([*sdk, str(EVERYTHING_BIN), "stdio"], env=ws.env, poll_rss=True),
        },
        log,
        "peak RSS",
    )
    a = [(r.peak_rss_kb or 0) / 1024 for r in runs["codebot"]]
    b = [(r.peak_rss_kb or 0) / 1024 for r in runs["sdk"]]
    return [
        Row(
            "7",
            "peak RSS of mcp list vs SDK list script",
            "MB",
            median(a),
            median(b),
            limit=1.2,
            codebot_samples=a,
            baseline_samples=b,
            note="VmHWM of the client process alone, polled every ms (the node server excluded)",
            failed=run_failures(runs["codebot"]) or run_failures(runs["sdk"]),
        )
    ]


# -- 3: five servers that take 1 s to start ----------------------------------------------------


def target_3(ws: Workspace, n: int, log: Log) -> list[Row]:
    five = ws.project(
        "five", {"mcp_servers": {f"s{i}": sleepy_entry(f"s{i}", 1.0) for i in range(1, 6)}}
    )
    one = ws.project("one", {"mcp_servers": {"s1": sleepy_entry("s1", 1.0)}})
    cb = codebot_argv()
    runs = interleave(
        n,
        {
            "five": lambda: run([*cb, "--cwd", str(five), "mcp", "list"], env=ws.env),
            "one": lambda: run([*cb, "--cwd", str(one), "mcp", "list"], env=ws.env),
        },
        log,
        "five slow servers",
    )
    for r in runs["five"]:
        if r.returncode == 0 and r.stdout.count("1 tool") != 5:
            r.returncode = -1000
    a, b = walls(runs["five"]), walls(runs["one"])
    return [
        Row(
            "3",
            "mcp list, 5 servers taking 1 s to start vs the slowest alone",
            "s",
            median(a),
            median(b),
            limit=1.15,
            codebot_samples=a,
            baseline_samples=b,
            note="servers: tests.servers.sleepy_raw --delay 1 (sleep, no CPU; SDK-free)",
            failed=run_failures(runs["five"]) or run_failures(runs["one"]),
        )
    ]


# -- 4: --batch with 100 calls -------------------------------------------------------------------


def target_4(ws: Workspace, n: int, log: Log) -> list[Row]:
    import anyio

    return anyio.run(_target_4, ws, n, log)


async def _target_4(ws: Workspace, n: int, log: Log) -> list[Row]:
    import anyio
    from mcp import Client, StdioServerParameters, stdio_client

    project = ws.project("batch", {"mcp_servers": {"everything": everything_entry()}})
    cb = [*codebot_argv(), "--cwd", str(project), "mcp", "call"]
    lines = "".join(
        json.dumps({"server": "everything", "tool": "echo", "arguments": {"message": f"hi {i}"}})
        + "\n"
        for i in range(100)
    )
    singles: list[Run] = []
    batches: list[Run] = []
    sdk_env = {**ws.env, "CODEBOT_SDK_PATH": "1"}
    per_call: list[float] = []
    params = StdioServerParameters(command=str(EVERYTHING_BIN), args=["stdio"])
    with open(os.devnull, "w") as devnull:  # noqa: ASYNC230 - once, before any timing
        async with Client(stdio_client(params, errlog=devnull), mode="legacy") as client:
            await client.list_tools()  # so call_tool does not re-list to validate
            for _ in range(20):
                await client.call_tool("echo", {"message": "warm up"})
            for i in range(n + 1):
                # The single call on the path --batch takes (the SDK's): what the batch's own
                # start-up is made of. The hot path's single call is target 9's.
                single = await anyio.to_thread.run_sync(
                    lambda: run([*cb, "everything", "echo", "message=hi"], env=sdk_env)
                )
                batch = await anyio.to_thread.run_sync(
                    lambda: run([*cb, "--batch"], env=ws.env, stdin_text=lines)
                )
                times = []
                for j in range(100):
                    t0 = time.perf_counter()
                    await client.call_tool("echo", {"message": f"hi {j}"})
                    times.append(time.perf_counter() - t0)
                if i == 0:
                    continue  # warm-up round
                singles.append(single)
                batch_ok = batch.stdout.count('"Echo: hi') == 100 and '"error"' not in batch.stdout
                if batch.returncode == 0 and not batch_ok:
                    batch.returncode = -1000
                batches.append(batch)
                per_call.extend(times)
                log(f"  --batch: round {i}/{n}")
    single_median = median(walls(singles))
    call_median = median(per_call)
    baseline = single_median + 100 * call_median
    return [
        Row(
            "4",
            "mcp call --batch, 100 echo calls vs 1 call + 100 x call time",
            "s",
            median(walls(batches)),
            baseline,
            limit=1.2,
            codebot_samples=walls(batches),
            baseline_samples=[r.wall + 100 * call_median for r in singles],
            note=f"single mcp call (SDK path, as --batch) median {single_median:.3f} s; "
            "server-everything echo on an open "
            f"SDK connection (legacy) median {call_median * 1000:.2f} ms/call",
            failed=run_failures(batches) or run_failures(singles),
        )
    ]
