"""Agents, commands and skills written for Claude Code, read as Claude Code reads them (issue 31
item 4), through `codebot chat`: `-p` and the REPL against the loopback model server. Every
fixture is written here, in Claude Code's formats."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from codebot_mcp.cli.app import run
from codebot_mcp.cli.chat_runtime import ChatOptions
from codebot_mcp.cli.repl.repl_loop import Repl
from tests.cli.repl_driver import drive, until
from tests.cli.test_subagents import Router, task, tool_names
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import write_settings

CHECKER = """\
---
name: code-checker
description: Use this agent when the user has written code and wants it checked. Examples:

<example>
Context: The user just wrote a parser.
user: "I added the parser, can you check it?"
assistant: "I'll use the code-checker agent to review it."
</example>
model: sonnet
color: yellow
tools: ["Read", "Grep", "WebFetch"]
---

You check code and report problems.
"""

COMMIT = """\
---
allowed-tools: Bash(echo:*), Bash(git status:*)
description: Commit the staged changes
model: claude-sonnet-4-0
---
## Context

- Greeting: !`echo hello from echo`
- Not covered: !`printf refused`
- The readme: @docs/readme.txt
- Outside: @../secret.txt and missing: @docs/none.md
- A pipe: @docs/pipe and a big one: @docs/big.txt

```python
@pytest.fixture
```

```!
echo block one
echo block two
```

