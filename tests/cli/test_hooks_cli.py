"""Hooks through `codebot chat`: `-p`, the REPL, `/hooks`, settings errors and trust.

Real hook scripts, the loopback model server, the real REPL on prompt-toolkit's pipe input.
"""

from __future__ import annotations

import json
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

GUARD = '#!/bin/sh\ncat > "$CLAUDE_PROJECT_DIR/guard.json"\necho "no writes today" >&2\nexit 2\n'


def guard_hooks(command: str = "./guard.sh", matcher: str = "write") -> dict[str, Any]:
    return {
        "PreToolUse": [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]
    }


@pytest.fixture
def project(tmp_path: Path, fake: FakeOpenAI) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "guard.sh").write_text(GUARD)
    (root / "guard.sh").chmod(0o755)
    write_settings(root, {"base_url": fake.base_url, "hooks": guard_hooks()})
    return root


def chat(capsys: pytest.CaptureFixture[str], cwd: Path, *argv: str) -> tuple[int, str, str]:
    code = run(["--cwd", str(cwd), "chat", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_hook_blocks_a_call_in_one_shot_mode(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(fo.tool_calls(("write", {"path": "out.txt", "content": "x"})), fo.text("blocked"))
    code, out, err = chat(capsys, project, "-p", "write it", "--yes", "--json")
    assert code == 0, err
    data = json.loads(out)
    (call,) = data["tool_calls"]
    assert call["denied"] and "no writes today" in call["result"]
    assert not (project / "out.txt").exists()
    given = json.loads((project / "guard.json").read_text())
    assert given["session_id"] == data["session_id"]
    assert given["permission_mode"] == "bypassPermissions"  # --yes
    assert Path(given["transcript_path"]).name == f"{data['session_id']}.jsonl"
    assert "⊘ write denied: blocked by a PreToolUse hook: no writes today" in err


def test_a_blocked_prompt_exits_1_and_is_not_sent(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    hooks = {
        "UserPromptSubmit": [
            {"hooks": [{"type": "command", "command": "echo 'no prompts on Fridays' >&2; exit 2"}]}
        ]
    }
    write_settings(tmp_path, {"base_url": fake.base_url, "hooks": hooks})
    code, out, err = chat(capsys, tmp_path, "-p", "hello")
    assert code == 1 and out == ""
    assert "a UserPromptSubmit hook blocked the prompt: no prompts on Fridays" in err
    assert fake.bodies == []


@pytest.mark.parametrize(
    ("hooks", "message"),
    [
        ([], "'hooks' in {file} must be an object mapping event names to lists, found an array"),
        ({"PreToolUse": {}}, "'hooks.PreToolUse' in {file} must be a list of matcher groups"),
        (
            {"Stop": [{"hooks": [{"type": "command"}]}]},
            "'hooks.Stop[0].hooks[0].command' in {file} must be a non-empty string",
        ),
        (
            {"Stop": [{"hooks": [{"command": "x", "timeout": -1}]}]},
            "'hooks.Stop[0].hooks[0].timeout' in {file} must be a positive number of seconds",
        ),
        (
            {"PreToolUse": [{"matcher": "(", "hooks": []}]},
            "'hooks.PreToolUse[0].matcher' in {file} is not a valid regular expression",
        ),
    ],
)
def test_a_malformed_hooks_section_is_a_settings_error_naming_the_key(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str], hooks: Any, message: str
) -> None:
    path = write_settings(tmp_path, {"base_url": fake.base_url, "hooks": hooks})
    code, _, err = chat(capsys, tmp_path, "-p", "hi")
    assert code == 3
    assert message.format(file=path) in err and "hint:" in err


def test_unknown_events_and_hook_types_warn_and_are_skipped(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    hooks = {
        "TeammateIdle": [{"hooks": [{"type": "command", "command": "touch idle"}]}],
        "Stop": [{"hooks": [{"type": "prompt", "prompt": "are you done?"}]}],
    }
    write_settings(tmp_path, {"base_url": fake.base_url, "hooks": hooks})
    fake.queue(fo.text("hi"))
    code, out, err = chat(capsys, tmp_path, "-p", "hi")
    assert code == 0 and out == "hi\n"
    assert "hook event 'hooks.TeammateIdle'" in err and "not one codebot fires" in err
    assert "hooks.Stop[0].hooks[0]' in" in err and 'has type "prompt"' in err
    assert not (tmp_path / "idle").exists()


def test_session_end_and_the_subagent_events_fire_with_claude_codes_fields(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    def record(name: str) -> list[dict[str, Any]]:
        return [
            {
                "hooks": [
                    {"type": "command", "command": f"cat >> {name}.jsonl; echo >> {name}.jsonl"}
                ]
            }
        ]

    hooks = {
        "SessionEnd": record("end"),
        "SubagentStart": record("substart"),
        "SubagentStop": record("substop"),
        "Stop": record("stop"),
    }
    write_settings(tmp_path, {"base_url": fake.base_url, "hooks": hooks})
    fake.queue(
        fo.tool_calls(("task", {"description": "look", "prompt": "look around"})),
        fo.text("nothing here"),  # the subagent's answer
        fo.text("all done"),
    )
    code, out, err = chat(capsys, tmp_path, "-p", "delegate", "--yes")
    assert code == 0 and out == "all done\n", err

    def events(name: str) -> list[dict[str, Any]]:
        text = (tmp_path / f"{name}.jsonl").read_text()
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    (end,) = events("end")
    assert end["hook_event_name"] == "SessionEnd" and end["reason"] == "other"
    (start,) = events("substart")
    (stop,) = events("substop")
    assert start["agent_type"] == stop["agent_type"] == "general-purpose"
    assert start["agent_id"] == stop["agent_id"] and stop["agent_transcript_path"]
    assert stop["last_assistant_message"] == "nothing here"
    (main,) = events("stop")  # Stop fires for the main conversation only
    assert main["last_assistant_message"] == "all done" and "agent_id" not in main


# -- the REPL ------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_hooks_in_the_repl_and_the_hooks_listing(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    home = project.parent / "home"
    home.mkdir(exist_ok=True)
    start = {"SessionStart": [{"hooks": [{"type": "command", "command": "echo on branch main"}]}]}
    (home / "settings.json").write_text(json.dumps({"hooks": start}))
    fake.queue(fo.tool_calls(("write", {"path": "out.txt", "content": "x"})), fo.text("Sorry."))

    async def steps(repl: Repl, inp: Any) -> None:
        await until(lambda: repl.runtime is not None)
        for keys in ["write it\r", "/hooks\r", "\x04"]:
            await anyio.sleep(0.4)
            inp.send_text(keys)
            if keys == "write it\r":
                await until(lambda: len(fake.bodies) == 2)

    code, _ = await drive(project, steps, seconds=30)
    out, err = capsys.readouterr()
    assert code == 0
    assert not (project / "out.txt").exists()
    assert "Sorry." in out and "no writes today" in err
    assert "on branch main" in fake.bodies[0]["messages"][-1]["content"]  # SessionStart
    settings = project / ".codebot" / "settings.json"
    assert "PreToolUse:" in out and "SessionStart:" in out
    assert f"{settings} (hooks.PreToolUse[0].hooks[0])" in out
    assert f"{home / 'settings.json'} (hooks.SessionStart[0].hooks[0])" in out
    assert "latest runs:" in out and "exit 2" in out


# -- trust ----------------------------------------------------------------------------------------


@pytest.fixture
def untrusted(project: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The project's hooks, with the model in your own settings (the project needs trust)."""
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")
    home = project.parent / "home"
    home.mkdir(exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"base_url": fake.base_url}))
    write_settings(project, {"hooks": guard_hooks()})
    return project


def test_an_untrusted_projects_hooks_never_run(
    untrusted: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(fo.tool_calls(("write", {"path": "out.txt", "content": "x"})), fo.text("done"))
    code, _, err = chat(capsys, untrusted, "-p", "write it", "--yes")
    assert code == 0, err
    assert (untrusted / "out.txt").read_text() == "x"  # the guard did not run
    assert not (untrusted / "guard.json").exists()
    assert "skipping project settings (hooks)" in err and "codebot trust" in err


def test_editing_a_hook_script_after_trust_needs_trust_again(
    untrusted: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["--cwd", str(untrusted), "trust", "--yes"]) == 0
    review = capsys.readouterr().out
    assert "hook PreToolUse [write]: runs ./guard.sh" in review and "Trusted" in review
    fake.queue(fo.tool_calls(("write", {"path": "out.txt", "content": "x"})), fo.text("done"))
    assert chat(capsys, untrusted, "-p", "write it", "--yes")[0] == 0
    assert not (untrusted / "out.txt").exists()  # trusted: the guard ran
    (untrusted / "guard.json").unlink()

    (untrusted / "guard.sh").write_text(GUARD.replace("no writes today", "edited"))
    fake.queue(fo.tool_calls(("write", {"path": "out.txt", "content": "x"})), fo.text("done"))
    code, _, err = chat(capsys, untrusted, "-p", "write it", "--yes")
    assert code == 0
    assert "the project is changed since it was trusted" in err
    assert not (untrusted / "guard.json").exists()  # the edited script did not run


@pytest.mark.anyio
async def test_the_repl_asks_again_after_a_hook_script_changed(
    untrusted: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    from codebot_mcp.core.config import trust
    from codebot_mcp.core.config.settings import load_unfiltered as load

    trust.record(trust.check(load(untrusted)))
    (untrusted / "guard.sh").write_text(GUARD + "# edited\n")

    async def steps(repl: Repl, inp: Any) -> None:
        await anyio.sleep(0.5)
        inp.send_text("n\r")
        await until(lambda: repl.runtime is not None)
        await anyio.sleep(0.3)
        inp.send_text("/hooks\r")
        await anyio.sleep(0.4)
        inp.send_text("\x04")

    code, _ = await drive(untrusted, steps, seconds=30)
    out, err = capsys.readouterr()
    assert code == 0
    assert "(changed since it was trusted) would start or set:" in err
    assert "hook PreToolUse [write]: runs ./guard.sh" in err and "file guard.sh" in err
    assert "not run: 1 project hook(s)" in out


@pytest.mark.anyio
async def test_reload_picks_up_new_hooks_and_commands(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(tmp_path, {"base_url": fake.base_url})
    fake.queue(fo.tool_calls(("write", {"path": "out.txt", "content": "x"})), fo.text("ok"))

    async def steps(repl: Repl, inp: Any) -> None:
        await until(lambda: repl.runtime is not None)
        (tmp_path / "guard.sh").write_text(GUARD)
        (tmp_path / "guard.sh").chmod(0o755)
        write_settings(tmp_path, {"base_url": fake.base_url, "hooks": guard_hooks()})
        commands = tmp_path / ".codebot" / "commands"
        commands.mkdir()
        (commands / "save.md").write_text("Save $1 to out.txt")
        await anyio.sleep(0.3)
        inp.send_text("/mcp reload\r")
        await anyio.sleep(0.5)
        inp.send_text("/save x\r")
        await until(lambda: len(fake.bodies) == 2)
        await anyio.sleep(0.3)
        inp.send_text("\x04")

    code, _ = await drive(tmp_path, steps, seconds=30)
    assert code == 0
    assert fake.bodies[0]["messages"][-1]["content"] == "Save x to out.txt"
    assert not (tmp_path / "out.txt").exists() and (tmp_path / "guard.json").exists()
    assert "no writes today" in capsys.readouterr().err


@pytest.mark.parametrize("confined", [None, "workspace-write"])
def test_hooks_run_as_the_user_unless_their_entry_asks_for_the_sandbox(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str], confined: str | None
) -> None:
    """Hooks run as the user whatever the chat's sandbox (issue 31: as Claude Code and Gemini
    CLI do; logging and formatter hooks write outside the project); an entry with
    ``"sandbox": "workspace-write"`` runs confined, and its failure says "sandbox"."""
    from codebot_mcp.core.sandbox.confinement import Sandbox

    root = tmp_path / "repo"
    root.mkdir()
    (root / ".git").mkdir()  # issue 29: what git reads stays read-only for hooks too
    outside = tmp_path / "outside.txt"
    command = f"echo in > inside.txt; echo x > .git/commondir; echo out > {outside} || exit 1"
    hook: dict[str, Any] = {"type": "command", "command": command}
    if confined:
        hook["sandbox"] = confined
    hooks = {"UserPromptSubmit": [{"hooks": [hook]}]}
    write_settings(root, {"base_url": fake.base_url, "hooks": hooks})
    if not Sandbox("workspace-write", workspace=root).active:
        pytest.skip("this machine cannot sandbox")
    fake.queue(fo.text("ok"))
    code, _, err = chat(capsys, root, "-p", "hi", "--sandbox", "workspace-write")
    assert code == 0, err
    assert (root / "inside.txt").read_text() == "in\n"
    assert outside.exists() is (confined is None)
    # issue 29: what git reads stays read-only for a confined hook too
    assert (root / ".git" / "commondir").exists() is (confined is None)
    if confined:
        assert "UserPromptSubmit hook" in err and "failed with exit code 1" in err
        assert "the sandbox refused it" in err and '"sandbox": "workspace-write"' in err
