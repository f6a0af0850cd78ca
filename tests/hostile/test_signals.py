"""Class 11: SIGTERM, SIGHUP and SIGKILL of codebot leave no server and no ``bash`` child."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.procs import Running, alive, codebot_env, wait_until
from tests.helpers import children_of, server_entry, write_settings
from tests.servers.util import REPO_ROOT, run_http_server, server_command


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


def _wrapped_hang(root: Path) -> None:
    """A server started through a shell that stays in between (``; exit``), whose child
    keeps running after its stdin closes: only a stop of its process group ends it."""
    command, args = server_command("hang", "--ignore-eof")
    inner = " ".join([command, *args])
    entry = {"command": "/bin/sh", "args": ["-c", f"{inner}; exit 0"], "cwd": str(REPO_ROOT)}
    write_settings(root, {"mcp_servers": {"w": entry}})


@pytest.mark.parametrize(
    "argv",
    [
        ["mcp", "resources"],
        ["mcp", "resources", "w"],
        ["mcp", "read", "w", "test://x"],
        ["mcp", "prompts"],
        ["mcp", "prompt", "w", "greet"],
    ],
    ids=["resources", "resources-server", "read", "prompts", "prompt"],
)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_server_commands_stop_wrapped_servers_on_a_signal(
    tmp_path: Path, runs: list[Running], argv: list[str], sig: signal.Signals
) -> None:
    root = tmp_path / "repo"
    _wrapped_hang(root)
    env = codebot_env(tmp_path / "home", CODEBOT_TRUST_PROJECT="1")
    runs.append(run := Running(argv, root, env))
    wait_until(lambda: len(children_of(run.pid)) >= 2, 20, "the shell and its server")
    kids = children_of(run.pid)
    try:
        run.proc.send_signal(sig)
        code = run.wait(30)
        assert code == 130, run.stderr
        assert "interrupted" in run.stderr and "Traceback" not in run.stderr
        wait_until(lambda: not any(alive(k) for k in kids), 10, f"children {kids} to exit")
    finally:
        for kid in kids:  # a leak must not outlive the test
            with contextlib.suppress(ProcessLookupError):
                os.kill(kid, signal.SIGKILL)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_login_ends_in_order_on_a_signal(
    tmp_path: Path, runs: list[Running], sig: signal.Signals
) -> None:
    """`mcp login` waiting for the browser: a signal ends it as Ctrl-C does (exit 130)."""
    with run_http_server(module="oauth_server") as url:
        home = tmp_path / "home"
        home.mkdir()
        (home / "settings.json").write_text(
            json.dumps({"mcp_servers": {"prot": {"type": "http", "url": url}}})
        )
        env = codebot_env(home, BROWSER="/bin/true")  # a browser that never comes back
        runs.append(run := Running(["mcp", "login", "prot"], tmp_path, env))
        wait_until(lambda: "127.0.0.1" in run.stdout + run.stderr, 30, "the login URL")
        run.proc.send_signal(sig)
        code = run.wait(30)
    assert code == 130, run.stderr
    assert "interrupted" in run.stderr and "Traceback" not in run.stderr


def test_every_command_enters_its_event_loop_through_signals_run() -> None:
    """The class, not the instances: a command that calls ``anyio.run`` itself would skip the
    SIGTERM/SIGHUP handling, as `mcp resources`, `read`, `prompts`, `prompt`, `login` and
    `logout` once did."""
    import ast

    offenders = []
    for path in sorted((REPO_ROOT / "cli").rglob("*.py")):
        if path.name == "signals.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "run"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in ("anyio", "asyncio", "trio")
            ):
                offenders.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno}")
    assert offenders == [], "use cli.signals.run instead"
