"""Class 10: the approval prompt never hides part of what will run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.repl_driver import drive
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import write_settings


@pytest.mark.anyio
async def test_a_padded_command_is_shown_whole(
    tmp_path: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CODEBOT_TRUST_PROJECT", "1")
    # No sandbox: bash asks (a sandboxed one would run confined without asking).
    write_settings(tmp_path, {"base_url": fake.base_url, "sandbox": {"mode": "off"}})
    command = "echo hello" + " " * 400 + "; touch PWNED"
    fake.queue(fo.tool_calls(("bash", {"command": command})), fo.text("ok"))
    keys = ("go\r", "n\r", "\x04")
    code, _ = await drive(tmp_path, [(0.6, key) for key in keys], seconds=30)
    err = capsys.readouterr().err
    assert code == 0
    assert f"command ({len(command) + 2} characters):" in err
    shown = "".join(line.strip() for line in err.splitlines() if line.startswith("      "))
    assert shown.replace(" ", "") == f'"{command}"'.replace(" ", "")
    assert "; touch PWNED" in err
    assert not (tmp_path / "PWNED").exists()
