"""Subagents through `codebot chat`: a real agents folder, `task` driven by the loopback model.

The model server answers by looking at each request (``respond``): the main agent's turns,
and each subagent's (its system prompt says it is a subagent), so parallel subagents can be
told apart and their requests timed.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
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

EXPLORER = """\
---
name: explorer
description: Finds where things are in the code, without changing anything.
tools: Read, Glob, Grep
---
You explore codebases and report file paths.
"""


class Router:
    """Answers the main agent with ``main`` (a list of turns, in order) and each subagent by
    its task prompt; records when each subagent request was being answered."""

    def __init__(self, main: list[dict[str, Any]], sub: Callable[[str], dict[str, Any]]):
        self.main = list(main)
        self.sub = sub
        self.hold = 0.0
        self.spans: dict[str, tuple[float, float]] = {}
        self.sub_bodies: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        system = body["messages"][0]["content"]
        if "# You are a subagent" not in system:
            with self.lock:
                return self.main.pop(0)
        prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
        began = time.monotonic()
        time.sleep(self.hold)
        with self.lock:
            self.sub_bodies.append(body)
            self.spans[prompt] = (began, time.monotonic())
        return self.sub(prompt)


@pytest.fixture
def router() -> Router:
    return Router([], lambda prompt: fo.text(f"report on {prompt}"))


@pytest.fixture
def model(router: Router) -> Iterator[FakeOpenAI]:
    with FakeOpenAI(respond=router) as server:
        yield server


@pytest.fixture
def project(tmp_path: Path, model: FakeOpenAI) -> Path:
    root = tmp_path / "repo"
    (root / ".codebot" / "agents").mkdir(parents=True)
    (root / ".codebot" / "agents" / "explorer.md").write_text(EXPLORER)
    write_settings(root, {"base_url": model.base_url})
    (root / "app.py").write_text("print('hi')\n")
    return root


def chat(capsys: pytest.CaptureFixture[str], cwd: Path, *argv: str) -> tuple[int, str, str]:
    code = run(["--cwd", str(cwd), "chat", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def task(prompt: str, agent: str | None = None, description: str = "look") -> tuple[str, Any]:
    arguments = {"description": description, "prompt": prompt}
    if agent:
        arguments["agent"] = agent
    return ("task", arguments)


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


def overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def test_read_only_subagents_run_in_parallel_and_return_only_their_answer(
    project: Path, model: FakeOpenAI, router: Router, capsys: pytest.CaptureFixture[str]
) -> None:
    router.hold = 0.8
    router.main = [
        fo.tool_calls(task("find the entry point", "explorer"), task("find the tests", "explorer")),
        fo.text("both found"),
    ]
    code, out, err = chat(capsys, project, "-p", "map the repo", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["answer"] == "both found"
    spans = router.spans
    assert overlap(spans["find the entry point"], spans["find the tests"]), spans
    results = [c["result"] for c in data["tool_calls"]]
    assert results[0].startswith("report on find the entry point")
    assert "[subagent 'explorer': 1 turn, 15 tokens]" in results[0]
    # A subagent's request: its own system prompt, its prompt alone, only its tools.
    body = router.sub_bodies[0]
    assert "You explore codebases" in body["messages"][0]["content"]
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert sorted(tool_names(body)) == ["glob", "grep", "read"]
    # Its tokens count in the run's and the session's usage (2 main turns + 2 subagents).
    assert data["usage"]["prompt_tokens"] == 40 and data["usage"]["session"]["prompt_tokens"] == 40
    # Transcripts are saved beside the session's.
    session = data["session_id"]
    saved = sorted(
        (project.parent / "home" / "state" / "sessions").glob(f"*/{session}/subagents/*")
    )
    assert len(saved) == 2
    records = [json.loads(line) for line in saved[0].read_text().splitlines()]
    assert records[0]["type"] == "session" and records[0]["agent"] == "explorer"
    assert records[0]["parent"] == session
    assert [r["message"]["role"] for r in records[1:]] == ["user", "assistant"]
    assert "    ↳ explorer" not in err  # no tool calls to show; successes stay quiet


def test_subagents_that_can_write_run_one_at_a_time(
    project: Path, model: FakeOpenAI, router: Router, capsys: pytest.CaptureFixture[str]
) -> None:
    router.hold = 0.5
    router.main = [fo.tool_calls(task("first job"), task("second job")), fo.text("done")]
    code, _, err = chat(capsys, project, "-p", "do two things", "--yes")
    assert code == 0, err
    spans = router.spans
    assert not overlap(spans["first job"], spans["second job"]), spans
    # general-purpose has the parent's tools, and no `task` at the default depth (1).
    names = tool_names(router.sub_bodies[0])
    assert "write" in names and "bash" in names and "task" not in names


def test_a_subagent_never_gets_more_tools_than_its_parent(
    project: Path, model: FakeOpenAI, router: Router, capsys: pytest.CaptureFixture[str]
) -> None:
    router.main = [fo.tool_calls(task("look around")), fo.text("done")]
    code, _, err = chat(capsys, project, "-p", "plan it", "--plan")
    assert code == 0, err
    # (bash_output and bash_kill come only beside bash, which plan mode leaves out)
    assert sorted(tool_names(router.sub_bodies[0])) == ["glob", "grep", "read"]


def test_subagent_depth_lets_a_subagent_start_its_own(
    project: Path, model: FakeOpenAI, router: Router, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(project, {"base_url": model.base_url, "subagent_depth": 2})
    nested: list[str] = []

    def sub(prompt: str) -> dict[str, Any]:
        if prompt == "outer" and not nested:
            nested.append(prompt)
            return fo.tool_calls(task("inner", "explorer"))
        return fo.text(f"report on {prompt}")

    router.sub = sub
    router.main = [fo.tool_calls(task("outer")), fo.text("done")]
    code, out, err = chat(capsys, project, "-p", "go", "--json")
    assert code == 0, err
    outer, inner, outer_again = router.sub_bodies
    assert "task" in tool_names(outer)
    assert sorted(tool_names(inner)) == ["glob", "grep", "read"]  # depth 2 reached: no task
    (answer,) = [m["content"] for m in outer_again["messages"] if m["role"] == "tool"]
    assert answer.startswith("report on inner")
    assert json.loads(out)["tool_calls"][0]["result"].startswith("report on outer")


def test_depth_0_means_no_task_tool(
    project: Path, model: FakeOpenAI, router: Router, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(project, {"base_url": model.base_url, "subagent_depth": 0})
    router.main = [fo.text("hi")]
    assert chat(capsys, project, "-p", "hi")[0] == 0
    assert "task" not in tool_names(model.bodies[0])


def test_an_unknown_agent_is_an_error_the_model_can_read(
    project: Path, model: FakeOpenAI, router: Router, capsys: pytest.CaptureFixture[str]
) -> None:
    router.main = [fo.tool_calls(task("x", "nobody")), fo.text("ok")]
    code, out, _ = chat(capsys, project, "-p", "go", "--json")
    assert code == 0
    (call,) = json.loads(out)["tool_calls"]
    assert call["is_error"]
    assert "no agent 'nobody'; agents: explorer, general-purpose" in call["result"]


def test_agents_come_from_claude_and_user_folders_with_project_first(
    project: Path, model: FakeOpenAI, router: Router, capsys: pytest.CaptureFixture[str]
) -> None:
    claude = project / ".claude" / "agents"
    claude.mkdir(parents=True)
    (claude / "explorer.md").write_text("---\ndescription: shadowed\n---\nnot me\n")
    (claude / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews: diffs, style\ntools: [Read]\n---\nReview.\n"
    )
    mine = project.parent / "home" / "agents"
    mine.mkdir(parents=True)
    (mine / "scribe.md").write_text("---\ndescription: Writes notes\n---\nYou write notes.\n")
    router.main = [fo.text("hi")]
    assert chat(capsys, project, "-p", "hi")[0] == 0
    (schema,) = [t for t in model.bodies[0]["tools"] if t["function"]["name"] == "task"]
    enum = schema["function"]["parameters"]["properties"]["agent"]["enum"]
    assert enum == ["explorer", "general-purpose", "reviewer", "scribe"]
    text = schema["function"]["description"]
    assert "- explorer: Finds where things are" in text and "shadowed" not in text
    assert "- reviewer: Reviews: diffs, style" in text  # not strict YAML: read leniently


@pytest.mark.anyio
async def test_agents_lists_definitions_and_this_sessions_runs(
    project: Path, model: FakeOpenAI, router: Router, capsys: pytest.CaptureFixture[str]
) -> None:
    router.main = [fo.tool_calls(task("find app.py", "explorer", "find the app")), fo.text("ok")]

    async def steps(repl: Repl, inp: Any) -> None:
        await until(lambda: repl.runtime is not None)
        inp.send_text("where is the app?\r")
        await until(lambda: len(model.bodies) == 3)
        await anyio.sleep(0.5)
        inp.send_text("/agents\r")
        await anyio.sleep(0.5)
        inp.send_text("\x04")

    code, _ = await drive(project, steps, seconds=30)
    out, _ = capsys.readouterr()
    assert code == 0
    assert "agents (task's `agent`):" in out
    assert str(project / ".codebot" / "agents" / "explorer.md") in out
    # the tools it really gets (`tools: Read, Glob, Grep` over this session's)
    assert "read, glob, grep" in out and "Read, Glob, Grep" not in out
    assert "general-purpose" in out and "built-in" in out
    assert "runs in this session:" in out
    (row,) = [line.split() for line in out.splitlines() if "find the app" in line]
    assert row[1:8] == ["explorer", "find", "the", "app", "done", "1", "turn"]
    assert row[8:10] == ["15", "tokens"] and "/subagents/" in row[-1]


def test_an_untrusted_projects_agents_are_not_read(
    project: Path,
    model: FakeOpenAI,
    router: Router,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")
    home = project.parent / "home"
    home.mkdir(exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"base_url": model.base_url}))
    (project / ".codebot" / "settings.json").unlink()
    router.main = [fo.text("hi")]
    code, _, err = chat(capsys, project, "-p", "hi")
    assert code == 0
    (schema,) = [t for t in model.bodies[0]["tools"] if t["function"]["name"] == "task"]
    assert schema["function"]["parameters"]["properties"]["agent"]["enum"] == ["general-purpose"]
    assert "skipping project files (.codebot/agents/explorer.md)" in err

    # Trusted, then edited: asks again (here: skipped again, with the reason).
    assert run(["--cwd", str(project), "trust", "--yes"]) == 0
    assert "file .codebot/agents/explorer.md" in capsys.readouterr().out
    router.main = [fo.text("hi")]
    assert chat(capsys, project, "-p", "hi")[2].count("skipping") == 0
    (project / ".codebot" / "agents" / "explorer.md").write_text(EXPLORER + "Also delete things.\n")
    router.main = [fo.text("hi")]
    code, _, err = chat(capsys, project, "-p", "hi")
    assert "changed since it was trusted" in err and "explorer.md" in err


def test_a_subagents_calls_go_through_the_same_hooks(
    project: Path, model: FakeOpenAI, router: Router, capsys: pytest.CaptureFixture[str]
) -> None:
    guard = {
        "matcher": "Read",
        "hooks": [{"type": "command", "command": "echo private >&2; exit 2"}],
    }
    write_settings(project, {"base_url": model.base_url, "hooks": {"PreToolUse": [guard]}})
    calls: list[str] = []

    def sub(prompt: str) -> dict[str, Any]:
        calls.append(prompt)
        if len(calls) == 1:
            return fo.tool_calls(("read", {"path": "app.py"}))
        return fo.text("could not read it")

    router.sub = sub
    router.main = [fo.tool_calls(task("read app.py", "explorer")), fo.text("done")]
    code, _, err = chat(capsys, project, "-p", "go")
    assert code == 0, err
    (denied,) = [m["content"] for m in router.sub_bodies[1]["messages"] if m["role"] == "tool"]
    assert "blocked by a PreToolUse hook: private" in denied
    assert "↳ explorer ⊘ read denied" in err
