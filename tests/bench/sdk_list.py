"""Baseline for ``codebot mcp list``: the MCP SDK used directly, as a minimal script would.

Run: ``python tests/bench/sdk_list.py legacy|auto COMMAND [ARGS...]``. Connects to one stdio
server, lists its tools and prints each name with the first line of its description.
"""

import os
import sys
from typing import TextIO

import anyio
from mcp import Client, StdioServerParameters, stdio_client


async def main(errlog: TextIO) -> None:
    mode, command, *args = sys.argv[1:]
    params = StdioServerParameters(command=command, args=args)
    async with Client(stdio_client(params, errlog=errlog), mode=mode) as client:
        result = await client.list_tools()
    for tool in result.tools:
        print(f"{tool.name}  {(tool.description or '').strip().splitlines()[0][:70]}")


with open(os.devnull, "w") as devnull:
    anyio.run(main, devnull)
