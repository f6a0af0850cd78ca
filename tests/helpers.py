"""Helpers for tests: configs for the test servers, settings files, the process table, the CLI
run in the test's own process."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.core.config.servers import ServerConfig, parse_server
from tests.servers.util import REPO_ROOT, server_command

EVERYTHING_BIN = REPO_ROOT / "tests" / "node" / "node_modules" / ".bin" / "mcp-server-everything"


def server_config(name: str, entry: dict[str, Any], source: Path | None = None) -> ServerConfig:
    """A validated config as if read from a settings file (cwd: the repo root)."""
    return parse_server(name, entry, source or Path("/test/settings.json"), os.environ, REPO_ROOT)


def server_entry(server: str, *args: str, **extra: Any) -> dict[str, Any]:
    """A settings entry for ``python -m tests.servers.<server> args`` (cwd: the repo root)."""
    command, argv = server_command(server, *args)
    return {"command": command, "args": argv, "cwd": str(REPO_ROOT), **extra}


def everything_entry(**extra: Any) -> dict[str, Any]:
    """A settings entry for server-everything over stdio, from tests/node (`make install`)."""
    if not EVERYTHING_BIN.exists():
        pytest.fail(f"{EVERYTHING_BIN} is missing: run `make install` (npm ci in tests/node)")
    return {"command": str(EVERYTHING_BIN), "args": ["stdio"], **extra}


def make_server(name: str, server: str, *args: str, **extra: Any) -> ServerConfig:
    """Config for ``python -m tests.servers.<server> args``."""
    return server_config(name, server_entry(server, *args, **extra))


def everything_config(name: str = "everything", **extra: Any) -> ServerConfig:
    """server-everything over stdio, as a validated config."""
    return server_config(name, everything_entry(**extra))


VALID_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""What every tool name the model sees matches (docs: the contracts users rely on)."""


def tool_named(manager: Any, name: str) -> Any:
    """The tool of a ``Manager`` the model knows as ``name`` (None: none is offered)."""
    return next((t for t in manager.tools() if t.name == name), None)


def write_settings(directory: Path, data: dict[str, Any]) -> Path:
    """Write ``directory/.codebot/settings.json`` and return its path."""
    path = directory / ".codebot" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
    return path


def cli_in_process(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    *argv: str,
    env: Mapping[str, str | None] | None = None,
) -> tuple[int, str, str]:
    """``codebot argv`` through :func:`codebot_mcp.cli.app.run` in this process, as a child
    started with stdin from /dev/null and ``env`` over the test's environment would run (a
    value of None removes that variable); (exit code, stdout, stderr). The variables and stdin
    are put back afterwards. Pass ``--cwd DIR`` in ``argv`` where a child would start in DIR.
    Not what the console script adds around ``run`` (the reaper hand-off, the sweep of
    orphaned descendants, the exit): tests of those start a real process."""
    from codebot_mcp.cli.app import run

    capsys.readouterr()  # what the test printed before is not this run's output
    with monkeypatch.context() as patch, open(os.devnull, encoding="utf-8") as devnull:
        for name, value in (env or {}).items():
            if value is None:
                patch.delenv(name, raising=False)
            else:
                patch.setenv(name, value)
        patch.setattr(sys, "stdin", devnull)
        code = run(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def children_of(pid: int) -> list[int]:
    """Live descendants of ``pid`` (from /proc), so tests can prove no process is left."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] == "Z":  # zombies are dead already
            continue
        parents[int(entry.name)] = int(fields[1])
    found: list[int] = []
    frontier = [pid]
    while frontier:
        current = frontier.pop()
        kids = [p for p, pp in parents.items() if pp == current]
        found.extend(kids)
        frontier.extend(kids)
    return found


def server_logs(name: str, home: Path | None = None) -> str:
    """Every run log of server ``name`` (``<state>/log/<name>/*.log``), oldest first, joined."""
    from codebot_mcp.core.config import paths

    directory = (home / "state" / "log" if home else paths.log_dir()) / name
    logs = sorted(directory.glob("*.log"), key=lambda p: p.stat().st_mtime)
    return "".join(p.read_text(errors="replace") for p in logs)


def marker_text(path: Path) -> str:
    """What a test server wrote to its marker file so far ("" before it exists)."""
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""


PEAK = """
import sys
from codebot_mcp.core import gcpause
gcpause.hold()  # as the console script does (cli.entry)
from codebot_mcp.cli.app import run
code = run(sys.argv[1:])
sys.stdout.flush()
with open("/proc/self/status") as status:
    peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
sys.stderr.write(f"\\nPEAK={peak * 1024}\\n")
sys.exit(code)
"""
"""Runs codebot and reports its peak RSS from ``VmHWM``, the high-water mark of the memory
of this program alone: ``getrusage(RUSAGE_SELF).ru_maxrss`` would not do, since Linux keeps the
high-water mark of the process image an ``exec`` replaced, and a child ``subprocess`` starts by
``vfork`` + ``exec`` from a test worker carries the worker's peak (hundreds of MB after a big
test), so a growth check on it could not fail."""


def run_measured(
    argv: list[str], *, cwd: Path | None = None, full_env: dict[str, str] | None = None, **env: str
) -> tuple[int, str, int]:
    """(exit code, stdout + stderr, peak RSS in bytes) of codebot in a fresh process, measured
    by :data:`PEAK`; ``full_env`` replaces the inherited environment."""
    proc = subprocess.run(
        [sys.executable, "-c", PEAK, *argv],
        cwd=cwd,
        env={**(os.environ if full_env is None else full_env), **env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    err, found, peak = proc.stderr.rpartition("\nPEAK=")
    assert found, f"codebot ended before it could report its peak: {proc.stderr[-2000:]}"
    return proc.returncode, proc.stdout + err, int(peak)
