"""The install maps cli/, core/ and mcpbridge/ under one top-level name, codebot_mcp (issue 14)."""

from __future__ import annotations

import tomllib

from tests.servers.util import REPO_ROOT

FOLDERS = ("cli", "core", "mcpbridge")


def _setuptools() -> dict[str, object]:
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    return config["tool"]["setuptools"]  # type: ignore[no-any-return]


def test_every_package_folder_is_listed_under_codebot_mcp() -> None:
    on_disk = {
        ".".join(("codebot_mcp", *init.parent.relative_to(REPO_ROOT).parts))
        for folder in FOLDERS
        for init in (REPO_ROOT / folder).rglob("__init__.py")
    }
    assert set(_setuptools()["packages"]) == on_disk  # type: ignore[arg-type]


def test_the_folders_are_mapped_at_install_time() -> None:
    assert _setuptools()["package-dir"] == {f"codebot_mcp.{f}": f for f in FOLDERS}


def test_the_entry_point_and_version_come_from_the_mapped_packages() -> None:
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    assert config["project"]["scripts"] == {"codebot": "codebot_mcp.cli.entry:main"}
    assert config["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "codebot_mcp.core.__version__"
    }


def test_every_imported_distribution_is_declared() -> None:
    """A module imported by cli/, core/ or mcpbridge/ comes from a declared dependency (or the
    standard library): an undeclared one works here only because another package pulled it in."""
    import ast
    import re
    import sys
    from importlib.metadata import packages_distributions

    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    declared = {
        re.split(r"[<>=!~\[ ;]", d, maxsplit=1)[0].lower().replace("_", "-")
        for d in config["project"]["dependencies"]
    }
    providers = packages_distributions()
    imported: set[str] = set()
    for folder in FOLDERS:
        for path in (REPO_ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    imported |= {a.name.split(".")[0] for a in node.names}
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    imported.add(node.module.split(".")[0])
    third_party = imported - set(sys.stdlib_module_names) - {"codebot_mcp"}
    undeclared = {
        module: providers.get(module)
        for module in third_party
        if not {d.lower().replace("_", "-") for d in providers.get(module, [module])} & declared
    }
    assert undeclared == {}
    assert {"mcp", "typer", "httpx2", "pydantic", "mcp_types"} <= third_party  # the scan is real
