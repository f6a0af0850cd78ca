"""Issue 33's headless stream (target 18): from the start of ``codebot chat -p PROMPT
--output-format stream-json`` to its first event on stdout, and to its final ``result``.

The process is spawned by the benchmark and its stdout read as it comes; the clock starts just
before the spawn. The first event is ``init``: it comes once the servers are connected (or
failed), so the case with one stdio server includes its handshake. The model is the loopback
server answering at once. This is the yardstick ACP's time from ``session/prompt`` to the first
``session/update`` is held to (within 10 %); it is information here, no limit. A second row
gives the like-for-like part: from the ``user`` event to the next one (the first
``assistant_delta``), by the events' own ``ms``.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.bench.harness import Row, codebot_argv, median
from tests.bench.workspace import Log, Workspace
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import server_entry


def _one(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, str, float]:
    """(seconds to the first event, seconds to the last, the first event's type, ms from the
    ``user`` event to the next one, by the events' own ``ms``)."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    first_line = proc.stdout.readline()
    first = time.perf_counter() - started
    rest = proc.stdout.read()
    proc.wait(timeout=60)
    last = time.perf_counter() - started
    kind = json.loads(first_line)["type"] if first_line else "none"
    if proc.returncode != 0 or not rest:
        kind = f"exit {proc.returncode}"
    found = [json.loads(line) for line in (first_line + rest).splitlines()]
    users = [i for i, e in enumerate(found) if e["type"] == "user"]
    answer = float("nan")
    if users and users[0] + 1 < len(found):
        answer = float(found[users[0] + 1]["ms"] - found[users[0]]["ms"])
    return first, last, kind, answer


def target_18(ws: Workspace, n: int, log: Log) -> list[Row]:
    rows: list[Row] = []
    argv = [
        *codebot_argv(),
        *("chat", "-p", "hi", "--output-format", "stream-json", "--include-partial"),
    ]
    with FakeOpenAI(respond=lambda _body: fo.text("ok")) as fake:
        env = {**ws.env, "OPENAI_API_KEY": "sk-bench"}
        cases: list[tuple[str, dict[str, Any]]] = [
            ("no MCP server", {"base_url": fake.base_url}),
            (
                "one stdio server (echo)",
                {"base_url": fake.base_url, "mcp_servers": {"echo": server_entry("echo")}},
            ),
        ]
        for name, settings in cases:
            project = ws.project(name.replace(" ", "-").replace("(", "").replace(")", ""), settings)
            _one(argv, project, env)  # warm-up: bytecode, page cache
            firsts: list[float] = []
            lasts: list[float] = []
            answers: list[float] = []
            failed = ""
            for _ in range(n):
                first, last, kind, answer = _one(argv, project, env)
                if kind != "init":
                    failed = f"first event: {kind}"
                firsts.append(first * 1000)
                lasts.append(last * 1000)
                answers.append(answer)
            log(f"target 18 {name}: first event {median(firsts):.0f} ms")
            rows.append(
                Row(
                    "18",
                    f"chat -p stream-json, {name}: start → first event",
                    "ms",
                    median(firsts),
                    absolute=True,
                    codebot_samples=firsts,
                    failed=failed,
                    note=f"start → final result: median {median(lasts):.0f} ms",
                )
            )
            rows.append(
                Row(
                    "",
                    f"chat -p stream-json, {name}: user event → next event",
                    "ms",
                    median(answers),
                    absolute=True,
                    codebot_samples=answers,
                    note="the prompt sent to the first piece of the answer (--include-partial), "
                    "by the events' own clock: ACP's session/prompt → first session/update",
                )
            )
    return rows


TARGETS = {"18": target_18}
