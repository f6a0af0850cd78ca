"""The file tools through an editor's buffers (``FileTool.files``, what ACP's ``fs`` methods
back), ``bash`` through its terminals (``BashTool.terminals``), and the gate's ``acceptEdits``
mode: in process, real files in ``tmp_path``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.core.agent.permissions import PermissionGate, Verdict
from codebot_mcp.core.config.settings import PermissionRules
from codebot_mcp.core.tools.builtin import BashTool, EditTool, ReadTool, WriteTool
from codebot_mcp.core.tools.builtin.bash import TerminalRun

pytestmark = pytest.mark.anyio


class Buffers:
    """An editor's open buffers: what it holds wins over the disk."""

    def __init__(self, texts: dict[Path, str]) -> None:
        self.texts = texts
        self.writes: list[Path] = []

    async def read_text(self, path: Path) -> str:
        if path not in self.texts:
            raise OSError(f"no buffer for {path}")
        return self.texts[path]

    async def write_text(self, path: Path, text: str) -> None:
        self.texts[path] = text
        self.writes.append(path)


async def test_read_edit_write_use_the_buffers_not_the_disk(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("on disk\n")
    buffers = Buffers({path: "unsaved = 1\nline two\n"})
    read, edit, write = ReadTool(tmp_path), EditTool(tmp_path), WriteTool(tmp_path)
    for tool in (read, edit, write):
        tool.files = buffers
    shown = await read.execute({"path": "a.py", "offset": 2})
    assert not shown.is_error and shown.text == "     2\tline two"
    edited = await edit.execute({"path": "a.py", "old_string": "unsaved", "new_string": "x"})
    assert not edited.is_error and edited.data["editor"] is True
    assert buffers.texts[path] == "x = 1\nline two\n"
    missing = await edit.execute({"path": "a.py", "old_string": "nowhere", "new_string": "y"})
    assert missing.is_error and "not found" in missing.text
    written = await write.execute({"path": "new.txt", "content": "hello\n"})
    assert not written.is_error and buffers.texts[tmp_path / "new.txt"] == "hello\n"
    assert path.read_text() == "on disk\n" and not (tmp_path / "new.txt").exists()
    failed = await read.execute({"path": "other.txt"})
    assert failed.is_error and "in the editor" in failed.text


def test_accept_edits_allows_file_edits_only(tmp_path: Path) -> None:
    gate = PermissionGate(PermissionRules(ask=("write",)))
    edit, write, bash = EditTool(tmp_path), WriteTool(tmp_path), BashTool(tmp_path)
    assert gate.evaluate(edit, {"path": "a"}).verdict is Verdict.ASK
    gate.accept_edits = True
    decision = gate.evaluate(edit, {"path": "a"})
    assert decision.verdict is Verdict.ALLOW and "acceptEdits" in decision.reason
    assert gate.evaluate(write, {"path": "a"}).verdict is Verdict.ASK  # an ask rule still asks
    assert gate.evaluate(bash, {"command": "rm -rf x"}).verdict is Verdict.ASK  # not an edit


async def test_accept_edits_still_asks_outside_the_root(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    gate = PermissionGate()
    gate.accept_edits = True
    decision = await gate.check(
        EditTool(root),
        {"path": str(tmp_path / "elsewhere.txt"), "old_string": "a", "new_string": "b"},
    )
    assert decision.verdict is Verdict.DENY  # asks, and nobody can answer here


class Terminal:
    """An editor's terminals (``BashTool.terminals``, what ACP's ``terminal/*`` back): each
    ``run`` really runs the argv it is given; ``keep`` bytes of output at most (the end),
    ``fail``: the editor refuses."""

    def __init__(self, keep: int = 1_000_000, fail: bool = False) -> None:
        self.keep, self.fail = keep, fail
        self.given: list[tuple[list[str], Path, dict[str, str]]] = []

    async def run(
        self, argv: list[str], *, cwd: Path, env: Any, limit: float, output_limit: int
    ) -> TerminalRun:
        import anyio

        if self.fail:
            raise OSError("the editor could not create a terminal: no shell")
        self.given.append((argv, cwd, dict(env)))
        done = await anyio.run_process(argv, cwd=cwd, env=dict(env), check=False)
        out = done.stdout + done.stderr
        code = done.returncode
        return TerminalRun(
            f"term-{len(self.given)}",
            out[-self.keep :].decode(),
            len(out) > self.keep,
            code if code >= 0 else None,
            f"SIG{-code}" if code < 0 else None,
            False,
        )


async def test_bash_through_the_editors_terminal(tmp_path: Path) -> None:
    """Unconfined, the terminal gets plain ``bash -c`` with the minimal environment; what
    the editor cut, a signal and an editor that fails are said in the result."""
    bash = BashTool(tmp_path)
    bash.terminals = terminal = Terminal()
    ran = await bash.execute({"command": "echo hi"})
    assert not ran.is_error and ran.text == "hi" and ran.data["terminal_id"] == "term-1"
    argv, cwd, env = terminal.given[0]
    assert argv == ["bash", "-c", "echo hi"] and cwd == tmp_path and env["PAGER"] == "cat"
    killed = await bash.execute({"command": "kill -9 $$"})
    assert killed.is_error and "[killed by signal SIG9]" in killed.text
    terminal.keep = 10
    cut = await bash.execute({"command": "seq 1000"})
    assert cut.text.startswith("[the editor's terminal dropped the start of the output]")
    terminal.fail = True
    failed = await bash.execute({"command": "echo hi"})
    assert failed.is_error and failed.text.startswith("bash: the editor's terminal failed:")
