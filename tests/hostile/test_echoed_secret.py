"""Class 7: a server that echoes a secret back cannot leak it to the model or any output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import server_entry, write_settings
from tests.servers.util import run_http_server

TOKEN = "tok-echoed-back-0123456789"
API_KEY = "sk-api-key-echoed-987654321"


def test_echoed_secrets_are_scrubbed_before_the_model_sees_them(
    tmp_path: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CODEBOT_TRUST_PROJECT", "1")
    monkeypatch.setenv("WEB_TOKEN", TOKEN)
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    with run_http_server("--token", TOKEN) as url:
        write_settings(
            tmp_path,
            {
                "base_url": fake.base_url,
                "mcp_servers": {
                    "web": {"url": url, "headers": {"Authorization": "Bearer ${WEB_TOKEN}"}},
                    "echo": server_entry("echo", env={"LEAK": "${OPENAI_API_KEY}"}),
                },
            },
        )
        fake.queue(
            fo.tool_calls(
                ("mcp__web__authorization", {}),
                ("mcp__echo__env", {"name": "LEAK"}),
                ("bash", {"command": "echo $OPENAI_API_KEY"}),
            ),
            fo.text("done"),
        )
        code = run(["--cwd", str(tmp_path), "chat", "-p", "go", "--yes", "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    sent = json.dumps(fake.bodies)
    for secret in (TOKEN, API_KEY):
        assert secret not in sent
        assert secret not in captured.out and secret not in captured.err
    results = [m["content"] for m in fake.bodies[-1]["messages"] if m["role"] == "tool"]
    assert results[0] == "your header was: ***"  # it really echoed, and was scrubbed
    assert results[1] == "***"
    # bash does not even inherit the key (codebot's own secrets stay out of its environment)
    assert results[2] == "[no output]"
