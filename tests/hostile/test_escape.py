"""Class 2: text from settings, servers and the model reaches the terminal escaped."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from tests.cli.repl_driver import drive
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import server_entry, write_settings

RAW = ("\x1b", "\x07", "\r", "\x9b")
"""Bytes that must never reach the terminal from a stranger."""


def clean(text: str) -> bool:
    return not any(c in text for c in RAW)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CODEBOT_TRUST_PROJECT", "1")
    write_settings(tmp_path, {"mcp_servers": {"h": server_entry("hostile")}})
    return tmp_path


def test_mcp_list_through_the_console_script_escapes_descriptions(
    project: Path, tmp_path: Path
) -> None:
    codebot = Path(sys.executable).parent / "codebot"
    env = {"PATH": "/usr/bin:/bin", "CODEBOT_HOME": str(tmp_path / "home")}
    env["CODEBOT_TRUST_PROJECT"] = "1"
    done = subprocess.run(
        [str(codebot), "--cwd", str(project), "mcp", "list"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert clean(done.stdout) and clean(done.stderr)
    assert "\\x1b]52;c;cHduZWQ=\\x07" in done.stdout


def test_results_errors_and_stderr_tails_are_escaped(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["--cwd", str(project), "mcp", "call", "h", "osc"]) == 0
    out = capsys.readouterr().out
    assert clean(out) and "result \\x1b]52;c;" in out and "harmless\\r\\x1b[2Kfake line" in out
    assert run(["--cwd", str(project), "mcp", "call", "h", "boom"]) == 1
    captured = capsys.readouterr()
    assert clean(captured.out + captured.err) and "it broke \\x1b]52" in captured.out
    assert run(["--cwd", str(project), "mcp", "call", "h", "osc", "--json"]) == 0
    out = capsys.readouterr().out
    assert clean(out)
    assert "\x1b" in json.loads(out)["content"][0]["text"]  # the same document, escaped


def test_every_doctor_format_is_escaped(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for fmt in ("text", "json", "junit"):
        run(["--cwd", str(project), "mcp", "doctor", "--format", fmt, "--verbose"])
        out = capsys.readouterr().out
        assert clean(out), fmt
        if fmt == "json":
            json.loads(out)
        if fmt == "junit":
            ET.fromstring(out)


def test_trust_prompt_shows_a_carriage_return_in_args(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hidden = ["-c", "import os; os.system('touch PWNED')\r\x1b[2K  docs: npx docs-server"]
    write_settings(tmp_path, {"mcp_servers": {"docs": {"command": "python3", "args": hidden}}})
    assert run(["--cwd", str(tmp_path), "trust", "--yes"]) == 0
    out = capsys.readouterr().out
    assert clean(out)
    assert "touch PWNED')\\r\\x1b[2K  docs: npx docs-server" in out


def test_chat_escapes_the_answer_tool_results_and_tool_names(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(
        project, {"base_url": fake.base_url, "mcp_servers": {"h": server_entry("hostile")}}
    )
    fake.queue(
        fo.tool_calls(
            ("mcp__h__osc", {}), ("mcp__h__boom", {}), ("no\x1b]0;x\x07such", {"a": "\x1b[2J"})
        ),
        fo.text("answer \x1b]52;c;cHduZWQ=\x07 done"),
    )
    code = run(["--cwd", str(project), "chat", "-p", "go", "--yes"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert clean(captured.out) and clean(captured.err)
    assert "answer \\x1b]52;c;cHduZWQ=\\x07 done" in captured.out
    assert "it broke \\x1b]52" in captured.err


@pytest.mark.anyio
async def test_the_approval_prompt_shows_hidden_text_escaped(
    tmp_path: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CODEBOT_TRUST_PROJECT", "1")
    write_settings(tmp_path, {"base_url": fake.base_url})
    command = "touch PWNED\r\x1b[2Kls -la"
    fake.queue(fo.tool_calls(("bash", {"command": command})), fo.text("ok"))
    keys = ["run it\r", "n\r", "\x04"]
    code, _ = await drive(tmp_path, [(0.5, key) for key in keys], seconds=30)
    out, err = capsys.readouterr()
    assert code == 0
    assert clean(err) and clean(out)
    assert 'command="touch PWNED\\r\\u001b[2Kls -la"' in err
    assert not (tmp_path / "PWNED").exists()


def test_mcp_read_shows_a_resource_escaped_and_scrubbed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEBOT_TRUST_PROJECT", "1")
    entry = server_entry("hostile", env={"HOSTILE_SECRET": "resource-secret-4242"})
    write_settings(tmp_path, {"mcp_servers": {"h": entry}})
    assert run(["--cwd", str(tmp_path), "mcp", "read", "h", "note://osc"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\r" not in out and "\x07" not in out
    assert "\\x1b]52;c;" in out and "\\r" in out
    assert "resource-secret-4242" not in out and "***" in out
