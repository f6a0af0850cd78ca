"""Issue 21 part 2: ``codebot chat -p`` changes files with ``bash``, ``edit`` and ``write`` (the
loopback model asks for them), then ``codebot rewind`` lists the turns and puts the files back;
the REPL's ``/rewind`` does the same in a conversation.

Two tiers. The first test tells the whole story through the installed ``codebot`` as real
processes (:func:`codebot`: a minimal environment, stdin from /dev/null or a pipe); it is also
the one that pipes stdin, since ``rewind`` must not restore without a terminal whatever the pipe
says. The others run the CLI in the test's own process (:class:`Cli`: ``cli.app.run`` with
``--cwd`` and the environment the child would get): resuming a session, the file cap, the
errors and exit codes, the private store, the trust gate, the REPL and subagents. They prove
what the commands do; what the console script adds around ``run`` (the reaper hand-off, the
sweep of orphaned descendants, the exit) runs in the first test and is proved in tests/e2e and
tests/hostile.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from codebot_mcp.cli.chat_runtime import ChatOptions
from tests.cli.repl_driver import drive, until
from tests.fakes import openai_turns as fo
from tests.fakes import zygote
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.procs import codebot_env
from tests.helpers import cli_in_process, write_settings


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def project(tmp_path: Path, fake: FakeOpenAI) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    write_settings(root, {"base_url": fake.base_url})
    return root


def codebot(
    home: Path, project: Path, *argv: str, stdin: str | None = None, trusted: bool = True
) -> tuple[int, str, str]:
    done = subprocess.run(
        [*zygote.command(), *argv],
        cwd=project,
        env=codebot_env(home, **({"CODEBOT_TRUST_PROJECT": "1"} if trusted else {})),
        capture_output=True,
        text=True,
        timeout=60,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
    )
    return done.returncode, done.stdout, done.stderr


def prompt(home: Path, project: Path, text: str, *extra: str) -> dict[str, Any]:
    code, out, err = codebot(home, project, "chat", "-p", text, "--yes", "--json", *extra)
    assert code == 0, err
    return json.loads(out)


@dataclass
class Cli:
    """``codebot`` in this process, in ``project``, with what :func:`codebot` gives its child:
    CODEBOT_HOME, NO_COLOR, stdin from /dev/null, and a trusted project unless told otherwise
    (the variable is removed then, as :func:`codebot` leaves it out)."""

    home: Path
    project: Path
    capsys: pytest.CaptureFixture[str]
    monkeypatch: pytest.MonkeyPatch

    def __call__(self, *argv: str, trusted: bool = True) -> tuple[int, str, str]:
        env = {
            "CODEBOT_HOME": str(self.home),
            "NO_COLOR": "1",
            "CODEBOT_TRUST_PROJECT": "1" if trusted else None,
        }
        argv = ("--cwd", str(self.project), *argv)
        return cli_in_process(self.capsys, self.monkeypatch, *argv, env=env)

    def prompt(self, text: str, *extra: str) -> dict[str, Any]:
        code, out, err = self("chat", "-p", text, "--yes", "--json", *extra)
        assert code == 0, err
        return json.loads(out)


@pytest.fixture
def cli(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Cli:
    return Cli(home, project, capsys, monkeypatch)


def tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` but .codebot, with its text."""
    return {
        p.relative_to(root).as_posix(): p.read_text()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".codebot" not in p.parts
    }


BASH = (
    "echo beta >> a.txt && rm old.txt && echo new > new.txt && mkdir -p pkg/sub && "
    "echo 'x = 1' > pkg/sub/mod.py && echo more >> app.log && echo out2 > build/out.txt && "
    "chmod 755 run.sh"
)


