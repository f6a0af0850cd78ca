"""The house's naming rules for ``cli/`` and ``mcpbridge/`` (docs/architecture.md, "Names"):
no module there shares its name with another module of the repository, and every package
opens with a docstring that names every module and sub-package in it."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("cli", "core", "mcpbridge")
CHECKED = ("cli", "mcpbridge")
KNOWN_CLASHES = {
    # Rewritten by issue 30's item 1 at the same time; renamed once that lands.
    "mcpbridge/warm/client.py",
}


def _modules(folder: str) -> list[Path]:
    return [
        p
        for p in sorted((ROOT / folder).rglob("*.py"))
        if p.name not in ("__init__.py", "__main__.py") and "__pycache__" not in p.parts
    ]


def clashes(modules: list[Path]) -> dict[str, list[str]]:
    """Module names of ``cli/`` and ``mcpbridge/`` that another module of the repository
    also has, with every path that has it."""
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in modules:
        by_name[path.name].append(path.relative_to(ROOT).as_posix())
    return {
        name: paths
        for name, paths in by_name.items()
        if len(paths) > 1
        and any(p.split("/")[0] in CHECKED and p not in KNOWN_CLASHES for p in paths)
    }


def unnamed(package: Path) -> list[str]:
    """The modules and sub-packages of ``package`` its docstring does not name."""
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    members = sorted(
        p.stem if p.is_file() else p.name
        for p in package.iterdir()
        if (p.suffix == ".py" and p.name != "__init__.py") or (p / "__init__.py").is_file()
    )
    return [m for m in members if not re.search(rf"(?<![\w]){re.escape(m)}(?![\w])", doc)]


def test_no_two_modules_share_a_name() -> None:
    modules = [p for folder in FOLDERS for p in _modules(folder)]
    assert len(modules) > 200  # the walk found the repository
    assert clashes(modules) == {}


def test_a_clash_is_found() -> None:
    """The check can fail: a module named like one of core's is reported with both paths."""
    repeated = ROOT / "cli" / "repl" / "loop.py"
    found = clashes([*_modules("core"), repeated])
    assert found["loop.py"] == ["core/agent/loop.py", "cli/repl/loop.py"]


def test_every_package_names_its_modules() -> None:
    packages = [
        p.parent for folder in CHECKED for p in sorted((ROOT / folder).rglob("__init__.py"))
    ]
    assert len(packages) >= 14
    missing = {p.relative_to(ROOT).as_posix(): unnamed(p) for p in packages}
    assert {package: names for package, names in missing.items() if names} == {}


def test_a_missing_module_is_found(tmp_path: Path) -> None:
    """The check can fail: a module the docstring does not name is reported."""
    (tmp_path / "__init__.py").write_text('"""Holds :mod:`.alpha` and the ``beta`` package."""\n')
    for name in ("alpha.py", "alphabet.py", "gamma.py"):
        (tmp_path / name).write_text("")
    (tmp_path / "beta").mkdir()
    (tmp_path / "beta" / "__init__.py").write_text("")
    assert unnamed(tmp_path) == ["alphabet", "gamma"]
