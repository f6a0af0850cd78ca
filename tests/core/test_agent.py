from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from codebot_mcp.core.agent.loop import Agent, AgentEvents
from codebot_mcp.core.agent.permissions import Decision, PermissionGate
from codebot_mcp.core.agent.session import Session
from codebot_mcp.core.agent.toolcalls import truncate
from codebot_mcp.core.errors import ModelError, TurnLimitError
from codebot_mcp.core.model.client import ChatModel
from codebot_mcp.core.model.stream import Reply, ToolCall
from codebot_mcp.core.tools.base import Capability, Tool, ToolResult
from codebot_mcp.core.tools.builtin import builtin_tools
from tests.core.fakes import ListSource, Meeting, MeetingTool, ScriptedTool
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI

pytestmark = pytest.mark.anyio


class Recorder(AgentEvents):
    def __init__(self) -> None:
        self.log: list[tuple[str, Any]] = []
        self.texts: list[str] = []

    def text(self, delta: str) -> None:
        self.texts.append(delta)

    def model_started(self, turn: int) -> None:
        self.log.append(("model", turn))

    def model_finished(self, reply: Reply) -> None:
        self.log.append(("reply", reply.finish_reason))

    def tools_changed(self) -> None:
        self.log.append(("tools_changed", None))

    def tool_started(self, call: ToolCall, tool: Tool) -> None:
        self.log.append(("start", call.name))

    def tool_finished(self, call: ToolCall, result: ToolResult, seconds: float) -> None:
        self.log.append(("end", call.name))

    def tool_denied(self, call: ToolCall, decision: Decision) -> None:
        self.log.append(("denied", decision.reason))


def make_agent(
    model: ChatModel,
    tmp_path: Path,
    extra: list[Tool] | None = None,
    *,
    source: ListSource | None = None,
    gate: PermissionGate | None = None,
    **kwargs: Any,
) -> Agent:
    session = Session([*builtin_tools(tmp_path), *(extra or [])], source, cwd=tmp_path)
    return Agent(session, model, gate or PermissionGate(), **kwargs)


def tool_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "tool"]


async def test_plain_answer_streams_and_lands_in_history(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    fake.queue(fo.text("Hi! How can I help?"))
    agent = make_agent(model, tmp_path)
    events = Recorder()
    result = await agent.run("hello", events)
    assert result.text == "Hi! How can I help?" and "".join(events.texts) == result.text
    assert result.turns == 1 and result.usage.prompt_tokens == 10
    assert agent.session.history == [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "Hi! How can I help?"},
    ]
    body = fake.bodies[0]
    assert body["messages"][0]["role"] == "system"
    assert [t["function"]["name"] for t in body["tools"]] == [
        "read",
        "edit",
        "write",
        "glob",
        "grep",
        "bash",
    ]


