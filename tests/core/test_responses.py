"""The Responses API (``api: "responses"``) against the loopback server speaking its wire
format (SSE events and JSON), driven by the real ``openai`` client with strict validation; and
the hang-up of a streamed request, on both APIs.

The end-to-end runs of ``chat -p`` over Responses are in ``tests/e2e/test_responses.py``.
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest

from codebot_mcp.core.config.settings import Settings
from codebot_mcp.core.errors import ModelError, UsageError
from codebot_mcp.core.model.client import (
    ChatModel,
    ContextOverflowError,
    Retry,
    StreamDroppedError,
    create_client,
)
from codebot_mcp.core.model.config import ModelConfig, default_api, resolve_config
from codebot_mcp.core.model.stream import Reply
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI

pytestmark = pytest.mark.anyio

SYSTEM = {"role": "system", "content": "You are codebot."}
USER = {"role": "user", "content": "hi"}
TOOL = {
    "type": "function",
    "function": {
        "name": "read",
        "description": "Read a file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
}


def make(server: FakeOpenAI, model: str = "gpt-5", **config: Any) -> ChatModel:
    """A model on the Responses API of the fake (strictly validated answers, no retries)."""
    settings = ModelConfig(
        model, server.base_url, "sk-test-key-123456", "OPENAI_API_KEY", api="responses"
    )
    settings = replace(settings, **config)
    client = create_client(settings, max_retries=0, _strict_response_validation=True)
    return ChatModel(client, settings)


@pytest.fixture
async def model(fake: FakeOpenAI) -> AsyncIterator[ChatModel]:
    chat = make(fake)
    yield chat
    await chat.aclose()


# --- which API ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "model", "api"),
    [
        ("https://api.openai.com/v1", "o4-mini", "responses"),
        ("https://api.openai.com/v1", "o3", "responses"),
        ("https://api.openai.com/v1", "gpt-5", "responses"),
        ("https://api.openai.com/v1", "gpt-5.1-codex", "responses"),
        ("https://api.openai.com/v1", "gpt-4o", "chat_completions"),
        ("https://api.openai.com/v1", "gpt-4.1-mini", "chat_completions"),
        ("https://api.openai.com/v1", "omni-moderation", "chat_completions"),
        ("http://localhost:11434/v1", "gpt-5", "chat_completions"),
        ("https://openrouter.ai/api/v1", "o3", "chat_completions"),
    ],
)
def test_responses_is_the_default_only_for_openai_reasoning_models(
    url: str, model: str, api: str
) -> None:
    assert default_api(url, model) == api


def test_setting_and_flag_choose_the_api_and_the_effort() -> None:
    env = {"OPENAI_API_KEY": "k"}
    config = resolve_config(Settings(model="o3"), environ=env)  # api.openai.com
    assert (config.api, config.api_given, config.reasoning_effort) == ("responses", False, None)
    settings = Settings(model="o3", api="chat_completions", reasoning_effort="low")
    config = resolve_config(settings, environ=env)
    assert (config.api, config.api_given, config.reasoning_effort) == (
        "chat_completions",
        True,
        "low",
    )
    config = resolve_config(settings, environ=env, api="responses", effort="high")
    assert (config.api, config.reasoning_effort) == ("responses", "high")
    local = Settings(model="gpt-5", base_url="http://127.0.0.1:9/v1")
    assert resolve_config(local, environ={}).api == "chat_completions"
    with pytest.raises(UsageError, match="--effort extreme"):
        resolve_config(settings, environ=env, effort="extreme")


def test_a_default_api_follows_a_model_change_and_a_chosen_one_stays() -> None:
    config = resolve_config(Settings(model="gpt-4o"), environ={"OPENAI_API_KEY": "k"})
    assert config.with_model("o4-mini").api == "responses"
    chosen = resolve_config(
        Settings(model="gpt-4o", api="chat_completions"), environ={"OPENAI_API_KEY": "k"}
    )
    assert chosen.with_model("o4-mini").api == "chat_completions"


# --- one turn -------------------------------------------------------------------------------


async def test_a_tool_call_streams_and_its_reasoning_goes_back_with_the_next_request(
    fake: FakeOpenAI, model: ChatModel
) -> None:
    fake.queue(
        fo.reasoned(fo.tool_calls(("read", {"path": "a.txt"})), ["First I look.", "Then I read."]),
        fo.reasoned(fo.text("it says alpha"), "Done reading.", tokens=7),
    )
    thoughts: list[str] = []
    text: list[str] = []
    history: list[dict[str, Any]] = [SYSTEM, USER]
    reply = await model.complete(history, [TOOL], text.append, on_reasoning=thoughts.append)
    assert [(c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [
        ("read", {"path": "a.txt"})
    ]
    assert reply.finish_reason == "tool_calls"
    assert "".join(thoughts) == "First I look.\n\nThen I read." == reply.reasoning_summary
    assert reply.usage is not None and reply.usage.reasoning_tokens == 64
    first = fake.bodies[0]
    assert (first["store"], first["stream"], first["include"]) == (
        False,
        True,
        ["reasoning.encrypted_content"],
    )
    assert first["reasoning"] == {"summary": "auto"} and "stream_options" not in first
    assert first["instructions"] == "You are codebot." and first["input"] == [USER]
    assert first["tools"] == [
        {
            "type": "function",
            "name": "read",
            "description": "Read a file",
            "parameters": TOOL["function"]["parameters"],
            "strict": False,
        }
    ]
    call = reply.tool_calls[0]
    history += [reply.message(), {"role": "tool", "tool_call_id": call.id, "content": "alpha"}]
    assert history[2]["reasoning"][0]["encrypted_content"] == "enc:rs_1"
    reply = await model.complete(history, [TOOL], text.append, on_reasoning=thoughts.append)
    assert reply.text == "it says alpha" == "".join(text) and reply.finish_reason == "stop"
    sent = fake.bodies[1]["input"]
    assert [item.get("type", item.get("role")) for item in sent] == [
        "user",
        "reasoning",
        "function_call",
        "function_call_output",
    ]
    assert sent[1] == {  # as it came, but for its status
        "id": "rs_1",
        "type": "reasoning",
        "summary": [
            {"type": "summary_text", "text": "First I look."},
            {"type": "summary_text", "text": "Then I read."},
        ],
        "encrypted_content": "enc:rs_1",
    }
    assert sent[2] == {
        "type": "function_call",
        "call_id": call.id,
        "name": "read",
        "arguments": call.arguments,
    }
    assert sent[3] == {"type": "function_call_output", "call_id": call.id, "output": "alpha"}


async def test_an_assistant_answer_goes_back_as_a_message_after_its_reasoning(
    fake: FakeOpenAI, model: ChatModel
) -> None:
    fake.queue(fo.reasoned(fo.text("four"), "Two and two."), fo.text("yes"))
    reply = await model.complete([USER])
    history = [USER, reply.message(), {"role": "user", "content": "sure?"}]
    await model.complete(history)
    sent = fake.bodies[1]["input"]
    assert [i.get("type", i.get("role")) for i in sent] == [
        "user",
        "reasoning",
        "assistant",
        "user",
    ]
    assert sent[2] == {"role": "assistant", "content": "four"}


async def test_no_reasoning_is_asked_of_a_model_that_has_none(fake: FakeOpenAI) -> None:
    plain = make(fake, "gpt-4.1")
    fake.queue(fo.text("hello"))
    reply = await plain.complete([USER])
    assert reply.text == "hello" and reply.reasoning == []
    body = fake.bodies[0]
    assert "include" not in body and "reasoning" not in body and body["store"] is False
    await plain.aclose()


async def test_a_server_that_refuses_the_summary_is_asked_without_it(
    fake: FakeOpenAI, model: ChatModel
) -> None:
    refusal = "Unsupported parameter: 'reasoning.summary' is not supported with this model."
    fake.queue(fo.error(400, refusal), fo.text("fine"), fo.text("again"))
    assert (await model.complete([USER])).text == "fine"
    assert (await model.complete([USER])).text == "again"
    assert ["include" in b for b in fake.bodies] == [True, False, False]
    assert model.reasoning_extras is False


async def test_effort_is_sent_on_both_apis_only_when_set(fake: FakeOpenAI) -> None:
    responses = make(fake, "o4-mini", reasoning_effort="high")
    chat = make(fake, "o4-mini", reasoning_effort="low", api="chat_completions")
    unset = make(fake, "o4-mini", api="chat_completions")
    fake.queue(fo.text("a"), fo.text("b"), fo.text("c"))
    await responses.complete([USER])
    await chat.complete([USER])
    await unset.complete([USER])
    assert fake.bodies[0]["reasoning"] == {"effort": "high", "summary": "auto"}
    assert fake.bodies[1]["reasoning_effort"] == "low"
    assert "reasoning_effort" not in fake.bodies[2]
    for one in (responses, chat, unset):
        await one.aclose()


async def test_chat_completions_never_sends_the_reasoning_items(fake: FakeOpenAI) -> None:
    """A session saved on the Responses API, resumed on Chat Completions."""
    chat = make(fake, api="chat_completions")
    answer = Reply("four", reasoning=[{"type": "reasoning", "id": "rs_1", "summary": []}])
    fake.queue(fo.text("ok"))
    await chat.complete([USER, answer.message(), {"role": "user", "content": "sure?"}])
    assert fake.bodies[0]["messages"][1] == {"role": "assistant", "content": "four"}
    await chat.aclose()


async def test_usage_counts_cached_and_reasoning_tokens(fake: FakeOpenAI, model: ChatModel) -> None:
    fake.queue({**fo.reasoned(fo.text("x"), tokens=40), "cached_tokens": 6, "prompt_tokens": 20})
    reply = await model.complete([USER])
    assert reply.usage is not None
    assert (
        reply.usage.prompt_tokens,
        reply.usage.cached_tokens,
        reply.usage.completion_tokens,
        reply.usage.reasoning_tokens,
    ) == (20, 6, 45, 40)
    assert reply.usage.as_dict()["reasoning_tokens"] == 40


# --- what goes wrong --------------------------------------------------------------------------


async def test_a_failed_response_is_a_model_error_and_an_overflow_compacts(
    fake: FakeOpenAI, model: ChatModel
) -> None:
    fake.queue(fo.failed("the GPU caught fire"))
    with pytest.raises(ModelError, match=r"failed the response \(server_error\): the GPU caught"):
        await model.complete([USER])
    overflow = "Your input exceeds the context window of this model."
    fake.queue({"error_event": overflow, "code": "context_length_exceeded"})
    with pytest.raises(ContextOverflowError):
        await model.complete([USER])
    fake.queue({"error_event": "rate limit reached mid-stream", "code": "rate_limit_exceeded"})
    with pytest.raises(ModelError, match="rate limit reached mid-stream"):
        await model.complete([USER])
    fake.queue(fo.stream_error("the GPU caught fire", after_text="ok so"))
    with pytest.raises(StreamDroppedError, match=r"incomplete: .*the GPU caught fire") as caught:
        await model.complete([USER])
    assert caught.value.partial == "ok so"  # what arrived is kept
    fake.queue(fo.hang_up(fo.failed("the JSON answer failed too")))  # the unstreamed retry
    with pytest.raises(ModelError, match=r"failed the response .*the JSON answer failed too"):
        await model.complete([USER])
    assert [b["stream"] for b in fake.bodies[-2:]] == [True, False]


async def test_an_incomplete_response_says_it_hit_the_cap(
    fake: FakeOpenAI, model: ChatModel
) -> None:
    fake.queue(fo.incomplete(fo.text("cut sho")))
    reply = await model.complete([USER])
    assert (reply.text, reply.finish_reason) == ("cut sho", "length")


async def test_a_dropped_stream_keeps_the_partial_answer(
    fake: FakeOpenAI, model: ChatModel
) -> None:
    fake.queue(fo.drop(after_text="half an ans"))
    with pytest.raises(StreamDroppedError, match="dropped mid-answer") as caught:
        await model.complete([USER])
    assert caught.value.partial == "half an ans"


@pytest.mark.parametrize(
    ("status", "words"),
    [(401, "rejected the API key (401)"), (404, "has no Responses API"), (500, "failed (500)")],
)
async def test_status_errors_name_the_responses_api_where_it_matters(
    fake: FakeOpenAI, model: ChatModel, status: int, words: str
) -> None:
    fake.queue(fo.error(status, "scripted"))
    with pytest.raises(ModelError) as caught:
        await model.complete([USER])
    assert words in caught.value.message
    if status == 404:
        assert caught.value.hint and '"api": "chat_completions"' in caught.value.hint


# --- a server that hangs up without a response ------------------------------------------------


@pytest.mark.parametrize("api", ["chat_completions", "responses"])
async def test_a_hang_up_on_a_streamed_request_is_asked_again_unstreamed(
    fake: FakeOpenAI, api: str
) -> None:
    model = make(fake, "gpt-5", api=api)
    answer = fo.reasoned(fo.tool_calls(("read", {"path": "a"})), "Look first.")
    fake.queue(fo.hang_up(answer), fo.text("done"))
    retries: list[Retry] = []
    thoughts: list[str] = []
    reply = await model.complete(
        [USER], [TOOL], on_retry=retries.append, on_reasoning=thoughts.append
    )
    assert [c.name for c in reply.tool_calls] == ["read"]
    assert len(retries) == 1 and "closed the connection without any response" in retries[0].reason
    assert "asking again without streaming" in retries[0].reason
    assert [b["stream"] for b in fake.bodies] == [True, False]
    if api == "responses":  # the JSON answer's reasoning is shown once, and kept
        assert thoughts == ["Look first."]
        assert reply.reasoning[0]["encrypted_content"] == "enc:rs_1"
    assert model.stream_with_tools is False  # the session learned it
    await model.complete([USER], [TOOL])
    assert fake.bodies[2]["stream"] is False
    await model.aclose()


async def test_a_refused_connection_still_says_the_server_is_not_running() -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = ModelConfig("m", f"http://127.0.0.1:{port}/v1", "sk-x", None, api="responses")
    model = ChatModel(create_client(config, max_retries=0), config)
    retries: list[Retry] = []
    with pytest.raises(ModelError) as caught:
        await model.complete([USER], [TOOL], on_retry=retries.append)
    assert "cannot connect to the model API" in caught.value.message
    assert caught.value.hint and "Is the server running" in caught.value.hint
    assert retries == []
    await model.aclose()


async def test_reasoning_without_encrypted_content_is_kept_but_never_sent_back(
    fake: FakeOpenAI,
) -> None:
    """A server that ignores ``include``: its bare reasoning item (an id OpenAI would look
    up, and not find, under ``store: false``) stays in the history for the transcript."""
    plain = make(fake, "gpt-4.1")  # nothing asked, so no encrypted content comes
    fake.queue(fo.reasoned(fo.tool_calls(("read", {"path": "a"})), "Bare."), fo.text("done"))
    reply = await plain.complete([USER], [TOOL])
    assert reply.reasoning_summary == "Bare." and "encrypted_content" not in reply.reasoning[0]
    result = {"role": "tool", "tool_call_id": reply.tool_calls[0].id, "content": "x"}
    assert (await plain.complete([USER, reply.message(), result], [TOOL])).text == "done"
    assert [i.get("type", i.get("role")) for i in fake.bodies[1]["input"]] == [
        "user",
        "function_call",
        "function_call_output",
    ]
    await plain.aclose()
