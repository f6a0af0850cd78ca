"""Import discipline: the light paths never load the heavy SDKs (deterministic, not timed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import server_entry, write_settings
from tests.servers.util import REPO_ROOT

HEAVY = ("mcp", "mcp_types", "openai", "prompt_toolkit", "rich.markdown", "rich.syntax", "httpx2")

PROBE = """
import json, sys
from cli.app import run
code = run(sys.argv[1:])
sys.stdout.flush()
print("\\nMODULES=" + json.dumps(sorted(sys.modules)), file=sys.stderr)
sys.exit(code)
"""


def loaded_modules(*argv: str) -> tuple[int, set[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO_ROOT,
    )
    marker = proc.stderr.rsplit("MODULES=", 1)
    assert len(marker) == 2, proc.stderr
    return proc.returncode, set(json.loads(marker[1]))


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["mcp", "--help"], ["chat", "--help"]])
def test_help_and_version_import_no_heavy_module(argv: list[str]) -> None:
    code, modules = loaded_modules(*argv)
    assert code == 0
    assert sorted(m for m in modules if m.split(".")[0] in HEAVY or m in HEAVY) == []


def test_core_never_imports_mcp_typer_or_prompt_toolkit() -> None:
    forbidden = ("mcp", "mcp_types", "typer", "prompt_toolkit", "mcpbridge", "cli")
    for path in sorted((REPO_ROOT / "core").rglob("*.py")):
        text = path.read_text()
        for name in forbidden:
            assert (
                f"\nimport {name}" not in text
                and f"\nfrom {name} " not in text
                and (f"\nfrom {name}." not in text)
            ), f"{path} imports {name}"
            assert f"    import {name}\n" not in text and f"    from {name} " not in text, (
                f"{path} imports {name}"
            )


@pytest.mark.parametrize("command", [["mcp", "list"], ["mcp", "call", "echo", "echo", "text=x"]])
def test_mcp_commands_do_not_import_openai(tmp_path: Path, command: list[str]) -> None:
    write_settings(tmp_path, {"mcp_servers": {"echo": server_entry("echo")}})
    code, modules = loaded_modules("--cwd", str(tmp_path), *command)
    assert code == 0
    assert "mcpbridge.lite" in modules  # it did the work, on the hot path:
    assert "mcp" not in modules and "pydantic" not in modules  # without the SDK's models
    assert not any(m == "openai" or m.startswith("openai.") for m in modules)
    assert not any(m.startswith("prompt_toolkit") for m in modules)


def test_packages_are_ours() -> None:
    import cli
    import core
    import mcpbridge

    for package in (cli, core, mcpbridge):
        assert Path(package.__file__ or "").resolve().is_relative_to(REPO_ROOT)
