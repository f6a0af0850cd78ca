"""The docs: the README fits a screen, the command reference is current, the architecture page
names every sub-package, and the site builds strict (a broken link fails)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests import docs_reference
from tests.servers.util import REPO_ROOT


def test_the_readme_fits_a_screen_and_names_the_two_commands() -> None:
    text = (REPO_ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 250
    assert "make install" in text and "make test" in text


def test_the_command_reference_is_generated_from_the_cli_and_current() -> None:
    assert (REPO_ROOT / "docs" / "reference.md").read_text() == docs_reference.render(), (
        "docs/reference.md is stale: run make docs"
    )


def test_the_architecture_page_names_every_sub_package() -> None:
    """Every sub-package of the three folders (what the contracts in pyproject.toml stack)."""
    text = (REPO_ROOT / "docs" / "architecture.md").read_text()
    subs = [
        f"{top}/{init.parent.name}"
        for top in ("core", "mcpbridge", "cli")
        for init in sorted((REPO_ROOT / top).glob("*/__init__.py"))
    ]
    assert len(subs) > 20
    missing = [
        s for s in subs if f"`{s.split('/')[1]}`" not in text and f"{s.split('/')[1]}/" not in text
    ]
    assert missing == []


def test_the_site_builds_strict(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--quiet",
            "--site-dir",
            str(tmp_path),
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
