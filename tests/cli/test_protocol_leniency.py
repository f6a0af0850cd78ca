"""Defects the MCP conformance suite found in `mcp call`, against a real server of ours.

- The pre-call schema check must never be stricter than the protocol: ``null`` for an optional
  parameter is sent (SEP-2243, ``http-custom-headers``).
- A result the SDK rejects (breaks the MCP schema, or the tool's own outputSchema) is that
  call's error with the server named: exit 4 for `mcp call`, one error line in `--batch`, which
  goes on with the next line; never a traceback (``sep-2322-client-request-state``).
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from tests.helpers import server_entry, write_settings


@pytest.fixture
def project(tmp_path: Path) -> Path:
    entry = server_entry("odd_results", protocol="legacy")
    write_settings(tmp_path, {"mcp_servers": {"odd": entry}})
    return tmp_path


def codebot(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = run(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_null_for_an_optional_parameter_reaches_the_server(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = '{"region": "us-east1", "verbose": null}'
    code, out, err = codebot(capsys, "--cwd", str(project), "mcp", "call", "odd", "headers", args)
    assert code == 0, err
    assert json.loads(out) == {"region": "us-east1", "verbose": None}


def test_the_schema_check_still_refuses_real_mismatches(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for args in ('{"verbose": true}', '{"region": null}', '{"region": "x", "verbose": "yes"}'):
        code, out, err = codebot(
            capsys, "--cwd", str(project), "mcp", "call", "odd", "headers", args
        )
        assert code == 2, (args, out, err)
        assert "do not match its schema" in err


@pytest.mark.parametrize(
    ("tool", "reason"),
    [
        ("malformed", "does not follow the MCP schema"),
        ("off_schema", "breaks its own output schema"),
    ],
)
def test_a_result_the_sdk_rejects_is_a_clear_error(
    project: Path, capsys: pytest.CaptureFixture[str], tool: str, reason: str
) -> None:
    code, out, err = codebot(capsys, "--cwd", str(project), "mcp", "call", "odd", tool)
    assert code == 4, err
    assert "Traceback" not in err and out == ""
    assert f"error: '{tool}'" in err and "server 'odd'" in err and reason in err
    assert "hint:" in err


def test_batch_answers_a_rejected_result_per_line_and_goes_on(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    requests = [
        {"server": "odd", "tool": "malformed"},
        {"server": "odd", "tool": "headers", "arguments": {"region": "eu", "verbose": None}},
        {"server": "odd", "tool": "off_schema"},
        {"server": "odd", "tool": "headers", "arguments": {"region": "us"}},
    ]
    lines = "".join(json.dumps(r) + "\n" for r in requests)
    monkeypatch.setattr(sys, "stdin", io.StringIO(lines))
    code, out, err = codebot(capsys, "--cwd", str(project), "mcp", "call", "--batch")
    assert "Traceback" not in err
    answers = [json.loads(line) for line in out.splitlines()]
    assert [a["line"] for a in answers] == [1, 2, 3, 4]
    assert code == 1
    assert answers[0]["error"]["exit_code"] == 4
    assert "does not follow the MCP schema" in answers[0]["error"]["message"]
    assert json.loads(answers[1]["content"][0]["text"]) == {"region": "eu", "verbose": None}
    assert "breaks its own output schema" in answers[2]["error"]["message"]
    assert json.loads(answers[3]["content"][0]["text"]) == {"region": "us"}