def test_bash_edit_and_write_changes_are_listed_and_rewound(
    home: Path, project: Path, fake: FakeOpenAI
) -> None:
    (project / "a.txt").write_text("alpha\n")
    (project / "old.txt").write_text("old\n")
    (project / "keep.txt").write_text("untouched\n")
    (project / "run.sh").write_text("#!/bin/sh\n")
    (project / "run.sh").chmod(0o644)
    (project / ".gitignore").write_text("*.log\nbuild/\n")
    (project / "app.log").write_text("log0\n")
    (project / "build").mkdir()
    (project / "build" / "out.txt").write_text("out1\n")
    before = tree(project)
    fake.queue(
        fo.tool_calls(("bash", {"command": BASH})),
        fo.tool_calls(("edit", {"path": "a.txt", "old_string": "alpha", "new_string": "ALPHA"})),
        fo.tool_calls(("write", {"path": "w.txt", "content": "written\n"})),
        fo.text("done"),
    )
    data = prompt(home, project, "change things")
    assert [c["is_error"] for c in data["tool_calls"]] == [False, False, False]
    assert (project / "a.txt").read_text() == "ALPHA\nbeta\n"

    code, out, err = codebot(home, project, "rewind", "--list")
    assert code == 0, err
    assert f"session {data['session_id']}: 1 turn" in out
    assert "  1  " in out and "change things  (6 files)" in out
    for line in ("M a.txt", "D old.txt", "A new.txt", "A pkg/sub/mod.py", "A w.txt", "M run.sh"):
        assert line in out, out
    assert "app.log" not in out and "build" not in out and "keep.txt" not in out

    code, out, err = codebot(home, project, "rewind", "--dry-run")
    assert code == 0, err
    assert "Rewind to before turn 1 (change things):" in out and "(dry run" in out
    assert "recreate  old.txt" in out and "remove    new.txt" in out
    assert (project / "new.txt").exists()  # nothing changed

    code, out, err = codebot(home, project, "rewind")  # stdin is not a terminal
    assert code == 2 and "not restoring without confirmation" in err
    code, out, err = codebot(home, project, "rewind", "1", stdin="n\n")
    assert code == 2  # a pipe is no terminal either, whatever it says

    code, out, err = codebot(home, project, "rewind", "--yes")
    assert code == 0, err
    assert "restored 6 files" in out
    after = tree(project)
    assert after["app.log"] == "log0\nmore\n" and after["build/out.txt"] == "out2\n"  # ignored
    del after["app.log"], after["build/out.txt"]
    del before["app.log"], before["build/out.txt"]
    assert after == before  # a.txt back, old.txt back, new ones gone
    assert not (project / "pkg").exists()  # the directories the turn made, emptied, go too
    assert stat.S_IMODE((project / "run.sh").stat().st_mode) == 0o644

    code, out, err = codebot(home, project, "rewind", "--yes")
    assert code == 1 and "no turns to rewind" in err


def test_resume_keeps_the_sessions_checkpoints_and_the_conversation_rewinds_too(
    cli: Cli, project: Path, fake: FakeOpenAI
) -> None:
    fake.queue(fo.tool_calls(("write", {"path": "one.txt", "content": "1\n"})), fo.text("one"))
    first = cli.prompt("make one")
    session = first["session_id"]
    fake.queue(fo.tool_calls(("bash", {"command": "rm one.txt; echo 2 > two.txt"})))
    fake.queue(fo.text("two"))
    cli.prompt("swap for two", "--resume", session)
    fake.queue(fo.text("just talk"))
    cli.prompt("say something", "--continue")
    fake.queue(fo.text("elsewhere"))  # another session, newer: rewind must be told which
    other = cli.prompt("a new session")["session_id"]

    # a prefix of the id names the session: the timestamp, or more if both started that second
    n = next(n for n in range(15, len(session) + 1) if not other.startswith(session[:n]))
    prefix = session[:n]
    code, out, err = cli("rewind", "--list", "--session", prefix)
    assert code == 0, err
    assert f"session {session}: 3 turns" in out
    assert "make one  (1 file)" in out and "swap for two  (2 files)" in out
    assert "say something  (no file changes)" in out

    code, out, err = cli("rewind", "2", "--session", session, "--yes", "--conversation")
    assert code == 0, err
    assert (project / "one.txt").read_text() == "1\n" and not (project / "two.txt").exists()
    assert "conversation taken back to before turn 2" in out

    fake.queue(fo.text("resumed"))
    cli.prompt("where were we?", "--resume", session)
    sent = [m.get("content") for m in fake.bodies[-1]["messages"][1:]]
    assert sent[0] == "make one" and "swap for two" not in sent and sent[-1] == "where were we?"
    code, out, err = cli("rewind", "--list", "--session", session)
    assert out.splitlines()[0].endswith(": 2 turns")  # 2 and 3 were undone; a new 2 ran
    assert "make one" in out and "where were we?" in out and "swap for two" not in out


