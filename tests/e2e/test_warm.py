"""The warm holder (``codebot mcp warm``), through the real console script.

Each test starts a holder for a project whose server is ``tests.servers.faulty`` (raw JSON-RPC,
boots fast), then runs ``mcp list``/``mcp call`` as separate processes; the tests of a class
share one project and holder, which none of them changes. That a call was served
by the holder is proven by the server's own state: ``storm`` marks the tool list changed, so
the holder re-lists before its next request, and ``list_count`` then says 2; a fresh (cold)
server always says 1. ``CODEBOT_HOME`` is a short temporary directory (a Unix socket path has
at most 108 bytes).
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.mcpbridge.warm import holder_client as warm
from tests.e2e.test_reaper import marked_pids
from tests.fakes.procs import CODEBOT, alive, codebot_env, wait_until
from tests.helpers import server_entry, write_settings

GONE_SECONDS = 15.0


class Project:
    """A project directory, a short CODEBOT_HOME, and codebot runs in them."""

    def __init__(self, root: Path, home: Path) -> None:
        self.root = root
        self.home = home
        self.mark = uuid.uuid4().hex
        self.env = codebot_env(home, CODEBOT_TRUST_PROJECT="1")

    def settings(self, **extra_env: str) -> None:
        env = {"CODEBOT_TEST_MARK": self.mark, **extra_env}
        entry = server_entry("faulty", env=env)
        write_settings(self.root, {"mcp_servers": {"s": entry}})

    def run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(CODEBOT), *argv],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def socket(self) -> Path:
        sockets = list((self.home / "state" / "warm").glob("*.sock"))
        assert len(sockets) == 1, sockets
        return sockets[0]

    def holder_pid(self) -> int:
        answer = warm.ask(self.socket(), {"op": "status"})
        assert answer is not None
        return int(answer["pid"])


@contextmanager
def _project(root: Path) -> Iterator[Project]:
    home = Path(tempfile.mkdtemp(prefix="cbw", dir="/tmp"))
    p = Project(root, home)
    p.settings()
    try:
        yield p
    finally:
        p.run("mcp", "warm", "--stop")
        wait_until(lambda: not marked_pids(p.mark), GONE_SECONDS, "the servers to be gone")
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    with _project(tmp_path / "repo") as p:
        yield p


def started(p: Project, *argv: str) -> None:
    done = p.run("mcp", "warm", *argv)
    assert done.returncode == 0, done.stderr
    assert "warm holder started" in done.stdout


def served_warm(p: Project, *extra: str) -> bool:
    """True when the call goes to the holder's long-lived server, not a fresh one."""
    assert p.run("mcp", "call", "s", "storm", "count=1", *extra).returncode == 0
    done = p.run("mcp", "call", "s", "list_count", *extra)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip() != "1"


