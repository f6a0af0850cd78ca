"""What the registry tests share: the loopback registry, settings pointing at it, runtimes on
a PATH of our own, and running the installed ``codebot`` with stdin (a pipe or a real pty), or
the CLI in the test's own process (:class:`Cli`)."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cli.entry_point import CODEBOT
from tests.fakes import zygote
from tests.helpers import cli_in_process
from tests.servers.registry_server import RegistryServer
from tests.servers.util import REPO_ROOT

UVX = """#!/bin/sh
# A stand-in for uv's uvx: records its arguments, then runs codebot's echo test server (what
# the package "codebot-echo" would be).
printf '%s\\n' "$@" > {args}
cd {root} && exec {python} -m tests.servers.echo
"""
PYTHON = f"""#!/bin/sh
exec {sys.executable} "$@"
"""
FAIL = """#!/bin/sh
echo "not a real runtime" >&2
exit 1
"""


@pytest.fixture
def registry() -> Iterator[RegistryServer]:
    """The loopback registry, serving the fixtures (10 servers a page)."""
    with RegistryServer() as server:
        yield server


@pytest.fixture
def home(tmp_path: Path, registry: RegistryServer) -> Path:
    """$CODEBOT_HOME (the autouse fixture's) with ``registry_url`` set to the loopback one."""
    path = Path(os.environ["CODEBOT_HOME"])
    path.mkdir(parents=True, exist_ok=True)
    (path / "settings.json").write_text(json.dumps({"registry_url": registry.url}))
    return path


@pytest.fixture
def runtimes(tmp_path: Path) -> Path:
    """A directory to use as the whole PATH: ``uvx`` runs the echo server, ``python`` is this
    interpreter, ``npx``, ``docker`` and ``dnx`` exist (and fail if run)."""
    directory = tmp_path / "bin"
    directory.mkdir()
    uvx = UVX.format(args=directory / "uvx.args", root=REPO_ROOT, python=sys.executable)
    for name, text in (("uvx", uvx), ("python", PYTHON), ("npx", FAIL), ("docker", FAIL)):
        (directory / name).write_text(text)
        (directory / name).chmod(0o755)
    (directory / "dnx").write_text(FAIL)
    (directory / "dnx").chmod(0o755)
    return directory


def run(
    *argv: str,
    cwd: Path,
    path: Path | None = None,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
) -> tuple[int, str, str]:
    """The installed ``codebot`` with ``stdin`` piped in (None: no stdin at all) and, when
    given, ``path`` as the whole PATH."""
    environ = {**os.environ, **(env or {})}
    if path is not None:
        environ["PATH"] = str(path)
    done = subprocess.run(
        [*zygote.command(), *argv],
        cwd=cwd,
        env=environ,
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        text=True,
        timeout=90,
    )
    return done.returncode, done.stdout, done.stderr


def run_on_pty(
    *argv: str, cwd: Path, path: Path, answers: list[tuple[str, str]]
) -> tuple[int, str]:
    """The installed ``codebot`` on a real terminal (a pty for stdin, stdout and stderr):
    each answer is typed once its prompt has appeared. Returns the exit code and everything
    the terminal showed."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [CODEBOT, *argv],
        cwd=cwd,
        env={**os.environ, "PATH": str(path), "NO_COLOR": "1"},
        stdin=follower,
        stdout=follower,
        stderr=follower,
    )
    os.close(follower)
    seen = b""
    position = 0  # answers wait for a prompt after the previous one
    pending = list(answers)
    deadline = time.monotonic() + 90
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # EIO: the last writer has gone
                    break
                if not chunk:
                    break
                seen += chunk
            while pending and (found := seen.find(pending[0][0].encode(), position)) >= 0:
                prompt, answer = pending.pop(0)
                position = found + len(prompt)
                os.write(leader, answer.encode() + b"\r")
            if proc.poll() is not None and not ready:
                break
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(leader)
    return code, seen.decode(errors="replace").replace("\r\n", "\n")


def settings(home: Path) -> dict[str, object]:
    """The global settings file, parsed."""
    return json.loads((home / "settings.json").read_text())


@dataclass
class Cli:
    """``codebot`` in this process as :func:`run` starts it without ``stdin``: in ``cwd``
    (``--cwd``), with ``path`` as the whole PATH and ``env`` over the test's environment, stdin
    from /dev/null."""

    capsys: pytest.CaptureFixture[str]
    monkeypatch: pytest.MonkeyPatch

    def __call__(
        self, *argv: str, cwd: Path, path: Path | None = None, env: dict[str, str] | None = None
    ) -> tuple[int, str, str]:
        variables: dict[str, str | None] = {**(env or {})}
        if path is not None:
            variables["PATH"] = str(path)
        argv = ("--cwd", str(cwd), *argv)
        return cli_in_process(self.capsys, self.monkeypatch, *argv, env=variables)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    return Cli(capsys, monkeypatch)
