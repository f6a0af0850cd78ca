"""Calls that change things run one at a time, in order (issue 21, part 4).

Reads of one turn still run together; a call that may write (``edit``, ``write``, ``bash``,
an MCP tool not classified read) waits for the reads before it, is approved (and its diff
computed) against the files as they are then, and runs alone.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from codebot_mcp.core.agent.loop import Agent, AgentEvents
from codebot_mcp.core.agent.permissions import Answer, ApprovalRequest, PermissionGate
from codebot_mcp.core.agent.session import Session
from codebot_mcp.core.model.client import ChatModel
from codebot_mcp.core.model.stream import ToolCall
from codebot_mcp.core.tools.base import Capability, Tool, ToolResult
from codebot_mcp.core.tools.builtin import builtin_tools
from tests.core.fakes import Meeting, MeetingTool, ScriptedTool
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI

pytestmark = pytest.mark.anyio


class Order(AgentEvents):
    def __init__(self) -> None:
        self.log: list[str] = []

    def tool_started(self, call: ToolCall, tool: Tool) -> None:
        self.log.append(f"start {call.name}")

    def tool_finished(self, call: ToolCall, result: ToolResult, seconds: float) -> None:
        self.log.append(f"end {call.name}")


def agent_for(model: ChatModel, root: Path, gate: PermissionGate, extra: list[Tool]) -> Agent:
    session = Session([*builtin_tools(root), *extra], None, cwd=root)
    return Agent(session, model, gate)


async def test_two_edits_of_one_file_in_one_turn_both_apply(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    target = tmp_path / "app.py"
    target.write_text("alpha = 1\nbeta = 2\n")
    fake.queue(
        fo.tool_calls(
            ("edit", {"path": "app.py", "old_string": "alpha = 1", "new_string": "alpha = 10"}),
            ("edit", {"path": "app.py", "old_string": "beta = 2", "new_string": "beta = 20"}),
        ),
        fo.text("ok"),
    )
    result = await agent_for(model, tmp_path, PermissionGate(assume_yes=True), []).run("go")
    assert [r.result.is_error for r in result.tool_calls] == [False, False]
    assert target.read_text() == "alpha = 10\nbeta = 20\n"


async def test_the_diff_asked_about_is_the_file_as_it_is_then(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("one\n")
    previews: list[str | None] = []

    async def approve(request: ApprovalRequest) -> Answer:
        previews.append(request.preview)
        return Answer.ONCE

    fake.queue(
        fo.tool_calls(
            ("edit", {"path": "notes.txt", "old_string": "one", "new_string": "two"}),
            ("edit", {"path": "notes.txt", "old_string": "two", "new_string": "three"}),
        ),
        fo.text("ok"),
    )
    result = await agent_for(model, tmp_path, PermissionGate(approver=approve), []).run("go")
    assert [r.result.is_error for r in result.tool_calls] == [False, False]
    assert target.read_text() == "three\n"
    first, second = previews
    assert first is not None and "-one" in first and "+two" in first
    # Computed after the first edit ran: the second sees "two", not a failing match on "one".
    assert second is not None and "-two" in second and "+three" in second


async def test_reads_run_together_and_a_write_waits_for_them_and_runs_alone(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    # The two reads before the write must run together (neither returns before both
    # started); the write starts only after both ended, and the read after it waits for it.
    meeting = Meeting(2, first="look_a")
    look_a = MeetingTool("look_a", meeting=meeting)
    look_b = MeetingTool("look_b", meeting=meeting)
    change = ScriptedTool("change", capability=Capability.WRITE, delay=0.2)
    after = ScriptedTool("look_after")
    fake.queue(
        fo.tool_calls(("look_a", {}), ("look_b", {}), ("change", {}), ("look_after", {})),
        fo.text("ok"),
    )
    events = Order()
    gate = PermissionGate(assume_yes=True)
    with anyio.fail_after(20):
        await agent_for(model, tmp_path, gate, [look_a, look_b, change, after]).run("go", events)
    log = events.log
    assert log.index("start look_b") < log.index("end look_a")  # together
    assert log.index("start change") > max(log.index("end look_a"), log.index("end look_b"))
    assert log.index("start look_after") > log.index("end change")  # alone, in order


async def test_mcp_tools_not_classified_read_run_in_order(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    first = ScriptedTool("mcp__s__first", capability=Capability.UNKNOWN, delay=0.3, server="s")
    second = ScriptedTool("mcp__s__second", capability=Capability.NETWORK, server="s")
    fake.queue(fo.tool_calls(("mcp__s__first", {}), ("mcp__s__second", {})), fo.text("ok"))
    events = Order()
    gate = PermissionGate(assume_yes=True)
    await agent_for(model, tmp_path, gate, [first, second]).run("go", events)
    assert events.log == [
        "start mcp__s__first",
        "end mcp__s__first",
        "start mcp__s__second",
        "end mcp__s__second",
    ]
