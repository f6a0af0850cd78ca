"""Settings checks: variables, entries, commands, directories, URLs, overrides."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from codebot_mcp.mcpbridge.doctor.checks.entry_checks import undefined_variables
from tests.doctor.conftest import Doctor, findings, ids
from tests.helpers import server_entry as entry
from tests.helpers import write_settings


def test_missing_variables_are_named_with_their_keys(
    doctor: Doctor, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DOCTOR_TOKEN", raising=False)
    monkeypatch.delenv("DOCTOR_HOST", raising=False)
    monkeypatch.setenv("DOCTOR_SET", "fine")
    path = write_settings(
        doctor.project,
        {
            "mcp_servers": {
                "api": {
                    "url": "https://${DOCTOR_HOST}/mcp?x=${DOCTOR_SET}",
                    "headers": {"Authorization": "Bearer ${DOCTOR_TOKEN}", "X-Ok": "${DOCTOR_SET}"},
                },
                "both": {"command": "x", "env": {"A": "${DOCTOR_TOKEN}"}, "timeout": -1},
            }
        },
    )
    code, report = doctor.json()
    assert code == 1
    assert [(f["server"], f["check"], f["key"], f["message"]) for f in findings(report)] == [
        (
            "api",
            "settings.variable",
            "url",
            "server 'api': variable ${DOCTOR_HOST} in 'url' is not set",
        ),
        (
            "api",
            "settings.variable",
            "headers.Authorization",
            "server 'api': variable ${DOCTOR_TOKEN} in 'headers.Authorization' is not set",
        ),
        # The entry has a second problem besides the variable: both are reported.
        (
            "both",
            "settings.entry",
            None,
            f"server 'both' in {path}: 'timeout' must be a positive number of seconds, found -1",
        ),
        (
            "both",
            "settings.variable",
            "env.A",
            "server 'both': variable ${DOCTOR_TOKEN} in 'env.A' is not set",
        ),
    ]
    hint = report["findings"][1]["hint"]
    assert hint == (
        "Export DOCTOR_TOKEN before running codebot, or write ${DOCTOR_TOKEN:-default} in "
        f"'headers.Authorization' of server 'api' in {path}."
    )
    assert {s["status"] for s in report["servers"]} == {"invalid"}


def test_undefined_variables_lists_all_of_them() -> None:
    raw = {"command": "${A}", "args": ["--x=${B}${C:-c}", "$${LITERAL}"], "env": {"K": "${B}"}}
    assert undefined_variables(raw, {"C": ""}) == [
        ("command", "A"),
        ("args[0]", "B"),
        ("env.K", "B"),
    ]


def test_invalid_entries(doctor: Doctor) -> None:
    path = write_settings(
        doctor.project,
        {
            "mcp_servers": {
                "nocmd": {"args": ["x"]},
                "typo": {**entry("lint_target", "--only", "ping"), "tiemout": 5},
                "bad name": {"command": "x"},
            }
        },
    )
    code, report = doctor.json()
    assert code == 1
    assert [(f["server"], f["check"], f["severity"], f["message"]) for f in findings(report)] == [
        (
            "bad name",
            "settings.entry",
            "error",
            f"server 'bad name' in {path}: the name must use only letters, digits, '-' and '_', "
            "and must not contain '__'",
        ),
        (
            "nocmd",
            "settings.entry",
            "error",
            f"server 'nocmd' in {path}: missing 'command' (a stdio server needs the program to "
            "run)",
        ),
        (
            "typo",
            "settings.unknown_key",
            "warning",
            "server 'typo': unknown key 'tiemout' is ignored (did you mean 'timeout'?)",
        ),
    ]
    assert findings(report, "typo")[0]["key"] == "tiemout"
    statuses = {s["name"]: s["status"] for s in report["servers"]}
    assert statuses == {"bad name": "invalid", "nocmd": "invalid", "typo": "connected"}


def test_command_and_cwd(doctor: Doctor, tmp_path: Path) -> None:
    script = tmp_path / "server.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o644)
    write_settings(
        doctor.project,
        {
            "mcp_servers": {
                "noexec": {"command": str(script)},
                "nofile": {"command": str(tmp_path / "gone")},
                "nopath": {"command": "sh", "env": {"PATH": str(tmp_path / "empty")}},
                "nodir": {"command": "sh", "cwd": "no/such/dir"},
            }
        },
    )
    code, report = doctor.json()
    assert code == 1
    assert [(f["server"], f["key"], f["message"]) for f in findings(report)] == [
        (
            "nodir",
            "cwd",
            f"server 'nodir': working directory {doctor.project}/no/such/dir does not exist",
        ),
        ("noexec", "command", f"server 'noexec': command '{script}' is not executable"),
        ("nofile", "command", f"server 'nofile': command '{tmp_path}/gone' does not exist"),
        (
            "nopath",
            "command",
            "server 'nopath': command 'sh' is not found on the PATH set in 'env'",
        ),
    ]
    assert findings(report, "noexec")[0]["hint"].startswith(
        f"Make it executable (chmod +x {script})"
    )


def test_urls(doctor: Doctor) -> None:
    write_settings(
        doctor.project,
        {
            "mcp_servers": {
                "port": {"url": "https://example.com:99999/mcp"},
                # TEST-NET-1: never routed, so no test reaches a real host.
                "plain": {"url": "http://192.0.2.1:9/mcp"},
            }
        },
    )
    code, report = doctor.json("--timeout", "1")
    assert code == 1
    assert ids(report, "port") == [("settings.url", "error")]
    assert findings(report, "port")[0]["message"] == (
        "server 'port': URL https://example.com:99999/mcp is malformed: its port is not a "
        "number from 0 to 65535"
    )
    # plain http to a remote host: a warning, then the connection is tried (and fails).
    assert ids(report, "plain")[0] == ("settings.url", "warning")
    assert ids(report, "plain")[1][1] == "error"


def test_override_and_disabled(doctor: Doctor) -> None:
    home = Path(os.environ["CODEBOT_HOME"])
    home.mkdir(parents=True)
    (home / "settings.json").write_text(
        json.dumps(
            {
                "mcp_servers": {
                    "ping": {"command": "old-command"},
                    "off": {"command": "nope", "enabled": False},
                }
            }
        )
    )
    project = write_settings(
        doctor.project,
        {
            "mcp_servers": {
                "ping": entry("lint_target", "--only", "ping"),
            }
        },
    )
    code, report = doctor.json()
    assert code == 0
    assert [(f["check"], f["severity"], f["server"]) for f in findings(report)] == [
        ("settings.disabled", "info", "off"),
        ("settings.override", "info", "ping"),
    ]
    assert findings(report, "ping")[0]["message"] == (
        f"server 'ping' from {project} replaces the entry of the same name in "
        f"{home / 'settings.json'}"
    )
    servers = {s["name"]: s for s in report["servers"]}
    assert servers["off"]["status"] == "disabled"
    assert set(servers["off"]["checks"].values()) == {"skipped"}
    assert servers["ping"]["overrides"] == str(home / "settings.json")
    assert report["settings"]["global_file"] == str(home / "settings.json")
