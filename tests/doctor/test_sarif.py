"""`--format sarif`: valid SARIF 2.1.0, one result per finding, located at the server's entry.

``tests/fixtures/sarif-schema-2.1.0.json`` is the official OASIS schema (SARIF 2.1.0 errata01,
``$id`` https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json),
as published in the OASIS TC's repository (oasis-tcs/sarif-spec,
``sarif-2.1/schema/sarif-schema-2.1.0.json``), sha256
c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e. No PyPI package ships it;
the npm ``@microsoft/jest-sarif`` ships only the earlier ``2.1.0-rtm.5`` draft.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import validators  # type: ignore[import-untyped]

from codebot_mcp.core.config.locate import key_lines
from codebot_mcp.mcpbridge.doctor.checks import CHECKS
from tests.doctor.conftest import Doctor
from tests.helpers import server_entry as entry
from tests.helpers import write_settings
from tests.servers.util import REPO_ROOT

SCHEMA_FILE = REPO_ROOT / "tests" / "fixtures" / "sarif-schema-2.1.0.json"
SCHEMA_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"


def sarif_errors(log: Any) -> list[str]:
    raw = SCHEMA_FILE.read_bytes()
    assert hashlib.sha256(raw).hexdigest() == SCHEMA_SHA256  # the official file, unchanged
    schema = json.loads(raw)
    validator: Any = validators.validator_for(schema)(schema)
    return [e.message for e in validator.iter_errors(log)]


def test_sarif_is_valid_and_has_one_located_result_per_finding(doctor: Doctor) -> None:
    path = write_settings(
        doctor.project,
        {
            "mcp_servers": {
                "lint": entry("lint_target"),
                "missing": {"command": "no-such-command-for-sarif"},
                "unset": {"command": "x", "env": {"TOKEN": "${SARIF_UNSET_VARIABLE}"}},
            }
        },
    )
    code_json, report = doctor.json()
    code, out, _ = doctor("--format", "sarif")
    assert code == code_json == 1  # the exit codes are doctor's, whatever the format
    log = json.loads(out)
    assert sarif_errors(log) == []
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [c.id for c in CHECKS]
    results = run["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        (f["check"], {"info": "note"}.get(f["severity"], f["severity"])) for f in report["findings"]
    ]
    lines = key_lines(path.read_text())
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        assert physical["artifactLocation"] == {
            "uri": ".codebot/settings.json",
            "uriBaseId": "%SRCROOT%",
        }
        server = result["properties"]["server"]
        assert physical["region"]["startLine"] == lines[("mcp_servers", server)]
    assert {r["properties"]["server"] for r in results} == {"lint", "missing", "unset"}
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == doctor.project.as_uri() + "/"
    assert run["invocations"][0]["exitCode"] == 1
    # The schema bites: a level SARIF does not know is refused.
    results[0]["level"] = "info"
    assert sarif_errors(log)


def test_sarif_outside_the_project_and_unreadable_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"  # CODEBOT_HOME (conftest): outside the project below
    home.mkdir(exist_ok=True)
    (tmp_path / "project").mkdir()
    doctor = Doctor(tmp_path / "project", capsys)
    (home / "settings.json").write_text(
        json.dumps({"mcp_servers": {"gone": {"command": "no-such-command-for-sarif"}}})
    )
    code, out, _ = doctor("--format", "sarif")
    assert code == 1
    log = json.loads(out)
    assert sarif_errors(log) == []
    (result,) = [r for r in log["runs"][0]["results"] if r["ruleId"] == "settings.command"]
    artifact = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact == {"uri": (home / "settings.json").resolve().as_uri()}

    (doctor.project / ".codebot").mkdir()
    (doctor.project / ".codebot" / "settings.json").write_text("{broken")
    code, out, _ = doctor("--format", "sarif")
    assert code == 3
    log = json.loads(out)
    assert sarif_errors(log) == []
    (result,) = log["runs"][0]["results"]
    assert result["ruleId"] == "settings.parse" and result["level"] == "error"
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is False