def imported(p: Project, *argv: str) -> tuple[subprocess.CompletedProcess[str], str]:
    """Run codebot under ``python -X importtime``: the run, and every module it imported
    (space-separated, with a space at each end)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", str(CODEBOT), *argv],
        cwd=p.root,
        env=p.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    modules = " ".join(line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines())
    return done, f" {modules} "


COLD_AND_HOT = [
    ["mcp", "call", "s", "nope"],  # unknown tool: exit 2 with close matches
    ["mcp", "call", "s", "echo", "text=1", "extra"],  # bad arguments: exit 2
    ["mcp", "call", "s", "bad_bytes"],  # a failing call: exit 4
    ["mcp", "call", "s", "huge", "mb=40"],  # an answer over the size limit
    ["mcp", "list", "--server", "s", "--schemas"],
]

LIST_AND_CALL = [
    ["mcp", "list"],
    ["mcp", "list", "--json"],
    ["mcp", "call", "s", "echo", "text=hi", "--json"],
]

Runs = dict[tuple[str, ...], subprocess.CompletedProcess[str]]


@contextmanager
def _shared_project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    """A project that the tests of one class share."""
    with _project(tmp_path_factory.mktemp("warm") / "repo") as p:
        # Made before the per-test isolation, so with the same Claude home as that gives.
        p.env["CLAUDE_CONFIG_DIR"] = str(p.home / "claude-home")
        yield p


@pytest.fixture(scope="class")
def cold_then_held(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Project, Runs]]:
    """Every command of :data:`LIST_AND_CALL` and :data:`COLD_AND_HOT` run cold (no holder
    yet), then a holder started: :class:`TestColdThenHeld` compares each run through it."""
    with _shared_project(tmp_path_factory) as p:
        cold = {tuple(argv): p.run(*argv) for argv in [*LIST_AND_CALL, *COLD_AND_HOT]}
        started(p)
        yield p, cold


class TestColdThenHeld:
    """One project's commands, cold and then through one holder (it must survive them all in
    turn): a holder and its server cost a codebot run to start and one to stop, so both
    comparisons share them. They run in one worker (``tests/conftest.py``: a test class is
    one unit of work)."""

    def test_list_and_call_use_the_holder_with_identical_output(
        self, cold_then_held: tuple[Project, Runs]
    ) -> None:
        project, cold = cold_then_held
        cold_list, cold_json, cold_call = (cold[tuple(argv)] for argv in LIST_AND_CALL)
        assert served_warm(project)
        assert not served_warm(project, "--no-warm")  # bypassed: a fresh server

        warm_list = project.run("mcp", "list")
        assert (warm_list.returncode, warm_list.stdout, warm_list.stderr) == (
            cold_list.returncode,
            cold_list.stdout,
            cold_list.stderr,
        )

        def without_timing(text: str) -> Any:
            data = json.loads(text)
            for server in data["servers"]:
                server.pop("handshake_ms")
            return data

        assert without_timing(project.run("mcp", "list", "--json").stdout) == without_timing(
            cold_json.stdout
        )
        warm_call = project.run("mcp", "call", "s", "echo", "text=hi", "--json")
        assert (warm_call.returncode, warm_call.stdout) == (cold_call.returncode, cold_call.stdout)

    def test_errors_and_exit_codes_match_the_cold_path(
        self, cold_then_held: tuple[Project, Runs]
    ) -> None:
        """Each case cold, then each through the holder."""
        project, cold = cold_then_held
        for argv in COLD_AND_HOT:
            hot = project.run(*argv)
            before = cold[tuple(argv)]
            assert (hot.returncode, hot.stdout, hot.stderr) == (
                before.returncode,
                before.stdout,
                before.stderr,
            ), argv
        assert served_warm(project)  # they were all the holder's


def test_restart_policy_holds_in_the_holder(project: Project) -> None:
    started(project)
    first = project.run("mcp", "call", "s", "die")
    assert first.returncode == 4 and "closed the connection" in first.stderr, first.stderr
    again = project.run("mcp", "call", "s", "echo", "text=back")  # restarted once
    assert again.returncode == 0 and again.stdout == "back\n", again.stderr
    assert len(marked_pids(project.mark)) == 1  # the dead one is gone, not orphaned


def test_changed_settings_are_never_served_stale(project: Project) -> None:
    started(project)
    assert served_warm(project)
    project.settings(EXTRA="changed")  # the effective settings change
    assert not served_warm(project)  # silently cold: the holder's digest differs
    # `mcp warm` again replaces the stale holder; then it is warm again
    old = project.holder_pid()
    done = project.run("mcp", "warm")
    assert done.returncode == 0 and "replaced the warm holder" in done.stdout, done.stderr
    assert project.holder_pid() != old
    wait_until(lambda: not alive(old), GONE_SECONDS, "the old holder to exit")
    assert served_warm(project)


def test_an_environment_change_is_a_settings_change(project: Project) -> None:
    """${VAR} values and the inherited PATH are part of the digest."""
    started(project)
    project.env = {**project.env, "PATH": "/usr/local/bin:" + project.env["PATH"]}
    assert not served_warm(project)


def test_a_crashed_holder_falls_back_silently_and_leaves_no_server(project: Project) -> None:
    started(project)
    pid = project.holder_pid()
    servers = marked_pids(project.mark)
    assert servers
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not alive(pid), GONE_SECONDS, "the holder to die")
    wait_until(lambda: not any(alive(s) for s in servers), GONE_SECONDS, "its servers to exit")
    assert project.socket().exists()  # it left its socket behind
    done = project.run("mcp", "call", "s", "echo", "text=cold")
    assert (done.returncode, done.stdout, done.stderr) == (0, "cold\n", "")
    assert project.run("mcp", "warm").returncode == 0  # a new one takes the place
    assert served_warm(project)


def test_socket_and_directory_are_private_and_checked(project: Project) -> None:
    started(project)
    sock = project.socket()
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    assert stat.S_IMODE(sock.parent.stat().st_mode) == 0o700
    assert served_warm(project)
    sock.chmod(0o666)  # someone loosened it: the client does not trust it any more
    assert not served_warm(project)
    sock.chmod(0o600)
    sock.parent.chmod(0o755)
    assert not served_warm(project)
    sock.parent.chmod(0o700)
    assert served_warm(project)
    record = warm.environment_file(sock)  # the holder's environment, for call_here clients
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    record.chmod(0o644)  # loosened: not believed; the client asks by settings digest instead
    done, modules = imported(project, "mcp", "call", "s", "echo", "text=x")
    assert (done.returncode, done.stdout) == (
        0,
        "x\n",
    ) and " codebot_mcp.core.config.settings " in modules
    assert served_warm(project)


def test_idle_timeout_ends_the_holder_and_its_servers(project: Project) -> None:
    started(project, "--idle-timeout", "1")
    pid = project.holder_pid()
    wait_until(lambda: not alive(pid), GONE_SECONDS, "the idle holder to exit")
    wait_until(lambda: not marked_pids(project.mark), GONE_SECONDS, "its servers to exit")
    assert not list((project.home / "state" / "warm").glob("*.sock"))


def test_idle_timeout_setting(project: Project) -> None:
    settings = project.root / ".codebot" / "settings.json"
    data = json.loads(settings.read_text())
    settings.write_text(json.dumps({**data, "warm_idle_timeout": 1}))
    started(project)
    pid = project.holder_pid()
    wait_until(lambda: not alive(pid), GONE_SECONDS, "the idle holder to exit")


def test_bad_idle_timeout_setting_is_a_settings_error(project: Project) -> None:
    settings = project.root / ".codebot" / "settings.json"
    data = json.loads(settings.read_text())
    settings.write_text(json.dumps({**data, "warm_idle_timeout": "soon"}))
    done = project.run("mcp", "warm")
    assert done.returncode == 3 and "'warm_idle_timeout'" in done.stderr


def test_stop_and_status(project: Project) -> None:
    none = project.run("mcp", "warm", "--status")
    assert (none.returncode, "no warm holder" in none.stdout) == (1, True)  # a failed check
    nothing = project.run("mcp", "warm", "--stop")
    assert (nothing.returncode, "no warm holder" in nothing.stdout) == (0, True)
    started(project)
    assert "already running" in project.run("mcp", "warm").stdout
    status = project.run("mcp", "warm", "--status")
    assert status.returncode == 0 and "running" in status.stdout and ": s" in status.stdout
    pid = project.holder_pid()
    record = warm.environment_file(project.socket())
    assert record.exists()
    stopped = project.run("mcp", "warm", "--stop")
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    assert not record.exists()  # gone with its socket
    assert not alive(pid)  # --stop waits for the holder (and so its servers) to be gone
    assert not marked_pids(project.mark)
    assert not served_warm(project)


def test_untrusted_project_servers_are_not_held(project: Project) -> None:
    project.env = {k: v for k, v in project.env.items() if k != "CODEBOT_TRUST_PROJECT"}
    done = project.run("mcp", "warm")
    assert done.returncode == 0 and "0 of 0 servers" in done.stdout, done.stdout + done.stderr
    assert not marked_pids(project.mark)
    call = project.run("mcp", "call", "s", "echo", "text=x")
    assert call.returncode == 3 and "not trusted" in call.stderr


def test_a_stale_holder_hands_over_with_each_warning_once(project: Project) -> None:
    """The fast path has read the settings (and warned) when the holder answers "stale": the
    ordinary path then takes over in the same process, and says each warning once, as cold."""
    started(project)
    entry = server_entry("faulty", env={"CODEBOT_TEST_MARK": project.mark})
    write_settings(project.root, {"mcp_servers": {"s": {**entry, "agrs": ["x"]}}})
    warm_run = project.run("mcp", "call", "s", "echo", "text=hi")
    cold_run = project.run("mcp", "call", "s", "echo", "text=hi", "--no-warm")
    assert warm_run.stderr.count("unknown key 'agrs'") == 1, warm_run.stderr
    assert (warm_run.returncode, warm_run.stdout, warm_run.stderr) == (
        cold_run.returncode,
        cold_run.stdout,
        cold_run.stderr,
    )


def test_a_warm_call_is_resolved_in_the_holder_and_says_what_cold_says(project: Project) -> None:
    """From the holder's own environment, a warm call sends its directory, environment and
    words; the holder reads the settings (the client imports no settings module) and the
    client prints what a cold run prints: the settings' warning once, the settings' secrets
    masked in the result and in an error."""
    secret = "sk-warm-" + uuid.uuid4().hex
    entry = server_entry("faulty", env={"CODEBOT_TEST_MARK": project.mark, "API_TOKEN": secret})
    write_settings(project.root, {"mcp_servers": {"s": entry}, "colour": "blue"})
    started(project)
    assert served_warm(project)
    done, modules = imported(project, "mcp", "call", "s", "echo", "text=here")
    assert (done.returncode, done.stdout) == (0, "here\n"), done.stderr
    assert " codebot_mcp.core.config.settings " not in modules
    for argv in (
        ["mcp", "call", "s", "echo", f"text=key {secret} end"],
        ["mcp", "call", "s", secret],  # an unknown tool: the error names it
        ["mcp", "call", "s", "bad_bytes"],  # a failing call: exit 4
    ):
        hot = project.run(*argv)
        cold = project.run(*argv, "--no-warm")
        assert secret not in hot.stdout + hot.stderr, argv
        assert hot.stderr.count("unknown setting 'colour'") == 1, hot.stderr
        assert (hot.returncode, hot.stdout, hot.stderr) == (
            cold.returncode,
            cold.stdout,
            cold.stderr,
        ), argv
    assert "key *** end" in project.run("mcp", "call", "s", "echo", f"text=key {secret} end").stdout
    assert served_warm(project)  # all of them were the holder's


def _raw(sock_path: Path, payload: bytes) -> bytes:
    """Send ``payload`` as is on the holder's socket; everything it answers before closing."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(20)
        sock.connect(str(sock_path))
        answer = bytearray()
        try:
            sock.sendall(payload)
            sock.shutdown(socket.SHUT_WR)
            while chunk := sock.recv(1 << 16):
                answer += chunk
        except (BrokenPipeError, ConnectionResetError):
            pass  # the holder hung up on a line too long: allowed
        return bytes(answer)


