"""Issue 32's measurement of the REPL (target 19): its own time to show a tool result.

19: one finished call whose result has 10,000 lines of 80 characters (800 kB), through the
    REPL's real view (``TurnView.tool_finished``: the mark line, then the preview, masked and
    escaped), stderr going to memory so the terminal's speed is not measured. Reported beside
    it, as information: the same output streamed into the live preview while ``bash`` runs
    (64 kB chunks, as the pipe gives them), for all 10,000 lines together.
"""

from __future__ import annotations

import contextlib
import io
import statistics
import time
from collections.abc import Callable
from typing import Any

from codebot_mcp.cli.repl.chatview import Status, TurnView
from codebot_mcp.core.model.stream import ToolCall
from codebot_mcp.core.tools.base import ToolResult
from tests.bench.harness import Row

Log = Callable[[str], None]

LINES = 10_000
SAMPLES = 200


def _text() -> str:
    return "\n".join(f"{i:>6} " + "x" * 73 for i in range(LINES))


def _finish_once(text: str) -> float:
    view = TurnView(Status(io.StringIO()), stream_text=False, previews=True)
    call = ToolCall("c1", "bash", '{"command": "build"}')
    result = ToolResult(text, data={"sandbox": "workspace-write"})
    with contextlib.redirect_stderr(io.StringIO()):
        began = time.perf_counter()
        view.tool_finished(call, result, 1.0)
        return (time.perf_counter() - began) * 1000


def _stream_once(data: bytes) -> float:
    view = TurnView(Status(io.StringIO()), stream_text=False, previews=True)
    call = ToolCall("c1", "bash", '{"command": "build"}')
    with contextlib.redirect_stderr(io.StringIO()):
        view.tool_started(call, None)  # type: ignore[arg-type]  # the view never reads it
        began = time.perf_counter()
        for start in range(0, len(data), 65536):
            view.watch(data[start : start + 65536])
        return (time.perf_counter() - began) * 1000


def target_19(ws: Any, n: int, log: Log) -> list[Row]:
    text = _text()
    samples = [_finish_once(text) for _ in range(SAMPLES)]
    streamed = [_stream_once(text.encode()) for _ in range(max(n, 5))]
    value = statistics.median(samples)
    worst = sorted(samples)[int(len(samples) * 0.99)]
    log(f"target 19: median {value:.3f} ms, p99 {worst:.3f} ms")
    return [
        Row(
            "19",
            f"REPL: preview of a {LINES:,}-line tool result (own time)",
            "ms",
            value,
            limit=20.0,
            absolute=True,
            note=f"median of {SAMPLES}; p99 {worst:.3f} ms",
            codebot_samples=samples,
        ),
        Row(
            "",
            f"REPL: {LINES:,} lines of bash output streamed into the live preview (all chunks)",
            "ms",
            statistics.median(streamed),
            codebot_samples=streamed,
        ),
    ]


TARGETS = {"19": target_19}
