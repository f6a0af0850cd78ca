"""The command line itself: global options anywhere, metavars in help, shell completion."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from codebot_mcp.cli._typer import hoist_global_options
from codebot_mcp.cli.app import app, run
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import server_entry, write_settings
from tests.servers.util import REPO_ROOT


def codebot(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = run(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_settings(tmp_path, {"mcp_servers": {"echo": server_entry("echo")}})
    return tmp_path


def test_global_options_after_the_command(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = codebot(capsys, "mcp", "list", "--cwd", str(project))
    assert code == 0, err
    assert "✓ echo" in out
    code, out, err = codebot(
        capsys, "mcp", "call", "echo", "echo", "text=hi", f"--cwd={project}", "--trust-project"
    )
    assert (code, out) == (0, "hi\n"), err
    code, out, err = codebot(capsys, "mcp", "--cwd", str(project), "get", "echo")
    assert code == 0 and "echo" in out, err


def test_hoisting_leaves_command_options_values_and_double_dash_alone() -> None:
    root = typer.main.get_command(app)
    hoist = lambda *a: hoist_global_options(list(a), root)  # noqa: E731
    assert hoist("mcp", "list", "--cwd", "x") == ["--cwd", "x", "mcp", "list"]
    assert hoist("chat", "--model", "m", "--debug") == ["--debug", "chat", "--model", "m"]
    assert hoist("chat", "-p", "--debug") == ["chat", "-p", "--debug"]  # a value of -p
    assert hoist("mcp", "add", "s", "--", "cmd", "--cwd", "x") == [
        "mcp",
        "add",
        "s",
        "--",
        "cmd",
        "--cwd",
        "x",
    ]
    assert hoist("--cwd", "a", "mcp", "list") == ["--cwd", "a", "mcp", "list"]


def test_base_url_and_model_before_chat_as_the_readme_shows(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(fo.text("global base url works"))
    code, out, err = codebot(
        capsys,
        "--base-url",
        fake.base_url,
        "--model",
        "m1",
        "--cwd",
        str(tmp_path),
        "chat",
        "-p",
        "hi",
    )
    assert code == 0, err
    assert out == "global base url works\n"
    assert fake.bodies[0]["model"] == "m1"
    fake.queue(fo.text("own option wins"))
    code, out, err = codebot(
        capsys,
        "--model",
        "global-model",
        "chat",
        "--model",
        "own-model",
        "--base-url",
        fake.base_url,
        "-p",
        "hi",
        "--cwd",
        str(tmp_path),
    )
    assert code == 0, err
    assert fake.bodies[1]["model"] == "own-model"


def _commands(group: object, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [prefix]
    for name, sub in getattr(group, "commands", {}).items():
        found += _commands(sub, (*prefix, name))
    return found


def test_help_shows_metavars_never_python_types(capsys: pytest.CaptureFixture[str]) -> None:
    root = typer.main.get_command(app)
    seen = 0
    for path in _commands(root):
        code, out, _ = codebot(capsys, *path, "--help")
        assert code == 0, path
        seen += 1
        assert not re.search(r"<(str|int|float|bool|list|path|Path|Format)", out), (path, out)
        assert "{" not in out.splitlines()[0], (path, out)  # usage: NAME, not {NAME}
    assert seen >= 12
    _, out, _ = codebot(capsys, "mcp", "add", "--help")
    assert "Usage: codebot mcp add [OPTIONS] NAME [-- COMMAND [ARGS]...]" in out
    for fragment in ("--timeout SECONDS", "--include-tools GLOB", "-e, --env KEY=VALUE"):
        assert fragment in out
    _, out, _ = codebot(capsys, "mcp", "list", "--help")
    assert "-s, --server NAME" in out and "--timeout SECONDS" in out


def _complete(env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codebot_mcp.cli"],
        env={**os.environ, **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_completion_scripts_for_each_shell(capsys: pytest.CaptureFixture[str]) -> None:
    expected = {
        "bash": "complete -o default -F",
        "zsh": "#compdef codebot",
        "fish": "complete --command codebot",
    }
    for shell, fragment in expected.items():
        code, out, _ = codebot(capsys, "--show-completion", shell)
        assert code == 0
        assert fragment in out and "_CODEBOT_COMPLETE" in out
    code, _, err = codebot(capsys, "--show-completion", "tcsh")
    assert code == 2 and "bash, zsh, fish" in err


def test_install_completion_writes_the_script(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("SHELL", "/usr/bin/fish")
    code, out, err = codebot(capsys, "--install-completion")
    assert code == 0, err
    script = tmp_path / ".config" / "fish" / "completions" / "codebot.fish"
    assert "_CODEBOT_COMPLETE" in script.read_text()
    assert str(script) in out


def test_completion_of_commands_servers_and_tools_starts_no_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "started"
    write_settings(
        tmp_path,
        {
            "mcp_servers": {
                "echo": server_entry("echo"),
                "trap": {"command": "sh", "args": ["-c", f"touch {marker}"]},
                "beta": {"command": "x", "include_tools": ["get_time", "x_*"]},
            }
        },
    )
    # Tool names come from the last `mcp list`.
    assert codebot(capsys, "--cwd", str(tmp_path), "mcp", "list", "-s", "echo")[0] == 0
    home = os.environ["CODEBOT_HOME"]
    bash = {"_CODEBOT_COMPLETE": "complete_bash", "CODEBOT_HOME": home}
    done = _complete({**bash, "COMP_WORDS": "codebot mcp call ", "COMP_CWORD": "3"}, tmp_path)
    assert done.stdout.split() == ["beta", "echo", "trap"], done.stderr
    done = _complete(
        {**bash, "COMP_WORDS": "codebot mcp call echo de", "COMP_CWORD": "4"}, tmp_path
    )
    assert done.stdout.split() == ["delete_note"]
    done = _complete({**bash, "COMP_WORDS": "codebot mcp call beta ", "COMP_CWORD": "4"}, tmp_path)
    assert done.stdout.split() == ["get_time"]
    done = _complete({**bash, "COMP_WORDS": "codebot mc", "COMP_CWORD": "1"}, tmp_path)
    assert done.stdout.split() == ["mcp"]
    zsh = {"_CODEBOT_COMPLETE": "complete_zsh", "CODEBOT_HOME": home}
    done = _complete({**zsh, "_TYPER_COMPLETE_ARGS": "codebot mcp list -s b"}, tmp_path)
    assert '"beta"' in done.stdout
    fish = {
        "_CODEBOT_COMPLETE": "complete_fish",
        "_TYPER_COMPLETE_FISH_ACTION": "get-args",
        "CODEBOT_HOME": home,
        "_TYPER_COMPLETE_ARGS": f"codebot --cwd {tmp_path} mcp get t",
    }
    done = _complete(fish, REPO_ROOT)
    assert done.stdout.split() == ["trap"]
    assert not marker.exists()  # no server was started
    cache = Path(home) / "state" / "tool_names.json"
    assert "echo" in json.loads(cache.read_text())
    assert oct(cache.stat().st_mode & 0o777) == "0o600"


def test_debug_logging_ends_with_the_run(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An in-process run with --debug logs to that run's stderr, then leaves the root logger as
    it found it: a handler bound to a closed stream would break (and print unredacted) later."""
    import logging

    root = logging.getLogger()
    before = (list(root.handlers), root.level)
    code, _, err = codebot(capsys, "--debug", "--cwd", str(project), "mcp", "list")
    assert code == 0, err
    assert " DEBUG " in err  # it did log, on this run's stderr
    assert (list(root.handlers), root.level) == before
