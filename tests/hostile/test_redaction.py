"""Class 6: a value that came from a credential is redacted wherever it appears; unrelated text
is left alone; doctor warns about credentials in ``args``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from tests.helpers import write_settings

SECRET = "sk-live-expanded-0123456789"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CODEBOT_TRUST_PROJECT", "1")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    write_settings(
        tmp_path,
        {
            "mcp_servers": {
                # Port 9 on loopback refuses: the error message carries the URL.
                "web": {"url": "http://127.0.0.1:9/mcp?k=${OPENAI_API_KEY}", "timeout": 5},
                "cli": {"command": "/nonexistent/srv", "args": ["--key=${OPENAI_API_KEY}"]},
            }
        },
    )
    return tmp_path


def test_expanded_secrets_never_appear(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outputs: list[str] = []
    for argv in (
        ["trust", "--yes"],
        ["mcp", "list"],
        ["mcp", "list", "--json"],
        ["mcp", "doctor"],
        ["mcp", "doctor", "--format", "json"],
        ["mcp", "doctor", "--format", "junit"],
        ["mcp", "call", "web", "x"],
        ["mcp", "call", "cli", "x"],
    ):
        run(["--cwd", str(project), *argv])
        captured = capsys.readouterr()
        outputs.append(captured.out + captured.err)
        assert SECRET not in outputs[-1], argv
    listed = json.loads(outputs[2])
    servers = {s["name"]: s for s in listed["servers"]}
    assert servers["cli"]["args"] == ["--key=***"]
    assert servers["web"]["url"] == "http://127.0.0.1:9/mcp?k=***"
    assert "settings.secret_in_args" in outputs[3]
    assert "Pass it in 'env' instead" in outputs[3]


def test_redaction_leaves_unrelated_text_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEBOT_TRUST_PROJECT", "1")
    monkeypatch.setenv("HOME", str(tmp_path))
    project = tmp_path / "app"
    write_settings(
        project,
        {"mcp_servers": {"s": {"command": "no-such-program", "env": {"DATA_DIR": "${HOME}"}}}},
    )
    run(["--cwd", str(project), "mcp", "list"])
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert f"{project}/.codebot/settings.json" in text
    assert "***" not in text


def test_plain_env_and_header_values_do_not_mask_ordinary_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``MODE=server`` once turned every "server" of every message into ``***``; a value named
    like a credential is still masked."""
    monkeypatch.setenv("CODEBOT_TRUST_PROJECT", "1")
    env = {"MODE": "server", "SESSION": "a81f0c3e9d2b7", "GREETING": "hello world"}
    servers = {
        "s": {"command": "true", "env": env},
        "w": {"url": "http://127.0.0.1:9/mcp", "headers": {"X-Client": "command"}},
    }
    write_settings(tmp_path, {"mcp_servers": servers})
    run(["--cwd", str(tmp_path), "mcp", "list"])
    text = "".join(capsys.readouterr())
    assert "the server closed the connection" in text
    assert "Run the command of server 's'" in text
    run(["--cwd", str(tmp_path), "mcp", "list", "--json"])
    view = json.loads(capsys.readouterr().out)["servers"]
    shown = next(v for v in view if v["name"] == "s")["env"]
    # configuration is shown, a secret (named like one, or shaped like a token) is masked
    assert shown == {"MODE": "server", "SESSION": "***", "GREETING": "hello world"}

    from codebot_mcp.core.secrets.redact import Redactor, entry_secrets
    from tests.helpers import server_config

    redactor = Redactor(entry_secrets(server_config("s", servers["s"])))
    assert (
        redactor("id a81f0c3e9d2b7, mode server, hello world") == "id ***, mode server, hello world"
    )
