"""The command reference (``docs/reference.md``), generated from the CLI itself.

``python -m tests.docs_reference --write`` (``make docs``) writes it: every command's ``--help``
as the user sees it, in the order ``codebot --help`` lists them. ``--check`` fails when the
file differs, and so does ``tests/test_docs.py``: a changed option cannot leave stale docs.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "reference.md"
WIDTH = "100"


def _commands() -> list[list[str]]:
    """Every command path, depth first, in the order help lists them."""
    import typer

    from codebot_mcp.cli.app import app

    root: Any = typer.main.get_command(app)
    found: list[list[str]] = []

    def walk(node: Any, path: list[str]) -> None:
        found.append(path)
        for name in getattr(node, "list_commands", lambda ctx: [])(None):
            child = node.get_command(None, name)
            if child is not None and not getattr(child, "hidden", False):
                walk(child, [*path, name])

    walk(root, [])
    return found


def _help(path: list[str]) -> str:
    from codebot_mcp.cli.app import run

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = run([*path, "--help"])
    assert code == 0, f"codebot {' '.join(path)} --help exited {code}"
    return out.getvalue().rstrip()


def render() -> str:
    """The whole reference as Markdown."""
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH  # the same line breaks on every terminal
    try:
        sections = [
            "# Command reference",
            "",
            "Generated from the CLI (`make docs`); every command's `--help`, as printed.",
            "A test fails when this page is stale.",
        ]
        for path in _commands():
            title = " ".join(["codebot", *path])
            sections += ["", f"## `{title}`", "", "```text", _help(path), "```"]
        return "\n".join(sections) + "\n"
    finally:
        if previous is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = previous


def main(argv: list[str]) -> int:
    text = render()
    if argv == ["--write"]:
        REFERENCE.write_text(text)
        return 0
    if not REFERENCE.exists() or REFERENCE.read_text() != text:
        print(f"{REFERENCE.relative_to(ROOT)} is stale: run make docs", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
