"""An SDK-free echo server that sleeps ``--delay`` seconds before it starts (benchmarks).

The delay is a plain ``time.sleep`` taken before anything else is imported, so five of these
"slow" servers cost almost no CPU while they wait (as ``slow_start`` now does too; built on
the SDK, it burned a second of CPU each). Then it serves, through :mod:`tests.servers._raw`:

- ``initialize`` (server name ``--name``, default "sleepy"), ``ping``;
- ``tools/list``: one tool ``echo(text)``;
- ``tools/call``: ``echo`` returns ``text`` unchanged as one text block.

``--timing-log FILE`` appends, when stdin closes, one line per ``tools/call``: ``<start> <end>`` in
``time.perf_counter()`` seconds (CLOCK_MONOTONIC on Linux, so comparable with the timestamps of
other processes on the same machine). The benchmark subtracts this server time from codebot's.

Run: ``python -m tests.servers.sleepy_raw [--delay SECONDS] [--name NAME] [--timing-log FILE]``
"""

from __future__ import annotations

import sys
import time


def _option(name: str, default: str | None) -> str | None:
    argv = sys.argv[1:]
    if name in argv and argv.index(name) + 1 < len(argv):
        return argv[argv.index(name) + 1]
    return default


def main() -> None:
    time.sleep(max(0.0, float(_option("--delay", "0") or 0)))

    from typing import Any

    from tests.servers._raw import RpcError, initialize_result, serve, text_result

    name = _option("--name", "sleepy") or "sleepy"
    timing_path = _option("--timing-log", None)
    spans: list[tuple[float, float]] = []
    echo_tool = {
        "name": "echo",
        "description": "Echo the text back.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "What to echo"}},
            "required": ["text"],
        },
    }

    def call_tool(params: dict[str, Any]) -> dict[str, Any]:
        start = time.perf_counter()
        if params.get("name") != "echo":
            raise RpcError(-32602, f"Unknown tool: {params.get('name')}")
        result = text_result(str((params.get("arguments") or {}).get("text", "")))
        spans.append((start, time.perf_counter()))
        return result

    try:
        serve(
            {
                "initialize": lambda params: initialize_result(params, name=name),
                "ping": lambda params: {},
                "tools/list": lambda params: {"tools": [echo_tool]},
                "tools/call": call_tool,
            }
        )
    finally:  # written at the end (stdin closed), so logging costs nothing during the calls
        if timing_path:
            with open(timing_path, "a", encoding="utf-8") as log:
                log.writelines(f"{a:.6f} {b:.6f}\n" for a, b in spans)


if __name__ == "__main__":
    main()
