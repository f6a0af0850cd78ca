"""The targets of issue 6, each measured against a baseline run in the same invocation.

Every function returns table rows. Child processes run interleaved (codebot, baseline,
codebot, ...) after one unrecorded warm-up round, so slow drifts of the machine's load hit
both sides alike.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.bench import agent_cases
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

Log = Callable[[str], None]


def mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


class Workspace:
    """Temp dirs: ``CODEBOT_HOME``, one project directory per scenario, the child env."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.home.mkdir(parents=True)
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("OPENAI_", "CODEBOT_")) and k not in ("PYTHONPATH",)
        }
        env.update(
            CODEBOT_HOME=str(self.home),
            CODEBOT_TRUST_PROJECT="1",
            NO_PROXY="127.0.0.1,localhost",
            no_proxy="127.0.0.1,localhost",
        )
        self.env = env

    def project(self, name: str, settings: dict[str, Any]) -> Path:
        directory = self.root / name
        (directory / ".codebot").mkdir(parents=True)
        (directory / ".codebot" / "settings.json").write_text(json.dumps(settings, indent=2))
        return directory


def everything_entry() -> dict[str, Any]:
    return {"command": str(EVERYTHING_BIN), "args": ["stdio"]}


def sleepy_entry(name: str, delay: float, *extra: str) -> dict[str, Any]:
    args = ["-m", "tests.servers.sleepy_raw", "--delay", f"{delay:g}", "--name", name, *extra]
    return {"command": PYTHON, "args": args, "cwd": str(REPO_ROOT)}


def _check(runs: list[Run], expect: int = 0) -> str:
    bad = [r for r in runs if r.returncode != expect]
    if not bad:
        return ""
    r = bad[0]
    tail = (r.stderr.strip().splitlines() or [""])[-1][:120]
    return f"{len(bad)}/{len(runs)} runs exited {r.returncode}: {tail}"


def interleave(
    n: int, variants: dict[str, Callable[[], Run]], log: Log, label: str
) -> dict[str, list[Run]]:
    """Run every variant once unrecorded, then ``n`` recorded rounds, variants in turn."""
    for fn in variants.values():
        fn()
    out: dict[str, list[Run]] = {k: [] for k in variants}
    for i in range(n):
        for key, fn in variants.items():
            out[key].append(fn())
        log(f"  {label}: round {i + 1}/{n}")
    return out


def walls(runs: list[Run]) -> list[float]:
    return [r.wall for r in runs]


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
                failed=_check(runs["codebot"]) or _check(runs["typer"]),
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
            failed=_check(runs[mine]) or _check(runs[theirs]),
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
            failed=_check(runs["codebot"]) or _check(runs["sdk"]),
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
            failed=_check(runs["five"]) or _check(runs["one"]),
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
            failed=_check(batches) or _check(singles),
        )
    ]


# -- 5: chat -p, 10 turns each with a tool call ----------------------------------------------------


@contextmanager
def timed_fake() -> Iterator[tuple[Any, list[tuple[float, float]]]]:
    """The loopback model server, recording each completion's server-side span.

    A span runs from the start of ``do_POST`` (headers already parsed) to the last byte
    written; everything outside the spans is the client's time (conservative: header parsing
    and the per-connection thread start count as codebot's).
    """
    from tests.fakes import openai_server as fo

    spans: list[tuple[float, float]] = []
    original = fo._Handler.do_POST  # pyright: ignore[reportPrivateUsage]

    def do_post(self: Any) -> None:
        start = time.perf_counter()
        try:
            original(self)
        finally:
            spans.append((start, time.perf_counter()))

    fo._Handler.do_POST = do_post  # type: ignore[method-assign]  # pyright: ignore[reportPrivateUsage]
    try:
        with fo.FakeOpenAI() as server:
            yield server, spans
    finally:
        fo._Handler.do_POST = original  # type: ignore[method-assign]  # pyright: ignore[reportPrivateUsage]


TURNS = 10


