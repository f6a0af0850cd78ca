"""Issue 21 part 3 through the real CLI: one long turn stays inside the window.

The loopback model counts tokens harsher than codebot does (3.5 characters a token against 4)
and, given a window, refuses longer requests with ``context_length_exceeded`` as a real server
does, so "no request over the window" is checked by the server, not by codebot's own figures.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run
from tests.fakes import openai_turns as fo
from tests.fakes.openai_handler import count_tokens
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import write_settings


def chat(capsys: pytest.CaptureFixture[str], cwd: Path, *argv: str) -> tuple[int, Any, str]:
    code = run(["--cwd", str(cwd), "chat", "--json", *argv])
    out = capsys.readouterr()
    return code, json.loads(out.out), out.err


def files(root: Path, count: int, size: int) -> list[str]:
    names = []
    for i in range(count):
        name = f"src/module_{i:02d}.py"
        line = f"def function_{i}_{{n}}(value):  # module {i}\n    return value * {i}\n"
        text = "".join(line.replace("{n}", str(n)) for n in range(size // len(line) + 1))
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text[:size])
        names.append(name)
    return names


def stepper(names: list[str], steps: int) -> Any:
    """A model that reads ``names[i % len]`` at step i, answers summaries, then says done."""
    state = {"step": 0}

    def respond(body: dict[str, Any]) -> fo.Turn:
        if body["messages"][0]["content"].startswith("You are compacting"):
            return fo.text("Summary: files were read one by one; nothing is wrong so far.")
        if state["step"] == steps:
            return fo.text("done: every file read")
        path = names[state["step"] % len(names)]
        state["step"] += 1
        return fo.tool_calls(("read", {"path": path}))

    return respond


def test_ten_large_files_in_one_prompt_stay_inside_an_8000_window(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's measurement: ten reads of 12 kB files used to send ~25,000 tokens. This
    server also reports 10 prompt tokens for every request: a usage figure codebot must not
    believe over its own estimate."""
    names = files(tmp_path, 10, 12_000)
    with FakeOpenAI(respond=stepper(names, 10)) as fake:
        write_settings(tmp_path, {"base_url": fake.base_url, "context_window": 8000})
        code, data, err = chat(capsys, tmp_path, "-p", "read every module and review it")
        sizes = [count_tokens(body) for body in fake.bodies]
    assert code == 0, err
    assert data["answer"] == "done: every file read"
    assert len(data["tool_calls"]) == 10
    assert not any(call["is_error"] for call in data["tool_calls"])
    assert max(sizes) <= 8000, sizes
    assert any(c["in_turn"] for c in data["compactions"])
    last = fake.bodies[-1]["messages"]
    assert last[1] == {"role": "user", "content": "read every module and review it"}
    assert "def function_9_0(" in json.dumps(last)  # the newest result is whole


def test_sixty_steps_over_forty_20kb_files_in_a_16000_window(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bench's scripted session, as a test: every step answered, nothing refused."""
    names = files(tmp_path, 40, 20_000)
    with FakeOpenAI(respond=stepper(names, 60), window=16_000) as fake:
        write_settings(
            tmp_path, {"base_url": fake.base_url, "context_window": 16_000, "max_turns": 100}
        )
        code, data, err = chat(capsys, tmp_path, "-p", "read them all", "--yes")
        sizes = [count_tokens(body) for body in fake.bodies]
        rejected = fake.rejected
    assert code == 0, err
    assert rejected == 0 and max(sizes) <= 16_000, (rejected, max(sizes))
    assert data["answer"] == "done: every file read"
    calls = data["tool_calls"]
    assert len(calls) == 60 and not any(c["is_error"] for c in calls)
    assert all(c["result"].startswith("     1\tdef function_") for c in calls)
    assert data["usage"]["summary_requests"] >= 1  # the turn's steps were summarised
    prompts = [b["messages"][1]["content"] for b in fake.bodies if len(b["messages"]) > 1]
    assert "read them all" in prompts[-1]  # the prompt verbatim to the end


def test_context_length_exceeded_in_the_first_prompt_compacts_and_retries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing older to summarise: the turn itself is compacted (its newest result
    shortened) and the request retried; the run goes on."""
    (tmp_path / "big.txt").write_text("a fairly long line of text in a big file\n" * 1000)
    with FakeOpenAI() as fake:
        write_settings(tmp_path, {"base_url": fake.base_url})
        fake.queue(
            fo.tool_calls(("read", {"path": "big.txt"})),
            fo.overflow(8192),  # once: the server's window is smaller than codebot thought
            fo.text("read it"),
        )
        code, data, err = chat(capsys, tmp_path, "-p", "read big.txt")
        refused, retried = fake.bodies[1], fake.bodies[2]
    assert code == 0, err
    assert data["answer"] == "read it" and data["error"] is None
    assert count_tokens(retried) < 8192 < count_tokens(refused)
    [compaction] = data["compactions"]
    assert compaction["in_turn"] and compaction["shortened_results"] == 1
    assert retried["messages"][1]["content"] == "read big.txt"


def test_a_server_with_a_smaller_window_than_configured_never_ends_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Settings say 32,000; the server holds 12,000 and refuses longer requests without
    reporting usage: codebot learns from each refusal and finishes the task."""
    names = files(tmp_path, 12, 16_000)
    with FakeOpenAI(respond=stepper(names, 12), window=12_000) as fake:
        write_settings(tmp_path, {"base_url": fake.base_url, "context_window": 32_000})
        code, data, err = chat(capsys, tmp_path, "-p", "read them")
        rejected = fake.rejected
    assert code == 0, err
    assert rejected >= 1  # it did overflow, and recovered
    assert data["answer"] == "done: every file read"
    assert len(data["tool_calls"]) == 12
