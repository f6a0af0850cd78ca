"""Helpers for the doctor tests: settings entries for our servers, and running the command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run


class Doctor:
    """Runs ``codebot --cwd <project> mcp doctor ...`` in-process through the real entry point."""

    def __init__(self, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.project = project
        self.capsys = capsys

    def __call__(self, *argv: str) -> tuple[int, str, str]:
        code = run(["--cwd", str(self.project), "mcp", "doctor", *argv])
        out = self.capsys.readouterr()
        return code, out.out, out.err

    def json(self, *argv: str) -> tuple[int, dict[str, Any]]:
        code, out, err = self("--format", "json", *argv)
        assert out, err
        return code, json.loads(out)


@pytest.fixture
def doctor(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Doctor:
    return Doctor(tmp_path, capsys)


def findings(report: dict[str, Any], server: str | None = None) -> list[dict[str, Any]]:
    """The report's findings, optionally of one server."""
    return [f for f in report["findings"] if server is None or f["server"] == server]


def ids(report: dict[str, Any], server: str | None = None) -> list[tuple[str, str]]:
    """``(check, severity)`` of every finding (of one server)."""
    return [(f["check"], f["severity"]) for f in findings(report, server)]
