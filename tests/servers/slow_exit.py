"""A raw JSON-RPC server (tool ``echo``) that takes its time to exit once stdin closes.

``--linger SECONDS`` (default 0.3): after stdin reaches EOF it waits this long, then exits.
``--orphan``: at start it leaves behind a process of its own session (``setsid``) that ignores
SIGTERM for 30 s, so codebot's exit sweep has to wait for it (SIGTERM, grace, SIGKILL): the
server then exits while codebot is still there, after its event loop has closed.

Run: ``python -m tests.servers.slow_exit [--linger SECONDS] [--orphan]``
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from tests.servers._raw import initialize_result, serve, text_result

TOOLS = [{"name": "echo", "inputSchema": {"type": "object", "properties": {}}}]
ORPHAN = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(30)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--linger", type=float, default=0.3)
    parser.add_argument("--orphan", action="store_true")
    args = parser.parse_args()
    if args.orphan:
        subprocess.Popen(
            [sys.executable, "-c", ORPHAN],
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    serve(
        {
            "initialize": lambda params: initialize_result(params, name="slowexit"),
            "ping": lambda params: {},
            "tools/list": lambda params: {"tools": TOOLS},
            "tools/call": lambda params: text_result("echo"),
        }
    )
    time.sleep(args.linger)


if __name__ == "__main__":
    main()
