"""Class 11: SIGTERM, SIGHUP and SIGKILL of codebot leave no server and no ``bash`` child."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.procs import Running, alive, codebot_env, wait_until
from tests.helpers import children_of, server_entry, write_settings


@pytest.fixture
def runs() -> Iterator[list[Running]]:
    started: list[Running] = []
    yield started
    for run in started:
        run.close()


@pytest.fixture
def project(tmp_path: Path, fake: FakeOpenAI) -> Path:
    root = tmp_path / "repo"
    servers = {"echo": server_entry("echo")}
    write_settings(root, {"base_url": fake.base_url, "mcp_servers": servers})
    return root


def start(project: Path, fake: FakeOpenAI) -> Running:
    # A bash child busy for minutes, and a server busy in a call at the same time.
    fake.queue(
        fo.tool_calls(
            ("bash", {"command": "exec sleep 300", "timeout": 600}),
            ("mcp__echo__sleep", {"seconds": 300}),
        )
    )
    env = codebot_env(project.parent / "home", CODEBOT_TRUST_PROJECT="1")
    return Running(["chat", "-p", "go", "--yes"], project, env)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL])
def test_no_child_outlives_codebot(
    project: Path, fake: FakeOpenAI, runs: list[Running], sig: signal.Signals
) -> None:
    runs.append(run := start(project, fake))
    wait_until(lambda: "→ bash" in run.stderr, 40, "the bash call to start")
    wait_until(lambda: len(children_of(run.pid)) >= 2, 20, "the server and bash")
    kids = children_of(run.pid)
    time.sleep(0.3)
    run.proc.send_signal(sig)
    code = run.wait(30)
    if sig is not signal.SIGKILL:
        assert code == 130, run.stderr
        assert "interrupted" in run.stderr and "Traceback" not in run.stderr
    wait_until(lambda: not any(alive(k) for k in kids), 10, f"children {kids} to exit")
