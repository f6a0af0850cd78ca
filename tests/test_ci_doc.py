"""docs/ci.md: the GitHub Actions workflow parses, uploads what doctor writes, and its codebot
command lines run as written (doctor writes SARIF to the file the upload step reads)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import cli_in_process
from tests.servers.util import REPO_ROOT


def workflow() -> dict[str, Any]:
    text = (REPO_ROOT / "docs" / "ci.md").read_text()
    block = re.search(r"```yaml\n(.*?)```", text, re.DOTALL)
    assert block is not None
    data: dict[str, Any] = yaml.safe_load(block.group(1))
    return data


def steps() -> list[dict[str, Any]]:
    (job,) = workflow()["jobs"].values()
    found: list[dict[str, Any]] = job["steps"]
    return found


def test_the_workflow_uploads_the_sarif_doctor_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert workflow()["permissions"]["security-events"] == "write"
    (doctor,) = [s for s in steps() if "mcp doctor" in s.get("run", "")]
    (upload,) = [s for s in steps() if s.get("uses", "").startswith("github/codeql-action/upload")]
    assert upload["if"] == "always()"
    argv = shlex.split(doctor["run"])
    assert argv[argv.index("--output") + 1] == upload["with"]["sarif_file"]
    output = tmp_path / upload["with"]["sarif_file"]
    argv[argv.index("--output") + 1] = str(output)
    code, _, err = cli_in_process(capsys, monkeypatch, "--cwd", str(tmp_path), *argv[1:])
    assert code == 0, err
    assert json.loads(output.read_text())["version"] == "2.1.0"


def test_the_review_step_streams_json_and_keeps_the_log() -> None:
    (review,) = [s for s in steps() if "chat" in s.get("run", "")]
    assert review["shell"] == "bash"  # pipefail: codebot's exit code fails the step
    command = review["run"].replace("\\\n", " ")
    assert "--output-format stream-json" in command and "tee review.jsonl" in command
    (keep,) = [s for s in steps() if s.get("uses", "").startswith("actions/upload-artifact")]
    assert keep["with"]["path"] == "review.jsonl"
