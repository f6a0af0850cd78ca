"""A canary secret planted in env values, headers, URLs and the API key never shows up:
not in any command's stdout or stderr (every format, --debug included), not in any file
codebot writes. Files codebot writes are 0600 in 0700 directories.
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import tests.fakes.openai_turns as fo
from tests.fakes import zygote
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import server_entry, write_settings
from tests.servers.util import run_http_server

CANARY = "canary-9f8e7d6c5b4a3"


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    """One Streamable HTTP server for the module (each call is a session of its own)."""
    with run_http_server("--token", CANARY) as url:
        yield url


@pytest.fixture
def project(tmp_path: Path, http_url: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CANARY_SECRET", CANARY)
    monkeypatch.setenv("OPENAI_API_KEY", f"sk-{CANARY}")
    write_settings(
        tmp_path,
        {
            "mcp_servers": {
                "echo": server_entry("echo", env={"SERVICE_TOKEN": "${CANARY_SECRET}"}),
                "remote": {
                    "url": http_url,
                    "headers": {"Authorization": "Bearer ${CANARY_SECRET}"},
                },
                "broken": {
                    "url": "http://admin:${CANARY_SECRET}@127.0.0.1:9/mcp?api_key=${CANARY_SECRET}",
                    "headers": {"X-Key": "${CANARY_SECRET}"},
                    "timeout": 3,
                },
                "wrongkey": {
                    "url": http_url,
                    "headers": {"Authorization": "Bearer wrong-${CANARY_SECRET}"},
                    "timeout": 5,
                },
            }
        },
    )
    return tmp_path


def codebot(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*zygote.command(), "--cwd", str(cwd), *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
    )


COMMANDS = {
    "list": [("mcp", "list"), ("mcp", "list", "--json", "--schemas"), ("--debug", "mcp", "list")],
    "call": [
        ("mcp", "call", "echo", "echo", "text=hello"),
        ("--debug", "mcp", "call", "remote", "whoami"),
        ("mcp", "call", "broken", "anything"),
        ("mcp", "call", "wrongkey", "whoami"),
    ],
    "doctor": [
        ("mcp", "doctor"),
        ("mcp", "doctor", "--format", "json"),
        ("mcp", "doctor", "--format", "junit"),
        ("--debug", "mcp", "doctor", "--verbose"),
    ],
}
"""The commands, by group: each group is a test of its own (a home of its own), so the
thirteen processes spread over the workers instead of ending the suite alone."""


@pytest.mark.timeout(300)  # up to 4 codebot processes at once: slow on a loaded 2-core machine
@pytest.mark.parametrize("group", [*COMMANDS, "chat"])
def test_canary_never_appears_in_any_output_or_file(
    project: Path, tmp_path: Path, group: str
) -> None:
    if group == "chat":
        runs = []
        with FakeOpenAI() as fake:
            fake.queue(fo.tool_calls(("mcp__echo__echo", {"text": "hi"})), fo.text("done"))
            argv = ("chat", "-p", "say hi", "--yes", "--json", "--base-url", fake.base_url)
            runs.append(codebot(project, *argv))
            fake.queue(fo.error(401, "bad key"))
            runs.append(codebot(project, "--debug", "chat", "-p", "x", "--base-url", fake.base_url))
            auth = {r.headers.get("authorization", "") for r in fake.requests}
        assert auth == {f"Bearer sk-{CANARY}"}  # the key was really used...
        assert runs[0].returncode == 0, runs[0].stderr
    else:
        # Side by side, as a user's scripts may run them (they share the home and its logs).
        with ThreadPoolExecutor(max_workers=4) as pool:
            runs = list(pool.map(lambda argv: codebot(project, *argv), COMMANDS[group]))
    if group == "call":  # ...and the servers really got their secrets: something to leak.
        assert runs[1].returncode == 0 and runs[1].stdout == "http\n", runs[1].stderr
        assert runs[2].returncode == 4 and runs[3].returncode == 4
    for result in runs:
        assert CANARY not in result.stdout, result.args
        assert CANARY not in result.stderr, result.args

    home = tmp_path / "home"
    written = [p for p in home.rglob("*") if p.is_file()]
    assert written  # logs and history at least
    for path in written:
        assert CANARY.encode() not in path.read_bytes(), path
        private = 0o700 if path.name.startswith("codebot-exec-") else 0o600  # a built helper
        assert stat.S_IMODE(path.stat().st_mode) == private, path
    for directory in [p for p in home.rglob("*") if p.is_dir()]:
        if directory.is_relative_to(home / "state"):
            assert stat.S_IMODE(directory.stat().st_mode) == 0o700, directory


def test_child_environment_does_not_leak_parent_secrets(project: Path) -> None:
    result = codebot(project, "mcp", "call", "echo", "env", "name=OPENAI_API_KEY")
    assert result.stdout == "<unset>\n"
    result = codebot(project, "mcp", "call", "echo", "env", "name=CANARY_SECRET")
    assert result.stdout == "<unset>\n"
    # The configured env does reach it; the server echoing it back is scrubbed like any
    # output (a value other than a known secret, "<unset>" included, would show as it is).
    result = codebot(project, "mcp", "call", "echo", "env", "name=SERVICE_TOKEN")
    assert result.returncode == 0 and result.stdout.strip() == "***"
