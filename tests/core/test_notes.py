"""Project notes (core/config/notes.py): AGENTS.md and CODEBOT.md from the project root down to
the working directory after ~/.codebot/AGENTS.md, CLAUDE.md where neither is, @path imports
inside the project only, the limits; and the first AGENTS.md /init drafts."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from codebot_mcp.core.agent import prompt
from codebot_mcp.core.config import initnotes, notes, paths


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    return project


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def labels(found: notes.Notes) -> list[str]:
    return [found.label(n) for n in found.files]


def test_hierarchy_from_the_user_file_to_the_working_directory(root: Path) -> None:
    write(paths.codebot_home() / "AGENTS.md", "mine")
    write(root / "AGENTS.md", "root agents")
    write(root / "CODEBOT.md", "root codebot")
    write(root / "CLAUDE.md", "root claude: not read, AGENTS.md is here")
    write(root / "pkg/CLAUDE.md", "pkg claude")
    write(root / "pkg/app/CODEBOT.md", "app codebot")
    write(root / "other/AGENTS.md", "not on the way down")
    found = notes.load(root / "pkg/app")
    assert found.root == root.resolve()
    assert [n.text for n in found.files] == [
        "mine",
        "root agents",
        "root codebot",
        "pkg claude",
        "app codebot",
    ]
    assert [n.kind for n in found.files] == ["user", "project", "project", "project", "project"]
    block = prompt.instructions_block(root / "pkg/app")
    assert block.index("## AGENTS.md\nroot agents") < block.index("## pkg/app/CODEBOT.md")


def test_claude_codes_other_memory_files_where_claude_md_would_be(root: Path) -> None:
    """``.claude/CLAUDE.md`` and ``CLAUDE.local.md`` are read as Claude Code reads them,
    beside ``CLAUDE.md`` where no AGENTS.md or CODEBOT.md is; ``claude=False`` leaves them
    out; the trust digest lists them (a cloned repository's notes need trust)."""
    from codebot_mcp.core.config import runfiles

    write(root / ".claude/CLAUDE.md", "in dot claude, see @rules.md")
    write(root / ".claude/rules.md", "imported next to it")
    write(root / "CLAUDE.local.md", "mine, local")
    write(root / "pkg/CLAUDE.md", "pkg claude")
    write(root / "pkg/AGENTS.md", "pkg agents")
    write(root / "pkg/CLAUDE.local.md", "not read: AGENTS.md is here")
    found = notes.load(root / "pkg")
    assert [n.text for n in found.files] == [
        "in dot claude, see @rules.md",
        "imported next to it",
        "mine, local",
        "pkg agents",
    ]
    assert [n.text for n in notes.load(root / "pkg", claude=False).files] == ["pkg agents"]
    listed = runfiles.note_files(root, None)
    assert {p.name for p in listed} == {"CLAUDE.md", "rules.md", "CLAUDE.local.md"}


def test_imports_stay_inside_the_project(root: Path, tmp_path: Path) -> None:
    write(tmp_path / "outside.md", "SECRET OUTSIDE")
    write(root / "docs/style.md", "use tabs; see @./deep.md")
    write(root / "docs/deep.md", "deep rule")
    os.symlink(tmp_path / "outside.md", root / "docs/sneaky.md")
    write(
        root / "AGENTS.md",
        "Read @docs/style.md, @../outside.md and @docs/sneaky.md.\n"
        "Not these: `@docs/deep.md` in code, me@docs/style.md, @missing.md\n"
        "```\n@docs/deep.md\n```\n",
    )
    found = notes.load(root)
    assert labels(found) == ["AGENTS.md", "docs/style.md", "docs/deep.md"]
    assert found.files[1].imported_by == root / "AGENTS.md"
    assert found.files[2].imported_by == (root / "docs/style.md").resolve()
    skipped = {p.name: why for p, why in found.skipped}
    assert set(skipped) == {"outside.md", "sneaky.md"}
    assert set(skipped.values()) == {"outside the project; not imported"}
    assert "SECRET OUTSIDE" not in prompt.instructions_block(root)


def test_import_cycles_depth_and_size_are_bounded(root: Path) -> None:
    for i in range(8):
        write(root / f"n{i}.md", f"level {i} @n{i + 1}.md @AGENTS.md")
    write(root / "AGENTS.md", "start @n0.md")
    found = notes.load(root)
    assert labels(found) == ["AGENTS.md", "n0.md", "n1.md", "n2.md", "n3.md", "n4.md"]
    assert any("more than 5 levels deep" in why for _, why in found.skipped)
    write(root / "AGENTS.md", "x" * (notes.MAX_FILE + 10))
    write(root / "CODEBOT.md", "y" * (notes.MAX_FILE + 10))
    write(root / "sub/AGENTS.md", "z")
    big = notes.load(root / "sub")
    assert big.files[0].truncated and big.chars <= notes.MAX_TOTAL + 200
    assert big.files[0].size == notes.MAX_FILE + 10
    assert any("already fill" in why for _, why in big.skipped)


def test_user_notes_import_only_from_the_codebot_home(root: Path, tmp_path: Path) -> None:
    home = paths.codebot_home()
    write(home / "extra.md", "extra of mine")
    write(tmp_path / "project/private.md", "project file")
    write(home / "AGENTS.md", f"@extra.md and @{tmp_path}/project/private.md")
    found = notes.load(root)
    assert [n.text for n in found.files] == [
        "@extra.md and @" + f"{tmp_path}/project/private.md",
        "extra of mine",
    ]


def test_draft_agents_md_states_what_the_files_say(root: Path) -> None:
    write(root / "README.md", "# Demo\n\n[![badge](x)](y)\n\nDemo turns widgets into gadgets.\n")
    write(root / "Makefile", "test: ## Run the tests\n\tpytest\nbuild:\n\tcc x.c\n")
    write(root / "package.json", json.dumps({"scripts": {"lint": "eslint ."}}))
    write(root / "pyproject.toml", "[project]\nname='demo'\n[tool.ruff]\nline-length=100\n")
    write(root / "src/demo/app.py", "print(1)\n")
    write(root / "tests/test_app.py", "def test(): pass\n")
    write(root / "node_modules/x/index.js", "skipped")
    text = initnotes.draft(root)
    assert text.startswith("# project\n")
    assert "Demo turns widgets into gadgets." in text
    assert "- `make test`: Run the tests" in text and "- `make build`" in text
    assert "- `npm run lint`: `eslint .`" in text
    assert "- `python -m pytest`: run the tests" in text
    assert "- `src/`: 1 files, Python" in text and "node_modules" not in text
    assert "- ruff (configured in `pyproject.toml`)" in text
    path = initnotes.write(root, text)
    assert path.read_text() == text
    assert notes.load(root).files[0].text == text.strip()


def test_the_cheap_look_for_notes_knows_every_name_the_reader_reads() -> None:
    """``runfiles`` looks for notes before importing the reader: its names must not drift."""
    from codebot_mcp.core.config import runfiles

    assert set(runfiles.NOTE_NAMES) == {*notes.NOTE_FILES, notes.FALLBACK, *notes.CLAUDE_MORE}
