"""Running the installed ``codebot`` (``.venv/bin/codebot``) as a real process, in a fresh
$HOME and project, for the everyday-use tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes import zygote

CODEBOT = str(Path(sys.executable).with_name("codebot"))


def codebot(*argv: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run the installed ``codebot`` in ``cwd`` and return (exit code, stdout, stderr): as a
    fork of :mod:`tests.fakes.zygote` (what is checked is what the command does)."""
    done = subprocess.run(
        [*zygote.command(), *argv],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh $HOME (other clients' configs live there) and an untrusted-by-default run."""
    home = tmp_path / "user"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT", raising=False)
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def add_global(name: str, entry: dict[str, object], cwd: Path) -> None:
    """``codebot mcp add-json NAME ENTRY`` (global scope), keeping the entry's ``cwd``: the test
    servers are ``python -m tests.servers.X``, importable from the repository root only."""
    code, _, err = codebot("mcp", "add-json", name, json.dumps(entry), cwd=cwd)
    assert code == 0, err
