"""Every package says what it owns and names every module in it; no two modules share a name.

A package's docstring (its ``__init__.py``) must name each module and sub-package it holds,
as ``:mod:`.name``` or ````name```` (so a reader who opens the package finds every room), and
every ``:mod:`.name``` it cites must exist (no stale docstrings).
"""

from __future__ import annotations

import ast
import re
import sys
from collections import defaultdict
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("core", "mcpbridge", "cli")

# Packages whose docstrings are known to be stale: none (kept empty by review).
KNOWN_STALE: frozenset[str] = frozenset()

# Module names held by more than one module: none (kept empty by review).
KNOWN_SHARED: frozenset[str] = frozenset()


def packages() -> list[Path]:
    """Every package folder (one with an ``__init__.py``) under cli/, core/ and mcpbridge/."""
    found = []
    for folder in FOLDERS:
        found += sorted(p.parent for p in (REPO_ROOT / folder).rglob("__init__.py"))
    return [p for p in found if "node_modules" not in p.parts]


def members(package: Path) -> list[str]:
    """The modules (``*.py`` but ``__init__`` and ``__main__``) and sub-packages of a package."""
    names = [p.stem for p in package.glob("*.py") if p.stem not in ("__init__", "__main__")]
    names += [p.name for p in package.iterdir() if (p / "__init__.py").is_file()]
    return sorted(names)


def docstring(package: Path) -> str:
    return ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""


def named(text: str, name: str) -> bool:
    """``name`` cited as a module: ``:mod:`.name```, ``:mod:`pkg.name``` or ````name````."""
    return re.search(r"[`.]" + re.escape(name) + r"`", text) is not None


def dotted(package: Path) -> str:
    return ".".join(package.relative_to(REPO_ROOT).parts)


def problems(package: Path) -> list[str]:
    text = docstring(package)
    if not text:
        return ["no docstring"]
    found = [f"does not name module {m!r}" for m in members(package) if not named(text, m)]
    mine = {*members(package), "__main__"}
    for cited in re.findall(r":mod:`\.(\w+)", text):
        if cited not in mine:
            found.append(f"cites {cited!r}, which is not one of its modules")
    return found


@pytest.mark.parametrize("package", packages(), ids=dotted)
def test_each_package_names_every_module_it_holds(package: Path) -> None:
    found = problems(package)
    if dotted(package) in KNOWN_STALE:
        assert found, f"{dotted(package)} is fine now: drop it from KNOWN_STALE"
        pytest.xfail(f"the names helper fixes it: {found}")
    assert not found, f"{dotted(package)}/__init__.py: " + "; ".join(found)


def test_the_docstring_check_can_fail(tmp_path: Path) -> None:
    """A module the docstring forgets, and a cited module that is gone, are both caught."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text('"""Owns :mod:`.kept` and :mod:`.gone`."""\n')
    (package / "kept.py").write_text("")
    (package / "forgotten.py").write_text("")
    assert problems(package) == [
        "does not name module 'forgotten'",
        "cites 'gone', which is not one of its modules",
    ]


def shared_names() -> dict[str, list[str]]:
    """Module names held by more than one module, with where."""
    where: dict[str, list[str]] = defaultdict(list)
    for package in packages():
        for module in package.glob("*.py"):
            if module.stem not in ("__init__", "__main__"):
                where[module.stem].append(str(module.relative_to(REPO_ROOT)))
    return {name: paths for name, paths in where.items() if len(paths) > 1}


def test_no_two_modules_in_core_share_a_name() -> None:
    within = {
        name: paths
        for name, paths in shared_names().items()
        if sum(p.startswith("core/") for p in paths) > 1
    }
    assert not within, within


def test_no_two_modules_share_a_name() -> None:
    shared = shared_names()
    assert not set(shared) - KNOWN_SHARED, {n: shared[n] for n in set(shared) - KNOWN_SHARED}
    assert not KNOWN_SHARED - set(shared), "unique now: drop from KNOWN_SHARED"


def exceptions_not_named_error(folders: tuple[str, ...] = FOLDERS) -> list[str]:
    """Exception classes (subclassing an exception, however far down) whose names do not end
    in ``Error``, as ``path:Name``."""
    bases: dict[str, tuple[str, list[str]]] = {}
    for folder in folders:
        for path in sorted((REPO_ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ClassDef):
                    names = [ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases]
                    bases[node.name] = (str(path.relative_to(REPO_ROOT)), names)
    known = {"Exception", "BaseException"}
    grew = True
    while grew:
        grew = False
        for name, (_, parents) in bases.items():
            if name not in known and any(p in known or p.endswith("Error") for p in parents):
                known.add(name)
                grew = True
    return sorted(f"{bases[n][0]}:{n}" for n in known if n in bases and not n.endswith("Error"))


def test_exception_names_end_in_error() -> None:
    assert exceptions_not_named_error() == []


def test_the_exception_name_check_can_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(
        "class Oops(Exception): ...\nclass Deeper(Oops): ...\nclass FineError(Oops): ...\n"
    )
    monkeypatch.setattr(sys.modules[__name__], "REPO_ROOT", tmp_path)
    assert exceptions_not_named_error(("pkg",)) == ["pkg/m.py:Deeper", "pkg/m.py:Oops"]
