"""Class 9: permission rules match on (server, tool), never on the joined name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import server_entry


def test_a_rule_for_server_x_does_not_cover_server_x_underscore(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    settings = {
        "base_url": fake.base_url,
        "permissions": {"allow": ["mcp__x__*"]},
        "mcp_servers": {"x": server_entry("echo"), "x_": server_entry("echo")},
    }
    (home / "settings.json").write_text(json.dumps(settings))
    fake.queue(
        fo.tool_calls(("mcp__x__delete_note", {"id": "1"}), ("mcp__x___delete_note", {"id": "2"})),
        fo.text("done"),
    )
    code = run(["--cwd", str(tmp_path), "chat", "-p", "go"])
    err = capsys.readouterr().err
    assert code == 0, err
    mine, theirs = [m["content"] for m in fake.bodies[-1]["messages"] if m["role"] == "tool"]
    assert "Permission denied" not in mine
    assert "Permission denied" in theirs
    assert "mcp__x___delete_note denied" in err
