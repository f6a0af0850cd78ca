"""Plain configuration in a server's entry is not a secret: a URL without credentials, a
region, a mode, a boolean, a number come back from tools, ``mcp get`` and doctor's JSON as they
are; what credential-named variables, headers and URLs hold, and values shaped like keys or
tokens, stay masked everywhere (issue 29)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

import tests.fakes.openai_turns as fo
from tests.fakes import zygote
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.procs import codebot_env
from tests.helpers import cli_in_process, server_entry, write_settings

PLAIN = {
    "GRAFANA_URL": "http://127.0.0.1:9",
    "REGION": "eu-west-1",
    "MODE": "server",
    "READ_ONLY": "true",
    "PORT": "8080",
    "TOKEN_TTL": "3600",
    "MAX_TOKENS": "4096",
}
SECRETS = {
    "GRAFANA_API_KEY": "glsa_canary0123456789abcdef",
    "DB_PASSWORD": "hunter2pass",
    "SMTP_PASS": "letmein",
    "ADMIN_PASSWORD": "123456",  # a number, but under a password's name
    "UPSTREAM": "sk-canary-0123456789",  # no credential name, but a token's shape
    "DATABASE_URL": "postgres://app:pg-canary-pw@127.0.0.1:5432/app",
}
HEADERS = {"Authorization": "Bearer hdr-canary-0123456789", "X-Tenant": "acme"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    servers = {
        "grafana": server_entry("echo", env={**PLAIN, **SECRETS}),
        "remote": {"url": "http://127.0.0.1:9/mcp", "headers": HEADERS, "timeout": 3},
    }
    write_settings(tmp_path, {"mcp_servers": servers})
    return tmp_path


def codebot(project: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = codebot_env(project / "home", CODEBOT_TRUST_PROJECT="1")
    return subprocess.run(
        [*zygote.command(), "--cwd", str(project), *argv],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def test_tool_results_keep_plain_configuration_and_mask_secrets(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first call through the installed codebot (the path a user's call takes); the rest
    through the CLI in this process (the same call and scrubbing, a codebot start less each)."""
    link = codebot(project, "mcp", "call", "grafana", "echo", "text=http://127.0.0.1:9/d/abc")
    assert (link.returncode, link.stdout) == (0, "http://127.0.0.1:9/d/abc\n"), link.stderr
    monkeypatch.setenv("CODEBOT_TRUST_PROJECT", "1")

    def call(*argv: str) -> tuple[int, str, str]:
        return cli_in_process(capsys, monkeypatch, "--cwd", str(project), "mcp", "call", *argv)

    code, out, err = call("grafana", "echo", 'text={"REGION": "eu-west-1"}')
    assert out == '{"REGION": "eu-west-1"}\n', err
    for name, value in PLAIN.items():
        code, out, err = call("grafana", "env", f"name={name}")
        assert out == f"{value}\n", (name, err)
    for name in SECRETS:
        code, out, err = call("grafana", "env", f"name={name}")
        assert code == 0, err
        assert out.strip() in ("***", "postgres://***@127.0.0.1:5432/app"), name


def test_chat_tool_results_keep_plain_configuration(project: Path) -> None:
    with FakeOpenAI() as fake:
        fake.queue(
            fo.tool_calls(
                ("mcp__grafana__echo", {"text": "see http://127.0.0.1:9/d/abc in eu-west-1"}),
                ("mcp__grafana__echo", {"text": "key sk-canary-0123456789, pw hunter2pass"}),
            ),
            fo.text("done"),
        )
        argv = ("chat", "-p", "link", "--yes", "--base-url", fake.base_url)
        result = codebot(project, *argv)
        assert result.returncode == 0, result.stderr
        results = [m["content"] for m in fake.bodies[1]["messages"] if m["role"] == "tool"]
    assert results == ["see http://127.0.0.1:9/d/abc in eu-west-1", "key ***, pw ***"]


def _entries(views: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {v["name"]: v for v in views}


def test_mcp_get_list_and_doctor_show_configuration_and_mask_secrets(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEBOT_TRUST_PROJECT", "1")
    expected_env = {**PLAIN, **dict.fromkeys(SECRETS, "***")}
    cwd = ("--cwd", str(project))
    code, out, err = cli_in_process(capsys, monkeypatch, *cwd, "mcp", "get", "grafana", "--json")
    assert code == 0, err
    shown = json.loads(out)["entry"]["env"]
    assert {k: shown[k] for k in PLAIN} == PLAIN
    assert all(shown[k] == "***" for k in SECRETS)  # as written: a URL with a password too
    code, out, _ = cli_in_process(capsys, monkeypatch, *cwd, "mcp", "get", "remote", "--json")
    assert json.loads(out)["entry"]["headers"] == {"Authorization": "***", "X-Tenant": "acme"}
    code, out, _ = cli_in_process(capsys, monkeypatch, *cwd, "mcp", "get", "grafana")
    assert '"MODE": "server"' in out and '"READ_ONLY": "true"' in out

    code, out, _ = cli_in_process(capsys, monkeypatch, *cwd, "mcp", "doctor", "-f", "json")
    servers = _entries(json.loads(out)["servers"])
    assert servers["grafana"]["env"] == expected_env
    assert servers["remote"]["headers"] == {"Authorization": "***", "X-Tenant": "acme"}
    code, out, err = cli_in_process(capsys, monkeypatch, *cwd, "mcp", "list", "--json")
    assert _entries(json.loads(out)["servers"])["grafana"]["env"] == expected_env
    for value in (*SECRETS.values(), "hdr-canary-0123456789", "pg-canary-pw"):
        assert value not in out
