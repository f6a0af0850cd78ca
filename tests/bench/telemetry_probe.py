"""The child of target 22: one chat runtime in this process, ``RUNS`` prompts of ``CALLS`` tool
calls each, timed; prints ``[[wall seconds, CPU seconds], ...]`` of each prompt as JSON (the
CPU time of this process, all its threads: the exporters' too).

``python -m tests.bench.telemetry_probe PROJECT RUNS`` (the project's settings name the model
endpoint, the echo server and ``telemetry``). The runtime is the one ``chat -p`` opens
(``cli.chat_runtime.open_runtime``): the same agent, gate, MCP client and telemetry; the
history is emptied between prompts so each sends the same requests.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import anyio


async def main(project: Path, runs: int) -> list[tuple[float, float]]:
    from codebot_mcp.cli.chat_runtime import ChatOptions, open_runtime
    from codebot_mcp.cli.runtime import Globals

    times: list[tuple[float, float]] = []
    options = ChatOptions(prompt="bench", yes=True)
    async with open_runtime(Globals(cwd=project), options, None, need_model=True) as runtime:
        await runtime.manager.start_all()
        agent = runtime.agent
        assert agent is not None
        for _ in range(runs):
            runtime.session.history.clear()
            began, cpu = time.perf_counter(), time.process_time()
            result = await agent.run("call the tools")
            times.append((time.perf_counter() - began, time.process_time() - cpu))
            bad = [r for r in result.tool_calls if r.result.is_error]
            if bad or not result.tool_calls:
                raise SystemExit(f"tool calls failed: {bad[:1] or 'none made'}")
    return times


if __name__ == "__main__":
    print(json.dumps(anyio.run(main, Path(sys.argv[1]), int(sys.argv[2]))))
