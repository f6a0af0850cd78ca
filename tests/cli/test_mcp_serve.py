"""``codebot mcp serve`` used by MCP clients other than the SDK's: codebot's own ``mcp list``,
``mcp call`` and ``mcp doctor`` (its lint clean for the OpenAI and Anthropic tool-name rules),
and Claude Code (``claude mcp add`` / ``claude mcp list``) when it is installed."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run
from tests.fakes import zygote
from tests.helpers import write_settings
from tests.servers.util import REPO_ROOT

CODEBOT = str(Path(sys.executable).with_name("codebot"))
OPENAI_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""OpenAI's function names."""
ANTHROPIC_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""Anthropic's tool names (the Messages API rejects anything else with a 400)."""


def serve_entry(home: Path, *flags: str) -> dict[str, Any]:
    """A settings entry that runs ``codebot mcp serve`` with its own state directory (a fork
    of :mod:`tests.fakes.zygote`: the SDK already imported)."""
    program, *prefix = zygote.command()
    return {
        "command": program,
        "args": [*prefix, "mcp", "serve", *flags],
        # The test process's locale, so the served process starts as it did (a fork, not the
        # zygote's fallback to a fresh interpreter).
        "env": {"CODEBOT_HOME": str(home), "CODEBOT_TRUST_PROJECT": "1"}
        | {k: v for k, v in os.environ.items() if k in ("LANG", "LC_ALL", "LC_CTYPE")},
    }


def codebot(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = run(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.txt").write_text("served notes\n")
    entry = serve_entry(tmp_path / "serve-home", "--allow", "bash") | {"cwd": str(root)}
    write_settings(root, {"mcp_servers": {"codebot": entry}})
    return root


@pytest.fixture(params=["lite", "sdk"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """``mcp list`` and ``mcp call`` have an SDK-free hot path and the SDK path."""
    if request.param == "sdk":
        monkeypatch.setenv("CODEBOT_SDK_PATH", "1")
    return str(request.param)


def test_mcp_list_shows_the_served_tools(
    project: Path, path: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = codebot(capsys, "--cwd", str(project), "mcp", "list", "--json")
    assert code == 0, err
    [server] = json.loads(out)["servers"]
    assert server["status"] == "connected"
    assert server["server_info"] == {"name": "codebot", "version": "0.1.0"}
    tools = {t["original_name"]: t for t in server["tools"]}
    assert list(tools) == ["ask", "bash", "edit", "glob", "grep", "read", "write"]
    # codebot as a client reads the hints as they are meant: read tools are read.
    assert {n: t["capability"] for n, t in tools.items() if t["capability"] == "read"} == {
        "glob": "read",
        "grep": "read",
        "read": "read",
    }
    for tool in tools.values():
        assert OPENAI_NAME.match(tool["name"]) and ANTHROPIC_NAME.match(tool["name"])
        assert tool["name_reason"] is None  # nothing sanitized, shortened or renamed


def test_mcp_call_runs_a_served_tool(
    project: Path, path: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ("--cwd", str(project), "mcp", "call", "codebot")
    code, out, err = codebot(capsys, *argv, "read", "path=notes.txt")
    assert (code, out) == (0, "     1\tserved notes\n"), err
    code, out, err = codebot(capsys, *argv, "bash", "command=echo $((6*7))")  # --allow bash
    assert (code, out) == (0, "42\n"), err
    # write is not allowed, and codebot's mcp call declares elicitation but answers
    # "decline" without a terminal: the served write is denied, and nothing is written.
    code, out, err = codebot(capsys, *argv, "write", "path=w.txt", "content=x")
    assert code == 1
    assert "Permission denied: the call to 'write' did not run (the user denied it)" in out + err
    assert not (project / "w.txt").exists()


def test_mcp_doctor_is_clean(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No error, no warning (--strict fails on warnings): names valid for OpenAI and
    Anthropic, descriptions within limits, valid schemas, no unknown capability."""
    code, out, err = codebot(
        capsys, "--cwd", str(project), "mcp", "doctor", "--strict", "--format", "json"
    )
    report = json.loads(out)
    problems = [f for f in report["findings"] if f["severity"] in ("error", "warning")]
    assert problems == [], problems
    assert code == 0, err
    [server] = report["servers"]
    assert server["tool_count"] == 7
    assert not [f for f in report["findings"] if f["check"].startswith("tool.")]


CLAUDE = REPO_ROOT / "tests" / "node" / "node_modules" / ".bin" / "claude"
"""Claude Code's CLI, pinned in tests/node/package.json and installed by ``make install``."""


def _claude() -> str:
    """$CLAUDE_CODE_BIN (another install), else the pinned one from tests/node."""
    found = os.environ.get("CLAUDE_CODE_BIN") or (str(CLAUDE) if CLAUDE.exists() else None)
    if found is None:
        pytest.fail(f"{CLAUDE} is missing: run `make install` (npm ci in tests/node)")
    return found


def test_claude_code_connects(tmp_path: Path) -> None:
    """Claude Code (`claude mcp add codebot -- codebot mcp serve`, then `claude mcp list`)
    sees codebot connected."""
    claude = _claude()
    home = tmp_path / "claude-home"
    home.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    env = {
        **os.environ,
        "HOME": str(home),  # Claude Code's config (~/.claude.json) goes here, not the user's
        "CODEBOT_HOME": str(tmp_path / "codebot-home"),
        "DISABLE_AUTOUPDATER": "1",
    }

    def claude_run(*argv: str) -> str:
        done = subprocess.run(
            [claude, *argv],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    claude_run("mcp", "add", "codebot", "--", CODEBOT, "mcp", "serve")
    listed = claude_run("mcp", "list")
    line = next(ln for ln in listed.splitlines() if ln.startswith("codebot:"))
    assert "mcp serve" in line and "Connected" in line, listed
