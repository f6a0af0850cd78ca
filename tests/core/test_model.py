from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from codebot_mcp.core.config.settings import Settings
from codebot_mcp.core.errors import ExitCode, ModelError
from codebot_mcp.core.model.client import ChatModel, StreamDroppedError, create_client
from codebot_mcp.core.model.config import PLACEHOLDER_KEY, ModelConfig, resolve_config
from tests.core.conftest import make_model
from tests.fakes import openai_handler as wire
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI

pytestmark = pytest.mark.anyio

USER = [{"role": "user", "content": "hi"}]
TOOL = {
    "type": "function",
    "function": {"name": "read", "description": "Read", "parameters": {"type": "object"}},
}


# --- configuration ------------------------------------------------------------------------


def test_flags_beat_env_beat_settings() -> None:
    settings = Settings(model="s-model", base_url="http://s/v1", api_key_env="MY_KEY")
    env = {"MY_KEY": "k1", "OPENAI_API_KEY": "k2", "CODEBOT_MODEL": "e-model"}
    config = resolve_config(settings, environ=env)
    assert (config.model, config.base_url, config.api_key, config.key_env) == (
        "e-model",
        "http://s/v1",
        "k1",
        "MY_KEY",
    )
    env["OPENAI_BASE_URL"] = "http://e/v1"
    config = resolve_config(settings, model="f-model", base_url="http://f/v1", environ=env)
    assert (config.model, config.base_url) == ("f-model", "http://f/v1")


def test_named_key_variable_falls_back_to_openai_api_key() -> None:
    config = resolve_config(Settings(api_key_env="UNSET"), environ={"OPENAI_API_KEY": "k"})
    assert (config.api_key, config.key_env) == ("k", "OPENAI_API_KEY")


def test_local_server_needs_no_key() -> None:
    config = resolve_config(Settings(), base_url="http://localhost:8080/v1", environ={})
    assert config.api_key == PLACEHOLDER_KEY and config.key_env is None


def test_no_key_no_url_says_how_to_configure() -> None:
    with pytest.raises(ModelError) as info:
        resolve_config(Settings(api_key_env="ACME_KEY"), environ={})
    assert "ACME_KEY is not set" in info.value.message
    assert info.value.hint and "--base-url" in info.value.hint
    assert info.value.exit_code == ExitCode.MODEL


def test_key_is_not_in_repr() -> None:
    assert "secret-value" not in repr(ModelConfig("m", None, "secret-value", "K"))


# --- streaming ----------------------------------------------------------------------------


async def test_text_streams_through_callback(fake: FakeOpenAI, model: ChatModel) -> None:
    fake.queue(fo.text("Hello there, world", chunks=3))
    pieces: list[str] = []
    reply = await model.complete(USER, on_text=pieces.append)
    assert reply.text == "Hello there, world"
    assert len(pieces) == 3 and "".join(pieces) == reply.text
    assert reply.finish_reason == "stop"
    assert reply.usage is not None and reply.usage.prompt_tokens == 10
    body = fake.bodies[0]
    assert body["stream"] is True and body["model"] == "fake-model"
    assert "tools" not in body and "tool_choice" not in body


