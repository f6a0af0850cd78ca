"""Claude Code's files read where Claude Code reads them (issue 31 item 1), through `codebot
chat`: `.claude/settings.json` hooks in Python and shell that branch on Claude Code's names,
a `.claude/settings.local.json` deny that holds, `~/.claude` agents, commands, skills and
CLAUDE.md the model sees, the origins the REPL shows, the off switch, trust. Real hook
processes, the loopback model server; every fixture is written here, in Claude Code's formats.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from codebot_mcp.cli.app import run
from codebot_mcp.cli.repl.repl_loop import Repl
from codebot_mcp.core.sandbox.confinement import support
from tests.cli.repl_driver import drive, until
from tests.cli.test_subagents import Router, task
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import write_settings

sandboxed = pytest.mark.skipif(
    not sys.platform.startswith("linux") or bool(support().missing(network=False)),
    reason="the sandbox is unavailable here",
)
GUARD_PY = """\
import json
import sys

data = json.load(sys.stdin)
if data["tool_name"] == "Bash" and "rm -rf" in data["tool_input"]["command"]:
    print("rm -rf is not allowed in this repository", file=sys.stderr)
    sys.exit(2)
"""
GUARD_SH = """\
#!/bin/sh
input=$(cat)
echo "$input" > "$CLAUDE_PROJECT_DIR/last-hook-input.json"
if echo "$input" | grep -q '"tool_name": *"Bash"' && echo "$input" | grep -q 'git push'; then
  echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse",'\\
