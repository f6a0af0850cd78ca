"""Shell completion in the real shells through the installed entry point: bash, zsh and fish
completing server and tool names without starting a server, installed or sourced.

Two tiers for bash. Real bash (:func:`in_bash`) sources the script and runs its function, which
starts the installed ``codebot``; beside it, :class:`Offered` asks the CLI in the test's own
process what that function asks the child (``COMP_WORDS`` joined by a newline, ``COMP_CWORD``,
``_CODEBOT_COMPLETE=complete_bash``, in the shell's directory) and reads the answer as bash
does (one candidate a line, what follows a tab dropped): the many candidates of each command
and option, a codebot start less each. Each kind of candidate (servers, tools, the ``--cwd``
given after the command) is asked of real bash at least once, and zsh and fish run for real."""

from __future__ import annotations

import functools
import json
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli.entry_point import CODEBOT, project, user
from tests.helpers import cli_in_process, server_entry, write_settings

__all__ = ["project", "user"]  # fixtures


class Offered:
    """The CLI in this process: ``cli`` runs ``codebot ARGV`` in ``cwd`` (``--cwd``), stdin
    from /dev/null; calling it asks what bash's ``_codebot_completion`` would offer for
    ``words`` in ``cwd``, as the function asks its child (see the module docstring)."""

    def __init__(self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
        self.capsys = capsys
        self.monkeypatch = monkeypatch

    def cli(self, *argv: str, cwd: Path) -> tuple[int, str, str]:
        return cli_in_process(self.capsys, self.monkeypatch, "--cwd", str(cwd), *argv)

    def __call__(self, cwd: Path, *words: str) -> list[str]:
        variables = {
            "COMP_WORDS": "\n".join(words),  # "${COMP_WORDS[*]}" under IFS=$'\n'
            "COMP_CWORD": str(len(words) - 1),
            "_CODEBOT_COMPLETE": "complete_bash",
        }
        with self.monkeypatch.context() as patch:
            patch.chdir(cwd)
            with pytest.raises(SystemExit) as done:  # click ends a completion by exiting
                cli_in_process(self.capsys, self.monkeypatch, env=variables)
        out, err = self.capsys.readouterr()
        assert done.value.code == 0, err
        return [line.split("\t")[0] for line in out.splitlines() if line]


@pytest.fixture
def offered(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Offered:
    return Offered(capsys, monkeypatch)


@pytest.fixture
def completing(user: Path, project: Path, offered: Offered) -> Path:
    """A global echo server whose tools `mcp list` has seen, and a project 'alpha'."""
    code, _, err = offered.cli(
        "mcp", "add-json", "echo", json.dumps(server_entry("echo")), cwd=project
    )
    assert code == 0, err
    write_settings(
        project,
        {"mcp_servers": {"alpha": {"command": "x", "include_tools": ["get_time", "x_*"]}}},
    )
    code, _, err = offered.cli("mcp", "list", "-s", "echo", cwd=project)
    assert code == 0, err
    return project


@functools.cache
def bash_completion() -> str:
    """``codebot --show-completion bash``, asked once: the script is the same for every
    project, and each of the many ``in_bash`` calls would otherwise start one more codebot."""
    done = subprocess.run(
        [CODEBOT, "--show-completion", "bash"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and "_codebot_completion" in done.stdout, done.stderr
    return done.stdout


def in_bash(project: Path, *words: str, fresh: bool = False) -> list[str]:
    """What bash offers for ``words``; the completion script comes from a codebot of its
    own when ``fresh`` (``source <(codebot --show-completion bash)``), else from the one
    asked first (the same text, sourced the same way)."""
    load = "source <(codebot --show-completion bash)"
    if not fresh:
        load = 'source <(printf "%s" "$BASH_COMPLETION_SCRIPT")'
    script = (
        f'{load}; COMP_WORDS=("$@"); '
        'COMP_CWORD=$(($# - 1)); _codebot_completion codebot; printf "%s\\n" "${COMPREPLY[@]}"'
    )
    extra = {} if fresh else {"BASH_COMPLETION_SCRIPT": bash_completion()}
    return _shell(["bash", "-c", script, "bash", *words], project, extra)


def in_zsh(project: Path, *words: str) -> list[str]:
    # _arguments prints what the completion would offer: "*: :(("a" "b"))".
    script = (
        'compdef(){ :; }; _arguments(){ print -r -- "$@"; }; _files(){ print FILES; }; '
        'eval "$(codebot --show-completion zsh)"; words=("$@"); CURRENT=$#; _codebot_completion'
    )
    out = _shell(["zsh", "-fc", script, "zsh", *words], project)
    return [w.strip('"') for line in out for w in line.split("((", 1)[-1].rstrip(")").split()]


def in_fish(project: Path, line: str) -> list[str]:
    script = f"source (codebot --show-completion fish | psub); complete -C {json.dumps(line)}"
    return _shell(["fish", "-c", script], project)


def _shell(argv: list[str], cwd: Path, extra: dict[str, str] | None = None) -> list[str]:
    if shutil.which(argv[0]) is None:
        pytest.skip(f"{argv[0]} is not installed")
    path = f"{Path(CODEBOT).parent}{os.pathsep}{os.environ['PATH']}"
    done = subprocess.run(
        argv,
        cwd=cwd,
        env={**os.environ, "PATH": path, **(extra or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return [line.split("\t")[0] for line in done.stdout.splitlines() if line]


def test_bash_completes_servers_and_the_tools_mcp_list_saw(
    completing: Path, offered: Offered
) -> None:
    assert in_bash(completing, "codebot", "mcp", "call", "", fresh=True) == ["alpha", "echo"]
    assert in_bash(completing, "codebot", "mcp", "call", "echo", "de") == ["delete_note"]
    assert offered(completing, "codebot", "mcp", "call", "alpha", "") == ["get_time"]
    for command in ("get", "remove", "enable", "disable", "login", "resources", "prompts"):
        assert offered(completing, "codebot", "mcp", command, "a") == ["alpha"], command
    assert offered(completing, "codebot", "mcp", "lock", "--server", "e") == ["echo"]
    assert offered(completing, "codebot", "chat", "--allow-sampling", "e") == ["echo"]
    assert offered(completing, "codebot", "mcp", "import", "--from", "c") == [
        "claude-code",
        "claude-desktop",
        "cursor",
        "codex",
    ]
    # Global options after the command count, as on a command line.
    elsewhere = completing.parent / "elsewhere"
    elsewhere.mkdir()
    assert offered(elsewhere, "codebot", "mcp", "call", "") == ["echo"]
    assert in_bash(elsewhere, "codebot", "mcp", "call", "--cwd", str(completing), "") == [
        "alpha",
        "echo",
    ]


def test_tool_names_are_not_offered_for_an_entry_mcp_list_did_not_see(
    completing: Path, tmp_path: Path, offered: Offered
) -> None:
    # Another project's server of the same name is another server: its tools are not these.
    other = tmp_path / "other"
    echo = server_entry("echo")
    write_settings(other, {"mcp_servers": {"echo": {**echo, "env": {"GREETING": "x"}}}})
    assert in_bash(other, "codebot", "mcp", "call", "echo", "de") == []
    # The entry itself changed since: not offered either, until the next `mcp list`.
    entry = json.dumps({**echo, "env": {"A": "1"}})
    code, _, err = offered.cli("mcp", "add-json", "echo", entry, "--force", cwd=completing)
    assert code == 0, err
    assert offered(completing, "codebot", "mcp", "call", "echo", "de") == []
    assert offered.cli("mcp", "list", "-s", "echo", cwd=completing)[0] == 0
    assert offered(completing, "codebot", "mcp", "call", "echo", "de") == ["delete_note"]


def test_nothing_unsafe_is_handed_to_the_shell(completing: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    hostile = f"$(touch {marker})"
    write_settings(
        completing,
        {
            "mcp_servers": {
                "alpha": {"command": "x", "include_tools": [hostile, "ok_tool", "a b"]},
                f"`touch {marker}`": {"command": "x"},
            }
        },
    )
    assert in_zsh(completing, "codebot", "mcp", "call", "") == ["alpha", "echo"]
    assert in_zsh(completing, "codebot", "mcp", "call", "alpha", "") == ["ok_tool"]
    assert in_bash(completing, "codebot", "mcp", "call", "alpha", "", fresh=True) == ["ok_tool"]
    assert not marker.exists()


def test_zsh_and_fish_complete_servers_and_tools(completing: Path) -> None:
    assert in_zsh(completing, "codebot", "mcp", "call", "echo", "de") == ["delete_note"]
    assert in_zsh(completing, "codebot", "mcp", "get", "") == ["alpha", "echo"]
    assert in_fish(completing, "codebot mcp call echo de") == ["delete_note"]
    assert in_fish(completing, "codebot mcp get ") == ["alpha", "echo"]
    assert in_fish(completing.parent, f"codebot mcp get --cwd {completing} a") == ["alpha"]


_ANSI = re.compile(rb"\x1b(\[[0-9;?]*[A-Za-z]|\(B|=|>)")


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_installed_completion_completes_on_the_first_tab(
    completing: Path, tmp_path: Path, shell: str
) -> None:
    """`codebot --install-completion` in a fresh home, then an interactive shell on a pty:
    one <TAB> completes a server name, one more a tool name (zsh once needed two)."""
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    home = tmp_path / f"home-{shell}"
    home.mkdir()
    env = {
        **os.environ,
        "HOME": str(home),
        "SHELL": f"/usr/bin/{shell}",
        "TERM": "xterm",
        "PATH": f"{Path(CODEBOT).parent}{os.pathsep}{os.environ['PATH']}",
    }
    done = subprocess.run(
        [CODEBOT, "--install-completion"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    pid, master = pty.fork()
    if pid == 0:  # the child: an interactive shell whose controlling terminal is the pty
        os.chdir(completing)
        os.execvpe(shell, [shell, "-i"], env)
    try:
        seen = _type(master, b"codebot mcp get al\t", b"get alpha")
        assert b"get alpha" in seen, seen[-400:]
        seen = _type(master, b"\x15codebot mcp call echo del\t", b"echo delete_note")
        assert b"echo delete_note" in seen, seen[-400:]
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(master)


def _type(master: int, keys: bytes, expected: bytes, wait: float = 30.0) -> bytes:
    """Type ``keys`` and read the terminal (escapes removed) until ``expected`` shows."""
    os.write(master, keys)
    seen = b""
    deadline = time.monotonic() + wait
    while expected not in _ANSI.sub(b"", seen) and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                seen += os.read(master, 65536)
            except OSError:
                break
    return _ANSI.sub(b"", seen)