Write a commit message for $ARGUMENTS.
"""


@pytest.fixture
def router() -> Router:
    return Router([], lambda prompt: fo.text(f"checked {prompt}"))


@pytest.fixture
def model(router: Router) -> Iterator[FakeOpenAI]:
    with FakeOpenAI(respond=router) as server:
        yield server


@pytest.fixture
def project(tmp_path: Path, model: FakeOpenAI) -> Path:
    root = tmp_path / "repo"
    (root / ".claude" / "agents").mkdir(parents=True)
    (root / ".claude" / "agents" / "code-checker.md").write_text(CHECKER)
    (root / ".claude" / "agents" / "no-shell.md").write_text(
        "---\nname: no-shell\ndescription: Edits without a shell\n"
        "disallowedTools: Bash, Write\n---\nYou edit, never run.\n"
    )
    (root / ".claude" / "commands").mkdir()
    (root / ".claude" / "commands" / "commit.md").write_text(COMMIT)
    (root / "docs").mkdir()
    (root / "docs" / "readme.txt").write_text("The readme's text.\n")
    (tmp_path / "secret.txt").write_text("not for the model\n")
    os.mkfifo(root / "docs" / "pipe")  # reading it would block forever: refused
    (root / "docs" / "big.txt").write_text("x" * 70_000)
    write_settings(root, {"base_url": model.base_url})
    return root


def chat(capsys: pytest.CaptureFixture[str], cwd: Path, *argv: str) -> tuple[int, str, str]:
    code = run(["--cwd", str(cwd), "chat", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_commands_shell_lines_files_and_claude_model_in_one_shot_mode(
    project: Path, model: FakeOpenAI, router: Router, capsys: pytest.CaptureFixture[str]
) -> None:
    router.main = [fo.text("feat: greet")]
    # --sandbox off: a confined bash runs without asking anyway; here the gate must decide
    code, out, err = chat(capsys, project, "-p", "/commit the greeting", "--sandbox", "off")
    assert code == 0, err
    assert out == "feat: greet\n"
    body = model.bodies[-1]
    sent = body["messages"][-1]["content"]
    # covered by `allowed-tools: Bash(echo:*)`: run before the prompt, its output inlined
    assert "- Greeting: hello from echo" in sent and "!`echo" not in sent
    # not covered, and nobody can answer in -p: refused, and said in the prompt and to the user
    assert "- Not covered: [!`printf refused` did not run: needs approval" in sent
    assert "/commit: !`printf refused` did not run" in err
    # @path: a project file inlined; outside the project or missing, a note
    assert "@docs/readme.txt\n```\nThe readme's text.\n\n```" in sent
    assert "@../secret.txt [not inlined: it is outside the project]" in sent
    assert "not for the model" not in sent
    assert "@docs/none.md [not inlined: no such file in the project]" in sent
    assert "```python\n@pytest.fixture\n```" in sent  # code in a fence is no file
    assert "block one\nblock two" in sent and "```!" not in sent  # a ```! block runs too
    assert "@docs/pipe [not inlined: cannot read it: " in sent
    assert "x" * 65_536 + "\n[... cut at 65536 bytes]\n```" in sent and "x" * 65_537 not in sent
    assert sent.count("[not inlined") == 3 and err.count("is not inlined") == 3
    assert sent.endswith("Write a commit message for the greeting.")
    # claude-sonnet-4-0 is no model at this endpoint: the user's answers, with one note
    assert body["model"] == model.bodies[0]["model"] != "claude-sonnet-4-0"
    assert err.count("model 'claude-sonnet-4-0'") == 1 and '"model_aliases"' in err


def test_model_aliases_maps_a_claude_model_and_yes_answers_a_shell_line(
    project: Path, model: FakeOpenAI, router: Router, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(
        project, {"base_url": model.base_url, "model_aliases": {"claude-sonnet-4-0": "small"}}
    )
    router.main = [fo.text("ok")]
    code, _, err = chat(capsys, project, "-p", "/commit x", "--sandbox", "off", "--yes")
    assert code == 0, err
    assert model.bodies[-1]["model"] == "small" and "model 'claude-sonnet-4-0'" not in err
    # --yes answers the gate: the line no rule covers runs too
    assert "- Not covered: refused" in model.bodies[-1]["messages"][-1]["content"]


def test_a_deny_rule_refuses_a_shell_line_allowed_tools_covers(
    project: Path, model: FakeOpenAI, router: Router, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(project, {"base_url": model.base_url, "permissions": {"deny": ["bash"]}})
    router.main = [fo.text("ok")]
    code, _, err = chat(capsys, project, "-p", "/commit x", "--sandbox", "off", "--yes")
    assert code == 0, err
    sent = model.bodies[-1]["messages"][-1]["content"]
    why = "denied by the settings rule 'bash'"
    assert f"- Greeting: [!`echo hello from echo` did not run: {why}]" in sent
    assert f"/commit: !`echo hello from echo` did not run: {why}" in err


def test_a_plugin_agent_gets_the_tools_it_lists(
    project: Path, model: FakeOpenAI, router: Router, capsys: pytest.CaptureFixture[str]
) -> None:
    router.main = [fo.tool_calls(task("check app.py", "code-checker")), fo.text("done")]
    code, out, err = chat(capsys, project, "-p", "check my code", "--json")
    assert code == 0, err
    assert json.loads(out)["tool_calls"][0]["result"].startswith("checked check app.py")
    body = router.sub_bodies[0]
    assert sorted(tool_names(body)) == ["grep", "read"]  # not none: the list was read
    assert "You check code and report problems." in body["messages"][0]["content"]
    assert body["model"] == model.bodies[0]["model"]  # sonnet: the parent's model
    assert err.count("lists WebFetch, which codebot does not have") == 1
    assert "code-checker.md" in err and "model 'sonnet'" in err


def test_an_agents_disallowed_tools_are_never_given(
    project: Path, model: FakeOpenAI, router: Router, capsys: pytest.CaptureFixture[str]
) -> None:
    router.main = [fo.tool_calls(task("fix app.py", "no-shell")), fo.text("done")]
    code, _, err = chat(capsys, project, "-p", "fix my code", "--yes")
    assert code == 0, err
    names = tool_names(router.sub_bodies[0])
    assert "read" in names and "edit" in names
    assert "bash" not in names and "write" not in names


def test_model_aliases_maps_an_agents_claude_model(
    project: Path, model: FakeOpenAI, router: Router, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(project, {"base_url": model.base_url, "model_aliases": {"sonnet": "small"}})
    router.main = [fo.tool_calls(task("check app.py", "code-checker")), fo.text("done")]
    code, _, err = chat(capsys, project, "-p", "check my code")
    assert code == 0, err
    assert router.sub_bodies[0]["model"] == "small" != model.bodies[0]["model"]
    assert "model 'sonnet'" not in err


@pytest.mark.anyio
async def test_agents_shows_the_tools_each_agent_really_gets_and_shell_lines_in_the_repl(
    project: Path, model: FakeOpenAI, router: Router, capsys: pytest.CaptureFixture[str]
) -> None:
    router.main = [fo.text("committed")]

    async def steps(repl: Repl, inp: Any) -> None:
        await until(lambda: repl.runtime is not None)
        inp.send_text("/agents\r")
        await anyio.sleep(0.5)
        inp.send_text("/commit now\r")
        await until(lambda: len(model.bodies) == 1)
        await anyio.sleep(0.3)
        inp.send_text("\x04")

    code, _ = await drive(project, steps, seconds=30)
    out, _ = capsys.readouterr()
    assert code == 0
    (row,) = [line for line in out.splitlines() if "code-checker.md" in line]
    assert "read, grep" in row and "WebFetch" not in row
    (row,) = [line for line in out.splitlines() if "no-shell.md" in line]
    assert "read" in row and "edit" in row and "bash" not in row and "write" not in row
    sent = model.bodies[0]["messages"][-1]["content"]
    assert "- Greeting: hello from echo" in sent
    assert "@docs/readme.txt\n```\nThe readme's text." in sent


def test_a_skill_titled_by_name_loads_under_its_folder_with_one_note(
    project: Path, model: FakeOpenAI, router: Router, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = project / ".claude" / "skills" / "hook-development"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: Hook Development\ndescription: This skill should be used when the user "
        'asks to "create a hook".\nversion: 0.1.0\n---\n\nHooks are commands.\n'
    )
    router.main = [fo.text("ok")]
    code, _, err = chat(capsys, project, "-p", "hello")
    assert code == 0, err
    system = model.bodies[-1]["messages"][0]["content"]
    assert "hook-development" in system and "create a hook" in system
    assert err.count("'Hook Development' is not a skill name") == 1
    assert "loaded as 'hook-development'" in err
    assert run(["--cwd", str(project), "skills", "list"]) == 0
    out = capsys.readouterr().out
    assert "hook-development" in out and "note: " in out and "skipped" not in out


@pytest.mark.anyio
async def test_in_the_repl_a_shell_line_no_rule_covers_is_asked(
    project: Path, model: FakeOpenAI, router: Router, capsys: pytest.CaptureFixture[str]
) -> None:
    router.main = [fo.text("committed")]

    async def steps(repl: Repl, inp: Any) -> None:
        await until(lambda: repl.runtime is not None)
        inp.send_text("/commit now\r")
        await anyio.sleep(1.0)
        assert not model.bodies  # held by the question about `printf refused`
        inp.send_text("y")
        await until(lambda: len(model.bodies) == 1)
        await anyio.sleep(0.3)
        inp.send_text("\x04")

    code, _ = await drive(project, steps, options=ChatOptions(sandbox="off"), seconds=30)
    _, err = capsys.readouterr()
    assert code == 0
    assert "printf refused" in err  # the approval named the command
    sent = model.bodies[0]["messages"][-1]["content"]
    assert "- Greeting: hello from echo" in sent  # covered by Bash(echo:*): never asked
    assert "- Not covered: refused" in sent  # asked, approved, run
