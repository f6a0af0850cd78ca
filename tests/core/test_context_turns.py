"""Compaction inside the current turn and the usage-anchored estimate, step by step, with the
summaries asked of the loopback model."""

from __future__ import annotations

import json
from typing import Any

import pytest

from codebot_mcp.core.agent.context import (
    CUT_NOTE,
    TURN_SUMMARY_NOTE,
    ContextBudget,
)
from codebot_mcp.core.model.client import ChatModel
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI

pytestmark = pytest.mark.anyio


def step(n: int, size: int) -> list[dict[str, Any]]:
    call = {"id": f"c{n}", "type": "function", "function": {"name": "read", "arguments": "{}"}}
    return [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"c{n}", "content": f"result {n} " + "x" * size},
    ]


def a_turn(steps: int, size: int) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = [{"role": "user", "content": "the task, word for word"}]
    for n in range(steps):
        history += step(n, size)
    return history


def test_a_server_reporting_too_few_tokens_does_not_lower_the_estimate() -> None:
    budget = ContextBudget(8000)
    messages = [{"role": "user", "content": "y" * 8000}]
    local = budget.cost(messages, [])
    budget.observe(messages, [], 10)  # what a server without real usage reports
    assert budget.cost(messages, []) == local
    more = [*messages, {"role": "user", "content": "z" * 4000}]
    assert budget.cost(more, []) >= local + 1000
    budget.observe(messages, [], local * 2)  # one that counts more is believed
    assert budget.cost(messages, []) == local * 2


def test_an_overflow_makes_the_estimate_stricter() -> None:
    budget = ContextBudget(16_000, reserve=2000)
    budget.learn_overflow(sent=6000, window=8192)
    assert budget.window == 8192 and budget.scale > 1.4
    assert budget.cost([{"role": "user", "content": "y" * 24_000}], []) > 8192


async def test_the_turns_older_results_are_cut_first_the_newest_kept(model: ChatModel) -> None:
    budget = ContextBudget(8000, reserve=1000)  # limit 5,400 tokens
    history = a_turn(4, 6000)  # 4 results of ~1,500 tokens
    done = await budget.fit(history, 0, lambda: ([*history], []), model)
    assert done is not None and done.in_turn and done.summary_requests == 0
    contents = [m["content"] for m in history if m["role"] == "tool"]
    assert [c.startswith(CUT_NOTE) for c in contents] == [True, False, False, False]
    assert history[0]["content"] == "the task, word for word"
    assert done.after <= budget.limit


async def test_then_the_earlier_steps_are_summarised_into_the_newest(
    fake: FakeOpenAI, model: ChatModel
) -> None:
    budget = ContextBudget(8000, reserve=1000)
    history = a_turn(60, 1000)  # cut notes alone pass the limit
    newest = history[-2:]
    fake.queue(fo.text("Read results 0 to 58; all fine."))
    done = await budget.fit(history, 0, lambda: ([*history], []), model)
    assert done is not None and done.summary_requests == 1 and done.summarised_messages == 118
    assert history[0] == {"role": "user", "content": "the task, word for word"}
    assert history[1]["tool_calls"] == newest[0]["tool_calls"]
    assert history[1]["content"].startswith(TURN_SUMMARY_NOTE)
    assert "Read results 0 to 58" in history[1]["content"]
    assert history[2] == newest[1] and len(history) == 3  # the newest result whole
    ask = fake.bodies[0]["messages"]
    assert ask[0]["content"].startswith("You are compacting a long task")
    assert ask[1]["content"].startswith("The request:\nthe task, word for word")


async def test_a_newest_result_larger_than_the_window_is_shortened_to_fit(
    model: ChatModel,
) -> None:
    budget = ContextBudget(8000, reserve=1000)
    history = a_turn(1, 60_000)  # ~15,000 tokens in one result
    done = await budget.fit(history, 0, lambda: ([*history], []), model)
    assert done is not None and done.shortened_results == 1
    assert budget.cost(history, []) <= budget.room
    result = history[2]["content"]
    assert result.startswith("result 0 xxxx") and "to fit the context window" in result
    assert json.dumps(history[:2]) == json.dumps(a_turn(1, 60_000)[:2])
