"""Hooks against real hook scripts: the agent loop, the gate, the fake model server.

Every hook here is a real executable (shell or Python) run by the real runner; the model side
is the loopback server. Nothing is patched.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from codebot_mcp.core.agent.loop import Agent, AgentEvents
from codebot_mcp.core.agent.permissions import Answer, ApprovalRequest, PermissionGate
from codebot_mcp.core.agent.session import Session
from codebot_mcp.core.config.hooks import parse_hooks
from codebot_mcp.core.config.settings import PermissionRules
from codebot_mcp.core.hooks import points as hook_points
from codebot_mcp.core.hooks.hooksection import matches
from codebot_mcp.core.hooks.loophooks import LoopHooks
from codebot_mcp.core.hooks.runner import HookBlockedError, Hooks
from codebot_mcp.core.model.client import ChatModel
from codebot_mcp.core.tools.builtin import builtin_tools
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.procs import alive

pytestmark = pytest.mark.anyio


class Notes(AgentEvents):
    def __init__(self) -> None:
        self.notes: list[str] = []
        self.denied: list[str] = []

    def notice(self, text: str) -> None:
        self.notes.append(text)

    def tool_denied(self, call: Any, decision: Any) -> None:
        self.denied.append(decision.reason)


def script(directory: Path, name: str, body: str) -> Path:
    """An executable hook script in ``directory``."""
    path = directory / name
    path.write_text(body)
    path.chmod(0o755)
    return path


def hooks_for(cwd: Path, section: dict[str, Any]) -> Hooks:
    commands, warnings = parse_hooks(cwd / "settings.json", {"hooks": section})
    assert warnings == []
    hooks = Hooks(commands, cwd=cwd, project_dir=cwd)
    hooks.session_id, hooks.transcript_path = "s-1", str(cwd / "s-1.jsonl")
    return hooks


def on(event: str, command: str, matcher: str = "", timeout: float = 30) -> dict[str, Any]:
    group = {
        "matcher": matcher,
        "hooks": [{"type": "command", "command": command, "timeout": timeout}],
    }
    return {event: [group]}


def agent_with(
    model: ChatModel, cwd: Path, hooks: Hooks, gate: PermissionGate | None = None
) -> Agent:
    agent = Agent(Session(builtin_tools(cwd), cwd=cwd), model, gate or PermissionGate())
    agent.hooks = LoopHooks(hooks)
    return agent


def tool_texts(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


# -- PreToolUse: exit codes ---------------------------------------------------------------------


async def test_exit_2_blocks_the_call_and_its_stderr_reaches_the_model(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    script(
        tmp_path, "guard.sh", '#!/bin/sh\ncat > input.json\necho "writes are frozen" >&2\nexit 2\n'
    )
    hooks = hooks_for(tmp_path, on("PreToolUse", "./guard.sh", "write|edit"))
    fake.queue(fo.tool_calls(("write", {"path": "made.txt", "content": "x"})), fo.text("ok"))
    events = Notes()
    result = await agent_with(model, tmp_path, hooks, PermissionGate(assume_yes=True)).run(
        "make it", events
    )
    assert result.text == "ok"
    assert not (tmp_path / "made.txt").exists()
    (text,) = tool_texts(fake.bodies[1])
    assert "writes are frozen" in text and "PreToolUse hook" in text
    assert events.denied and "writes are frozen" in events.denied[0]
    given = json.loads((tmp_path / "input.json").read_text())
    assert given["hook_event_name"] == "PreToolUse" and given["tool_name"] == "Write"
    assert given["session_id"] == "s-1" and given["transcript_path"].endswith("s-1.jsonl")
    assert given["cwd"] == str(tmp_path) and given["tool_use_id"] == "call_1"
    assert given["tool_input"]["content"] == "x"
    assert given["tool_input"]["file_path"] == str(tmp_path / "made.txt")


async def test_a_matcher_that_does_not_match_runs_nothing(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    script(tmp_path, "guard.sh", "#!/bin/sh\ntouch ran\nexit 2\n")
    hooks = hooks_for(tmp_path, on("PreToolUse", "./guard.sh", "bash|mcp__github__.*"))
    fake.queue(fo.tool_calls(("write", {"path": "made.txt", "content": "x"})), fo.text("ok"))
    await agent_with(model, tmp_path, hooks, PermissionGate(assume_yes=True)).run("go")
    assert (tmp_path / "made.txt").exists() and not (tmp_path / "ran").exists()


async def test_other_exit_codes_warn_and_the_run_goes_on(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    script(tmp_path, "flaky.sh", '#!/bin/sh\necho "lint server down" >&2\nexit 1\n')
    hooks = hooks_for(tmp_path, on("PreToolUse", "./flaky.sh"))
    fake.queue(fo.tool_calls(("write", {"path": "made.txt", "content": "x"})), fo.text("ok"))
    events = Notes()
    agent = agent_with(model, tmp_path, hooks, PermissionGate(assume_yes=True))
    assert (await agent.run("go", events)).text == "ok"
    assert (tmp_path / "made.txt").read_text() == "x"
    (note,) = events.notes
    assert "exit code 1: lint server down" in note and "./flaky.sh" in note


async def test_a_hook_that_hangs_is_stopped_at_its_timeout(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    script(tmp_path, "slow.sh", "#!/bin/sh\necho $$ > slow.pid\nexec sleep 300\n")
    hooks = hooks_for(tmp_path, on("PreToolUse", "./slow.sh", timeout=1))
    fake.queue(fo.tool_calls(("read", {"path": "slow.sh"})), fo.text("ok"))
    events = Notes()
    began = time.monotonic()
    result = await agent_with(model, tmp_path, hooks).run("go", events)
    assert time.monotonic() - began < 10
    assert result.text == "ok" and "exec sleep" in tool_texts(fake.bodies[1])[0]
    assert any("timed out after 1s" in n for n in events.notes)
    assert not alive(int((tmp_path / "slow.pid").read_text()))


FORKER = """\
import os, sys, time
pid = os.fork()
if pid == 0:
    os.setsid()
    if os.fork():
        os._exit(0)
    with open("sleeper.pid", "w") as f:
        f.write(str(os.getpid()))
    time.sleep(300)
    os._exit(0)