def test_a_project_over_the_cap_is_not_snapshotted_and_says_so(
    cli: Cli, home: Path, project: Path, fake: FakeOpenAI
) -> None:
    write_settings(project, {"base_url": fake.base_url, "checkpoints": {"max_files": 3}})
    for i in range(5):
        (project / f"f{i}.txt").write_text(f"{i}\n")
    fake.queue(fo.tool_calls(("bash", {"command": "rm f0.txt"})), fo.text("removed"))
    code, out, err = cli("chat", "-p", "remove f0", "--yes")
    assert code == 0, err
    assert "warning: no checkpoint for this turn: the project has more than 3 files" in err
    assert "checkpoints.max_files" in err
    store = next(home.glob("state/sessions/*/checkpoints"))
    assert not (store / "objects.pack").exists()  # never a partial snapshot

    code, out, err = cli("rewind", "--list")
    assert code == 0 and "(no checkpoint: the project has more than 3 files" in out
    code, out, err = cli("rewind", "--yes")
    assert code == 1 and "turn 1 has no checkpoint" in err and "cannot be undone" in err
    assert not (project / "f0.txt").exists()


def test_clear_errors_and_exit_codes(cli: Cli, project: Path, fake: FakeOpenAI) -> None:
    code, _, err = cli("rewind")
    assert code == 2 and "no saved sessions for" in err
    fake.queue(fo.tool_calls(("write", {"path": "x.txt", "content": "x"})), fo.text("ok"))
    session = cli.prompt("write x")["session_id"]
    code, _, err = cli("rewind", "--session", "nosuch", "--list")
    assert code == 2 and "'nosuch' is not a saved session of this project" in err
    assert f"Recent sessions: {session}" in err
    code, _, err = cli("rewind", "7", "--yes")
    assert code == 2 and f"turn 7 is out of range: session {session} has turns 1 to 1" in err
    code, _, err = cli("rewind", "0")
    assert code == 2 and "turns count from 1" in err
    (project / "x.txt").unlink()  # undone by hand: nothing left for a rewind to do
    code, _, err = cli("rewind", "--yes")
    assert code == 1 and "nothing to rewind: the files are as they were before turn 1" in err


def test_the_store_is_private_and_outside_the_project(
    cli: Cli, home: Path, project: Path, fake: FakeOpenAI
) -> None:
    secret = home.parent / "outside.txt"
    secret.write_text("a secret outside the project\n")
    os.symlink(secret, project / "link.txt")
    fake.queue(fo.tool_calls(("bash", {"command": "rm link.txt"})), fo.text("ok"))
    cli.prompt("remove the link")
    store = next(home.glob("state/sessions/*/checkpoints"))
    for path in store.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
        assert b"a secret outside" not in path.read_bytes()
    assert stat.S_IMODE(store.stat().st_mode) == 0o700
    assert not any(p.name == "objects.pack" for p in project.rglob("*"))
    code, _, err = cli("rewind", "--yes")
    assert code == 0, err
    assert os.readlink(project / "link.txt") == str(secret)  # the link, not a copy


