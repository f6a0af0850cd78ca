"""Error messages say each thing once: a server's "MCP error -32602: ..." is not followed by
our own "(MCP error -32602)" again; `--from` errors carry no pydantic "Value error," prefix."""

from __future__ import annotations

from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from codebot_mcp.mcpbridge.transport.rpcerror import rpc_error_text
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import everything_entry, server_entry, write_settings


def codebot(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = run(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def said_once(text: str) -> None:
    assert text.count("-32602") == 1, text
    assert "MCP error -32602:" not in text, text


@pytest.mark.parametrize("sdk", ["", "1"], ids=["hot-path", "sdk-path"])
def test_a_call_error_names_its_code_once(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    sdk: str,
) -> None:
    monkeypatch.setenv("CODEBOT_SDK_PATH", sdk)
    write_settings(tmp_path, {"mcp_servers": {"f": server_entry("faulty")}})
    code, _, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "call", "f", "ts_error")
    assert code == 4
    assert "Invalid arguments for tool ts_error (MCP error -32602)" in err
    said_once(err)


def test_a_read_error_from_a_typescript_server_names_its_code_once(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(tmp_path, {"base_url": fake.base_url, "mcp_servers": {"ev": everything_entry()}})
    code, _, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "read", "ev", "nope://x")
    assert code == 4 and "Resource nope://x not found" in err
    said_once(err)
    read = ("read_mcp_resource", {"server": "ev", "uri": "nope://x"})
    fake.queue(fo.tool_calls(read), fo.text("done"))
    assert codebot(capsys, "--cwd", str(tmp_path), "chat", "-p", "x", "--yes")[0] == 0
    results = [m["content"] for m in fake.bodies[1]["messages"] if m["role"] == "tool"]
    said_once(results[0])


def test_rpc_error_text_strips_any_prefix_of_the_code() -> None:
    assert rpc_error_text(-32602, "MCP error -32602: bad") == "bad (MCP error -32602)"
    assert rpc_error_text(-32601, "MCP error -32601: MCP error -32601: x") == (
        "x (MCP error -32601)"
    )
    assert rpc_error_text(-1, "plain words") == "plain words (MCP error -1)"
    assert rpc_error_text(-32603, "MCP error -32603:") == "no message (MCP error -32603)"


@pytest.mark.parametrize(
    ("argv", "option", "guess"),
    [
        (["mcp", "import", "--from", "codx"], "--from", "codex"),
        (["mcp", "import", "--from", "claude-code", "--from", "nope"], "--from", None),
        (["mcp", "add", "x", "--scope", "globl", "--", "cmd"], "--scope", "global"),
        (
            ["mcp", "add", "x", "--transport", "htp", "--url", "https://h/mcp"],
            "--transport",
            "http",
        ),
    ],
)
def test_a_bad_choice_is_worded_by_click_not_pydantic(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    option: str,
    guess: str | None,
) -> None:
    code, _, err = codebot(capsys, "--cwd", str(tmp_path), *argv)
    assert code == 2
    assert f"Invalid value for '{option}'" in err and "is not one of" in err
    assert "Value error" not in err
    if guess:
        assert f"(did you mean '{guess}'?)" in err


def test_chat_help_lists_the_usage_exit_code_it_uses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = codebot(capsys, "chat", "--help")
    assert code == 0
    exits = " ".join(out.split()).split("Exit ", 1)[1]
    for listed in ("0 ok", "2 usage", "3 settings", "5 model API", "6 turn limit", "130"):
        assert listed in exits, exits
    code, _, err = codebot(capsys, "--cwd", str(tmp_path), "chat", "-p", "  ")
    assert code == 2 and "the prompt is empty" in err