def target_5(ws: Workspace, n: int, log: Log) -> list[Row]:
    from tests.fakes import openai_server as fo

    timing_log = ws.root / "mcp_timing.log"
    gaps: list[float] = []
    startups: list[float] = []
    shutdowns: list[float] = []
    formula: list[float] = []
    walls_: list[float] = []
    model_ms: list[float] = []
    mcp_us: list[float] = []
    tool_ms: list[float] = []
    failures: list[str] = []
    with timed_fake() as (fake, spans):
        project = ws.project(
            "chat",
            {
                "base_url": fake.base_url,
                "model": "fake-model",
                "mcp_servers": {
                    "echo": sleepy_entry("echo", 0, "--timing-log", str(timing_log)),
                },
            },
        )
        env = {**ws.env, "OPENAI_API_KEY": "sk-bench"}
        argv = [*codebot_argv(), "--cwd", str(project), "chat", "--yes", "--json", "-p", "echo"]
        for i in range(n + 1):
            fake.queue(
                *[fo.tool_calls(("mcp__echo__echo", {"text": f"turn {t}"})) for t in range(TURNS)],
                fo.text("done"),
            )
            spans.clear()
            timing_log.write_text("")
            result = run(argv, env=env)
            mcp = sorted(
                tuple(map(float, line.split())) for line in timing_log.read_text().splitlines()
            )
            model = sorted(spans)
            problem = ""
            try:
                transcript = json.loads(result.stdout)
            except ValueError:
                transcript = {}
            if result.returncode != 0 or transcript.get("answer") != "done":
                problem = f"exit {result.returncode}: {result.stderr.strip()[-200:]}"
            elif len(model) != TURNS + 1 or len(mcp) != TURNS:
                problem = f"{len(model)} model requests, {len(mcp)} MCP calls"
            if problem:
                failures.append(problem)
                while fake.remaining:  # drop the rest of this run's script
                    fake._state.turns.popleft()  # pyright: ignore[reportPrivateUsage]
                continue
            if i == 0:
                continue  # warm-up
            for k in range(TURNS):
                gap_start, gap_end = model[k][1], model[k + 1][0]
                inside = sum(b - a for a, b in mcp if gap_start <= a and b <= gap_end)
                gaps.append((gap_end - gap_start - inside) * 1000)
            server_time = sum(b - a for a, b in model)
            mcp_time = sum(b - a for a, b in mcp)
            startups.append(model[0][0] - result.started)
            shutdowns.append((result.ended - model[-1][1]) * 1000)
            formula.append((result.wall - server_time - mcp_time) / TURNS * 1000)
            walls_.append(result.wall)
            model_ms.append(server_time / (TURNS + 1) * 1000)
            mcp_us.append(mcp_time / TURNS * 1e6)
            tool_ms.extend(c["seconds"] * 1000 for c in transcript["tool_calls"])
            log(f"  chat -p: round {i}/{n}")
    failed = f"{len(failures)} runs failed: {failures[0]}" if failures else ""
    note = (
        f"total wall median {median(walls_):.3f} s; fake model server {median(model_ms):.2f} ms "
        f"per request; MCP server {median(mcp_us):.0f} us per call"
    )
    return [
        Row(
            "5",
            "chat -p: codebot's own time per turn (model reply -> next request)",
            "ms",
            median(gaps),
            limit=10.0,
            absolute=True,
            codebot_samples=gaps,
            note=note + "; each gap minus the MCP server's own time; of a gap, the tool call "
            f"as codebot times it (--json transcript, ms resolution): mean {mean(tool_ms):.2f} ms",
            failed=failed,
        ),
        Row(
            "",
            "chat -p: startup (spawn -> first model request)",
            "s",
            median(startups),
            codebot_samples=startups,
        ),
        Row(
            "",
            "chat -p: shutdown (last reply -> exit)",
            "ms",
            median(shutdowns),
            codebot_samples=shutdowns,
        ),
        Row(
            "",
            "chat -p: (wall - model server - MCP server) / 10 turns",
            "ms",
            median(formula),
            codebot_samples=formula,
            note="includes startup and shutdown",
        ),
    ]


# -- 6: in-process: refresh_if_dirty and the model tool list ---------------------------------------


def target_6(ws: Workspace, n: int, log: Log) -> list[Row]:
    import anyio

    return anyio.run(_target_6, ws, n, log)


