"""Doctor and chat agree on long tool descriptions: chat sends a 1,500-character description
whole, and doctor notes it (info) instead of warning that OpenAI rejects it (the API documents
no limit on ``description`` and has accepted longer ones since mid-2025)."""

from __future__ import annotations

import pytest

from tests.doctor.conftest import Doctor
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import server_entry, write_settings
from tests.servers.lint_target import LONG_DESCRIPTION_LENGTH


def test_doctor_notes_what_chat_sends_whole(
    doctor: Doctor, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEBOT_TRUST_PROJECT", "1")
    entry = server_entry("lint_target", "--only", "long_description")
    write_settings(doctor.project, {"base_url": fake.base_url, "mcp_servers": {"lint": entry}})
    code, report = doctor.json("--strict")
    assert code == 0, report["findings"]  # nothing to warn about
    [note] = [f for f in report["findings"] if f["check"] == "tool.description_length"]
    assert note["severity"] == "info"
    assert "has a description of 1500 characters; codebot sends it whole" in note["message"]
    assert report["servers"][0]["checks"]["tool.description_length"] == "info"

    from codebot_mcp.cli.app import run

    fake.queue(fo.text("ok"))
    assert run(["--cwd", str(doctor.project), "chat", "-p", "hi"]) == 0
    doctor.capsys.readouterr()
    [tool] = [
        t["function"]
        for t in fake.bodies[0]["tools"]
        if t["function"]["name"] == "mcp__lint__long_description"
    ]
    assert len(tool["description"]) == LONG_DESCRIPTION_LENGTH  # what doctor said: whole
