"""edit, glob and grep on real files; grep's ripgrep and Python paths give the same output."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from codebot_mcp.core.agent.permissions import PermissionGate, preview_of
from codebot_mcp.core.tools.builtin import EditTool, GlobTool, GrepTool, WriteTool
from codebot_mcp.core.tools.builtin.grep import Query, render, rg_path, search_lines

pytestmark = pytest.mark.anyio


async def test_edit_replaces_a_unique_string(tmp_path: Path) -> None:
    f = tmp_path / "a.py"
    f.write_text("def f():\n    return 1\n")
    result = await EditTool(tmp_path).execute(
        {"path": "a.py", "old_string": "return 1", "new_string": "return 2"}
    )
    assert not result.is_error and "line 2" in result.text
    assert f.read_text() == "def f():\n    return 2\n"


async def test_edit_not_unique_gives_count_and_lines(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x = 1\ny = 2\nx = 1\n\nx = 1\n")
    tool = EditTool(tmp_path)
    result = await tool.execute({"path": "a.txt", "old_string": "x = 1", "new_string": "x = 9"})
    assert result.is_error and "occurs 3 times (lines 1, 3, 5)" in result.text
    result = await tool.execute(
        {"path": "a.txt", "old_string": "x = 1", "new_string": "x = 9", "replace_all": True}
    )
    assert not result.is_error and (tmp_path / "a.txt").read_text().count("x = 9") == 3


async def test_edit_missing_string_is_clear(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("  indented\n")
    result = await EditTool(tmp_path).execute(
        {"path": "a.txt", "old_string": "indented  ", "new_string": "x"}
    )
    assert result.is_error and "not found" in result.text and "whitespace" in result.text
    missing = await EditTool(tmp_path).execute(
        {"path": "no.txt", "old_string": "a", "new_string": "b"}
    )
    assert missing.is_error and "does not exist" in missing.text


async def test_edit_keeps_crlf_bom_encoding_and_mode(tmp_path: Path) -> None:
    f = tmp_path / "w.txt"
    f.write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\n")
    f.chmod(0o751)
    result = await EditTool(tmp_path).execute(
        {"path": "w.txt", "old_string": "one\ntwo", "new_string": "uno\ndos"}
    )
    assert not result.is_error, result.text
    assert f.read_bytes() == b"\xef\xbb\xbfuno\r\ndos\r\nthree\r\n"
    assert stat.S_IMODE(f.stat().st_mode) == 0o751
    latin = tmp_path / "l.txt"
    latin.write_bytes(b"caf\xe9 \xff\nend\n")
    await EditTool(tmp_path).execute({"path": "l.txt", "old_string": "end", "new_string": "fin"})
    assert latin.read_bytes() == b"caf\xe9 \xff\nfin\n"
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".codebot")]


async def test_edit_and_write_approvals_show_a_diff(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\nbeta\n")
    seen = []

    async def approver(request):  # type: ignore[no-untyped-def]
        seen.append(request.preview)
        from codebot_mcp.core.agent.permissions import Answer

        return Answer.NO

    gate = PermissionGate(approver=approver)
    edit, write = EditTool(tmp_path), WriteTool(tmp_path)
    await gate.check(edit, {"path": "a.txt", "old_string": "beta", "new_string": "gamma"})
    await gate.check(write, {"path": "a.txt", "content": "alpha\n"})
    await gate.check(write, {"path": "new.txt", "content": "x\ny\n"})
    assert seen[0].splitlines()[:2] == ["--- a/a.txt", "+++ b/a.txt"]
    assert "-beta" in seen[0] and "+gamma" in seen[0]
    assert "-beta" in seen[1] and "+" not in seen[1].split("@@")[-1]
    assert seen[2].startswith("(new file") and "2 lines" in seen[2]
    bad = preview_of(edit, {"path": "a.txt", "old_string": "zzz", "new_string": "q"})
    assert bad is not None and "will fail" in bad


def make_tree(root: Path) -> None:
    (root / ".gitignore").write_text("build/\n*.log\n!keep.log\n")
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "main.py").write_text("import os\n\ndef main():\n    print('hi')\n")
    (root / "src" / "pkg" / "util.py").write_text("# util\ndef helper():\n    return 'hi'\n")
    (root / "src" / "pkg" / ".gitignore").write_text("generated.py\n")
    (root / "src" / "pkg" / "generated.py").write_text("print('hi')\n")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("print('hi')\n")
    (root / "debug.log").write_text("hi\n")
    (root / "keep.log").write_text("hi there\n")
    (root / "bin.dat").write_bytes(b"hi\0\1\2")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("hi\n")
    (root / "README.md").write_text("Say hi.\n")


async def test_glob_respects_gitignore(tmp_path: Path) -> None:
    make_tree(tmp_path)
    tool = GlobTool(tmp_path)
    result = await tool.execute({"pattern": "**/*.py"})
    assert result.text.splitlines() == ["src/main.py", "src/pkg/util.py"]
    top = await tool.execute({"pattern": "*.log"})
    assert top.text.splitlines() == ["keep.log"]
    sub = await tool.execute({"pattern": "*.py", "path": "src"})
    assert sub.text.splitlines() == ["src/main.py"]
    both = await tool.execute({"pattern": "*.{md,log}"})
    assert both.text.splitlines() == ["README.md", "keep.log"]


async def test_grep_python_fallback(tmp_path: Path) -> None:
    make_tree(tmp_path)
    lines = await search_lines(Query("hi", tmp_path, None, 0, False), use_rg=False)
    text = render(lines, tmp_path)
    assert text.splitlines() == [
        "README.md:1:Say hi.",
        "--",
        "keep.log:1:hi there",
        "--",
        "src/main.py:4:    print('hi')",
        "--",
        "src/pkg/util.py:3:    return 'hi'",
    ]
    found = await search_lines(Query("helper", tmp_path, "*.py", 1, False), use_rg=False)
    ctx = render(found, tmp_path)
    assert ctx.splitlines() == [
        "src/pkg/util.py-1-# util",
        "src/pkg/util.py:2:def helper():",
        "src/pkg/util.py-3-    return 'hi'",
    ]


@pytest.mark.skipif(rg_path() is None, reason="ripgrep is not installed")
@pytest.mark.parametrize(
    ("regex", "glob", "context", "ignore_case"),
    [("hi", None, 0, False), ("HI", "*.py", 1, True), (r"def \w+\(", None, 2, False)],
)
async def test_grep_rg_and_python_agree(
    tmp_path: Path, regex: str, glob: str | None, context: int, ignore_case: bool
) -> None:
    make_tree(tmp_path)
    query = Query(regex, tmp_path, glob, context, ignore_case)
    with_rg = render(await search_lines(query, use_rg=True), tmp_path)
    with_python = render(await search_lines(query, use_rg=False), tmp_path)
    assert with_rg == with_python and with_rg


async def test_grep_caps_and_errors(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("match\n" * 1000)
    tool = GrepTool(tmp_path)
    result = await tool.execute({"pattern": "match"})
    assert "output cut at 250 lines" in result.text
    bad = await tool.execute({"pattern": "(", "path": "big.txt"})
    assert bad.is_error and "grep:" in bad.text
    none = await tool.execute({"pattern": "zzz"})
    assert not none.is_error and "No matches" in none.text