async def test_tool_call_deltas_merge_by_index(fake: FakeOpenAI, model: ChatModel) -> None:
    fake.queue(fo.tool_calls(("read", {"path": "a.txt"}), ("bash", {"command": "ls -la"})))
    reply = await model.complete(USER, [TOOL])
    assert [(c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [
        ("read", {"path": "a.txt"}),
        ("bash", {"command": "ls -la"}),
    ]
    assert [c.id for c in reply.tool_calls] == ["call_1", "call_2"]
    assert reply.finish_reason == "tool_calls"
    assert fake.bodies[0]["tool_choice"] == "auto"


async def test_repeated_ids_and_names_are_not_concatenated(
    fake: FakeOpenAI, model: ChatModel
) -> None:
    def chunk(delta: dict[str, object], finish: str | None = None) -> str:
        return json.dumps(wire.chunk(delta, finish))

    call = {"index": 0, "id": "call_x", "type": "function"}
    fake.queue(
        fo.raw_sse(
            chunk({"tool_calls": [{**call, "function": {"name": "read", "arguments": '{"pa'}}]}),
            chunk({"tool_calls": [{**call, "function": {"name": "read", "arguments": 'th": 1}'}}]}),
            chunk({}, "tool_calls"),
            "[DONE]",
        )
    )
    reply = await model.complete(USER, [TOOL])
    assert (reply.tool_calls[0].id, reply.tool_calls[0].name) == ("call_x", "read")
    assert json.loads(reply.tool_calls[0].arguments) == {"path": 1}


async def test_dropped_stream_keeps_the_partial_answer(fake: FakeOpenAI, model: ChatModel) -> None:
    fake.queue(fo.drop(after_text="half an ans"))
    seen: list[str] = []
    with pytest.raises(StreamDroppedError, match="dropped mid-answer") as caught:
        await model.complete(USER, on_text=seen.append)
    assert "".join(seen) == "half an ans" == caught.value.partial
    assert "cannot connect" not in caught.value.message


async def test_stream_without_finish_reason_is_an_error(fake: FakeOpenAI, model: ChatModel) -> None:
    fake.queue(fo.raw_sse(json.dumps(wire.chunk({"content": "x"})), "[DONE]"))
    with pytest.raises(ModelError, match="no finish reason"):
        await model.complete(USER)


async def test_mid_stream_error_event(fake: FakeOpenAI, model: ChatModel) -> None:
    fake.queue(fo.stream_error("the GPU caught fire", after_text="ok so"))
    with pytest.raises(ModelError, match="the GPU caught fire"):
        await model.complete(USER)


# --- llama.cpp quirks ---------------------------------------------------------------------


async def test_llama_empty_tool_stream_falls_back_and_is_remembered(
    llama: FakeOpenAI, llama_model: ChatModel
) -> None:
    llama.queue(fo.tool_calls(("read", {"path": "x"})), fo.text("done"), fo.text("plain"))
    model = llama_model
    reply = await model.complete(USER, [TOOL])
    assert [c.name for c in reply.tool_calls] == ["read"]
    assert [b["stream"] for b in llama.bodies] == [True, False]
    assert model.stream_with_tools is False
    history = [*USER, reply.message(), {"role": "tool", "tool_call_id": "call_1", "content": "x"}]
    seen: list[str] = []
    reply = await model.complete(history, [TOOL], on_text=seen.append)
    assert reply.text == "done" and seen == ["done"]
    assert llama.bodies[2]["stream"] is False  # remembered: no second streamed attempt
    assert llama.bodies[2]["messages"][1]["content"] == ""  # never null beside tool_calls
    reply = await model.complete(USER, [])  # without tools, streaming is still fine
    assert reply.text == "plain" and llama.bodies[3]["stream"] is True


async def test_llama_rejects_null_content(llama_model: ChatModel) -> None:
    call = {"id": "c", "type": "function", "function": {"name": "read", "arguments": "{}"}}
    bad = {"role": "assistant", "content": None, "tool_calls": [call]}
    with pytest.raises(ModelError, match=r"\(400\).*got null"):
        await llama_model.complete([*USER, bad])


async def test_llama_ignores_tools_without_tool_choice_auto(
    llama: FakeOpenAI, llama_model: ChatModel
) -> None:
    llama.queue(fo.tool_calls(("read", {})))
    completion = await llama_model.client.chat.completions.create(
        model="m",
        messages=USER,
        tools=[TOOL],
        stream=False,  # type: ignore[arg-type,list-item]
    )
    assert completion.choices[0].message.tool_calls is None


# --- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "message", "hint"),
    [
        (401, "rejected the API key (401)", "OPENAI_API_KEY"),
        (403, "may not use model 'fake-model'", "--model"),
        (404, "model 'fake-model' not found at http://127.0.0.1:", "/v1"),
        (429, "rate limited", "retry"),
        (500, "failed (500)", "server"),
        (503, "failed (503)", "server"),
        (400, "rejected the request (400)", "tool calls"),
    ],
)
async def test_status_errors_map_to_model_errors(
    fake: FakeOpenAI, model: ChatModel, status: int, message: str, hint: str
) -> None:
    fake.queue(fo.error(status, "scripted: sk-test-key-123456 is bad"))
    with pytest.raises(ModelError) as info:
        await model.complete(USER)
    assert message in info.value.message
    assert info.value.hint and hint in info.value.hint
    assert "sk-test-key-123456" not in info.value.message + info.value.hint
    assert "scripted: *** is bad" in info.value.message


async def test_connection_refused_names_the_url() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = ModelConfig("m", f"http://127.0.0.1:{port}/v1", "k" * 10, "OPENAI_API_KEY")
    model = ChatModel(create_client(config, max_retries=0), config)
    with pytest.raises(ModelError) as info:
        await model.complete(USER)
    await model.aclose()
    assert f"cannot connect to the model API at http://127.0.0.1:{port}/v1" in info.value.message
    assert info.value.hint and "OPENAI_BASE_URL" in info.value.hint


async def test_timeout_is_reported(fake: FakeOpenAI, model: ChatModel) -> None:
    fake.queue(fo.text("slow", delay=2.0))
    with pytest.raises(ModelError, match="did not answer in time"):
        await make_model(fake, timeout=0.3).complete(USER)


def test_fake_server_cli_prints_ready(tmp_path: Path) -> None:
    import subprocess
    import sys
    import urllib.request

    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [fo.text("hi")]}))
    with subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.openai_server", "--script", str(script)],
        stdout=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("READY http://127.0.0.1:")
        req = urllib.request.Request(
            line.split()[1] + "/chat/completions",
            data=json.dumps({"model": "m", "messages": USER}).encode(),
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=5) as resp:
            assert json.load(resp)["choices"][0]["message"]["content"] == "hi"
        proc.terminate()


# --- the timeout (CODEBOT_MODEL_TIMEOUT) ---------------------------------------------------


@pytest.mark.parametrize("value", ["0", "-3", "soon", "inf", "nan"])
def test_timeout_must_be_a_positive_number(value: str) -> None:
    from codebot_mcp.core.errors import SettingsError

    env = {"OPENAI_BASE_URL": "http://x/v1", "CODEBOT_MODEL_TIMEOUT": value}
    with pytest.raises(SettingsError, match="CODEBOT_MODEL_TIMEOUT"):
        resolve_config(Settings(), environ=env)


def test_timeout_from_environment() -> None:
    env = {"OPENAI_BASE_URL": "http://x/v1", "CODEBOT_MODEL_TIMEOUT": "2.5"}
    assert resolve_config(Settings(), environ=env).timeout == 2.5
    assert resolve_config(Settings(), environ={"OPENAI_BASE_URL": "http://x/v1"}).timeout == 600


@pytest.mark.parametrize("turn", [fo.stall(30), fo.hang(30)], ids=["before-headers", "mid-stream"])
async def test_silent_server_times_out(fake: FakeOpenAI, turn: fo.Turn) -> None:
    config = ModelConfig("fake-model", fake.base_url, "sk-test-key-123456", None, timeout=0.5)
    model = ChatModel(create_client(config, max_retries=0), config)
    fake.queue(turn)
    try:
        with pytest.raises(
            ModelError, match=r"did not answer in time \(nothing received for 0.5 s"
        ):
            await model.complete(USER)
    finally:
        await model.aclose()
