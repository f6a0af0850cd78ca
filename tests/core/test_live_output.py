"""``core.tools.live``: a running ``bash`` hands its output to the watcher as it comes, and a
watcher that fails changes nothing the tool returns."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from codebot_mcp.core.tools import live
from codebot_mcp.core.tools.builtin.bash import BashTool


@pytest.mark.anyio
async def test_bash_output_reaches_the_watcher_while_it_runs(tmp_path: Path) -> None:
    seen: list[tuple[float, bytes]] = []
    token = live.WATCHER.set(lambda data: seen.append((time.monotonic(), data)))
    try:
        began = time.monotonic()
        result = await BashTool(tmp_path).execute({"command": "echo early; sleep 1; echo late"})
        ended = time.monotonic()
    finally:
        live.WATCHER.reset(token)
    assert result.text == "early\nlate"
    assert b"".join(d for _, d in seen) == b"early\nlate\n"
    first = next(t for t, d in seen if b"early" in d)
    assert first - began < (ended - began) - 0.5  # it came before the command ended


@pytest.mark.anyio
async def test_a_failing_watcher_does_not_fail_the_tool(tmp_path: Path) -> None:
    def broken(data: bytes) -> None:
        raise RuntimeError("display gone")

    token = live.WATCHER.set(broken)
    try:
        result = await BashTool(tmp_path).execute({"command": "echo one; echo two"})
    finally:
        live.WATCHER.reset(token)
    assert not result.is_error and result.text == "one\ntwo"
