"""A server that crashes is restarted by the next call, as the failure message promises: in
`mcp call --batch`, and in chat however soon after the crash that call comes (a fake model
answers at once, well within the moment the exit code takes to arrive).

``tests.servers.faulty``'s ``die`` exits without answering; ``echo`` answers its text.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import server_entry, write_settings


def codebot(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = run(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
def test_batch_restarts_a_crashed_server_on_the_next_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    protocol: str,
) -> None:
    write_settings(tmp_path, {"mcp_servers": {"s": server_entry("faulty", protocol=protocol)}})
    requests: list[dict[str, Any]] = [
        {"server": "s", "tool": "die"},
        {"server": "s", "tool": "echo", "arguments": {"text": "back"}},
        {"server": "s", "tool": "echo", "arguments": {"text": "still"}},
        {"server": "s", "tool": "die"},
        {"server": "s", "tool": "echo", "arguments": {"text": "once only"}},
    ]
    stdin = "".join(json.dumps(r) + "\n" for r in requests)
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code, out, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "call", "--batch")
    answers = [json.loads(line) for line in out.splitlines()]
    assert code == 1, err
    assert answers[0]["error"]["exit_code"] == 4
    assert "restarts it" in answers[0]["error"]["hint"]
    assert answers[1]["content"][0]["text"] == "back", answers[1]
    assert answers[2]["content"][0]["text"] == "still", answers[2]
    assert answers[3]["error"]["exit_code"] == 4
    assert "restarts it" not in (answers[3]["error"]["hint"] or "")  # once per session
    assert answers[4]["error"]["exit_code"] == 4  # a second crash is final


def test_chat_restarts_a_crashed_server_on_the_very_next_call(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    entry = server_entry("faulty")
    write_settings(tmp_path, {"base_url": fake.base_url, "mcp_servers": {"s": entry}})
    fake.queue(
        fo.tool_calls(("mcp__s__die", {})),
        fo.tool_calls(("mcp__s__echo", {"text": "back"})),
        fo.text("done"),
    )
    code, out, err = codebot(capsys, "--cwd", str(tmp_path), "chat", "-p", "go", "--yes")
    assert (code, out) == (0, "done\n"), err
    results = [m["content"] for m in fake.bodies[-1]["messages"] if m["role"] == "tool"]
    assert "closed the connection" in results[0]
    assert results[1] == "back", results