async def test_read_call_result_goes_back_with_matching_id(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("the answer is 42\n")
    fake.queue(fo.tool_calls(("read", {"path": "notes.txt"})), fo.text("It is 42."))
    events = Recorder()
    result = await make_agent(model, tmp_path).run("what is the answer?", events)
    assert result.text == "It is 42."
    follow_up = fake.bodies[1]
    assistant = follow_up["messages"][-2]
    assert assistant["content"] == "" and assistant["tool_calls"][0]["id"] == "call_1"
    (tool_msg,) = tool_messages(follow_up)
    assert tool_msg["tool_call_id"] == "call_1"
    assert tool_msg["content"] == "     1\tthe answer is 42"
    assert [e for e in events.log if e[0] in ("start", "end")] == [
        ("start", "read"),
        ("end", "read"),
    ]
    assert json.dumps(fake.bodies[0]["tools"]) == json.dumps(follow_up["tools"])
    assert fake.bodies[0]["messages"][0] == follow_up["messages"][0]


async def test_parallel_calls_run_concurrently_results_in_call_order(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    # No call returns until all three have started (serial execution would wait forever),
    # and "fast" finishes before both "slow" calls.
    meeting = Meeting(3, first="fast")
    slow = MeetingTool("slow", reply="slow done", meeting=meeting)
    fast = MeetingTool("fast", reply="fast done", meeting=meeting)
    fake.queue(fo.tool_calls(("slow", {}), ("fast", {"q": "x"}), ("slow", {})), fo.text("ok"))
    events = Recorder()
    with anyio.fail_after(20):
        await make_agent(model, tmp_path, [slow, fast]).run("go", events)
    assert [m["content"] for m in tool_messages(fake.bodies[1])] == [
        "slow done",
        "fast done",
        "slow done",
    ]
    assert [m["tool_call_id"] for m in tool_messages(fake.bodies[1])] == [
        "call_1",
        "call_2",
        "call_3",
    ]
    ends = [name for kind, name in events.log if kind == "end"]
    assert ends == ["fast", "slow", "slow"]  # finished out of order, sent back in order
    assert fast.calls == [{"q": "x"}]


async def test_invalid_json_and_unknown_tool_become_error_results(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    fake.queue(
        fo.tool_calls(("read", '{"path": "a.txt"'), ("nope", {}), ("read", "[1]")), fo.text("ok")
    )
    result = await make_agent(model, tmp_path).run("go")
    contents = [m["content"] for m in tool_messages(fake.bodies[1])]
    assert contents[0].startswith("Error: the arguments are not valid JSON")
    assert contents[1] == (
        "Error: there is no tool named 'nope'. "
        "Available tools: read, edit, write, glob, grep, bash."
    )
    assert contents[2].startswith("Error: the arguments must be a JSON object, got list")
    assert [r.result.is_error for r in result.tool_calls] == [True, True, True]


async def test_denied_call_tells_the_model(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    fake.queue(fo.tool_calls(("write", {"path": "x", "content": "y"})), fo.text("ok"))
    events = Recorder()
    result = await make_agent(model, tmp_path).run("go", events)
    (msg,) = tool_messages(fake.bodies[1])
    assert msg["content"].startswith("Error: Permission denied: the call to 'write' did not run")
    assert "--yes" in msg["content"]
    assert not (tmp_path / "x").exists()
    assert events.log[2][0] == "denied" and result.tool_calls[0].denied


async def test_long_result_is_cut_with_a_notice(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    big = ScriptedTool("big", reply="x" * 1000)
    fake.queue(fo.tool_calls(("big", {})), fo.text("ok"))
    await make_agent(model, tmp_path, [big], tool_result_max_tokens=50).run("go")
    (msg,) = tool_messages(fake.bodies[1])
    assert msg["content"].startswith("x" * 200 + "\n\n[codebot: this result was cut")
    assert "800 characters (about 200 tokens) were cut" in msg["content"]
    assert truncate("short", 50) == "short"


async def test_turn_limit(fake: FakeOpenAI, model: ChatModel, tmp_path: Path) -> None:
    fake.queue(fo.tool_calls(("read", {"path": "."})), fo.tool_calls(("read", {"path": "."})))
    agent = make_agent(model, tmp_path, max_turns=2)
    with pytest.raises(TurnLimitError, match="after 2 model turns"):
        await agent.run("loop forever")
    roles = [m["role"] for m in agent.session.history]
    assert roles == ["user", "assistant", "tool", "assistant", "tool"]


async def test_model_error_leaves_history_clean_and_next_prompt_works(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    fake.queue(fo.error(500), fo.text("fine now"))
    agent = make_agent(model, tmp_path)
    with pytest.raises(ModelError):
        await agent.run("first")
    assert agent.session.history == []
    assert (await agent.run("second")).text == "fine now"
    assert [m["content"] for m in fake.bodies[1]["messages"][1:]] == ["second"]


async def test_cancel_during_tool_calls_drops_the_unfinished_turn(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    fake.queue(
        fo.text("warming up"),
        # The read runs first; bash (a change) waits for it: the cancel comes mid-read.
        fo.tool_calls(("slow", {}), ("bash", {"command": "sleep 30"})),
        fo.text("after cancel"),
    )
    slow = ScriptedTool("slow", delay=30)
    agent = make_agent(model, tmp_path, [slow], gate=PermissionGate(assume_yes=True))
    await agent.run("first")
    async with anyio.create_task_group() as group:
        group.start_soon(agent.run, "second")
        with anyio.fail_after(5):
            await slow.started.wait()
        group.cancel_scope.cancel()
    assert slow.finished == 0  # cancelled mid-call (uncancelled, it would end after 30 s)
    assert [m["content"] for m in agent.session.history] == ["first", "warming up"]
    assert (await agent.run("third")).text == "after cancel"
    sent = fake.bodies[2]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]


async def test_cancel_during_stream(fake: FakeOpenAI, model: ChatModel, tmp_path: Path) -> None:
    fake.queue(fo.hang(10))
    agent = make_agent(model, tmp_path)
    with anyio.move_on_after(0.5) as scope:  # the stream stays silent for 10 s
        await agent.run("hang")
    assert scope.cancelled_caught and agent.session.history == []


async def test_new_tools_reach_the_next_request(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    source = ListSource(instructions="## m\nuse a")

    class Mutating(ScriptedTool):
        async def execute(self, arguments: Any) -> ToolResult:
            source.publish([self, ScriptedTool("mcp__m__b", reply="b ran")])
            return ToolResult("added b")

    source.publish([Mutating("mcp__m__a")])
    fake.queue(fo.tool_calls(("mcp__m__a", {})), fo.tool_calls(("mcp__m__b", {})), fo.text("ok"))
    events = Recorder()
    await make_agent(model, tmp_path, source=source).run("go", events)
    tools = [[t["function"]["name"] for t in b["tools"]] for b in fake.bodies]
    assert tools[0][6:] == ["mcp__m__a"]
    assert tools[1][6:] == tools[2][6:] == ["mcp__m__a", "mcp__m__b"]
    assert events.log.count(("tools_changed", None)) == 2  # the first pick-up, then the change
    assert tool_messages(fake.bodies[2])[-1]["content"] == "b ran"
    assert "## m\n- mcp__m__a" in fake.bodies[0]["messages"][0]["content"]
    assert "use a" in fake.bodies[0]["messages"][0]["content"]


async def test_plan_mode_sends_only_read_tools(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    fake.queue(fo.text("plan"))
    agent = make_agent(model, tmp_path, [ScriptedTool("mcp__x__rm", Capability.WRITE)])
    agent.session.set_plan_mode(True)
    await agent.run("plan it")
    assert [t["function"]["name"] for t in fake.bodies[0]["tools"]] == ["read", "glob", "grep"]


async def test_full_tool_turn_against_llama_cpp_quirks(
    llama: FakeOpenAI, llama_model: ChatModel, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    llama.queue(fo.tool_calls(("read", {"path": "a.txt"})), fo.text("alpha it is"))
    agent = make_agent(llama_model, tmp_path)
    result = await agent.run("read a.txt")
    assert result.text == "alpha it is"
    assert [b["stream"] for b in llama.bodies] == [True, False, False]
    assert all(b["tool_choice"] == "auto" for b in llama.bodies)


class _CleanTool(ScriptedTool):
    """A tool whose results were scrubbed where they entered (as an MCP result is)."""

    async def execute(self, arguments: Any) -> ToolResult:
        plain = await super().execute(arguments)
        return ToolResult(plain.text, data={"echo": plain.text}, scrubbed=True)


async def test_a_result_is_scrubbed_once_by_the_loop_unless_it_was_where_it_entered(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    """A local tool's result is scrubbed of every known secret in the loop; one marked
    ``scrubbed`` (the bridge's, at the MCP boundary) is not scrubbed a second time."""
    from codebot_mcp.core.secrets.redact import SECRETS

    secret = "sk-scrub-once-4f1d8a9c2b7e"
    SECRETS.add([secret])
    local = ScriptedTool("local", reply=f"key {secret}")
    clean = _CleanTool("clean", reply=f"as it came {secret}")
    fake.queue(fo.tool_calls(("local", {}), ("clean", {})), fo.text("done"))
    await make_agent(model, tmp_path, [local, clean]).run("go")
    local_msg, clean_msg = tool_messages(fake.bodies[1])
    assert local_msg["content"] == "key ***"
    assert clean_msg["content"] == f"as it came {secret}"  # trusted: scrubbed where it entered
