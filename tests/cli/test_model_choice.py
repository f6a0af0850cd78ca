"""With a base URL and no model named, codebot asks the endpoint (``GET /models``): its only
model is used, and otherwise the run stops with a hint naming `codebot models`. OpenAI's
default model is never sent to another endpoint on a guess."""

from __future__ import annotations

from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import write_settings


def chat(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = run(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_only_model_the_endpoint_serves_is_used(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.serve_models(["qwen2.5-coder-7b"])
    fake.queue(fo.text("hi"))
    base = ("--cwd", str(tmp_path), "--base-url", fake.base_url)
    code, out, err = chat(capsys, *base, "chat", "-p", "hello")
    assert (code, out) == (0, "hi\n"), err
    assert fake.bodies[0]["model"] == "qwen2.5-coder-7b"
    assert err == ""  # a script's stderr stays quiet (the REPL says which model it took)


@pytest.mark.parametrize(
    ("models", "said"),
    [
        (["a-model", "b-model"], "serves 2: a-model, b-model"),
        ([], "serves none"),
        (None, "answered 404"),
    ],
    ids=["several", "none", "no-route"],
)
def test_no_guess_when_the_endpoint_does_not_say(
    tmp_path: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    models: list[str] | None,
    said: str,
) -> None:
    fake.serve_models(models)
    fake.queue(fo.text("never"))
    base = ("--cwd", str(tmp_path), "--base-url", fake.base_url)
    code, _, err = chat(capsys, *base, "chat", "-p", "hello")
    assert code == 5, err
    assert said in err and "no model is named" in err
    assert "codebot models" in err and "--model" in err
    assert fake.requests == []  # nothing was sent, least of all gpt-4o-mini


def test_a_named_model_is_used_without_asking(
    tmp_path: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake.serve_models(["a-model", "b-model"])
    for flags, expected in ((("--model", "b-model"), "b-model"), ((), "a-model")):
        if not flags:
            monkeypatch.setenv("CODEBOT_MODEL", "a-model")
        fake.queue(fo.text("ok"))
        code, _, err = chat(
            capsys, "--cwd", str(tmp_path), "--base-url", fake.base_url, "chat", "-p", "x", *flags
        )
        assert code == 0, err
        assert fake.bodies[-1]["model"] == expected  # named: no choice to make, no error


@pytest.mark.anyio
async def test_the_repl_says_which_model_it_took_and_why(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.cli.repl_driver import drive

    write_settings(tmp_path, {"base_url": fake.base_url})
    fake.serve_models(["local-only"])
    fake.queue(fo.text("hello there"))
    script = [(lambda: True, "hi\r"), (lambda: fake.remaining == 0, "\x04")]
    code, _ = await drive(tmp_path, script)
    err = capsys.readouterr().err
    assert code == 0, err
    assert f"note: model local-only: the only one {fake.base_url} serves" in err
    assert fake.bodies[0]["model"] == "local-only"


@pytest.mark.parametrize(
    ("meta", "flags", "cap"),
    [
        ({"max_model_len": 4096}, (), 1024),  # vLLM's field; the only model, chosen
        ({"meta": {"n_ctx_train": 2048}}, ("--model", "local-7b"), 512),  # llama.cpp's, named
        ({"context_length": 16384}, ("--model", "local-7b"), 4096),
        ({}, ("--model", "local-7b"), 8192),  # window unknown: the default cap
    ],
    ids=["vllm-only-model", "llama-cpp-named", "context-length", "unknown"],
)
def test_the_default_output_cap_follows_the_endpoints_window(
    tmp_path: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    meta: dict[str, object],
    flags: tuple[str, ...],
    cap: int,
) -> None:
    fake.serve_models(["local-7b"], meta)
    fake.queue(fo.text("ok"))
    base = ("--cwd", str(tmp_path), "--base-url", fake.base_url)
    code, _, err = chat(capsys, *base, "chat", "-p", "hi", *flags)
    assert code == 0, err
    assert fake.bodies[-1]["max_tokens"] == cap


def test_a_set_max_tokens_is_kept_and_a_learned_window_shrinks_the_default(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(tmp_path, {"base_url": fake.base_url, "max_tokens": 3000})
    fake.serve_models(["local-7b"], {"max_model_len": 4096})
    fake.queue(fo.text("ok"))
    assert chat(capsys, "--cwd", str(tmp_path), "chat", "-p", "hi")[0] == 0
    assert fake.bodies[-1]["max_tokens"] == 3000  # the user's setting wins
    write_settings(tmp_path, {"base_url": fake.base_url, "context_window": 2048})
    fake.serve_models(["local-7b"])
    fake.queue(fo.text("ok"))
    assert chat(capsys, "--cwd", str(tmp_path), "chat", "-p", "hi")[0] == 0
    assert fake.bodies[-1]["max_tokens"] == 512  # the set window
    write_settings(tmp_path, {"base_url": fake.base_url})
    fake.queue(fo.overflow(16384), fo.text("the summary"), fo.text("fits"))
    code, out, err = chat(capsys, "--cwd", str(tmp_path), "chat", "-p", "more", "--continue")
    assert (code, out) == (0, "fits\n"), err
    assert fake.bodies[-1]["max_tokens"] == 4096  # the window the server's error named
