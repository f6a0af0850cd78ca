"""Project writes never follow a ``.codebot`` symlink out of the project.

A repository decides what its ``.codebot`` is: a link to ``../.codebot`` (the global
directory) or to another directory of yours. Every command that writes a project file
(``mcp import``, ``mcp add/remove/enable/disable --scope project``, ``mcp lock``) refuses a
target outside the project's real root or inside codebot's own directories (exit 3), and
writes nothing there.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run
from tests.helpers import server_entry


def files_under(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """The global directory (CODEBOT_HOME), with a settings file of the user's."""
    path = Path(os.environ["CODEBOT_HOME"])
    path.mkdir(parents=True, exist_ok=True)
    (path / "settings.json").write_text(json.dumps({"mcp_servers": {"mine": {"command": "x"}}}))
    return path


def repo_with_link(tmp_path: Path, target: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".codebot").symlink_to(os.path.relpath(target, repo))
    return repo


EVIL = {"mcpServers": {"evil": {"command": "sh", "args": ["-c", "echo pwned"]}}}


def test_import_into_a_codebot_linked_to_the_global_directory_is_refused(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = repo_with_link(tmp_path, home)  # .codebot -> ../home, the global directory
    (repo / ".mcp.json").write_text(json.dumps(EVIL))
    before = files_under(home)
    code = run(["--cwd", str(repo), "mcp", "import", "--from", "claude-code"])
    err = capsys.readouterr().err
    assert code == 3, err
    assert "refusing to write" in err and "global directory" in err
    assert files_under(home) == before  # the stranger's servers are not in your settings
    assert "evil" not in json.loads((home / "settings.json").read_text())["mcp_servers"]


@pytest.mark.parametrize(
    "argv",
    [
        ["mcp", "add", "--scope", "project", "evil", "--", "sh", "-c", "true"],
        ["mcp", "add-json", "--scope", "project", "evil", '{"command": "sh"}'],
    ],
)
def test_adding_to_a_project_whose_codebot_leads_elsewhere_is_refused(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "settings.json").write_text('{"keep": true}')
    for target in (victim, home):
        repo = repo_with_link(tmp_path, target)
        before = files_under(target)
        code = run(["--cwd", str(repo), *argv])
        err = capsys.readouterr().err
        assert code == 3, err
        assert "refusing to write" in err
        assert files_under(target) == before
        (repo / ".codebot").unlink()
        os.rmdir(repo / ".git")
        os.rmdir(repo)


def lock_project(tmp_path: Path, home: Path) -> Path:
    settings: dict[str, Any] = {"mcp_servers": {"echo": server_entry("echo")}}
    (home / "settings.json").write_text(json.dumps(settings))
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    return repo


def test_lock_through_a_symlinked_codebot_is_refused_before_any_server_starts(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = lock_project(tmp_path, home)
    victim = tmp_path / "victim"
    victim.mkdir()
    (repo / ".codebot").symlink_to(victim)
    code = run(["--cwd", str(repo), "mcp", "lock"])
    err = capsys.readouterr().err
    assert code == 3, err
    assert "leads outside the project" in err
    assert list(victim.iterdir()) == []


def test_lock_never_replaces_a_file_a_planted_link_points_to(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = lock_project(tmp_path, home)
    (repo / ".codebot").mkdir()
    victim = tmp_path / "authorized_keys"
    victim.write_text("ssh-ed25519 AAAA me@host\n")
    # A link where the lock goes, and at the temporary names an older version used.
    (repo / ".codebot" / "mcp-lock.json").symlink_to(victim)
    (repo / ".codebot" / "mcp-lock.tmp").symlink_to(victim)
    (repo / ".codebot" / "mcp-lock.json.tmp").symlink_to(victim)
    code = run(["--cwd", str(repo), "mcp", "lock"])
    err = capsys.readouterr().err
    assert code == 3, err
    assert "symlink" in err
    assert victim.read_text() == "ssh-ed25519 AAAA me@host\n"

    (repo / ".codebot" / "mcp-lock.json").unlink()  # only the temporary-name links remain
    assert run(["--cwd", str(repo), "mcp", "lock"]) == 0, capsys.readouterr().err
    assert victim.read_text() == "ssh-ed25519 AAAA me@host\n"
    lock = json.loads((repo / ".codebot" / "mcp-lock.json").read_text())
    assert "echo" in lock["servers"]


def test_a_codebot_linked_inside_the_project_is_still_written(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    (repo / "config" / "codebot").mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / ".codebot").symlink_to("config/codebot")
    argv = ["--cwd", str(repo), "mcp", "add", "--scope", "project", "tool", "--", "true"]
    assert run(argv) == 0, capsys.readouterr().err
    written = json.loads((repo / "config" / "codebot" / "settings.json").read_text())
    assert "tool" in written["mcp_servers"]
    assert "tool" not in json.loads((home / "settings.json").read_text())["mcp_servers"]


def test_project_scope_in_the_home_directory_never_writes_the_global_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Run from ``~`` with the default global directory: ``~/.codebot`` is yours, not a
    project's; a project write there is refused."""
    user = tmp_path / "user"
    (user / ".codebot").mkdir(parents=True)
    (user / ".codebot" / "settings.json").write_text('{"mcp_servers": {}}')
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.delenv("CODEBOT_HOME")
    argv = ["--cwd", str(user), "mcp", "add", "--scope", "project", "evil", "--", "true"]
    code = run(argv)
    err = capsys.readouterr().err
    assert code == 3, err
    assert json.loads((user / ".codebot" / "settings.json").read_text()) == {"mcp_servers": {}}
