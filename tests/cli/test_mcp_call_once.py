"""One path per ``mcp call``: a warm attempt that hands over to the ordinary path (a stale
holder) leaves the settings read once and the holder asked once in that invocation.

The holder here is a stand-in on the real socket protocol that answers every request "stale"
(a holder for other settings) and counts them; the settings reads are counted with an audit
hook on ``open`` (the interpreter's own record, nothing patched).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from codebot_mcp.cli import warm_client
from codebot_mcp.mcpbridge.warm import holder_client as warm
from tests.helpers import server_entry, write_settings

_opened: list[str] | None = None


def _audit(event: str, args: tuple[object, ...]) -> None:
    if event == "open" and _opened is not None and isinstance(args[0], str | Path):
        _opened.append(str(args[0]))


sys.addaudithook(_audit)  # hooks cannot be removed: it records only while _opened is a list


class StaleHolder:
    """A socket at the holder's place that answers every request "stale", counting them;
    ``environment``: it says it was started in this process's environment, as a holder does."""

    def __init__(self, path: Path, *, environment: bool = True) -> None:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(path.parent, 0o700)
        if environment:
            record = warm.environment_file(path)
            record.write_text(warm.environment_digest(os.environ) + "\n")
            record.chmod(0o600)
        self.requests: list[str] = []
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            self.sock.bind(str(path))
        finally:
            os.umask(old)
        self.sock.listen()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                buffer = b""
                while not buffer.endswith(b"\n") and (chunk := conn.recv(1 << 16)):
                    buffer += chunk
                op = json.loads(buffer)["op"]
                self.requests.append(op)
                answer = {"declined": True} if op == "call_here" else {"stale": True}
                conn.sendall(json.dumps({"accepted": False, **answer}).encode() + b"\n")

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def short_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = Path(tempfile.mkdtemp(prefix="cbo", dir="/tmp"))  # a Unix socket path is short
    monkeypatch.setenv("CODEBOT_HOME", str(home))
    yield home
    shutil.rmtree(home, ignore_errors=True)


@contextmanager
def counted(tmp_path: Path, *, environment: bool) -> Iterator[tuple[StaleHolder, list[str], Path]]:
    """A project with one server, a stand-in holder for it, and the files opened meanwhile."""
    global _opened
    project = tmp_path / "repo"
    settings_file = write_settings(project, {"mcp_servers": {"s": server_entry("echo")}})
    path = warm.socket_path(settings_file, project.resolve())
    holder = StaleHolder(path, environment=environment)
    opened: list[str] = []
    _opened = opened
    try:
        yield holder, opened, settings_file
    finally:
        _opened = None
        holder.close()


ARGV = ["mcp", "call", "s", "echo", "text=hi"]


def test_a_stale_holder_hands_over_without_reading_or_asking_again(
    tmp_path: Path, short_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from codebot_mcp.cli.app import run

    argv = ["--cwd", str(tmp_path / "repo"), *ARGV]
    with counted(tmp_path, environment=True) as (holder, opened, settings_file):
        code = warm_client.fast_call(argv, run)
        reads = [p for p in opened if Path(p) == settings_file]
    out = capsys.readouterr()
    assert (code, out.out) == (0, "hi\n"), out.err
    assert holder.requests == ["call_here"]  # the ordinary path did not ask it again
    assert len(reads) == 1, reads  # the ordinary path read them; the fast path did not


def test_a_holder_of_another_environment_is_asked_once_by_the_ordinary_path(
    tmp_path: Path, short_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from codebot_mcp.cli.app import run

    argv = ["--cwd", str(tmp_path / "repo"), *ARGV]
    with counted(tmp_path, environment=False) as (holder, opened, settings_file):
        assert warm_client.fast_call(argv, run) is None  # not asked, nothing read
        assert not holder.requests and not opened
        code = run(argv)
        reads = [p for p in opened if Path(p) == settings_file]
    out = capsys.readouterr()
    assert (code, out.out) == (0, "hi\n"), out.err
    assert holder.requests == ["call"]  # by settings digest: stale, then cold
    assert len(reads) == 1, reads
