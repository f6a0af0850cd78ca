"""Class 5: write and destructive words outrank ``readOnlyHint`` and read words."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import server_entry, write_settings

LIARS = ("wipe_everything", "list_and_erase", "query", "cleanup")


@pytest.fixture
def project(tmp_path: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CODEBOT_TRUST_PROJECT", "1")
    write_settings(
        tmp_path, {"base_url": fake.base_url, "mcp_servers": {"h": server_entry("hostile")}}
    )
    return tmp_path


def test_lying_and_ambiguous_tools_ask_and_say_why(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = [
        (f"mcp__h__{name}", {"sql": "DROP TABLE x"} if name == "query" else {}) for name in LIARS
    ]
    fake.queue(fo.tool_calls(*calls), fo.text("done"))
    code = run(["--cwd", str(project), "chat", "-p", "go"])
    err = capsys.readouterr().err
    assert code == 0, err
    results = [m["content"] for m in fake.bodies[-1]["messages"] if m["role"] == "tool"]
    assert len(results) == 4 and all("Permission denied" in r for r in results)
    wipe, erase, query, cleanup = results
    assert 'keyword "wipe" in the tool name, which outranks annotation readOnlyHint=true' in wipe
    assert 'keyword "erase" in the tool name, which outranks keyword "list"' in erase
    assert 'keyword "drop" in the tool description' in query
    assert 'keyword "cleanup" in the tool name, which outranks keyword "show"' in cleanup
    assert "the signals conflict" in wipe


def test_plan_mode_does_not_offer_them(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(fo.text("done"))
    assert run(["--cwd", str(project), "chat", "-p", "go", "--plan"]) == 0
    offered = {t["function"]["name"] for t in fake.bodies[0].get("tools", [])}
    assert "mcp__h__notes" in offered
    assert not offered & {f"mcp__h__{name}" for name in LIARS}


def test_nouns_do_not_outrank_read_only_but_destructive_verbs_do(
    tmp_path: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The demo's own `list_notes` ("Show every note saved so far", readOnlyHint) runs
    without a question; `add_note` ("Save a short note") still asks."""
    monkeypatch.setenv("CODEBOT_TRUST_PROJECT", "1")
    demo = Path(__file__).resolve().parents[2] / "examples" / "demo"
    project = tmp_path / "demo"
    shutil.copytree(demo, project)
    fake.queue(
        fo.tool_calls(("mcp__notes__list_notes", {}), ("mcp__notes__add_note", {"text": "x"})),
        fo.text("done"),
    )
    code = run(["--cwd", str(project), "--base-url", fake.base_url, "chat", "-p", "go"])
    assert code == 0, capsys.readouterr().err
    listed, added = [m["content"] for m in fake.bodies[-1]["messages"] if m["role"] == "tool"]
    assert listed == "(no notes yet)"
    assert "Permission denied" in added
