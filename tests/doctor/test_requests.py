"""`codebot mcp doctor` declares what chat declares, and answers servers' requests sanely."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.doctor.conftest import Doctor
from tests.helpers import everything_entry, server_entry, write_settings

GATED = (
    "trigger-elicitation-request",
    "trigger-sampling-request",
    "get-roots-list",
    "trigger-url-elicitation",
)


@pytest.mark.npm
def test_doctor_sees_the_capability_gated_tools(doctor: Doctor) -> None:
    write_settings(doctor.project, {"mcp_servers": {"ev": everything_entry()}})
    code, report = doctor.json()
    assert code == 0, report["findings"]
    [server] = report["servers"]
    names = {t["original_name"] for t in server["tools"]}
    assert len(names) == 17, sorted(names)
    assert set(GATED) <= names


def test_doctor_answers_roots_and_declines_the_rest(doctor: Doctor, tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    extra = tmp_path / "extra"
    entry = server_entry("inquirer", "--record", str(record), timeout=15)
    write_settings(doctor.project, {"mcp_servers": {"inq": entry}, "roots": [str(extra)]})
    code, report = doctor.json()
    assert code == 0, report["findings"]
    assert report["servers"][0]["status"] == "connected"  # tools/list waited on the answers
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert set(lines[0]["capabilities"]) == {"sampling", "elicitation", "roots", "extensions"}
    answers = {line["id"]: line for line in lines if "id" in line}
    roots = [r["uri"] for r in answers["q-roots"]["result"]["roots"]]
    assert roots == [doctor.project.resolve().as_uri(), extra.resolve().as_uri()]
    assert answers["q-form"]["result"] == {"action": "decline"}
    assert answers["q-url"]["result"] == {"action": "decline"}
    assert answers["q-sample"]["error"]["code"] == -1  # the spec's "user rejected"
    assert lines[-1] == {"listed": True}


def test_log_level_sends_set_level(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from codebot_mcp.cli.app import run

    record = tmp_path / "record.jsonl"
    entry = server_entry("inquirer", "--record", str(record), log_level="warning")
    write_settings(tmp_path, {"mcp_servers": {"inq": entry}})
    assert run(["--cwd", str(tmp_path), "mcp", "list"]) == 0, capsys.readouterr().err
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert {"request": "logging/setLevel", "params": {"level": "warning"}} in lines
