"""Bad input: each case gets one clear reason naming the file, server or key, the documented
exit code, and no traceback."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run
from tests.helpers import write_settings
from tests.servers.util import run_http_server


def failures(capsys: pytest.CaptureFixture[str], project: Path) -> tuple[int, dict[str, Any], str]:
    code = run(["--cwd", str(project), "mcp", "list", "--json"])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    servers = {s["name"]: s for s in json.loads(out.out)["servers"]}
    return code, {n: s["failure"] for n, s in servers.items()}, out.err


@pytest.fixture
def silent_tcp() -> Iterator[str]:
    """A TCP port that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    listener.close()


def test_http_endpoints_that_are_not_healthy_mcp_servers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], silent_tcp: str
) -> None:
    with (
        run_http_server("--html") as html,
        run_http_server("--status", "404") as not_found,
        run_http_server("--status", "500") as broken,
        run_http_server() as plain,
    ):
        write_settings(
            tmp_path,
            {
                "mcp_servers": {
                    "html": {"url": html},
                    "notfound": {"url": not_found},
                    "broken": {"url": broken},
                    "tls": {"url": plain.replace("http://", "https://")},
                    "silent": {"url": silent_tcp, "timeout": 2},
                    "refused": {"url": "http://127.0.0.1:9/mcp", "timeout": 5},
                }
            },
        )
        code, errors, _ = failures(capsys, tmp_path)
    assert code == 4
    assert "is not an MCP endpoint" in errors["html"]["message"]
    assert "/mcp" in errors["html"]["hint"]
    assert "404 Not Found" in errors["notfound"]["message"]
    assert "'url' path" in errors["notfound"]["hint"]
    assert "HTTP error" in errors["broken"]["message"]
    assert errors["tls"]["stage"] == "handshake"
    assert errors["tls"]["message"].startswith("TLS failed talking to https:")
    assert "http://" in errors["tls"]["hint"]
    assert errors["silent"]["message"] == "no answer within 2 s"
    assert "cannot connect to http://127.0.0.1:9/mcp" in errors["refused"]["message"]
    for name, error in errors.items():
        assert error["hint"], name


def test_commands_that_cannot_start(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "not-executable.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o644)
    write_settings(
        tmp_path,
        {
            "mcp_servers": {
                "noexec": {"command": str(script)},
                "missing": {"command": "surely-not-a-command-here"},
                "nocwd": {"command": "python3", "cwd": "does/not/exist"},
            }
        },
    )
    code, errors, _ = failures(capsys, tmp_path)
    assert code == 4
    assert errors["noexec"]["stage"] == "launch"
    assert "not found or not executable" in errors["noexec"]["message"]
    assert errors["missing"]["stage"] == "launch"
    assert "'command'" in errors["missing"]["hint"]
    assert errors["nocwd"]["stage"] == "launch"
    assert "does/not/exist" in errors["nocwd"]["message"]
    assert "'cwd'" in errors["nocwd"]["hint"]


def test_settings_that_is_not_utf8_is_a_settings_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / ".codebot" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(b'{"mcp_servers": {"\xff": {}}}')
    assert run(["--cwd", str(tmp_path), "mcp", "list"]) == 3
    err = capsys.readouterr().err
    assert f"cannot read settings file {path}" in err
    assert "hint:" in err and "Traceback" not in err


def test_a_settings_entry_error_names_file_server_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_settings(tmp_path, {"mcp_servers": {"s": {"command": "x", "headers": []}}})
    code, errors, _ = failures(capsys, tmp_path)
    assert code == 4
    assert errors["s"]["stage"] == "config"
    assert f"server 's' in {path}" in errors["s"]["message"]
    assert "'headers'" in errors["s"]["message"]
