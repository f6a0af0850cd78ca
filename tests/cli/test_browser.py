"""The browser codebot opens (OAuth login, URL elicitation) is ``$BROWSER`` as it is *now*:
Python's ``webbrowser`` registers ``$BROWSER`` once per process, and a REPL that lives for
hours (or a test run) must not keep opening the first one it saw."""

from __future__ import annotations

import stat
import time
from pathlib import Path

import pytest

from codebot_mcp.cli.browser import open_in_browser


def recorder(tmp_path: Path, name: str) -> tuple[Path, Path]:
    log = tmp_path / f"{name}.txt"
    script = tmp_path / f"{name}.sh"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$1" >> {log}\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, log


def wait_for(path: Path) -> str:
    """The recorder's log once it holds a whole line (``>>`` creates the file before printf
    writes to it: a file that exists may still be empty)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().endswith("\n"):
            break
        time.sleep(0.05)
    return path.read_text()


def test_browser_is_read_at_each_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, first_log = recorder(tmp_path, "first")
    second, second_log = recorder(tmp_path, "second")
    monkeypatch.setenv("BROWSER", str(first))
    assert open_in_browser("https://example.com/one")
    assert wait_for(first_log) == "https://example.com/one\n"
    monkeypatch.setenv("BROWSER", str(second))
    assert open_in_browser("https://example.com/two")
    assert wait_for(second_log) == "https://example.com/two\n"
    assert first_log.read_text() == "https://example.com/one\n"  # the first is not used again


def test_a_browser_command_with_its_own_placeholder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script, log = recorder(tmp_path, "placed")
    monkeypatch.setenv("BROWSER", f"{script} %s")
    assert open_in_browser("https://example.com/x")
    assert wait_for(log) == "https://example.com/x\n"
