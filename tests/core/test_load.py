"""Load: 200 MCP tool calls in one chat session leak no file descriptors and no tasks.

In process, at the session level: a real ``Manager`` with the echo server over stdio, the real
``openai`` client against the loopback model scripted with 20 turns of 10 parallel calls.
"""

from __future__ import annotations

import asyncio
import os

import anyio
import pytest

from codebot_mcp.core.agent.loop import Agent
from codebot_mcp.core.agent.permissions import PermissionGate
from codebot_mcp.core.agent.session import Session
from codebot_mcp.core.tools.builtin import builtin_tools
from codebot_mcp.mcpbridge.connection.manager import Manager
from tests.core.conftest import make_model
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import make_server
from tests.servers.util import REPO_ROOT

pytestmark = pytest.mark.anyio

PROMPTS = 4
TURNS_PER_PROMPT = 5
CALLS_PER_TURN = 10


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


async def settle(target: int, seconds: float = 5.0) -> int:
    """Wait for the count of open fds to come down to ``target`` (server threads close late)."""
    with anyio.move_on_after(seconds):
        while open_fds() > target:  # noqa: ASYNC110 - nothing to wait on but the count
            await anyio.sleep(0.05)
    return open_fds()


def script() -> list[fo.Turn]:
    turns: list[fo.Turn] = []
    for prompt in range(PROMPTS):
        for turn in range(TURNS_PER_PROMPT):
            calls = [
                ("mcp__echo__echo", {"text": f"p{prompt} t{turn} c{call}"})
                for call in range(CALLS_PER_TURN)
            ]
            turns.append(fo.tool_calls(*calls))
        turns.append(fo.text(f"done {prompt}"))
    return turns


async def test_200_tool_calls_leak_no_fds_or_tasks(fake: FakeOpenAI) -> None:
    fake.queue(*script())
    tasks_before = len(asyncio.all_tasks())
    fds_before = open_fds()
    echo = make_server("echo", "echo")
    with anyio.fail_after(120):
        async with Manager({"echo": echo}) as manager:
            await manager.start_all()
            session = Session(builtin_tools(REPO_ROOT), manager, cwd=REPO_ROOT)
            model = make_model(fake)
            agent = Agent(session, model, PermissionGate(), max_turns=TURNS_PER_PROMPT + 1)
            results = [await agent.run("warm up: echo ten things, five times")]
            fds_warm = open_fds()
            tasks_warm = len(asyncio.all_tasks())
            for prompt in range(1, PROMPTS):
                results.append(await agent.run(f"prompt {prompt}"))
            # Steady state: more calls do not mean more descriptors or tasks.
            assert await settle(fds_warm) <= fds_warm
            assert len(asyncio.all_tasks()) == tasks_warm
            await model.aclose()
    calls = [r for result in results for r in result.tool_calls]
    assert len(calls) == PROMPTS * TURNS_PER_PROMPT * CALLS_PER_TURN == 200
    assert all(not r.result.is_error for r in calls)
    assert [r.result.text for r in calls[:2]] == ["p0 t0 c0", "p0 t0 c1"]
    assert [r.text for r in results] == [f"done {p}" for p in range(PROMPTS)]
    # After the session: every pipe, socket and log file is closed again; no task remains.
    assert await settle(fds_before) == fds_before
    assert len(asyncio.all_tasks()) == tasks_before
    assert fake.remaining == 0