@pytest.mark.anyio
async def test_repl_rewind_lists_and_restores_files_and_conversation(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "notes.txt").write_text("v1\n")
    fake.queue(
        fo.tool_calls(("bash", {"command": "echo v2 > notes.txt && echo tmp > tmp.txt"})),
        fo.text("changed"),
        fo.text("second answer"),
    )
    seen: list[str] = []

    def printed(text: str) -> bool:
        seen.append(capsys.readouterr().out)
        return text in "".join(seen)

    async def script(repl: Any, inp: Any) -> None:
        history = lambda: repl.runtime.session.history  # noqa: E731
        await until(lambda: repl.runtime is not None)
        inp.send_text("change the notes\r")
        await until(lambda: len(history()) == 4 and repl.turn_scope is None)
        inp.send_text("and then?\r")
        await until(lambda: len(history()) == 6 and repl.turn_scope is None)
        inp.send_text("/rewind\r")
        await until(lambda: printed("(/rewind N restores"))
        inp.send_text("/rewind 1\r")
        await until(lambda: printed("Rewind to before turn 1 (change the notes):"))
        await anyio.sleep(0.3)  # the question is up
        inp.send_text("c")  # files and conversation: one key, no Enter
        await until(lambda: printed("(conversation taken back") or history() == [])
        inp.send_text("\x04")

    code, repl = await drive(project, script, options=ChatOptions(yes=True), seconds=60)
    seen.append(capsys.readouterr().out)
    out = "".join(seen)
    assert code == 0
    assert "change the notes  (2 files)" in out and "M notes.txt" in out and "A tmp.txt" in out
    assert "and then?  (no file changes)" in out
    assert "restore   notes.txt" in out and "remove    tmp.txt" in out
    assert "restored 2 files" in out
    assert (project / "notes.txt").read_text() == "v1\n" and not (project / "tmp.txt").exists()
    assert repl.runtime.session.history == []
    log = repl.runtime.log
    assert log is not None and json.loads(log.path.read_text().splitlines()[-1]) == {
        "type": "reset",
        "messages": [],
    }


def test_what_a_subagent_changed_is_rewound_with_the_prompt_that_started_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from codebot_mcp.cli.app import run
    from tests.cli.test_subagents import Router, task

    steps = iter([fo.tool_calls(("bash", {"command": "echo by-subagent > notes.txt"}))])
    router = Router(
        [fo.tool_calls(task("change the notes")), fo.text("done")],
        lambda prompt: next(steps, fo.text("changed them")),
    )
    root = tmp_path / "repo"
    root.mkdir()
    (root / "notes.txt").write_text("original\n")
    with FakeOpenAI(respond=router) as model:
        write_settings(root, {"base_url": model.base_url})
        assert run(["--cwd", str(root), "chat", "-p", "delegate it", "--yes"]) == 0
    assert (root / "notes.txt").read_text() == "by-subagent\n"
    capsys.readouterr()
    assert run(["--cwd", str(root), "rewind", "--list"]) == 0
    listed = capsys.readouterr().out
    assert "delegate it  (1 file)" in listed and "M notes.txt" in listed
    assert run(["--cwd", str(root), "rewind", "--yes"]) == 0
    assert (root / "notes.txt").read_text() == "original\n"


def test_an_untrusted_project_cannot_turn_checkpoints_off(
    cli: Cli, project: Path, fake: FakeOpenAI
) -> None:
    write_settings(project, {"base_url": fake.base_url, "checkpoints": {"enabled": False}})
    (project / "a.txt").write_text("a\n")
    fake.queue(fo.tool_calls(("bash", {"command": "rm a.txt"})), fo.text("ok"))
    code, _, err = cli("chat", "--base-url", fake.base_url, "-p", "rm a", "--yes", trusted=False)
    assert code == 0, err
    assert "project settings (" in err and "checkpoints" in err  # skipped, and said so
    code, out, err = cli("rewind", "--list", trusted=False)
    assert code == 0 and "rm a  (1 file)" in out and "D a.txt" in out
    code, out, err = cli("rewind", "--yes", trusted=False)
    assert code == 0, err
    assert (project / "a.txt").read_text() == "a\n"
