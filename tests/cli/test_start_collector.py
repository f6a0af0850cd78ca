"""The cyclic collector paused while codebot starts (``core.gcpause``): the console script
pauses it first thing, and each command that does real work runs the collector again before that
work begins (a model request, a call, a check), so no long-lived process runs without it."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.core import gcpause
from tests.cli.repl_driver import drive, until
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import cli_in_process, server_entry, write_settings


@pytest.fixture(autouse=True)
def _collector_back() -> Iterator[None]:
    """Whatever a test leaves, the worker's collector runs on after it."""
    yield
    gcpause.release()
    gc.enable()


def test_hold_pauses_and_release_freezes_and_resumes() -> None:
    gcpause.hold()
    assert not gc.isenabled()
    frozen = gc.get_freeze_count()
    made = [[] for _ in range(1000)]  # start-up's objects: kept from here on
    gcpause.release()
    assert gc.isenabled() and gc.get_freeze_count() >= frozen + len(made)
    gcpause.release()  # idempotent
    assert gc.isenabled()


def test_release_leaves_a_collector_it_did_not_pause_alone() -> None:
    gc.disable()  # paused by someone else (a host program): not ours to resume
    gcpause.release()
    assert not gc.isenabled()
    gcpause.hold()  # already off: nothing held either
    gcpause.release()
    assert not gc.isenabled()


def test_the_console_script_pauses_it_first_and_a_short_command_never_resumes_it() -> None:
    script = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print('collector on:', gc.isenabled()))\n"
        "sys.argv = ['codebot', '--version']\n"
        "from codebot_mcp.cli.entry import main\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "collector on: False"  # no work worth a collector


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_settings(tmp_path, {"mcp_servers": {"echo": server_entry("echo")}})
    return tmp_path


def test_chat_resumes_it_before_the_first_model_request(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[bool] = []

    def respond(body: dict[str, Any]) -> Any:
        seen.append(gc.isenabled())  # this process's collector, as the request arrives
        if len(seen) == 1:
            return fo.tool_calls(("mcp__echo__echo", {"text": "hi"}))
        return fo.text("done")

    with FakeOpenAI(respond=respond) as fake:
        gcpause.hold()
        argv = ("--cwd", str(project), "chat", "-p", "go", "--yes", "--base-url", fake.base_url)
        code, out, err = cli_in_process(capsys, monkeypatch, *argv)
    assert (code, out) == (0, "done\n"), err
    assert seen == [True, True]


@pytest.mark.parametrize(
    "argv",
    [
        ("mcp", "call", "echo", "echo", "text=hi"),
        ("mcp", "list"),
        ("mcp", "doctor"),
        ("mcp", "call", "--batch"),  # stdin at its end at once: resumed before the first line
    ],
    ids=["call", "list", "doctor", "batch"],
)
def test_server_commands_resume_it_once_connected(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: tuple[str, ...],
) -> None:
    gcpause.hold()
    code, _, err = cli_in_process(capsys, monkeypatch, "--cwd", str(project), *argv)
    assert code == 0, err
    assert gc.isenabled()


def test_the_sdk_path_resumes_it_too(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    gcpause.hold()
    argv = ("--cwd", str(project), "mcp", "call", "echo", "echo", "text=hi")
    code, out, err = cli_in_process(capsys, monkeypatch, *argv, env={"CODEBOT_SDK_PATH": "1"})
    assert (code, out) == (0, "hi\n"), err
    assert gc.isenabled()


@pytest.mark.anyio
async def test_the_repl_resumes_it_once_its_servers_are_connected(project: Path) -> None:
    """Before the first prompt is answered: a session may run for hours of slash commands."""

    async def look(repl: Any) -> None:
        del repl
        await until(gc.isenabled, 10)  # fails the run if the REPL never resumes it

    gcpause.hold()
    code, _ = await drive(project, [(0.2, "\x04")], servers=1, during=look)
    assert code == 0 and gc.isenabled()