os.waitpid(pid, 0)
while not os.path.exists("sleeper.pid"):
    time.sleep(0.01)
print("forked")
"""


async def test_a_hook_that_forks_a_long_sleeper_leaves_nothing_behind(tmp_path: Path) -> None:
    script(tmp_path, "forker.py", FORKER)
    hooks = hooks_for(tmp_path, on("SessionStart", f"{sys.executable} forker.py"))
    with anyio.fail_after(20):
        warnings = await hook_points.session_start(hooks, "startup")
    assert warnings == [] and hooks.pending == ["forked"]
    sleeper = int((tmp_path / "sleeper.pid").read_text())
    with anyio.fail_after(5):
        while alive(sleeper):  # noqa: ASYNC110 - SIGKILLed already; init reaps it
            await anyio.sleep(0.02)


# -- PreToolUse: JSON decisions ------------------------------------------------------------------


def decision(verdict: str, reason: str = "") -> str:
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": verdict,
            "permissionDecisionReason": reason,
        }
    }
    return f"#!/bin/sh\ncat >/dev/null\necho '{json.dumps(answer)}'\n"


class Approver:
    def __init__(self, answer: Answer = Answer.ONCE) -> None:
        self.asked: list[ApprovalRequest] = []
        self.answer = answer

    async def __call__(self, request: ApprovalRequest) -> Answer:
        self.asked.append(request)
        return self.answer


async def test_json_deny_denies_even_a_read(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    script(tmp_path, "deny.sh", decision("deny", "reading secrets is off"))
    hooks = hooks_for(tmp_path, on("PreToolUse", "./deny.sh", "Read"))  # Claude Code's name
    fake.queue(fo.tool_calls(("read", {"path": "deny.sh"})), fo.text("ok"))
    await agent_with(model, tmp_path, hooks).run("go")
    (text,) = tool_texts(fake.bodies[1])
    assert "Permission denied" in text and "reading secrets is off" in text


async def test_json_allow_skips_the_question_but_never_a_deny_or_ask_rule(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    script(tmp_path, "allow.sh", decision("allow", "writes to notes are fine"))
    hooks = hooks_for(tmp_path, on("PreToolUse", "./allow.sh", "write"))
    approver = Approver(Answer.NO)
    fake.queue(fo.tool_calls(("write", {"path": "a.txt", "content": "1"})), fo.text("ok"))
    await agent_with(model, tmp_path, hooks, PermissionGate(approver=approver)).run("go")
    assert (tmp_path / "a.txt").read_text() == "1" and approver.asked == []

    deny_rule = PermissionGate(PermissionRules(deny=("write",)), assume_yes=True)
    fake.queue(fo.tool_calls(("write", {"path": "b.txt", "content": "2"})), fo.text("ok"))
    await agent_with(model, tmp_path, hooks, deny_rule).run("go")
    assert not (tmp_path / "b.txt").exists()
    assert "denied by the settings rule 'write'" in tool_texts(fake.bodies[-1])[0]

    ask_rule = PermissionGate(PermissionRules(ask=("write",)), approver=approver)
    fake.queue(fo.tool_calls(("write", {"path": "c.txt", "content": "3"})), fo.text("ok"))
    await agent_with(model, tmp_path, hooks, ask_rule).run("go")
    assert not (tmp_path / "c.txt").exists() and len(approver.asked) == 1


async def test_json_ask_asks_about_a_read(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    script(tmp_path, "ask.sh", decision("ask", "this file is sensitive"))
    hooks = hooks_for(tmp_path, on("PreToolUse", "./ask.sh"))
    approver = Approver(Answer.ONCE)
    fake.queue(fo.tool_calls(("read", {"path": "ask.sh"})), fo.text("ok"))
    await agent_with(model, tmp_path, hooks, PermissionGate(approver=approver)).run("go")
    (request,) = approver.asked
    assert request.tool == "read" and "this file is sensitive" in request.reason
    assert "permissionDecision" in tool_texts(fake.bodies[1])[0]  # it ran: the script's text
    # Non-interactive (no approver, no --yes): an "ask" is a denial.
    fake.queue(fo.tool_calls(("read", {"path": "ask.sh"})), fo.text("ok"))
    await agent_with(model, tmp_path, hooks).run("go")
    assert "nobody can answer" in tool_texts(fake.bodies[-1])[0]


async def test_continue_false_stops_the_run(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    stop = json.dumps({"continue": False, "stopReason": "maintenance window"})
    script(tmp_path, "stop.sh", f"#!/bin/sh\necho '{stop}'\n")
    hooks = hooks_for(tmp_path, on("PreToolUse", "./stop.sh"))
    fake.queue(fo.tool_calls(("read", {"path": "stop.sh"})), fo.text("never"))
    agent = agent_with(model, tmp_path, hooks)
    with pytest.raises(HookBlockedError, match="maintenance window"):
        await agent.run("go")
    assert len(fake.bodies) == 1


# -- the other events ----------------------------------------------------------------------------


async def test_user_prompt_submit_adds_context_or_blocks_the_prompt(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    script(
        tmp_path,
        "prompt.py",
        "import json, sys\n"
        "data = json.load(sys.stdin)\n"
        "if 'password' in data['prompt']:\n"
        "    print('prompts must not hold passwords', file=sys.stderr); sys.exit(2)\n"
        "print('Team rule: tabs, not spaces.')\n",
    )
    hooks = hooks_for(tmp_path, on("UserPromptSubmit", f"{sys.executable} prompt.py"))
    agent = agent_with(model, tmp_path, hooks)
    fake.queue(fo.text("ok"))
    await agent.run("format the file")
    sent = fake.bodies[0]["messages"][-1]["content"]
    assert sent.startswith("format the file") and "Team rule: tabs, not spaces." in sent
    with pytest.raises(HookBlockedError, match="prompts must not hold passwords"):
        await agent.run("my password is hunter2")
    assert len(fake.bodies) == 1
    assert all("hunter2" not in str(m) for m in agent.session.history)


async def test_session_start_context_goes_with_the_first_prompt(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    script(tmp_path, "start.sh", '#!/bin/sh\necho "branch: feature-x"\n')
    hooks = hooks_for(tmp_path, on("SessionStart", "./start.sh", "startup"))
    assert await hook_points.session_start(hooks, "resume") == []
    assert hooks.pending == []  # the matcher names the source
    await hook_points.session_start(hooks, "startup")
    agent = agent_with(model, tmp_path, hooks)
    fake.queue(fo.text("ok"), fo.text("ok"))
    await agent.run("first")
    await agent.run("second")
    assert "branch: feature-x" in fake.bodies[0]["messages"][-1]["content"]
    assert fake.bodies[1]["messages"][-1]["content"] == "second"


async def test_a_stop_hook_sends_the_agent_back_once(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    script(
        tmp_path,
        "stop.py",
        "import json, sys\n"
        "if not json.load(sys.stdin)['stop_hook_active']:\n"
        "    print(json.dumps({'decision': 'block', 'reason': 'run the tests too'}))\n",
    )
    hooks = hooks_for(tmp_path, on("Stop", f"{sys.executable} stop.py"))
    fake.queue(fo.text("done, I think"), fo.text("tests pass"))
    result = await agent_with(model, tmp_path, hooks).run("fix it")
    assert result.text == "tests pass" and len(fake.bodies) == 2
    last = fake.bodies[1]["messages"][-1]
    assert last == {"role": "user", "content": "Stop hook feedback:\nrun the tests too"}


async def test_post_tool_use_sees_the_result_and_can_object(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    script(
        tmp_path, "post.sh", '#!/bin/sh\ncat > post.json\necho "line 3 is too long" >&2\nexit 2\n'
    )
    hooks = hooks_for(tmp_path, on("PostToolUse", "./post.sh", "Write"))
    fake.queue(fo.tool_calls(("write", {"path": "a.py", "content": "x = 1\n"})), fo.text("ok"))
    await agent_with(model, tmp_path, hooks, PermissionGate(assume_yes=True)).run("go")
    assert (tmp_path / "a.py").exists()  # it ran: PostToolUse comes after
    (text,) = tool_texts(fake.bodies[1])
    assert "line 3 is too long" in text
    given = json.loads((tmp_path / "post.json").read_text())
    assert given["hook_event_name"] == "PostToolUse"
    response = given["tool_response"]  # Claude Code's Write response: what was written
    assert response["is_error"] is False and response["success"] is True
    assert response["filePath"] == str(tmp_path / "a.py") and response["content"] == "x = 1\n"
    assert given["tool_name"] == "Write" and given["tool_input"]["file_path"] == str(
        tmp_path / "a.py"
    )


async def test_pre_compact_can_block_a_manual_compact(model: ChatModel, tmp_path: Path) -> None:
    script(tmp_path, "compact.sh", '#!/bin/sh\necho "keep the full log" >&2\nexit 2\n')
    hooks = hooks_for(tmp_path, on("PreCompact", "./compact.sh", "manual"))
    agent = agent_with(model, tmp_path, hooks)
    with pytest.raises(HookBlockedError, match="keep the full log"):
        await agent.compact("focus")


async def test_pre_compact_fires_before_an_automatic_compaction(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    script(tmp_path, "compact.sh", "#!/bin/sh\ncat > compact.json\n")
    hooks = hooks_for(tmp_path, on("PreCompact", "./compact.sh", "auto"))
    agent = agent_with(model, tmp_path, hooks)
    agent.session.history.extend(
        [{"role": "user", "content": "earlier"}, {"role": "assistant", "content": "answer"}] * 3
    )
    fake.queue(fo.overflow(), fo.text("the summary"), fo.text("ok"))
    assert (await agent.run("now")).text == "ok"
    given = json.loads((tmp_path / "compact.json").read_text())
    assert given["hook_event_name"] == "PreCompact" and given["trigger"] == "auto"
    assert "the summary" in json.dumps(fake.bodies[2]["messages"])


async def test_notification_fires_before_the_user_is_asked(tmp_path: Path) -> None:
    script(tmp_path, "notify.sh", "#!/bin/sh\ncat > notified.json\n")
    hooks = hooks_for(tmp_path, on("Notification", "./notify.sh", "permission_prompt"))
    approver = Approver(Answer.ONCE)
    ask = hook_points.notifying(lambda: hooks, approver, lambda text: None)
    tool = builtin_tools(tmp_path)[2]  # write
    request = ApprovalRequest("write", {"path": "x"}, tool.info.permission, "write: ...")
    assert await ask(request) is Answer.ONCE
    given = json.loads((tmp_path / "notified.json").read_text())
    assert given["notification_type"] == "permission_prompt" and "write" in given["message"]


async def test_hooks_get_the_minimal_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak-12345")
    monkeypatch.setenv("DEPLOY_TOKEN", "t0ken-should-not-leak")
    script(tmp_path, "env.sh", "#!/bin/sh\nenv > env.txt\n")
    hooks = hooks_for(tmp_path, on("SessionStart", "./env.sh"))
    await hook_points.session_start(hooks, "startup")
    lines = dict(
        line.split("=", 1)
        for line in (tmp_path / "env.txt").read_text().splitlines()
        if "=" in line
    )
    assert "OPENAI_API_KEY" not in lines and "DEPLOY_TOKEN" not in lines
    assert lines["CLAUDE_PROJECT_DIR"] == str(tmp_path) == lines["CODEBOT_PROJECT_DIR"]
    assert lines["PATH"] == os.environ["PATH"]


async def test_identical_commands_run_once_and_hooks_of_an_event_run_in_parallel(
    tmp_path: Path,
) -> None:
    body = "#!/bin/sh\necho start >> order\nsleep 1\necho end >> order\n"
    script(tmp_path, "a.sh", body)
    script(tmp_path, "b.sh", body)
    section = {
        "SessionStart": [
            {"hooks": [{"type": "command", "command": "./a.sh"}]},
            {"hooks": [{"type": "command", "command": "./a.sh"}, {"command": "./b.sh"}]},
        ]
    }
    hooks = hooks_for(tmp_path, section)
    await hook_points.session_start(hooks, "startup")
    # a.sh once, b.sh once, and side by side: both started before either ended. (The order
    # proves it on a loaded machine, where a bound on the time would not.)
    assert (tmp_path / "order").read_text() == "start\nstart\nend\nend\n"


def test_matchers_follow_claude_codes_rules() -> None:
    assert matches("", ["bash"]) and matches("*", ["anything"])
    assert matches("Bash", ["bash", "Bash"]) and not matches("Bash", ["bash"])
    assert matches("bash|edit", ["edit"]) and not matches("bash|edit", ["mcp__x__bash"])
    assert matches("mcp__github__.*", ["mcp__github__create_issue"])
    assert not matches("mcp__github__.*", ["mcp__gitlab__create_issue"])
    assert matches("Edit|Write", ["write", "Write"])
