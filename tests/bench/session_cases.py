"""Issue 6's targets that time codebot's own work in a session: chat -p turns, the tool list.

Target 5 runs ``chat -p`` against the loopback model server and subtracts the servers' own time;
target 6 runs in this process against a server of 1,000 tools.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.bench.harness import PYTHON, REPO_ROOT, Row, codebot_argv, median, run
from tests.bench.workspace import Log, Workspace, mean, sleepy_entry

# -- 5: chat -p, 10 turns each with a tool call ----------------------------------------------------


@contextmanager
def timed_fake() -> Iterator[tuple[Any, list[tuple[float, float]]]]:
    """The loopback model server, recording each completion's server-side span.

    A span runs from the start of ``do_POST`` (headers already parsed) to the last byte
    written; everything outside the spans is the client's time (conservative: header parsing
    and the per-connection thread start count as codebot's).
    """
    from tests.fakes.openai_handler import Handler
    from tests.fakes.openai_server import FakeOpenAI

    spans: list[tuple[float, float]] = []
    original = Handler.do_POST

    def do_post(self: Any) -> None:
        start = time.perf_counter()
        try:
            original(self)
        finally:
            spans.append((start, time.perf_counter()))

    Handler.do_POST = do_post  # type: ignore[method-assign]
    try:
        with FakeOpenAI() as server:
            yield server, spans
    finally:
        Handler.do_POST = original  # type: ignore[method-assign]


TURNS = 10


def target_5(ws: Workspace, n: int, log: Log) -> list[Row]:
    from tests.fakes import openai_turns as fo

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
                    fake._state.turns.popleft()
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
    from codebot_mcp.core.agent.session import Session, tool_schema
    from codebot_mcp.core.config.servers import parse_server
    from codebot_mcp.core.tools.builtin import builtin_tools
    from codebot_mcp.core.tools.useragent import Policy

    os.environ["CODEBOT_HOME"] = str(ws.home)  # server logs go there
    entry = {
        "command": PYTHON,
        "args": ["-m", "tests.servers.many_tools", "--count", "1000"],
        "cwd": str(REPO_ROOT),
        "timeout": 120,
    }
    config = parse_server("many", entry, ws.root / "settings.json", os.environ, REPO_ROOT)
    async with open_manager({"many": config}, agent=Policy(root_dirs=[ws.root])) as manager:
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
        def invalidate() -> None:  # as if the listing changed: built anew, handed out again
            manager._tools_key = ()
            manager._offered = ()

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
            manager._tools_key = ()
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
