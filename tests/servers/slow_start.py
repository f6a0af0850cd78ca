"""A server that takes ``--delay SECONDS`` (default 1.0) to start (proves parallel start).

It sleeps before reading stdin, then serves, on the raw two-era base
(:mod:`tests.servers._era`, answering as the same server on the SDK's ``MCPServer`` did), a
server named "slow_start" with one tool ``hello()`` that returns ``hello from slow_start``.
Total start time is the delay plus about 50 ms (no SDK import).

With ``--barrier DIR --count N`` it also waits, before serving, until N processes have
checked in under DIR (each writes a file named after its pid): N of them can then only
finish their handshakes if all N were started without waiting for each other. After 60 s
without the others it exits with code 3.

Run: ``python -m tests.servers.slow_start [--delay SECONDS] [--barrier DIR --count N]``
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, ClassVar

from tests.servers._era import Call, EraServer, text_result, tool

BARRIER_SECONDS = 60.0


class SlowStart(EraServer):
    name = "slow_start"
    tools: ClassVar[list[dict[str, Any]]] = [tool("hello", "Say hello.")]

    def call_tool(self, name: str, arguments: dict[str, Any], call: Call) -> dict[str, Any]:
        return text_result("hello from slow_start")


def _barrier(directory: Path, count: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / str(os.getpid())).touch()
    deadline = time.monotonic() + BARRIER_SECONDS
    while len(list(directory.iterdir())) < count:
        if time.monotonic() > deadline:
            sys.exit(3)
        time.sleep(0.02)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--delay", type=float, default=1.0, help="seconds to sleep first")
    parser.add_argument("--barrier", type=Path, help="wait for --count peers under this dir")
    parser.add_argument("--count", type=int, default=1, help="how many peers the barrier needs")
    args = parser.parse_args()
    time.sleep(max(0.0, args.delay))
    if args.barrier is not None:
        _barrier(args.barrier, args.count)

    SlowStart().serve()


if __name__ == "__main__":
    main()
