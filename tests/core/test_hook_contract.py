"""Claude Code's hook contract (issue 31): the names and fields its scripts read and write.

Real hook scripts in Python and shell that branch on Claude Code's tool names and fields, run
by the real runner inside the real agent loop against the loopback model server.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from codebot_mcp.core.agent.loop import Agent, AgentEvents
from codebot_mcp.core.agent.permissions import PermissionGate
from codebot_mcp.core.agent.session import Session
from codebot_mcp.core.config import hookcontract
from codebot_mcp.core.config.hooks import parse_hooks
from codebot_mcp.core.hooks.loophooks import LoopHooks
from codebot_mcp.core.hooks.runner import Hooks
from codebot_mcp.core.model.client import ChatModel
from codebot_mcp.core.tools.builtin import builtin_tools
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI

pytestmark = pytest.mark.anyio

# A guard in the style of Anthropic's security hooks: it knows Claude Code's names only.
GUARD_PY = """\
import json, sys
event = json.load(sys.stdin)
name, given = event["tool_name"], event["tool_input"]
with open("seen.jsonl", "a") as log:
    log.write(json.dumps({"name": name, "input": given}) + "\\n")
if name == "Bash" and "rm -rf" in given.get("command", ""):
    print("destructive command", file=sys.stderr)
    sys.exit(2)
if name in ("Edit", "Write") and given.get("file_path", "").endswith(".env"):
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "deny", "permissionDecisionReason": "secrets file"}}))
"""

GUARD_SH = """\
#!/bin/sh
input=$(cat)
case "$input" in
  *'"tool_name": "Read"'*'"file_path": "'*'/secret.txt"'*) echo "not that one" >&2; exit 2;;
