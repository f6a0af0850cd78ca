"""`codebot chat` as a coding agent: transcripts on every exit, sessions, usage, tool search."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cli.app import run
from tests.fakes import openai_server as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import write_settings


@pytest.fixture
def project(tmp_path: Path, fake: FakeOpenAI) -> Path:
    write_settings(tmp_path, {"base_url": fake.base_url})
    return tmp_path


def chat(capsys: pytest.CaptureFixture[str], cwd: Path, *argv: str) -> tuple[int, str, str]:
    code = run(["--cwd", str(cwd), "chat", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def as_json(out: str) -> dict[str, Any]:
    return json.loads(out)


def test_json_transcript_on_model_error_keeps_calls_that_ran(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(
        fo.tool_calls(("write", {"path": "made.txt", "content": "x"})),
        fo.error(401, "bad key"),
    )
    code, out, err = chat(capsys, project, "-p", "make it", "--json", "--yes")
    assert code == 5, err
    data = as_json(out)
    assert data["outcome"] == "error" and data["error"]["exit_code"] == 5
    assert "rejected the API key" in data["error"]["message"]
    assert [c["name"] for c in data["tool_calls"]] == ["write"]
    assert (project / "made.txt").read_text() == "x"
    assert "error:" in err  # the error is still on stderr


def test_json_transcript_on_turn_limit(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(project, {"base_url": fake.base_url, "max_turns": 2})
    fake.queue(
        fo.tool_calls(("glob", {"pattern": "*"})), fo.tool_calls(("glob", {"pattern": "**"}))
    )
    code, out, _ = chat(capsys, project, "-p", "list", "--json")
    assert code == 6
    data = as_json(out)
    assert data["error"]["exit_code"] == 6 and len(data["tool_calls"]) == 2


def test_empty_answer_exits_7_and_says_so(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(fo.text(""))
    code, out, err = chat(capsys, project, "-p", "hi")
    assert code == 7 and out == ""
    assert "empty answer" in err
    fake.queue(fo.text(""))
    code, out, _ = chat(capsys, project, "-p", "hi", "--json")
    assert code == 7 and as_json(out)["outcome"] == "empty_answer"


def test_dropped_stream_prints_the_partial_answer(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(fo.drop(after_text="the first half"))
    code, out, err = chat(capsys, project, "-p", "hi")
    assert code == 5
    assert out == "the first half\n"
    assert "dropped mid-answer" in err and "cannot connect" not in err
