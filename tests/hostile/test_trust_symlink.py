"""Class 1: trust is keyed on the project as reached and covers what decides what runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from tests.helpers import write_settings
from tests.servers.util import REPO_ROOT


def entry(**extra: object) -> dict[str, object]:
    """A server whose program is relative to the project: ``python srv.py`` in ``cwd``."""
    return {"command": sys.executable, "args": ["srv.py"], "cwd": ".", **extra}


def servers_listed(capsys: pytest.CaptureFixture[str], cwd: Path) -> tuple[set[str], str]:
    run(["--cwd", str(cwd), "mcp", "list", "--json"])
    out = capsys.readouterr()
    return {s["name"] for s in json.loads(out.out)["servers"]}, out.err


def make_project(root: Path, marker: Path) -> Path:
    """A project whose srv.py is a real MCP server that also drops ``marker`` when it runs."""
    root.mkdir(parents=True)
    (root / "srv.py").write_text(
        "import pathlib, runpy, sys\n"
        f"pathlib.Path({str(marker)!r}).write_text('ran')\n"
        f"sys.path.insert(0, {str(REPO_ROOT)!r})\n"
        "runpy.run_module('tests.servers.silent_discover', run_name='__main__')\n"
    )
    write_settings(root, {"mcp_servers": {"srv": entry()}})
    return root


def test_a_symlinked_settings_file_does_not_borrow_trust(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trusted = make_project(tmp_path / "trusted", tmp_path / "trusted-ran")
    assert run(["--cwd", str(trusted), "trust", "--yes"]) == 0
    capsys.readouterr()
    names, _ = servers_listed(capsys, trusted)
    assert names == {"srv"} and (tmp_path / "trusted-ran").exists()

    evil = tmp_path / "evil"
    (evil / ".codebot").mkdir(parents=True)
    (evil / ".codebot" / "settings.json").symlink_to(trusted / ".codebot" / "settings.json")
    (evil / "srv.py").write_text(
        f"import pathlib; pathlib.Path({str(tmp_path / 'evil-ran')!r}).write_text('pwned')\n"
    )
    names, err = servers_listed(capsys, evil)
    assert names == set()
    assert "skipping project servers (srv)" in err and "not trusted" in err
    assert not (tmp_path / "evil-ran").exists()


def test_the_whole_project_directory_symlinked_is_another_project(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trusted = make_project(tmp_path / "trusted", tmp_path / "ran")
    assert run(["--cwd", str(trusted), "trust", "--yes"]) == 0
    capsys.readouterr()
    # Reached through a link the project resolves to the same place: the same code runs,
    # and the record made for the real directory still holds.
    link = tmp_path / "link"
    link.symlink_to(trusted)
    names, err = servers_listed(capsys, link)
    assert names == {"srv"}, err


def test_what_the_entry_resolves_to_on_disk_is_part_of_the_trust(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Same settings text, other program: a retargeted ``cwd`` or a new file on ``PATH``."""
    root = tmp_path / "repo"
    root.mkdir()
    good, bad = root / "good", root / "bad"
    for directory in (good, bad):
        directory.mkdir()
        (directory / "srv.py").write_text(
            f"import runpy, sys; sys.path.insert(0, {str(REPO_ROOT)!r}); "
            "runpy.run_module('tests.servers.silent_discover', run_name='__main__')\n"
        )
    (root / "current").symlink_to(good)
    write_settings(root, {"mcp_servers": {"srv": entry(cwd="current")}})
    assert run(["--cwd", str(root), "trust", "--yes"]) == 0
    capsys.readouterr()
    assert servers_listed(capsys, root)[0] == {"srv"}

    (root / "current").unlink()
    (root / "current").symlink_to(bad)
    names, err = servers_listed(capsys, root)
    assert names == set() and "changed since it was trusted" in err

    # A bare command found on an env.PATH inside the project: a new program there is new trust.
    (root / "current").unlink()
    (root / "current").symlink_to(good)
    bin_dir = root / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "python3"
    tool.symlink_to(sys.executable)
    write_settings(
        root,
        {"mcp_servers": {"srv": entry(command="python3", cwd="current", env={"PATH": "../bin"})}},
    )
    assert run(["--cwd", str(root), "trust", "--yes"]) == 0
    capsys.readouterr()
    assert servers_listed(capsys, root)[0] == {"srv"}
    tool.unlink()
    other = tmp_path / "other-python"
    other.symlink_to(sys.executable)
    tool.symlink_to(other)
    # Same text, but the program now resolves through another link: realpath is equal, so
    # trust holds; a different real file would not. Replace it with a different real file:
    tool.unlink()
    tool.write_text("#!/bin/sh\nexit 1\n")
    tool.chmod(0o755)
    names, err = servers_listed(capsys, root)
    assert names == set() and "changed since it was trusted" in err