esac
exit 0
"""


class Notes(AgentEvents):
    def __init__(self) -> None:
        self.notes: list[str] = []

    def notice(self, text: str) -> None:
        self.notes.append(text)


def hooks_for(cwd: Path, section: dict[str, Any]) -> Hooks:
    commands, warnings = parse_hooks(cwd / "settings.json", {"hooks": section})
    assert warnings == []
    return Hooks(
        commands,
        cwd=cwd,
        project_dir=cwd,
        session_id="s-1",
        transcript_path=str(cwd / "s-1.jsonl"),
    )


def group(command: str, matcher: str = "", **fields: Any) -> list[dict[str, Any]]:
    return [{"matcher": matcher, "hooks": [{"type": "command", "command": command, **fields}]}]


def agent_with(model: ChatModel, cwd: Path, hooks: Hooks) -> Agent:
    gate = PermissionGate(assume_yes=True)
    return Agent(Session(builtin_tools(cwd), cwd=cwd), model, gate, hooks=LoopHooks(hooks))


def tool_texts(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


async def test_a_python_guard_written_for_claude_code_blocks_and_denies(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    (tmp_path / "guard.py").write_text(GUARD_PY)
    hooks = hooks_for(
        tmp_path, {"PreToolUse": group(f"{sys.executable} guard.py", "Bash|Edit|Write")}
    )
    fake.queue(
        fo.tool_calls(
            ("bash", {"command": "rm -rf build", "timeout": 5}),
            ("write", {"path": "app.env", "content": "KEY=1"}),
            ("write", {"path": "notes.txt", "content": "fine"}),
        ),
        fo.text("done"),
    )
    await agent_with(model, tmp_path, hooks).run("clean up")
    bash, env, notes = tool_texts(fake.bodies[1])
    assert "destructive command" in bash
    assert "secrets file" in env and not (tmp_path / "app.env").exists()
    assert (tmp_path / "notes.txt").read_text() == "fine"
    seen = [json.loads(line) for line in (tmp_path / "seen.jsonl").read_text().splitlines()]
    assert [s["name"] for s in seen] == ["Bash", "Write", "Write"]
    assert seen[0]["input"] == {"command": "rm -rf build", "timeout": 5000}  # ms, as Claude's
    assert seen[1]["input"] == {"file_path": str(tmp_path / "app.env"), "content": "KEY=1"}
    assert notes.startswith("Created") and "secrets" not in notes


async def test_a_shell_guard_matches_read_by_claude_codes_name(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    (tmp_path / "guard.sh").write_text(GUARD_SH)
    (tmp_path / "guard.sh").chmod(0o755)
    (tmp_path / "secret.txt").write_text("s3cret")
    (tmp_path / "open.txt").write_text("hello")
    hooks = hooks_for(tmp_path, {"PreToolUse": group("./guard.sh", "Read")})
    fake.queue(
        fo.tool_calls(("read", {"path": "secret.txt"}), ("read", {"path": "open.txt"})),
        fo.text("ok"),
    )
    await agent_with(model, tmp_path, hooks).run("read them")
    secret, opened = tool_texts(fake.bodies[1])
    assert "not that one" in secret and "s3cret" not in secret
    assert "hello" in opened


@pytest.mark.parametrize(
    ("command", "fires"),
    [
        ("git commit -m 'x'", True),
        ("git commit", True),
        ("GIT_AUTHOR_NAME=a git commit -m x", True),
        ("git add . && git commit -m x", True),
        ("echo $(git commit -m x)", True),
        ("git status", False),
        ("ls -la", False),
    ],
)
async def test_if_runs_the_hook_only_for_calls_its_rule_covers(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path, command: str, fires: bool
) -> None:
    hooks = hooks_for(
        tmp_path,
        {"PreToolUse": group("touch fired; exit 2", "Bash", **{"if": "Bash(git commit:*)"})},
    )
    fake.queue(fo.tool_calls(("bash", {"command": command})), fo.text("ok"))
    await agent_with(model, tmp_path, hooks).run("go")
    assert (tmp_path / "fired").exists() is fires
    (text,) = tool_texts(fake.bodies[1])
    assert ("blocked by a PreToolUse hook" in text) is fires


def test_if_rules_for_files_and_mcp_tools(tmp_path: Path) -> None:
    match = hookcontract.condition_matches
    assert match("Edit(*.ts)", "edit", {"path": "src/app.ts"}, tmp_path)
    assert not match("Edit(*.ts)", "edit", {"path": "src/app.py"}, tmp_path)
    assert not match("Edit(*.ts)", "write", {"path": "src/app.ts"}, tmp_path)
    assert match("Write(src/**)", "write", {"path": "src/a/b.py"}, tmp_path)
    assert not match("Write(src/**)", "write", {"path": "docs/a.md"}, tmp_path)
    assert match("mcp__github__*", "mcp__github__create_issue", {}, tmp_path)
    assert not match("mcp__github__*", "mcp__gitlab__create_issue", {}, tmp_path)
    assert match("Task", "task", {"agent": "x"}, tmp_path)  # the old name of Agent
    assert match("Bash(git push:*)", "bash", {"command": "git push 'unterminated"}, tmp_path)


async def test_updated_input_in_claude_codes_fields_changes_the_call(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    rewrite = (
        "import json, sys\n"
        "e = json.load(sys.stdin)\n"
        "i = dict(e['tool_input'])\n"
        "if e['tool_name'] == 'Bash': i['command'] = 'echo rewritten'\n"
        "if e['tool_name'] == 'Write': i['content'] = i['content'].upper()\n"
        "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PreToolUse',"
        " 'updatedInput': i}}))\n"
    )
    (tmp_path / "rewrite.py").write_text(rewrite)
    hooks = hooks_for(tmp_path, {"PreToolUse": group(f"{sys.executable} rewrite.py")})
    fake.queue(
        fo.tool_calls(
            ("bash", {"command": "echo original"}),
            ("write", {"path": "a.txt", "content": "quiet"}),
        ),
        fo.text("ok"),
    )
    await agent_with(model, tmp_path, hooks).run("go")
    bash, _ = tool_texts(fake.bodies[1])
    assert bash.strip() == "rewritten"
    assert (tmp_path / "a.txt").read_text() == "QUIET"


async def test_post_tool_use_failure_gets_the_error(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    hooks = hooks_for(
        tmp_path,
        {
            "PostToolUseFailure": group("cat > failure.json", "Bash"),
            "PostToolUse": group("touch succeeded", "Bash"),
        },
    )
    fake.queue(fo.tool_calls(("bash", {"command": "echo oops; exit 3"})), fo.text("ok"))
    await agent_with(model, tmp_path, hooks).run("go")
    given = json.loads((tmp_path / "failure.json").read_text())
    assert given["hook_event_name"] == "PostToolUseFailure" and given["tool_name"] == "Bash"
    assert "oops" in given["error"] and given["is_interrupt"] is False
    assert isinstance(given["duration_ms"], int)
    assert not (tmp_path / "succeeded").exists()


async def test_an_async_hook_runs_beside_the_agent_and_speaks_at_the_next_prompt(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    answer = json.dumps(
        {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "lint: ok"}}
    )
    command = f"sleep 0.5; echo '{answer}'"
    commands, _ = parse_hooks(
        tmp_path / "settings.json",
        {"hooks": {"PostToolUse": group(command, "Bash", **{"async": True})}},
    )
    fake.queue(fo.tool_calls(("bash", {"command": "echo hi"})), fo.text("one"), fo.text("two"))
    async with anyio.create_task_group() as background:
        hooks = Hooks(commands, cwd=tmp_path, project_dir=tmp_path, background=lambda: background)
        agent = agent_with(model, tmp_path, hooks)
        began = anyio.current_time()
        await agent.run("first")
        assert anyio.current_time() - began < 0.5 + 5  # the turn did not wait for it
        with anyio.fail_after(10):
            while not hooks.later.context:  # noqa: ASYNC110 (the hook's own process sets it)
                await anyio.sleep(0.05)
        await agent.run("second")
    (bash,) = tool_texts(fake.bodies[1])
    assert "lint: ok" not in bash  # an async hook's context never joins the result
    last = fake.bodies[2]["messages"][-1]
    assert last["role"] == "user" and "lint: ok" in last["content"]


async def test_unknown_answer_fields_and_entry_fields_are_named_once(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    _, warnings = parse_hooks(
        tmp_path / "settings.json",
        {"hooks": {"PreToolUse": group("true", "Bash", asyncRewake=True, statusMessage="x")}},
    )
    assert [w.key for w in warnings] == [
        "hooks.PreToolUse[0].hooks[0].asyncRewake",
        "hooks.PreToolUse[0].hooks[0].statusMessage",
    ]
    assert "not supported" in warnings[0].message
    answer = json.dumps({"suppressOutput": True, "frobnicate": 1})
    hooks = hooks_for(tmp_path, {"PreToolUse": group(f"echo '{answer}'", "Bash")})
    fake.queue(
        fo.tool_calls(("bash", {"command": "echo a"})),
        fo.tool_calls(("bash", {"command": "echo b"})),
        fo.text("ok"),
    )
    events = Notes()
    await agent_with(model, tmp_path, hooks).run("go", events)
    about = [n for n in events.notes if "frobnicate" in n]
    assert len(about) == 1 and "not support" in about[0]
    assert not [n for n in events.notes if "answered 'suppressOutput'" in n]


def test_names_and_fields_translate_both_ways(tmp_path: Path) -> None:
    cases = {
        "bash": {"command": "ls", "timeout": 7, "sandbox": False},
        "read": {"path": "a.py", "offset": 2, "limit": 3},
        "edit": {"path": "a.py", "old_string": "x", "new_string": "y", "replace_all": True},
        "write": {"path": "a.py", "content": "z"},
        "grep": {"pattern": "p", "ignore_case": True, "context": 2, "glob": "*.py"},
        "task": {"description": "d", "prompt": "p", "agent": "reviewer"},
    }
    for tool, arguments in cases.items():
        claude = hookcontract.claude_input(tool, arguments, tmp_path)
        back = hookcontract.codebot_input(tool, claude)
        if tool in ("read", "edit", "write"):
            assert claude["file_path"] == str(tmp_path / "a.py")
            back["path"] = "a.py"
        assert back == arguments, tool
    assert hookcontract.claude_input("bash", cases["bash"], tmp_path) == {
        "command": "ls",
        "timeout": 7000,
        "dangerouslyDisableSandbox": True,
    }
    assert hookcontract.claude_name("task") == "Agent"
    assert hookcontract.claude_name("mcp__github__x") == "mcp__github__x"
