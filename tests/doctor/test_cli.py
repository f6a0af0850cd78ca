"""`codebot mcp doctor` through the real entry point, against real servers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from codebot_mcp.mcpbridge.doctor.checks import CHECKS
from tests.doctor.conftest import Doctor, ids
from tests.helpers import everything_entry, write_settings
from tests.helpers import server_entry as entry
from tests.servers.crash_on_start import MESSAGE as CRASH_MESSAGE
from tests.servers.util import run_http_server


@pytest.mark.npm
def test_healthy_set_exits_0_and_strict_fails_on_the_shared_name(doctor: Doctor) -> None:
    with run_http_server() as url:
        write_settings(
            doctor.project,
            {
                "mcp_servers": {
                    "echo": entry("echo"),
                    "everything": everything_entry(),
                    "ping": entry("lint_target", "--only", "ping"),
                    "web": {"url": url, "headers": {"Authorization": "Bearer sekret-token"}},
                }
            },
        )
        code, report = doctor.json()
        assert code == 0, report["findings"]
        assert report["ok"] is True and report["exit_code"] == 0
        summary = report["summary"]
        assert (summary["servers"], summary["connected"], summary["errors"]) == (4, 4, 0)
        # echo, everything and the HTTP server all have a tool called "echo".
        assert {sev for _, sev in ids(report)} == {"info", "warning"}
        warnings = [f for f in report["findings"] if f["severity"] == "warning"]
        assert [(f["check"], f["tool"]) for f in warnings] == [("totals.duplicate_name", "echo")]
        assert warnings[0]["message"] == (
            "servers 'echo', 'everything' and 'web' all offer 1 tool of the same name: 'echo'"
        )
        servers = {s["name"]: s for s in report["servers"]}
        assert servers["web"]["transport"] == "http"
        assert servers["web"]["headers"] == {"Authorization": "***"}
        for server in servers.values():
            assert server["status"] == "connected"
            assert server["handshake_ms"] > 0 and server["protocol_version"]
            assert server["server_info"]["name"] and "tools" in server["capabilities"]
            assert server["tokens"] > 0
        assert servers["everything"]["server_info"]["name"] == "mcp-servers/everything"
        assert summary["tokens"] == sum(s["tokens"] for s in servers.values())

        code, out, _ = doctor("--strict")
        assert code == 1
        last = out.splitlines()[-1]
        assert last.startswith("✗ 0 errors · 1 warning · ") and last.endswith(" · exit 1")


def test_text_output_is_compact(doctor: Doctor) -> None:
    write_settings(
        doctor.project,
        {
            "mcp_servers": {
                "ping": entry("lint_target", "--only", "ping"),
                "crash": entry("crash_on_start"),
            }
        },
    )
    code, out, _ = doctor()
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == f"codebot mcp doctor: 2 servers from {doctor.project}/.codebot/settings.json"
    assert "✗ crash  stdio · failed at handshake" in lines
    assert any(
        ln.startswith("✓ ping  stdio · connected in ") and "lint_target 0.1.0 · 1 tool · ~" in ln
        for ln in lines
    )
    assert (
        "  ✗ connect.handshake  server 'crash': handshake failed: the server closed the "
        "connection (it exited or crashed)" in lines
    )
    assert f"      {CRASH_MESSAGE}" in lines
    assert lines[-1] == "✗ 1 error · 0 warnings · exit 1"
    assert "\x1b[" not in out  # not a terminal: no colour


def test_server_that_fails_to_start(doctor: Doctor) -> None:
    write_settings(
        doctor.project,
        {
            "mcp_servers": {
                "crash": entry("crash_on_start"),
                "missing": {"command": "no-such-command-xyz"},
            }
        },
    )
    code, report = doctor.json()
    assert code == 1
    assert ids(report) == [("connect.handshake", "error"), ("settings.command", "error")]
    crash, missing = report["servers"]
    assert crash["status"] == "failed"
    assert crash["failure"]["stage"] == "handshake"
    assert CRASH_MESSAGE in crash["failure"]["stderr_tail"]
    assert crash["checks"]["tool.schema"] == "skipped"
    assert missing["status"] == "invalid"
    assert missing["checks"]["connect.handshake"] == "skipped"
    f = report["findings"][1]
    assert f["message"] == "server 'missing': command 'no-such-command-xyz' is not found on PATH"
    assert f["key"] == "command" and f["file"] == str(doctor.project / ".codebot/settings.json")
    assert "full path in 'command' of server 'missing' in" in f["hint"]


def test_server_slower_than_its_timeout(doctor: Doctor) -> None:
    write_settings(
        doctor.project,
        {
            "mcp_servers": {
                "slow": entry("slow_start", "--delay", "5", timeout=1),
                "hang": entry("hang"),
            }
        },
    )
    code, report = doctor.json("--timeout", "1.5", "--server", "hang")
    assert code == 1
    assert ids(report) == [("connect.timeout", "error")]
    assert report["findings"][0]["message"] == "server 'hang': handshake got no answer within 1.5 s"
    assert "--timeout" in report["findings"][0]["hint"]

    code, report = doctor.json("--server", "slow")
    assert code == 1
    [f] = report["findings"]
    assert (f["check"], f["key"]) == ("connect.timeout", "timeout")
    assert "Raise 'timeout' for server 'slow' in" in f["hint"]


def test_same_server_configured_twice(doctor: Doctor) -> None:
    write_settings(
        doctor.project,
        {
            "mcp_servers": {
                "a": entry("lint_target", "--only", "ping,contradiction"),
                "b": entry("lint_target", "--only", "ping,contradiction"),
            }
        },
    )
    code, report = doctor.json()
    assert code == 0
    dup = [f for f in report["findings"] if f["check"] == "totals.duplicate_name"]
    assert [(f["server"], f["tool"], f["message"]) for f in dup] == [
        (
            None,
            None,
            "servers 'a' and 'b' both offer 2 tools of the same name: 'contradiction', 'ping'",
        ),
    ]
    assert dup[0]["hint"].startswith("They look like the same server configured twice")
    assert report["checks"]["totals.duplicate_name"] == "warning"
    assert doctor.json("--strict")[0] == 1


def test_secrets_never_appear_in_any_format(doctor: Doctor) -> None:
    secrets = ["hunter2pass", "abcd1234secret", "topsecretvalue123", "sk-supersecret-999"]
    write_settings(
        doctor.project,
        {
            "mcp_servers": {
                "web": {
                    "url": "http://user:hunter2pass@127.0.0.1:9/mcp?token=abcd1234secret",
                    "headers": {"Authorization": "Bearer topsecretvalue123"},
                },
                "crash": entry("crash_on_start", env={"API_KEY": "sk-supersecret-999"}),
                "vars": {
                    "command": "x",
                    "env": {"KEY": "sk-supersecret-999", "T": "${DOCTOR_UNSET}"},
                },
            }
        },
    )
    outputs = []
    for fmt in ("text", "json", "junit"):
        code, out, err = doctor("--format", fmt, "--verbose")
        assert code == 1
        outputs.append(out + err)
    report = json.loads(outputs[1])
    assert ("settings.url", "warning") in ids(report, "web")  # credentials in the URL
    assert ("connect.handshake", "error") in ids(report, "web")  # nothing listens on port 9
    for text in outputs:
        for secret in secrets:
            assert secret not in text


def test_settings_that_cannot_be_read_exit_3(doctor: Doctor) -> None:
    path = doctor.project / ".codebot" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"mcp_servers": {,}}')
    code, report = doctor.json()
    assert code == 3
    assert report["settings"]["readable"] is False
    assert report["servers"] == []
    [f] = report["findings"]
    assert (f["check"], f["severity"]) == ("settings.parse", "error")
    assert f["message"].startswith(f"invalid JSON in {path} at line 1")
    code, out, _ = doctor()
    assert code == 3
    assert out.splitlines()[0].startswith("✗ settings.parse  invalid JSON in")
    assert out.splitlines()[-1] == "✗ the settings cannot be read · exit 3"


def test_no_servers_is_a_warning(doctor: Doctor) -> None:
    code, report = doctor.json()
    assert code == 0
    assert ids(report) == [("settings.servers", "warning")]
    assert doctor.json("--strict")[0] == 1


def test_output_file_and_usage_errors(doctor: Doctor, tmp_path: Path) -> None:
    write_settings(
        doctor.project, {"mcp_servers": {"ping": entry("lint_target", "--only", "ping")}}
    )
    target = tmp_path / "doctor.xml"
    code, out, err = doctor("--format", "junit", "--output", str(target))
    assert code == 0 and out == ""
    assert f"report in {target}" in err
    assert target.read_text().startswith('<?xml version="1.0"')
    code, _, err = doctor("--server", "nope")
    assert code == 2 and "unknown server 'nope' (configured: ping)" in err
    code, _, err = doctor("--format", "yaml")
    assert code == 2


def test_list_checks(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["mcp", "doctor", "--list-checks"]) == 0
    out = capsys.readouterr().out
    listed = [line.split()[0] for line in out.splitlines()]
    assert listed == [c.id for c in CHECKS]
    assert len(set(listed)) == len(listed)
