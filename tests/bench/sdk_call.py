"""Baseline for ``codebot mcp call``: the MCP SDK used directly, as a minimal script would.

Run: ``python tests/bench/sdk_call.py legacy|auto TOOL KEY=VALUE COMMAND [ARGS...]``. Connects
to one stdio server, calls one tool with one string argument and prints the text it returns.
"""

import os
import sys
from typing import TextIO

import anyio
from mcp import Client, StdioServerParameters, stdio_client


async def main(errlog: TextIO) -> None:
    mode, tool, pair, command, *args = sys.argv[1:]
    key, _, value = pair.partition("=")
    params = StdioServerParameters(command=command, args=args)
    async with Client(stdio_client(params, errlog=errlog), mode=mode) as client:
        result = await client.call_tool(tool, {key: value})
    for block in result.content:
        if block.type == "text":
            print(block.text)


with open(os.devnull, "w") as devnull:
    anyio.run(main, devnull)
