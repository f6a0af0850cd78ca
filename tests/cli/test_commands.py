"""Custom slash commands through `codebot chat`: real command folders, `-p` and the REPL."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from codebot_mcp.cli.app import run
from codebot_mcp.cli.repl.repl_loop import Repl
from tests.cli.repl_driver import drive, until
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import write_settings

REVIEW = """\
---
description: Review a file for bugs
argument-hint: [file] [focus]
---
Review $1 with a focus on $2.
Everything you were given: $ARGUMENTS
"""


def command(root: Path, name: str, text: str, base: str = ".codebot") -> Path:
    path = root / base / "commands" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def project(tmp_path: Path, fake: FakeOpenAI) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    write_settings(root, {"base_url": fake.base_url})
    command(root, "review", REVIEW)
    command(root, "frontend/lint", "Lint the frontend files: $ARGUMENTS")
    command(root, "explain", "Explain this code simply.", base=".claude")
    return root


def chat(capsys: pytest.CaptureFixture[str], cwd: Path, *argv: str) -> tuple[int, str, str]:
    code = run(["--cwd", str(cwd), "chat", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def sent(fake: FakeOpenAI, index: int = -1) -> str:
    content: str = fake.bodies[index]["messages"][-1]["content"]
    return content


def test_a_command_with_arguments_in_one_shot_mode(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(fo.text("looks fine"))
    code, out, err = chat(capsys, project, "-p", '/review src/app.py "error handling"')
    assert code == 0, err
    assert out == "looks fine\n" and "(/review)" in err
    assert sent(fake) == (
        "Review src/app.py with a focus on error handling.\n"
        'Everything you were given: src/app.py "error handling"'
    )


def test_namespaces_claude_folders_and_appended_arguments(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(fo.text("ok"), fo.text("ok"))
    assert chat(capsys, project, "-p", "/frontend:lint src/ui")[0] == 0
    assert sent(fake) == "Lint the frontend files: src/ui"
    assert chat(capsys, project, "-p", "/explain app.py")[0] == 0
    assert sent(fake) == "Explain this code simply.\n\nARGUMENTS: app.py"


def test_an_unknown_command_goes_to_the_model_as_written_with_a_warning(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(fo.text("ok"))
    code, _, err = chat(capsys, project, "-p", "/reveiw app.py")
    assert code == 0 and sent(fake) == "/reveiw app.py"
    assert "'/reveiw' is not a custom command" in err and "/review" in err


def test_allowed_tools_run_without_asking_only_while_the_command_runs(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    command(
        project,
        "note",
        "---\nallowed-tools: Write, Bash(git add:*), WebFetch(domain:x.org)\n---\n"
        "Write the note $1 into notes.txt\n",
    )
    write = fo.tool_calls(("write", {"path": "notes.txt", "content": "hello"}))
    bash = fo.tool_calls(
        ("bash", {"command": "git init -q . && git add notes.txt"}),
        ("bash", {"command": "git add notes.txt"}),
        ("bash", {"command": "git add notes.txt; touch other.txt"}),
        ("bash", {"command": "git status"}),
    )
    fake.queue(write, bash, fo.text("noted"))
    # --sandbox off: a sandboxed bash would run without asking anyway
    code, out, err = chat(capsys, project, "-p", "/note hello", "--json", "--sandbox", "off")
    assert code == 0, err
    calls = json.loads(out)["tool_calls"]
    assert (project / "notes.txt").read_text() == "hello" and not calls[0]["denied"]
    # Bash(git add:*) allows, as in Claude Code, the calls whose every part is `git add ...`
    assert [c["denied"] for c in calls[1:]] == [True, False, True, True]
    assert not (project / "other.txt").exists()
    assert "entry 'Bash(git add:*)' is not honoured" not in err
    assert "entry 'WebFetch(domain:x.org)' is not honoured: codebot has no WebFetch tool" in err
    # The same call outside the command needs approval (and nobody can answer in -p).
    fake.queue(fo.tool_calls(("write", {"path": "other.txt", "content": "x"})), fo.text("no"))
    code, out, _ = chat(capsys, project, "-p", "write other.txt", "--json")
    assert json.loads(out)["tool_calls"][0]["denied"] and not (project / "other.txt").exists()


def test_a_commands_model_answers_its_prompt_only(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    command(project, "quick", "---\nmodel: small-model\n---\nAnswer briefly: $ARGUMENTS\n")
    fake.queue(fo.text("ok"))
    assert chat(capsys, project, "-p", "/quick why?")[0] == 0
    assert fake.bodies[-1]["model"] == "small-model"


def test_user_commands_and_precedence(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    home = project.parent / "home"
    command(home, "standup", "Summarise what changed since yesterday.", base=".")
    command(home, "review", "your own review", base=".")  # the project's wins
    command(project, "help", "a command named like a built-in one")
    fake.queue(fo.text("ok"), fo.text("ok"))
    code, _, err = chat(capsys, project, "-p", "/standup")
    assert code == 0 and sent(fake) == "Summarise what changed since yesterday."
    assert "/help is a built-in command; this file is not used" in err
    assert chat(capsys, project, "-p", "/review a b")[0] == 0
    assert sent(fake).startswith("Review a with a focus on b.")


def test_an_untrusted_projects_commands_are_not_read(
    project: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")
    home = project.parent / "home"
    home.mkdir(exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"base_url": fake.base_url}))
    (project / ".codebot" / "settings.json").unlink()
    fake.queue(fo.text("ok"))
    code, _, err = chat(capsys, project, "-p", "/review app.py")
    assert code == 0 and sent(fake) == "/review app.py"
    assert "skipping project files (.codebot/commands/frontend/lint.md" in err
    assert "'/review' is not a custom command" in err


# -- the REPL ------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_commands_in_the_repl_are_run_completed_and_listed(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    fake.queue(fo.text("reviewed"), fo.text("linted"))
    completions: dict[str, list[tuple[str, str]]] = {}

    async def complete(repl: Repl, text: str) -> None:
        completer = repl.completer()
        found = completer.get_completions_async(Document(text), CompleteEvent())
        completions[text] = [(c.text, c.display_meta_text) async for c in found]

    async def steps(repl: Repl, inp: Any) -> None:
        await until(lambda: repl.runtime is not None)
        await complete(repl, "/fr")
        await complete(repl, "/re")
        inp.send_text("/review app.py speed\r")
        await until(lambda: len(fake.bodies) == 1)
        await anyio.sleep(0.3)
        inp.send_text("/frontend:lint src\r")
        await until(lambda: len(fake.bodies) == 2)
        await anyio.sleep(0.3)
        inp.send_text("/help\r")
        await anyio.sleep(0.4)
        inp.send_text("\x04")

    code, _ = await drive(project, steps, seconds=30)
    out, _ = capsys.readouterr()
    assert code == 0
    assert sent(fake, 0).startswith("Review app.py with a focus on speed.")
    assert sent(fake, 1) == "Lint the frontend files: src"
    assert "reviewed" in out and "linted" in out
    assert completions["/fr"] == [("/frontend:lint", "Lint the frontend files: $ARGUMENTS")]
    assert ("/review", "Review a file for bugs") in completions["/re"]
    assert ("/resume", "") in completions["/re"]
    assert "custom commands:" in out
    assert re.search(
        r"^  /review \[file\] \[focus\]  Review a file for bugs +\(\.codebot/commands\)$", out, re.M
    )
    assert "/explain" in out and "(.claude/commands)" in out
