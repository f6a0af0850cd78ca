"""JSON nested 100,000 levels deep, from a model, a server or a lockfile: a clear error with
the exit code of where it came from (5 the model, 4 a server, 3 a file), never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import server_entry, write_settings

DEEP = "[" * 100_000 + "]" * 100_000


def chat(capsys: pytest.CaptureFixture[str], tmp_path: Path, fake: FakeOpenAI) -> tuple[int, str]:
    code = run(["--cwd", str(tmp_path), "--base-url", fake.base_url, "chat", "-p", "hi", "--yes"])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("stream", [True, False])
def test_a_model_answer_nested_too_deeply_is_a_model_error(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str], stream: bool
) -> None:
    body = '{"id": "x", "object": "chat.completion.chunk", "choices": ' + DEEP + "}"
    if stream:
        fake.queue(fo.raw_body(body, stream=True))
    else:  # a JSON body to the streamed request reads as an empty stream: asked again, plain
        fake.queue(fo.raw_body(body), fo.raw_body(body))
    code, err = chat(capsys, tmp_path, fake)
    assert code == 5, err
    assert "nested too deeply" in err
    assert "Traceback" not in err and "bug in codebot" not in err


def test_tool_call_arguments_nested_too_deeply_go_back_to_the_model(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(fo.tool_calls(("read", DEEP)), fo.text("sorry"))
    code, err = chat(capsys, tmp_path, fake)
    assert code == 0, err
    [result] = [m for m in fake.bodies[-1]["messages"] if m["role"] == "tool"]
    assert "nested too deeply" in result["content"]


@pytest.mark.parametrize("where", ["result", "list"])
@pytest.mark.parametrize("path", ["lite", "sdk"])
def test_a_server_answer_nested_too_deeply_is_a_server_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str, path: str
) -> None:
    extra = {"protocol": "legacy"} if path == "sdk" else {}
    entry = server_entry("deep_json", "--where", where, **extra)
    write_settings(tmp_path, {"mcp_servers": {"deep": entry}})
    argv = ["--cwd", str(tmp_path), "--trust-project", "mcp", "call", "deep", "deep", "--no-warm"]
    if path == "sdk":
        argv += ["--elicit", "defaults"]  # not the SDK-free hot path
    code = run(argv)
    err = capsys.readouterr().err
    assert code == 4, err
    assert "bug in codebot" not in err and "Traceback" not in err


def test_a_lockfile_nested_too_deeply_is_a_settings_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(tmp_path, {"mcp_servers": {"echo": server_entry("echo")}})
    lock = tmp_path / ".codebot" / "mcp-lock.json"
    lock.write_text('{"lock_version": 1, "servers": ' + DEEP + "}")
    code = run(["--cwd", str(tmp_path), "--trust-project", "mcp", "doctor", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 1, err
    finding = next(f for f in json.loads(out)["findings"] if f["check"] == "tools.lock")
    assert finding["severity"] == "error" and "nested too deeply" in finding["message"]
    fake_free = [
        "--cwd",
        str(tmp_path),
        "--trust-project",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "chat",
        "-p",
        "x",
    ]
    code = run(fake_free)
    err = capsys.readouterr().err
    assert code == 3, err
    assert str(lock) in err and "nested too deeply" in err
