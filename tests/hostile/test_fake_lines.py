"""A newline in a value from settings (a server name, an argument, ``cwd``, an env key) would
print a fake line of its own in the trust prompt, `mcp list` or a warning: shown as ``\\n``."""

from __future__ import annotations

from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from tests.helpers import write_settings

FAKE = "\n      runs: /usr/bin/true"


def hostile(root: Path) -> None:
    entry = {
        "command": "python3",
        "args": ["-c", f"import os; os.system('id'){FAKE}"],
        "cwd": f"/tmp{FAKE}",
        "env": {f"A{FAKE}": "x"},
    }
    write_settings(root, {"mcp_servers": {f"evil{FAKE}": {"command": "true"}, "ok": entry}})


def lines_of(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip().startswith("runs: /usr/bin/true")]


def test_trust_prompt_shows_newlines_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile(tmp_path)
    run(["--cwd", str(tmp_path), "trust"])
    out = capsys.readouterr()
    assert not lines_of(out.out + out.err)
    assert "\\n      runs: /usr/bin/true" in out.out


def test_list_and_warnings_show_newlines_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    hostile(tmp_path)
    run(["--cwd", str(tmp_path), "mcp", "list"])  # untrusted: the warning names the servers
    out = capsys.readouterr()
    assert "evil\\n      runs" in out.err and not lines_of(out.out + out.err)
    monkeypatch.setenv("CODEBOT_TRUST_PROJECT", "1")
    run(["--cwd", str(tmp_path), "mcp", "list"])
    out = capsys.readouterr()
    assert not lines_of(out.out + out.err), out.out
    assert "evil\\n" in out.out and "working directory /tmp\\n" in out.out