async def _target_6(ws: Workspace, n: int, log: Log) -> list[Row]:
    from codebot_mcp.cli.runtime import open_manager
    from codebot_mcp.core.builtin import builtin_tools
    from codebot_mcp.core.servers import parse_server
    from codebot_mcp.core.session import Session, tool_schema

    os.environ["CODEBOT_HOME"] = str(ws.home)  # server logs go there
    entry = {
        "command": PYTHON,
        "args": ["-m", "tests.servers.many_tools", "--count", "1000"],
        "cwd": str(REPO_ROOT),
        "timeout": 120,
    }
    config = parse_server("many", entry, ws.root / "settings.json", os.environ, REPO_ROOT)
    async with open_manager({"many": config}) as manager:
        await manager.start_all()
        if len(manager.tools()) != 1000:
            fail = f"many_tools: {len(manager.tools())} tools, {manager.failures}"
            return [Row("6", "many_tools did not connect", "ms", float("nan"), failed=fail)]
        session = Session(builtin_tools(ws.root), manager, cwd=ws.root)
        session.set_tool_search(False)  # every schema in the list: the rebuild this measures
        await session.before_prompt()  # consumes the start-up change
        expected = len(session.tool_schemas())  # 1000 MCP tools and the built-ins
        if expected < 1000:
            fail = f"the session offers {expected} tools of 1000 "
            return [Row("6", "many_tools not all offered", "ms", float("nan"), failed=fail)]
        log("  in-process: connected to many_tools (1000 tools)")

        io_calls = 0
        for client in manager.clients.values():
            original = client.list_tools

            async def counting(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
                nonlocal io_calls
                io_calls += 1
                return await _original(*args, **kwargs)

            client.list_tools = counting  # type: ignore[method-assign]

        # refresh_if_dirty() on a clean manager, and the whole before_prompt() hook.
        iterations = 20000
        refresh: list[float] = []
        hook: list[float] = []
        for _ in range(max(n, 7)):
            start = time.perf_counter()
            for _ in range(iterations):
                await manager.refresh_if_dirty()
            refresh.append((time.perf_counter() - start) / iterations * 1e6)
            start = time.perf_counter()
            for _ in range(iterations):
                await session.before_prompt()
            hook.append((time.perf_counter() - start) / iterations * 1e6)

        # Building the tool list from scratch: what a tools/list_changed costs before a prompt.
        def invalidate() -> None:
            manager._tools = None  # pyright: ignore[reportPrivateUsage]
            manager._dirty = True  # pyright: ignore[reportPrivateUsage]

        full: list[float] = []
        tools_only: list[float] = []
        schemas_only: list[float] = []
        runs = max(3 * n, 21)
        for i in range(runs + 2):
            invalidate()
            start = time.perf_counter()
            changed = await session.before_prompt()
            elapsed = (time.perf_counter() - start) * 1000
            if not changed or len(session.tool_schemas()) != expected:
                raise RuntimeError(
                    f"a rebuild offered {len(session.tool_schemas())} tools, not {expected}"
                )
            manager._tools = None  # pyright: ignore[reportPrivateUsage]
            start = time.perf_counter()
            tools = manager.tools()
            t_tools = (time.perf_counter() - start) * 1000
            start = time.perf_counter()
            [tool_schema(t) for t in tools]
            t_schemas = (time.perf_counter() - start) * 1000
            if i >= 2:
                full.append(elapsed)
                tools_only.append(t_tools)
                schemas_only.append(t_schemas)
        log("  in-process: done")
    return [
        Row(
            "6",
            "refresh_if_dirty() when clean",
            "us",
            median(refresh),
            limit=10.0,
            absolute=True,
            codebot_samples=refresh,
            note=f"mean of {iterations} awaits per sample; tools/list sent during the loops: "
            f"{io_calls}",
            failed="" if io_calls == 0 else f"{io_calls} tools/list requests while clean",
        ),
        Row(
            "",
            "Session.before_prompt() when clean",
            "us",
            median(hook),
            codebot_samples=hook,
        ),
        Row(
            "6",
            "model tool list from 1,000 MCP tools (before_prompt after a change)",
            "ms",
            median(full),
            limit=20.0,
            absolute=True,
            codebot_samples=full,
            note=f"Manager.tools() rebuild {median(tools_only):.2f} ms, tool_schema() x1000 "
            f"{median(schemas_only):.2f} ms, the rest is the system prompt",
        ),
    ]


TARGETS: dict[str, Callable[[Workspace, int, Log], list[Row]]] = {
    "1": target_1,
    "2": target_2,
    "3": target_3,
    "4": target_4,
    "5": target_5,
    "6": target_6,
    "7": target_7,
    "8": agent_cases.target_8,
    "9": agent_cases.target_9,
    "10": agent_cases.target_10,
}


def runs_for(target: str, base: int) -> int:
    """Cheap targets get more runs; none gets fewer than 5 (unless ``--runs`` asks)."""
    if target == "1":
        return 2 * base + 1
    if target == "2":  # the closest race, and the noisiest on a shared machine
        return base + 2
    if target in ("4", "5", "7", "11", "13", "14"):
        return max(min(base, 5), base - 2)
    return base


def skip_reason(target: str) -> str:
    if target in ("2", "4", "7", "11", "12", "13", "14") and not EVERYTHING_BIN.exists():
        return f"{EVERYTHING_BIN} is missing (run `make install`)"
    return ""


def log_to_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