def test_a_warm_call_rechecks_the_files_a_trusted_server_runs(project: Project) -> None:
    """Trust covers the script a project server runs (issue 29): edited after the holder
    started, the next warm call is refused, naming the file, and nothing runs it."""
    from tests.helpers import REPO_ROOT

    project.env = {k: v for k, v in project.env.items() if k != "CODEBOT_TRUST_PROJECT"}
    script = project.root / "tools" / "server.py"
    script.parent.mkdir()
    script.write_text(
        f"import runpy, sys\nsys.path.insert(0, {str(REPO_ROOT)!r})\n"
        'runpy.run_module("tests.servers.faulty", run_name="__main__")\n'
    )
    entry = {
        "command": sys.executable,
        "args": ["tools/server.py"],
        "env": {"CODEBOT_TEST_MARK": project.mark},
    }
    write_settings(project.root, {"mcp_servers": {"s": entry}})
    assert project.run("trust", "--yes").returncode == 0
    started(project)
    assert served_warm(project)
    script.write_text(script.read_text() + "# changed by a confined call\n")
    call = project.run("mcp", "call", "s", "echo", "text=x")
    assert call.returncode == 3, call.stdout + call.stderr
    assert "changed since it was trusted (changed: tools/server.py)" in call.stderr


@pytest.fixture(scope="class")
def held(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    """A project with a running holder, for :class:`TestOneHolder`'s tests to share."""
    with _shared_project(tmp_path_factory) as p:
        started(p)
        yield p


class TestOneHolder:
    """Checks that only read from a running holder share one (a holder and its server cost a
    codebot run to start and one to stop): each asks it, and none changes the project, its
    settings, its socket or the holder's pid; a test that does keeps a holder of its own. They
    run in one worker (``tests/conftest.py``: a test class is one unit of work), in this
    order, the count of live servers first."""

    def test_concurrent_clients(self, held: Project) -> None:
        with ThreadPoolExecutor(max_workers=6) as pool:
            runs = list(
                pool.map(lambda i: held.run("mcp", "call", "s", "echo", f"text=n{i}"), range(12))
            )
        assert [(r.returncode, r.stdout) for r in runs] == [(0, f"n{i}\n") for i in range(12)]
        assert len(marked_pids(held.mark)) == 1  # one server served them all

    def test_a_warm_call_never_builds_the_command_line_parser(self, held: Project) -> None:
        """The point of the fast path: a warm `mcp call SERVER TOOL key=value` is answered before
        Typer is imported (``python -X importtime`` lists every module a run imports)."""

        done, modules = imported(held, "mcp", "call", "s", "echo", "text=fast")
        assert (done.returncode, done.stdout) == (0, "fast\n")
        assert " typer " not in modules and " codebot_mcp.cli.warm_client " in modules
        done, modules = imported(held, "mcp", "call", "s", "echo", "text=slow", "--no-warm")
        assert (done.returncode, done.stdout) == (0, "slow\n") and " typer " in modules

    def test_what_the_fast_path_does_not_take_still_works(self, held: Project) -> None:
        """Unknown servers, JSON arguments and global options after the command go the ordinary
        way, holder or not, with the same output."""
        for argv in (
            ["mcp", "call", "nope", "echo"],
            ["mcp", "call", "s", "echo", '{"text": "json"}'],
            ["mcp", "call", "s", "echo", "text=x", "--cwd", str(held.root)],
            ["--cwd", str(held.root), "mcp", "call", "s", "echo", "text=y"],
        ):
            hot = held.run(*argv)
            cold = held.run(*argv, "--no-warm")
            assert (hot.returncode, hot.stdout, hot.stderr) == (
                cold.returncode,
                cold.stdout,
                cold.stderr,
            )

    def test_malformed_requests_never_end_the_holder(self, held: Project) -> None:
        """Whatever a client of the same user writes on the socket (wrong types, junk, a partial
        line, a line too deep or too long), the holder answers or hangs up, and keeps serving."""
        sock = held.socket()
        pid = held.holder_pid()
        status = warm.ask(sock, {"op": "status"})
        assert status is not None
        digest = status["digest"]

        def call(**fields: Any) -> bytes:
            request = {"op": "call", "digest": digest, "server": "s", "tool": "echo", **fields}
            return json.dumps(request).encode() + b"\n"

        malformed = [
            call(arguments=["not", "an", "object"]),
            call(arguments="text=hi"),
            call(arguments=7),
            call(arguments={"text": 5}, pairs=True),
            call(pairs="yes", arguments={"text": "x"}),
            call(server=["s"]),
            call(server={"s": 1}),
            call(tool=None),
            json.dumps({"op": "call", "digest": digest}).encode() + b"\n",
            json.dumps({"op": "list", "digest": digest, "servers": 5}).encode() + b"\n",
            json.dumps({"op": "list", "digest": digest, "servers": [1, None]}).encode() + b"\n",
            json.dumps({"op": ["list"], "digest": digest}).encode() + b"\n",
            json.dumps({"op": "list", "digest": ["x"]}).encode() + b"\n",
            json.dumps([1, 2]).encode() + b"\n",
            b"\xff\xfe junk \x00\n",
            b"{" * 200_000 + b"\n",
            b"[" * 200_000 + b"\n",
            b'{"op": "call", "digest": "',  # a partial line, then the client hangs up
            b"",
            b'{"op": "list", "x": "' + b"a" * (warm.MAX_LINE_BYTES + 1024),  # too long: hang up
        ]
        for payload in malformed:
            answer = _raw(sock, payload)
            assert alive(pid), payload[:80]
            lines = [json.loads(line) for line in answer.splitlines()]
            if lines:  # an answer, if any, is a clear usage error
                assert lines[-1]["error"]["exit_code"] == 2, lines
                assert "malformed request" in lines[-1]["error"]["message"]
        assert served_warm(held)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as idle:  # a partial line, held open
            idle.connect(str(sock))
            idle.sendall(b'{"op": "li')
            assert served_warm(held)  # others are served meanwhile
        assert held.holder_pid() == pid

    def test_a_client_in_another_environment_asks_by_settings_digest(self, held: Project) -> None:
        """A variable the holder does not have: the client reads its settings itself and asks
        the holder by settings digest, and is still served by it."""
        other = copy.copy(held)
        other.env = {**held.env, "UNRELATED_TO_CODEBOT": "1"}
        assert served_warm(other)
        done, modules = imported(other, "mcp", "call", "s", "echo", "text=digest")
        assert (done.returncode, done.stdout) == (0, "digest\n"), done.stderr
        assert " codebot_mcp.core.config.settings " in modules

    def test_a_holder_resolves_only_what_the_client_could_have_sent(self, held: Project) -> None:
        """``call_here`` requests the fast client never sends (another environment, a relative
        directory, stdin, a file, JSON, an option) are declined, not run; the holder keeps
        serving."""
        sock = held.socket()
        pid = held.holder_pid()
        environ = {**held.env, "CODEBOT_PYTHON": sys.executable}

        def here(**fields: Any) -> bytes:
            request = {
                "op": "call_here",
                "cwd": str(held.root.resolve()),
                "environ": environ,
                "server": "s",
                "tool": "echo",
                "words": ["text=ok"],
                **fields,
            }
            return json.dumps(request).encode() + b"\n"

        served = [json.loads(line) for line in _raw(sock, here()).splitlines()]
        assert served[0]["accepted"] and served[-1]["result"]["text"] == "ok", served
        for payload in (
            here(environ={**environ, "HOME": "/elsewhere"}),
            here(cwd="repo"),
            here(words=["-"]),
            here(words=["@args.json"]),
            here(words=['{"text": "x"}']),
            here(words=["--json"]),
            here(server="nope"),
        ):
            lines = [json.loads(line) for line in _raw(sock, payload).splitlines()]
            assert lines == [{"digest": lines[0]["digest"], "accepted": False, "declined": True}]
        for payload in (here(environ=["x"]), here(words="text=x"), here(cwd=7)):
            lines = [json.loads(line) for line in _raw(sock, payload).splitlines()]
            assert "malformed request" in lines[-1]["error"]["message"], lines
        assert held.holder_pid() == pid
        assert served_warm(held)
