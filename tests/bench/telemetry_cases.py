"""Issue 33's telemetry (target 22): what OpenTelemetry costs a tool call when it is on, and
that it costs no import at all when it is off.

**Per tool call, on** (target <= 2 ms): a process opens the runtime ``chat -p`` opens and runs
prompts whose first model turn asks for ``CALLS`` calls of the echo server's ``echo`` (a real
stdio MCP server), then answers; the loopback model answers at once. The same prompts run in a
process with telemetry off and in one exporting to a real OTLP receiver on loopback
(``tests.fakes.otlp_receiver``), in alternating rounds so a shared machine's drift falls on
both. The cost per call is the difference of the medians over ``CALLS``: the tool call's span,
the MCP SDK's span of the request and its ``_meta`` trace context, the metrics, and the model
request's span and headers spread over the calls (two per prompt).

**Imports, off** (target 0): the OpenTelemetry modules in ``sys.modules`` after ``codebot
--help`` and after ``chat -p`` without MCP servers, telemetry off.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from tests.bench.harness import REPO_ROOT, Row, median
from tests.bench.workspace import Log, Workspace
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.otlp_receiver import OtlpReceiver
from tests.helpers import server_entry
from tests.test_imports import PROBE

CALLS = 40
ROUNDS = 3


def _respond(body: dict[str, Any]) -> Any:
    if body["messages"][-1]["role"] == "user":
        return fo.tool_calls(*[("mcp__echo__echo", {"text": f"t{i}"}) for i in range(CALLS)])
    return fo.text("done")


def _probe(ws: Workspace, project: Any, runs: int) -> list[tuple[float, float]]:
    proc = subprocess.run(
        [sys.executable, "-m", "tests.bench.telemetry_probe", str(project), str(runs)],
        cwd=REPO_ROOT,
        env={**ws.env, "OPENAI_API_KEY": "sk-bench"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"probe failed: {proc.stderr.strip()[-400:]}")
    return [(float(w), float(c)) for w, c in json.loads(proc.stdout.strip().splitlines()[-1])]


def _otel_modules(ws: Workspace, argv: list[str], project: Any) -> int:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, "--cwd", str(project), *argv],
        cwd=REPO_ROOT,
        env={**ws.env, "OPENAI_API_KEY": "sk-bench"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    modules = json.loads(proc.stderr.rsplit("MODULES=", 1)[1])
    return sum(1 for m in modules if m.startswith("opentelemetry"))


def target_22(ws: Workspace, n: int, log: Log) -> list[Row]:
    rows: list[Row] = []
    per_round = max(2, -(-n // ROUNDS))  # n prompts per mode in all, plus one warm-up each
    with FakeOpenAI(respond=_respond) as fake, OtlpReceiver() as receiver:
        echo = {"echo": server_entry("echo")}
        base = {"base_url": fake.base_url, "mcp_servers": echo}
        off = ws.project("telemetry-off", base)
        on = ws.project(
            "telemetry-on", {**base, "telemetry": {"enabled": True, "endpoint": receiver.endpoint}}
        )
        offs: list[tuple[float, float]] = []
        ons: list[tuple[float, float]] = []
        for _ in range(ROUNDS):
            offs += _probe(ws, off, per_round + 1)[1:]
            ons += _probe(ws, on, per_round + 1)[1:]
        exported = sum(1 for s in receiver.spans if s.name.startswith("tools/call"))
        bare = ws.project("telemetry-off-bare", {"base_url": fake.base_url})
        imports_help = _otel_modules(ws, ["--help"], bare)
        imports_chat = _otel_modules(ws, ["chat", "-p", "hi"], bare)
    cpu_on, cpu_off = [c for _, c in ons], [c for _, c in offs]
    wall_on, wall_off = [w for w, _ in ons], [w for w, _ in offs]
    cost = (median(cpu_on) - median(cpu_off)) / CALLS * 1000
    wall = (median(wall_on) - median(wall_off)) / CALLS * 1000
    log(f"target 22: {cost:.3f} ms CPU per tool call ({exported} MCP spans exported)")
    failed = "" if exported >= CALLS * ROUNDS else f"only {exported} MCP tool spans exported"
    rows.append(
        Row(
            "22",
            f"telemetry on: CPU cost per tool call (echo over stdio, {CALLS} calls a prompt)",
            "ms",
            cost,
            limit=2.0,
            absolute=True,
            codebot_samples=[c * 1000 / CALLS for c in cpu_on],
            baseline_samples=[c * 1000 / CALLS for c in cpu_off],
            failed=failed,
            note=f"CPU of codebot's process (all threads: the exporter's too) for a prompt of "
            f"{CALLS} calls: median {median(cpu_off) * 1000:.1f} ms off, "
            f"{median(cpu_on) * 1000:.1f} ms on; wall clock {median(wall_off) * 1000:.0f} ms "
            f"off, {median(wall_on) * 1000:.0f} ms on ({wall:+.2f} ms a call); {len(ons)} "
            f"prompts each, {ROUNDS} alternating rounds; exported to an OTLP receiver on loopback",
        )
    )
    rows.append(
        Row(
            "",
            "telemetry off: opentelemetry modules loaded by codebot --help / chat -p",
            "modules",
            float(imports_help + imports_chat),
            limit=0.0,
            absolute=True,
            note=f"--help {imports_help}, chat -p (no MCP server) {imports_chat}; with an MCP "
            "server the MCP SDK imports opentelemetry's API itself",
        )
    )
    return rows


TARGETS = {"22": target_22}
