"""Class 4: the file tools' boundary, through ``codebot chat`` and the loopback model."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from codebot_mcp.core.tools.boundary import MAX_READ_BYTES
from tests.cli.repl_driver import drive
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import write_settings


@pytest.fixture
def project(tmp_path: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CODEBOT_TRUST_PROJECT", "1")
    root = tmp_path / "proj"
    write_settings(root, {"base_url": fake.base_url})
    (root / "src").mkdir()
    (root / "src" / "a.txt").write_text("inside\n")
    (tmp_path / "outside.txt").write_text("outside secret\n")
    return root


def tool_results(fake: FakeOpenAI) -> list[str]:
    return [m["content"] for m in fake.bodies[-1]["messages"] if m["role"] == "tool"]


def chat(capsys: pytest.CaptureFixture[str], root: Path, *argv: str) -> tuple[int, str]:
    code = run(["--cwd", str(root / "src"), "chat", "-p", "go", *argv])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("extra", [(), ("--plan",)])
def test_reads_outside_the_root_are_denied_without_asking_anyone(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str], extra: tuple[str, ...]
) -> None:
    outside = str(project.parent / "outside.txt")
    fake.queue(
        fo.tool_calls(
            ("read", {"path": "a.txt"}),
            ("read", {"path": "../../outside.txt"}),
            ("read", {"path": outside}),
            ("read", {"path": "/etc/passwd"}),
        ),
        fo.text("done"),
    )
    code, err = chat(capsys, project, *extra)
    assert code == 0, err
    inside, *denied = tool_results(fake)
    assert "inside" in inside
    for text in denied:
        assert "Permission denied" in text and "outside the project root" in text
        assert "outside secret" not in text and "root:x:0" not in text
    assert "--allow 'read'" in err


def test_allow_and_yes_let_an_outside_read_through(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    for flags in (("--allow", "read"), ("--yes",)):
        fake.queue(fo.tool_calls(("read", {"path": "../../outside.txt"})), fo.text("done"))
        code, err = chat(capsys, project, *flags)
        assert code == 0, err
        assert "outside secret" in tool_results(fake)[0]


def test_devices_fifos_and_sockets_are_refused_and_reads_are_bounded(
    project: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    os.mkfifo(project / "src" / "fifo")
    server = socket.socket(socket.AF_UNIX)
    # bound by a relative name: a socket's path may not pass 107 bytes, and pytest's
    # temporary folder under a long TMPDIR or test name may (chat() is given its --cwd)
    monkeypatch.chdir(project / "src")
    server.bind("sock")
    (project / "dev").symlink_to("/dev/zero")
    (project / "src" / "big.txt").write_bytes(b"y" * 100 + b"\n" + b"x" * (MAX_READ_BYTES + 5))
    try:
        fake.queue(
            fo.tool_calls(
                ("read", {"path": "fifo"}),
                ("read", {"path": "sock"}),
                ("read", {"path": "../dev"}),
                ("read", {"path": "/dev/zero"}),
                ("read", {"path": "big.txt", "limit": 1}),
                ("read", {"path": "big.txt", "offset": 2}),
            ),
            fo.text("done"),
        )
        code, err = chat(capsys, project, "--yes")  # a FIFO opened blocking would hang here
    finally:
        server.close()
    assert code == 0, err
    fifo, sock, dev_link, dev, first, rest = tool_results(fake)
    assert "FIFO" in fifo
    assert "socket" in sock
    assert "character device" in dev_link and "character device" in dev
    assert "y" * 100 in first
    assert f"larger than {MAX_READ_BYTES} bytes" in rest


def test_write_never_follows_a_symlink_out_of_the_root(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = project.parent / "outside.txt"
    (project / "src" / "link.txt").symlink_to(outside)
    (project / "src" / "dir").symlink_to(project.parent)
    fake.queue(
        fo.tool_calls(
            ("write", {"path": "link.txt", "content": "pwned"}),
            ("write", {"path": "dir/outside.txt", "content": "pwned"}),
            ("write", {"path": "new.txt", "content": "fine"}),
        ),
        fo.text("done"),
    )
    code, err = chat(capsys, project, "--yes")
    assert code == 0, err
    link, through_dir, new = tool_results(fake)
    assert "symlink" in link and "outside" in link
    assert "symlink" in through_dir
    assert outside.read_text() == "outside secret\n"
    assert (project / "src" / "new.txt").read_text() == "fine" and "Created" in new


@pytest.mark.anyio
async def test_the_write_approval_shows_the_resolved_path(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    target = project.parent / "elsewhere" / "x.txt"
    fake.queue(
        fo.tool_calls(("write", {"path": "../../elsewhere/x.txt", "content": "hi"})),
        fo.text("ok"),
    )
    keys = ("write it\r", "a\r", "\x04")
    code, repl = await drive(project / "src", [(0.6, key) for key in keys], seconds=30)
    err = capsys.readouterr().err
    assert code == 0
    assert f"resolved path: {target} (outside the project root {project})" in err
    assert "asks because: the path leads outside the project root" in err
    assert target.read_text() == "hi"
    # "always" was answered, but it never covers a path outside the root.
    assert repl.runtime is not None and "write" not in repl.runtime.gate.always


def test_edit_glob_and_grep_keep_to_the_same_boundary(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = project.parent / "outside.txt"
    fake.queue(
        fo.tool_calls(
            ("grep", {"pattern": "secret", "path": "../.."}),
            ("glob", {"pattern": "*.txt", "path": "../.."}),
            ("edit", {"path": "../../outside.txt", "old_string": "outside", "new_string": "x"}),
        ),
        fo.text("done"),
    )
    code, err = chat(capsys, project, "--allow", "grep", "--allow", "glob")
    assert code == 0, err
    grep_outside, glob_outside, edit_outside = tool_results(fake)
    assert "Permission denied" in edit_outside and "outside the project root" in edit_outside
    assert "outside secret" in grep_outside and "outside.txt" in glob_outside  # --allow'ed

    os.mkfifo(project / "src" / "fifo")
    (project / "src" / "link.txt").symlink_to(outside)
    fake.queue(
        fo.tool_calls(
            ("grep", {"pattern": "secret", "path": "../.."}),
            ("grep", {"pattern": "x", "path": "fifo"}),
            ("grep", {"pattern": "secret"}),
            ("glob", {"pattern": "*.txt"}),
            ("edit", {"path": "link.txt", "old_string": "outside", "new_string": "pwned"}),
            ("edit", {"path": "fifo", "old_string": "a", "new_string": "b"}),
        ),
        fo.text("done"),
    )
    code, err = chat(capsys, project)  # nobody to ask: outside the root is denied
    assert code == 0, err
    denied, fifo, inside, listed, link, edit_fifo = tool_results(fake)
    assert "Permission denied" in denied and "outside the project root" in denied
    assert "FIFO" in fifo
    assert "outside secret" not in inside  # a symlinked file leading out is not searched
    assert listed.splitlines() == ["a.txt"]
    assert "Permission denied" in link and "Permission denied" in edit_fifo  # edit asks
    fake.queue(
        fo.tool_calls(
            ("edit", {"path": "link.txt", "old_string": "outside", "new_string": "pwned"}),
            ("edit", {"path": "fifo", "old_string": "a", "new_string": "b"}),
            ("grep", {"pattern": "x", "path": "/dev/zero"}),
        ),
        fo.text("done"),
    )
    code, err = chat(capsys, project, "--yes")  # a FIFO read blocking would hang here
    assert code == 0, err
    link, edit_fifo, dev = tool_results(fake)
    assert "character device" in dev
    assert "symlink" in link and "outside" in link
    assert "FIFO" in edit_fifo
    assert outside.read_text() == "outside secret\n"
