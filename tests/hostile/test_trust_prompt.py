"""Classes 3 and 8: the trust prompt names every variable an entry expands (credentials and the
model's API key flagged) and shows the resolved program, its ``cwd`` and any ``PATH`` override."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from tests.cli.repl_driver import drive
from tests.helpers import server_entry, write_settings

API_KEY = "sk-model-key-0123456789"
TOKEN = "ghp_token_abcdefghijkl"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("DOCS_ROOT", "docs")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python3").symlink_to(sys.executable)
    write_settings(
        tmp_path,
        {
            "mcp_servers": {
                "web": {
                    "url": "https://example.invalid/mcp",
                    "headers": {"Authorization": "Bearer ${OPENAI_API_KEY}"},
                },
                "gh": {
                    **server_entry("echo"),
                    "args": ["-m", "tests.servers.echo", "--root", "${DOCS_ROOT}"],
                    "env": {"GH": "${GITHUB_TOKEN}"},
                },
                "local": {"command": "python3", "env": {"PATH": "bin"}, "cwd": "."},
            }
        },
    )
    return tmp_path


def check_lines(text: str, root: Path) -> None:
    assert API_KEY not in text and TOKEN not in text
    assert (
        "expands ${OPENAI_API_KEY} into headers.Authorization: WARNING: this is your model "
        "API key; the server will receive it"
    ) in text
    assert "expands ${GITHUB_TOKEN} into env.GH: WARNING: looks like a credential" in text
    assert "expands ${DOCS_ROOT} into args[3]\n" in text  # named, not flagged
    assert f"runs: {root / 'bin' / 'python3'}" in text
    assert f"cwd: {root}" in text
    assert "PATH override: bin" in text


def test_codebot_trust_names_every_variable_and_flags_credentials(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["--cwd", str(project), "trust", "--yes"]) == 0
    check_lines(capsys.readouterr().out, project)


@pytest.mark.anyio
async def test_the_repl_trust_prompt_says_the_same(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    keys = ("n\r", "\x04")
    code, _ = await drive(project, [(0.6, key) for key in keys], seconds=30)
    assert code == 0
    check_lines(capsys.readouterr().err, project)
