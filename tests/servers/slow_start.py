"""A server that takes ``--delay SECONDS`` (default 1.0) to start (proves parallel start).

It sleeps BEFORE importing the SDK and before reading stdin, then serves an
SDK ``MCPServer`` named "slow_start" with one tool ``hello()`` that returns
``hello from slow_start``. Total start time is the delay plus the normal SDK
boot time.

Run: ``python -m tests.servers.slow_start [--delay SECONDS]``
"""

import argparse
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--delay", type=float, default=1.0, help="seconds to sleep first")
    args = parser.parse_args()
    time.sleep(max(0.0, args.delay))

    from mcp.server.mcpserver import MCPServer

    mcp = MCPServer("slow_start", version="0.1.0")

    @mcp.tool(structured_output=False)
    def hello() -> str:
        """Say hello."""
        return "hello from slow_start"

    mcp.run("stdio")


if __name__ == "__main__":
    main()
