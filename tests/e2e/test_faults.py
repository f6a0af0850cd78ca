"""Faults on the model side, and Ctrl-C, through the real ``codebot`` console script.

Each test runs ``codebot chat -p`` as a child process against the loopback model server (in
this process, on a thread) and, where it matters, the echo MCP server; it checks the exit
code, that no traceback reaches the user, and that no child process of codebot is left.
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.procs import Running, alive, codebot_env, wait_until
from tests.helpers import children_of, write_settings
from tests.helpers import server_entry as entry

EXIT_SECONDS = 15.0
"""How long an interrupted run may take to be gone (shutdown grace included): a bound on the
wait, far below the 60 s the interrupted model stream, tool call or handshake would last."""


@pytest.fixture
def project(tmp_path: Path, fake: FakeOpenAI) -> Path:
    root = tmp_path / "repo"
    write_settings(root, {"base_url": fake.base_url, "mcp_servers": {"echo": entry("echo")}})
    return root


@pytest.fixture
def model_only(tmp_path: Path, fake: FakeOpenAI) -> Path:
    """A project without MCP servers: the faults below are the model's alone."""
    root = tmp_path / "repo"
    write_settings(root, {"base_url": fake.base_url})
    return root


def start(project: Path, *argv: str, forked: bool = True, **env: str) -> Running:
    """``chat -p hi ARGV``; ``forked=False`` for the runs whose process table is read (Ctrl-C:
    the servers must be gone too)."""
    environ = codebot_env(project.parent / "home", CODEBOT_TRUST_PROJECT="1", **env)
    return Running(["chat", "-p", "hi", *argv], project, environ, forked=forked)


def finish(run: Running, seconds: float = 30.0) -> tuple[int, str, str]:
    code = run.wait(seconds)
    assert "Traceback" not in run.stderr, run.stderr
    return code, run.stdout, run.stderr


@pytest.fixture
def runs() -> Iterator[list[Running]]:
    started: list[Running] = []
    yield started
    for run in started:
        run.close()


# --- the model endpoint misbehaves ---------------------------------------------------------


def test_stream_dropped_mid_answer_exits_5(
    model_only: Path, fake: FakeOpenAI, runs: list[Running]
) -> None:
    fake.queue(fo.drop(after_text="The answer is"))
    runs.append(run := start(model_only))
    code, out, err = finish(run)
    assert code == 5 and out == "The answer is\n"  # the partial answer is kept
    assert "dropped mid-answer" in err and "hint:" in err and "cannot connect" not in err


@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_error_exits_5(
    model_only: Path, fake: FakeOpenAI, runs: list[Running], status: int
) -> None:
    fake.queue(fo.error(status, "upstream exploded"))
    runs.append(run := start(model_only))
    code, out, err = finish(run)
    assert code == 5 and out == ""
    assert f"failed ({status}): upstream exploded" in err


def test_model_silent_mid_stream_times_out(
    model_only: Path, fake: FakeOpenAI, runs: list[Running]
) -> None:
    fake.queue(fo.hang(60))  # longer than the wait below: only the 1 s model timeout ends it
    runs.append(run := start(model_only, CODEBOT_MODEL_TIMEOUT="1"))
    code, _, err = finish(run)
    assert code == 5
    assert "did not answer in time (nothing received for 1 s)" in err
    assert "CODEBOT_MODEL_TIMEOUT" in err


def test_invalid_timeout_setting_is_a_settings_error(model_only: Path, runs: list[Running]) -> None:
    runs.append(run := start(model_only, CODEBOT_MODEL_TIMEOUT="soon"))
    code, _, err = finish(run)
    assert code == 3 and "CODEBOT_MODEL_TIMEOUT='soon' is not a positive number" in err


# --- Ctrl-C ----------------------------------------------------------------------------------


def interrupt(run: Running) -> tuple[int, str]:
    """Send SIGINT once the MCP server runs; returns the exit code and stderr.

    The run must end within EXIT_SECONDS of the signal: what it was doing would last 60 s.
    """
    wait_until(lambda: bool(children_of(run.pid)), 15, "the MCP server process")
    kids = children_of(run.pid)
    run.proc.send_signal(signal.SIGINT)
    code, _, err = finish(run, EXIT_SECONDS)
    wait_until(lambda: not any(alive(k) for k in kids), 5, f"children {kids} to exit")
    return code, err


def test_ctrl_c_during_model_stream_exits_130(
    project: Path, fake: FakeOpenAI, runs: list[Running]
) -> None:
    fake.queue(fo.hang(60))
    runs.append(run := start(project, forked=False))
    wait_until(lambda: len(fake.requests) == 1, 20, "the model request")
    time.sleep(0.2)  # the stream has begun: its first chunk is on the wire
    code, err = interrupt(run)
    assert code == 130 and "interrupted" in err, err


def test_ctrl_c_during_long_tool_call_exits_130(
    project: Path, fake: FakeOpenAI, runs: list[Running]
) -> None:
    fake.queue(fo.tool_calls(("mcp__echo__sleep", {"seconds": 60})), fo.text("never"))
    runs.append(run := start(project, "--yes", forked=False))
    wait_until(lambda: "→ mcp__echo__sleep" in run.stderr, 20, "the tool call to start")
    time.sleep(0.2)
    code, err = interrupt(run)
    assert code == 130 and "interrupted" in err, err
    assert len(fake.requests) == 1  # the interrupted turn never went back to the model


def test_ctrl_c_during_handshake_exits_130(
    tmp_path: Path, fake: FakeOpenAI, runs: list[Running]
) -> None:
    root = tmp_path / "repo"
    servers = {"slow": entry("slow_start", "--delay", "60"), "echo": entry("echo")}
    write_settings(root, {"base_url": fake.base_url, "mcp_servers": servers})
    runs.append(run := start(root, forked=False))
    wait_until(lambda: len(children_of(run.pid)) >= 2, 15, "both server processes")
    time.sleep(0.5)  # codebot is now waiting in start_all for the slow handshake
    code, err = interrupt(run)
    assert code == 130 and "interrupted" in err, err
    assert fake.requests == []


def test_json_transcript_survives_an_error_result(
    project: Path, fake: FakeOpenAI, runs: list[Running]
) -> None:
    """A fault on the tool side is a result for the model, not a crash of the run."""
    fake.queue(fo.tool_calls(("mcp__echo__fail", {"message": "boom"})), fo.text("it failed"))
    runs.append(run := start(project, "--yes", "--json"))
    code, out, _ = finish(run)
    assert code == 0
    call = json.loads(out)["tool_calls"][0]
    assert call["is_error"] and "boom" in call["result"]


def test_ctrl_c_with_json_still_prints_the_transcript(
    project: Path, fake: FakeOpenAI, runs: list[Running]
) -> None:
    fake.queue(fo.tool_calls(("mcp__echo__echo", {"text": "ran"})), fo.hang(60))
    runs.append(run := start(project, "--yes", "--json", forked=False))
    wait_until(lambda: len(fake.requests) == 2, 20, "the second model request")
    time.sleep(0.2)  # the second stream has begun
    code, err = interrupt(run)
    assert code == 130 and "interrupted" in err, err
    data = json.loads(run.stdout)
    assert data["outcome"] == "interrupted" and data["exit_code"] == 130
    assert data["error"] == {"message": "interrupted", "hint": None, "exit_code": 130}
    [call] = data["tool_calls"]
    assert (call["name"], call["result"], call["is_error"]) == ("mcp__echo__echo", "ran", False)
