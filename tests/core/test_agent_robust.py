"""What a real local model showed: each failure mode, driven through the loopback model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.core.agent.context import Compaction, ContextBudget
from codebot_mcp.core.agent.loop import Agent, AgentEvents, Outcome, RepeatedCallError
from codebot_mcp.core.agent.permissions import PermissionGate
from codebot_mcp.core.agent.session import Session
from codebot_mcp.core.config.settings import Settings
from codebot_mcp.core.model.client import (
    ChatModel,
    ContextOverflowError,
    Retry,
    StreamDroppedError,
    create_client,
)
from codebot_mcp.core.model.config import ModelConfig, resolve_config
from codebot_mcp.core.model.stream import ToolCall
from codebot_mcp.core.tools.base import ToolResult
from codebot_mcp.core.tools.builtin import builtin_tools
from tests.core.fakes import ScriptedTool
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI

pytestmark = pytest.mark.anyio


class Events(AgentEvents):
    def __init__(self) -> None:
        self.retries: list[Retry] = []
        self.rejected: list[tuple[str, str]] = []
        self.compactions: list[Compaction] = []
        self.notices: list[str] = []

    def model_retrying(self, retry: Retry) -> None:
        self.retries.append(retry)

    def tool_rejected(self, call: ToolCall, result: ToolResult) -> None:
        self.rejected.append((call.name, result.text))

    def compacted(self, compaction: Compaction) -> None:
        self.compactions.append(compaction)

    def notice(self, text: str) -> None:
        self.notices.append(text)


def model_on(server: FakeOpenAI, name: str = "fake-model", **config: Any) -> ChatModel:
    cfg = ModelConfig(name, server.base_url, "sk-test-key-123456", None, **config)
    return ChatModel(create_client(cfg), cfg)


def agent_on(model: ChatModel, tmp_path: Path, **kwargs: Any) -> Agent:
    tools = [*builtin_tools(tmp_path), ScriptedTool("probe", reply="same")]
    session = Session(tools, cwd=tmp_path)
    return Agent(session, model, PermissionGate(assume_yes=True), **kwargs)


async def test_overflow_is_compacted_and_retried_once(fake: FakeOpenAI, tmp_path: Path) -> None:
    model = model_on(fake)
    agent = agent_on(model, tmp_path)
    agent.session.history.extend(
        [
            {"role": "user", "content": "earlier question"},
            {"role": "assistant", "content": "earlier answer " * 50},
        ]
    )
    fake.queue(fo.overflow(4096), fo.text("summary of before"), fo.text("fits now"))
    events = Events()
    result = await agent.run("now", events)
    assert result.text == "fits now" and agent.budget.window == 4096
    assert [c.summarised_messages for c in events.compactions] == [2]
    summary_request, retried = fake.bodies[1], fake.bodies[2]
    assert "earlier answer" in summary_request["messages"][1]["content"]
    note, summary = retried["messages"][1:3]  # codebot's fixed note, then the summary
    assert note["role"] == "user" and "summary of before" not in note["content"]
    assert summary["role"] == "assistant" and "summary of before" in summary["content"]
    assert retried["messages"][-1] == {"role": "user", "content": "now"}
    await model.aclose()


async def test_overflow_with_nothing_to_compact_says_so(fake: FakeOpenAI, tmp_path: Path) -> None:
    model = model_on(fake)
    fake.queue(fo.overflow(2048))
    with pytest.raises(ContextOverflowError, match=r"context window \(2048 tokens\)") as caught:
        await agent_on(model, tmp_path).run("hello")
    hint = caught.value.hint or ""
    assert "nothing older to compact" in hint and "supports chat" not in hint
    await model.aclose()


async def test_empty_answer_is_its_own_outcome(fake: FakeOpenAI, tmp_path: Path) -> None:
    model = model_on(fake)
    fake.queue(fo.text(""))
    agent = agent_on(model, tmp_path)
    result = await agent.run("hi")
    assert result.outcome is Outcome.EMPTY and result.finish_reason == "stop"
    # An ordinary empty stream is not llama.cpp's quirk: streaming stays on.
    assert model.stream_with_tools and len(fake.bodies) == 1 and fake.bodies[0]["stream"]
    await model.aclose()


async def test_dropped_stream_keeps_partial_answer(fake: FakeOpenAI, tmp_path: Path) -> None:
    model = model_on(fake)
    agent = agent_on(model, tmp_path)
    fake.queue(fo.drop(after_text="half of it"))
    with pytest.raises(StreamDroppedError):
        await agent.run("go")
    assert agent.last is not None and agent.last.text == "half of it"
    assert agent.last.outcome is Outcome.ERROR
    assert agent.session.history[-1] == {"role": "assistant", "content": "half of it"}
    await model.aclose()


async def test_retries_are_visible(fake: FakeOpenAI, tmp_path: Path) -> None:
    model = model_on(fake, retries=2)
    fake.queue(
        fo.error(503, "busy", **{"x-should-retry": "true", "retry-after": "0"}), fo.text("ok")
    )
    events = Events()
    assert (await agent_on(model, tmp_path).run("hi", events)).text == "ok"
    assert [(r.attempt, r.of) for r in events.retries] == [(1, 2)]
    assert "busy" in events.retries[0].reason
    await model.aclose()


def test_no_retries_for_loopback_unless_configured() -> None:
    assert resolve_config(Settings(), base_url="http://127.0.0.1:9/v1").retries == 0
    assert resolve_config(Settings(), base_url="http://localhost:9/v1").retries == 0
    assert resolve_config(Settings(model_retries=3), base_url="http://[::1]:9/v1").retries == 3
    remote = resolve_config(Settings(), base_url="https://api.example.com/v1")
    assert remote.retries == 2


async def test_max_tokens_is_sent(fake: FakeOpenAI, tmp_path: Path) -> None:
    config = resolve_config(Settings(max_tokens=321), base_url=fake.base_url)
    model = ChatModel(create_client(config), config)
    fake.queue(fo.text("ok"))
    await agent_on(model, tmp_path).run("hi")
    assert fake.bodies[0]["max_tokens"] == 321
    await model.aclose()


async def test_repeated_identical_calls_are_told_then_stopped(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    model = model_on(fake)
    agent = agent_on(model, tmp_path)
    same = fo.tool_calls(("probe", {"q": "x"}))
    fake.queue(same, same, same, same, fo.text("never"))
    events = Events()
    with pytest.raises(RepeatedCallError, match="same arguments 4 times"):
        await agent.run("loop", events)
    probe = agent.session.find_tool("probe")
    assert isinstance(probe, ScriptedTool) and len(probe.calls) == 2
    told = [text for name, text in events.rejected if name == "probe"]
    assert len(told) == 2 and "will not change" in told[0]
    assert fake.remaining == 1
    await model.aclose()


async def test_invalid_and_unknown_calls_fire_events(fake: FakeOpenAI, tmp_path: Path) -> None:
    model = model_on(fake)
    fake.queue(fo.tool_calls(("nope", {}), ("read", '{"path": ')), fo.text("done"))
    events = Events()
    result = await agent_on(model, tmp_path).run("x", events)
    assert [name for name, _ in events.rejected] == ["nope", "read"]
    assert all(r.rejected for r in result.tool_calls)
    await model.aclose()


async def test_streamed_turn_without_usage_is_unknown(fake: FakeOpenAI, tmp_path: Path) -> None:
    model = model_on(fake)
    fake.queue(fo.no_usage(fo.text("hi")))
    result = await agent_on(model, tmp_path).run("x")
    assert not result.usage.known and result.usage.as_dict()["prompt_tokens"] is None
    assert result.usage.unreported == 1
    await model.aclose()


async def test_served_model_is_checked(fake: FakeOpenAI, tmp_path: Path) -> None:
    model = model_on(fake, name="big-model")
    fake.queue(fo.served_as("tiny-model", fo.text("a")), fo.served_as("tiny-model", fo.text("b")))
    agent = agent_on(model, tmp_path)
    events = Events()
    await agent.run("x", events)
    await agent.run("y", events)
    assert len(events.notices) == 1 and "'tiny-model'" in events.notices[0]
    assert model.served_model == "tiny-model"
    await model.aclose()


async def test_dated_snapshot_is_the_same_model(fake: FakeOpenAI, tmp_path: Path) -> None:
    model = model_on(fake, name="gpt-4o")
    fake.queue(fo.served_as("gpt-4o-2024-08-06", fo.text("a")))
    events = Events()
    await agent_on(model, tmp_path).run("x", events)
    assert events.notices == []
    await model.aclose()


async def test_budget_compacts_before_the_window_is_passed(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    model = model_on(fake)
    agent = agent_on(model, tmp_path, budget=ContextBudget(4000))
    history = agent.session.history
    for i in range(6):
        history.append({"role": "user", "content": f"q{i}"})
        history.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": f"c{i}",
                        "type": "function",
                        "function": {"name": "read", "arguments": "{}"},
                    }
                ],
            }
        )
        history.append({"role": "tool", "tool_call_id": f"c{i}", "content": "x" * 2000})
        history.append({"role": "assistant", "content": f"a{i}"})
    fake.queue(fo.text("fine"))
    events = Events()
    await agent.run("next", events)
    (done,) = events.compactions
    assert done.cut_results == 6 and done.summarised_messages == 0  # cutting was enough
    assert len(fake.bodies) == 1
    assert all(len(m.get("content") or "") < 400 for m in fake.bodies[0]["messages"][1:])
    await model.aclose()


async def test_servers_that_reject_max_tokens_get_max_completion_tokens(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    model = model_on(fake, max_tokens=100)
    fake.queue(
        fo.error(
            400,
            "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
        ),
        fo.text("ok"),
        fo.text("again"),
    )
    agent = agent_on(model, tmp_path)
    assert (await agent.run("hi")).text == "ok"
    await agent.run("more")
    first, second, third = fake.bodies
    assert first["max_tokens"] == 100 and "max_completion_tokens" not in first
    assert second["max_completion_tokens"] == 100 and "max_tokens" not in second
    assert third["max_completion_tokens"] == 100  # remembered for the session
    await model.aclose()


async def test_a_small_older_part_is_not_summarised_unasked(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    model = model_on(fake)
    agent = agent_on(model, tmp_path, budget=ContextBudget(8000, reserve=1000))
    agent.session.history.extend(
        [{"role": "user", "content": "earlier"}, {"role": "assistant", "content": "short"}]
    )
    fake.queue(fo.text("answered"))  # a summary request would take this turn
    events = Events()
    # The current prompt alone passes the limit (80% less the reserve), not the window.
    result = await agent.run("x" * 20_000, events)
    assert result.text == "answered" and events.compactions == []
    assert agent.budget.summary_requests == 0 and len(fake.bodies) == 1
    await model.aclose()


async def test_llama_server_overflow_is_recognised_with_its_n_ctx(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    model = model_on(fake)
    agent = agent_on(model, tmp_path)
    agent.session.history.extend(
        [{"role": "user", "content": "before"}, {"role": "assistant", "content": "old " * 2000}]
    )
    fake.queue(fo.llama_cpp_overflow(n_ctx=4096), fo.text("summary"), fo.text("fits"))
    result = await agent.run("now", Events())
    assert result.text == "fits" and agent.budget.window == 4096
    assert len(fake.bodies) == 3  # overflow, summary, retry
    await model.aclose()