' "permissionDecision": "deny", "permissionDecisionReason": "no pushes from here"}}'
fi
exit 0
"""
SETTINGS = {
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {
                        "type": "command",
                        "command": 'python3 "$CLAUDE_PROJECT_DIR/.claude/hooks/guard.py"',
                    },
                    {"type": "command", "command": '"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh'},
                ],
            }
        ]
    },
    "permissions": {"allow": ["Bash(echo:*)"], "defaultMode": "acceptEdits"},
    "env": {"DEBUG": "1"},
}
LOCAL = {"permissions": {"deny": ["Read(./secrets/**)"]}}
AGENT = """\
---
name: release-checker
description: Use this agent to check a release. Examples: <example>user: "check v2"</example>
tools: Read, Grep
model: sonnet
---
You check releases against the changelog.
"""
COMMAND = """\
---
description: Greet someone warmly
argument-hint: NAME
---
Say a warm hello to $ARGUMENTS.
"""
SKILL = """\
---
name: changelog-writer
description: Writes changelog entries in the team's style.
---
Write entries as bullet points.
"""


@pytest.fixture
def router() -> Router:
    return Router([], lambda prompt: fo.text(f"checked {prompt}"))


@pytest.fixture
def model(router: Router) -> Iterator[FakeOpenAI]:
    with FakeOpenAI(respond=router) as server:
        yield server


@pytest.fixture
def claude_home() -> Path:
    """``~/.claude`` (``CLAUDE_CONFIG_DIR``, set by tests/conftest.py to a scratch folder)."""
    home = Path(os.environ["CLAUDE_CONFIG_DIR"])
    for kind, name, text in (
        ("agents", "release-checker.md", AGENT),
        ("commands", "greet.md", COMMAND),
        ("skills/changelog-writer", "SKILL.md", SKILL),
    ):
        (home / kind).mkdir(parents=True, exist_ok=True)
        (home / kind / name).write_text(text)
    (home / "CLAUDE.md").write_text("Sign every answer with -- your assistant.\n")
    return home


@pytest.fixture
def project(tmp_path: Path, model: FakeOpenAI, claude_home: Path) -> Path:
    """A repository with Claude Code's project settings; the model is in your own settings."""
    root = tmp_path / "repo"
    hooks = root / ".claude" / "hooks"
    hooks.mkdir(parents=True)
    (root / ".git").mkdir()
    (hooks / "guard.py").write_text(GUARD_PY)
    (hooks / "guard.sh").write_text(GUARD_SH)
    (hooks / "guard.sh").chmod(0o755)
    (root / ".claude" / "settings.json").write_text(json.dumps(SETTINGS))
    (root / ".claude" / "settings.local.json").write_text(json.dumps(LOCAL))
    (root / "secrets").mkdir()
    (root / "secrets" / "key.txt").write_text("hunter2\n")
    (root / "README.md").write_text("the readme\n")
    (root / "build").mkdir()
    home = Path(os.environ["CODEBOT_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"base_url": model.base_url}))
    return root


def chat(capsys: pytest.CaptureFixture[str], cwd: Path, *argv: str) -> tuple[int, str, str]:
    code = run(["--cwd", str(cwd), "chat", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def bash(command: str) -> tuple[str, dict[str, Any]]:
    return ("bash", {"command": command})


def test_project_hooks_in_python_and_shell_block_by_claude_codes_names(
    project: Path, router: Router, capsys: pytest.CaptureFixture[str]
) -> None:
    router.main = [
        fo.tool_calls(bash("rm -rf build"), bash("git push origin main"), bash("echo fine")),
        fo.text("done"),
    ]
    code, out, err = chat(capsys, project, "-p", "clean up", "--json", "--sandbox", "off")
    assert code == 0, err
    calls = json.loads(out)["tool_calls"]
    assert calls[0]["denied"] and "rm -rf is not allowed in this repository" in calls[0]["result"]
    assert (project / "build").is_dir()  # the Python hook blocked it
    assert calls[1]["denied"] and "no pushes from here" in calls[1]["result"]
    assert not calls[2]["denied"] and "fine" in calls[2]["result"]  # Bash(echo:*) allows it
    given = json.loads((project / "last-hook-input.json").read_text())
    assert given["tool_name"] == "Bash" and given["tool_input"]["command"] == "echo fine"
    # the keys codebot does not use are named once, for the file that holds them
    assert err.count("not used by codebot") == 1
    assert ".claude/settings.json: not used by codebot: env, permissions.defaultMode" in err


def test_a_settings_local_deny_holds_even_with_yes(
    project: Path, router: Router, capsys: pytest.CaptureFixture[str]
) -> None:
    read = ("read", {"path": "secrets/key.txt"})
    whole = ("read", {"path": str(project / "secrets" / "key.txt")})  # from --cwd, not ours
    readme = ("read", {"path": "README.md"})
    router.main = [fo.tool_calls(read, whole, readme), fo.text("ok")]
    code, out, err = chat(capsys, project, "-p", "read", "--json", "--yes")
    assert code == 0, err
    secret, again, readme = json.loads(out)["tool_calls"]
    assert secret["denied"] and again["denied"] and "hunter2" not in out
    assert "Read(./secrets/**) in .claude/settings.local.json" in secret["result"]
    assert not readme["denied"] and "the readme" in readme["result"]


def test_the_user_library_and_memory_in_claude_home_reach_the_model(
    project: Path, model: FakeOpenAI, router: Router, capsys: pytest.CaptureFixture[str]
) -> None:
    router.main = [fo.tool_calls(task("check v2", "release-checker")), fo.text("hello Ada")]
    code, out, err = chat(capsys, project, "-p", "/greet Ada")
    assert code == 0 and out == "hello Ada\n", err
    first = model.bodies[0]
    system = first["messages"][0]["content"]
    assert "Sign every answer with -- your assistant." in system  # ~/.claude/CLAUDE.md
    assert "changelog-writer" in system and "team's style" in system  # ~/.claude/skills
    assert first["messages"][-1]["content"].startswith("Say a warm hello to Ada.")  # commands
    (sub,) = router.sub_bodies  # ~/.claude/agents
    assert "You check releases against the changelog." in sub["messages"][0]["content"]
    assert sorted(t["function"]["name"] for t in sub["tools"]) == ["grep", "read"]


def test_claude_files_false_turns_all_of_it_off(
    project: Path, model: FakeOpenAI, router: Router, capsys: pytest.CaptureFixture[str]
) -> None:
    home = Path(os.environ["CODEBOT_HOME"]) / "settings.json"
    home.write_text(json.dumps({"base_url": model.base_url, "claude_files": False}))
    router.main = [fo.tool_calls(bash("rm -rf build")), fo.text("done")]
    code, _, err = chat(capsys, project, "-p", "/greet Ada", "--yes", "--sandbox", "off")
    assert code == 0, err
    assert not (project / "build").exists()  # no hook ran
    assert not (project / "last-hook-input.json").exists()
    system = model.bodies[0]["messages"][0]["content"]
    assert "Sign every answer" not in system and "changelog-writer" not in system
    assert model.bodies[0]["messages"][-1]["content"] == "/greet Ada"  # no such command
    assert "not used by codebot" not in err


def test_an_untrusted_projects_claude_hooks_never_run_but_its_deny_holds(
    project: Path, router: Router, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")
    router.main = [
        fo.tool_calls(bash("rm -rf build"), ("read", {"path": "secrets/key.txt"})),
        fo.text("done"),
    ]
    code, out, err = chat(capsys, project, "-p", "go", "--json", "--yes", "--sandbox", "off")
    assert code == 0, err
    removed, secret = json.loads(out)["tool_calls"]
    assert not removed["denied"] and not (project / "build").exists()  # the guard did not run
    assert not (project / "last-hook-input.json").exists()
    assert secret["denied"]  # a deny rule needs no trust: it only makes codebot careful
    assert "hooks (.claude/settings.json)" in err and "codebot trust" in err


def test_codebots_own_allow_does_not_beat_a_claude_deny(
    project: Path, router: Router, model: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(project, {"permissions": {"allow": ["bash", "read"]}})
    local = {"permissions": {"deny": ["Bash(curl:*)"]}}
    (project / ".claude" / "settings.local.json").write_text(json.dumps(local))
    router.main = [fo.tool_calls(bash("echo a && curl example.invalid")), fo.text("ok")]
    code, out, err = chat(capsys, project, "-p", "go", "--json", "--sandbox", "off")
    assert code == 0, err
    (call,) = json.loads(out)["tool_calls"]
    assert call["denied"] and "Bash(curl:*) in .claude/settings.local.json" in call["result"]


@pytest.fixture
def named_home(
    project: Path, claude_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Path:
    """``~/.claude`` itself (HOME moved), so the REPL names it as users know it; a hook in
    ``~/.claude/settings.json`` and a project agent in ``.claude/agents``."""
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    (tmp_path / "user").mkdir()
    home = claude_home.rename(tmp_path / "user" / ".claude")
    user_hooks = {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}
    (home / "settings.json").write_text(json.dumps({"hooks": user_hooks}))
    agent = project / ".claude" / "agents"
    agent.mkdir()
    (agent / "local-helper.md").write_text("---\nname: local-helper\ndescription: Helps\n---\nHi")
    return home


@pytest.mark.anyio
async def test_the_repl_shows_where_each_item_came_from(
    project: Path, named_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async def steps(repl: Repl, inp: Any) -> None:
        await until(lambda: repl.runtime is not None)
        for line in ("/hooks", "/agents", "/skills", "/memory", "/help"):
            inp.send_text(line + "\r")
            await anyio.sleep(0.4)
        inp.send_text("\x04")

    code, _ = await drive(project, steps, seconds=30)
    out, _ = capsys.readouterr()
    assert code == 0
    lines = out.splitlines()

    def row(*words: str) -> str:
        found_rows = [line for line in lines if all(w in line for w in words)]
        assert len(found_rows) == 1, out
        (found,) = found_rows
        return found

    assert ".claude/settings.json (hooks.PreToolUse[0].hooks[1])" in row("guard.sh")
    assert "~/.claude/settings.json (hooks.Stop[0].hooks[0])" in row("true", "Stop[0]")
    assert "~/.claude/agents/release-checker.md" in row("release-checker", "read, grep")
    assert ".claude/agents/local-helper.md" in row("local-helper", "Helps")
    assert "user ~/.claude/skills/changelog-writer" in row("changelog-writer", "team's")
    assert "~/.claude/CLAUDE.md" in row("CLAUDE.md", "user")
    assert "(~/.claude/commands)" in row("/greet NAME", "Greet someone warmly")


def test_from_a_subfolder_claude_project_dir_is_the_root_the_files_are_in(
    project: Path, router: Router, capsys: pytest.CaptureFixture[str]
) -> None:
    sub = project / "src" / "app"
    sub.mkdir(parents=True)
    router.main = [fo.tool_calls(bash("git push")), fo.text("done")]
    code, out, err = chat(capsys, sub, "-p", "push", "--json", "--sandbox", "off")
    assert code == 0, err
    (call,) = json.loads(out)["tool_calls"]
    # "$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh found from src/app: the root's hook ran
    assert call["denied"] and "no pushes from here" in call["result"]
    assert (project / "last-hook-input.json").exists()


def test_trust_and_doctor_name_claude_codes_files(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")
    assert run(["--cwd", str(project), "trust", "--yes"]) == 0
    review = capsys.readouterr().out
    guard = 'python3 "$CLAUDE_PROJECT_DIR/.claude/hooks/guard.py"'
    assert f"hook PreToolUse [Bash]: runs {guard} (.claude/settings.json)" in review
    assert "setting permissions.allow (.claude/settings.json): Bash(echo:*)" in review
    for script in ("guard.py", "guard.sh"):  # the scripts the hooks name are trusted with them
        assert f"file .claude/hooks/{script}" in review

    run(["--cwd", str(project), "mcp", "doctor"])
    text = capsys.readouterr().out
    shown = f"{os.environ['CLAUDE_CONFIG_DIR']}/settings.json"
    assert "also read (Claude Code's settings): .claude/settings.json, " in text
    assert ".claude/settings.local.json" in text and shown not in text  # no user file here
    run(["--cwd", str(project), "mcp", "doctor", "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert data["settings"]["claude_files"] == [
        str(project / ".claude" / "settings.json"),
        str(project / ".claude" / "settings.local.json"),
    ]


def test_a_read_deny_hides_the_path_from_a_confined_bash_too(
    project: Path, router: Router, capsys: pytest.CaptureFixture[str]
) -> None:
    router.main = [fo.tool_calls(bash("cat secrets/key.txt; cat README.md")), fo.text("ok")]
    code, out, err = chat(capsys, project, "-p", "read", "--json", "--sandbox", "workspace-write")
    assert code == 0, err
    (call,) = json.loads(out)["tool_calls"]
    assert "hunter2" not in call["result"] and "the readme" in call["result"]


PLANT = """mkdir -p .claude && cat > .claude/settings.local.json <<'JSON'
{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "touch {marker}"}]}]}}
JSON
"""


@sandboxed
def test_claude_hooks_planted_in_a_trusted_project_never_run_unasked(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    write_settings(root, {"tool_search": False})
    home = Path(os.environ["CODEBOT_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"base_url": fake.base_url}))
    assert run(["--cwd", str(root), "trust", "--yes"]) == 0
    capsys.readouterr()
    marker = tmp_path / "ran-as-you"  # outside the project: only an unconfined hook writes it
    plant = PLANT.replace("{marker}", str(marker))
    # a confined bash cannot create Claude Code's settings: hooks there run as you
    fake.queue(fo.tool_calls(("bash", {"command": plant})), fo.text("done"))
    code, out, err = chat(capsys, root, "-p", "go", "--json")
    assert code == 0, err
    (call,) = json.loads(out)["tool_calls"]
    assert call["sandbox"] == "workspace-write" and ".claude" in call["result"]
    assert not (root / ".claude" / "settings.local.json").exists()
    # planted another way (a pull, a tool you approved): the next run asks trust again
    hooks = {"PreToolUse": [{"hooks": [{"type": "command", "command": f"touch {marker}"}]}]}
    (root / ".claude").mkdir(exist_ok=True)
    (root / ".claude" / "settings.local.json").write_text(json.dumps({"hooks": hooks}))
    fake.queue(fo.tool_calls(("bash", {"command": "echo hi"})), fo.text("done"))
    code, _, err = chat(capsys, root, "-p", "go", "--json")
    assert code == 0, err
    assert "hooks (.claude/settings.local.json)" in err and "changed since it was trusted" in err
    assert not marker.exists()
