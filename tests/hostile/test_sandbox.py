"""The sandbox against a real shell that really tries to get out (issue 21, part 1).

Every command runs through the real ``bash`` tool, in the real sandbox (the exec helper:
Landlock, user and network namespaces, seccomp). Each escape is checked where it would land
(the file outside is absent or unchanged, the listener saw no connection), and the result
the model reads names the sandbox. Each test that proves a refusal also has a control: the
same command outside the sandbox (``"sandbox": false``, or ``network`` true) succeeds, so a
test cannot pass because the command was broken.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.core.sandbox.confinement import Sandbox, support
from codebot_mcp.core.tools.base import ToolResult
from codebot_mcp.core.tools.builtin import BashTool

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only"),
]


def _missing() -> list[str]:
    return support().missing(network=False) if sys.platform.startswith("linux") else []


needs_sandbox = pytest.mark.skipif(
    bool(_missing()), reason=f"the sandbox is unavailable: {_missing()}"
)


class Shell:
    """The bash tool in a sandbox, over a project with a git repository, beside an outside
    directory holding a victim file."""

    def __init__(self, tmp_path: Path, mode: str = "workspace-write", network: bool = False):
        self.project = tmp_path / "project"
        self.outside = tmp_path / "outside"
        self.project.mkdir(parents=True)
        self.outside.mkdir(parents=True)
        self.victim = self.outside / "victim.txt"
        self.victim.write_text("original\n")
        git = ["git", "-c", "init.defaultBranch=main", "init", "-q", str(self.project)]
        subprocess.run(git, check=True)
        self.sandbox = Sandbox(mode, network=network, workspace=self.project)
        self.tool = BashTool(self.project, self.project, self.sandbox)

    async def run(self, command: str, **extra: Any) -> ToolResult:
        return await self.tool.execute({"command": command, **extra})


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[Shell]:
    made = Shell(tmp_path)
    yield made
    made.sandbox.close()


def refused(result: ToolResult) -> None:
    """The command failed, and the model is told the sandbox refused it."""
    assert result.is_error, result.text
    assert "sandbox" in result.text.lower(), result.text


@needs_sandbox
async def test_it_still_does_its_job(shell: Shell) -> None:
    result = await shell.run(
        "echo made > made.txt && mkdir -p src/deep && echo x > src/deep/y && rm src/deep/y && "
        'echo tmp > "$TMPDIR/t" && cat "$TMPDIR/t" && ls /usr/bin >/dev/null && '
        "head -c 4 /etc/hostname >/dev/null && git status --short && git diff --stat && "
        "python3 -c 'print(6 * 7)'"
    )
    assert not result.is_error, result.text
    assert result.text.splitlines() == ["tmp", "?? made.txt", "42"], result.text
    assert (shell.project / "made.txt").read_text() == "made\n"
    assert result.data["sandbox"] == "workspace-write"


@needs_sandbox
@pytest.mark.parametrize("where", ["home", "tmp", "parent"])
async def test_writes_outside_are_refused(shell: Shell, where: str) -> None:
    name = f"codebot-sandbox-escape-{uuid.uuid4().hex}"
    target = {
        "home": Path.home() / name,
        "tmp": Path("/tmp") / name,
        "parent": shell.project.parent / name,
    }[where]
    try:
        result = await shell.run(f"echo owned > {target}")
        refused(result)
        assert not target.exists()
        assert str(target) in result.text  # the note names what was refused
        control = await shell.run(f"echo owned > {target}", sandbox=False)
        assert not control.is_error and target.exists()  # outside the sandbox it works
        assert control.data["sandbox"] == "off"
    finally:
        target.unlink(missing_ok=True)


@needs_sandbox
async def test_symlinks_and_dotdot_lead_nowhere(shell: Shell) -> None:
    (shell.project / "link").symlink_to(shell.outside)
    for command in (
        "echo owned > link/planted",
        "ln -s ../outside made-link && echo owned > made-link/planted2",
        "echo owned > ../outside/planted3",
        "cd .. && echo owned > outside/planted4",
        "echo owned > link/../outside/planted5",
        "echo owned >> link/victim.txt",
    ):
        refused(await shell.run(command))
    assert sorted(p.name for p in shell.outside.iterdir()) == ["victim.txt"]
    assert shell.victim.read_text() == "original\n"


@needs_sandbox
async def test_hard_links_renames_and_truncation_of_outside_files_are_refused(
    shell: Shell,
) -> None:
    refused(await shell.run("ln ../outside/victim.txt hard && echo owned >> hard"))
    refused(await shell.run("mv ../outside/victim.txt stolen.txt"))
    refused(await shell.run("truncate -s 0 ../outside/victim.txt"))
    refused(await shell.run("rm -f ../outside/victim.txt"))
    assert shell.victim.read_text() == "original\n"
    assert not (shell.project / "hard").exists()


@needs_sandbox
async def test_new_namespaces_do_not_lift_it(shell: Shell) -> None:
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) is not installed")
    for command in (
        "unshare -U sh -c 'echo owned > ../outside/ns1'",
        "unshare -Ur sh -c 'echo owned > ../outside/ns2'",
        "unshare -Urm sh -c 'mount -t tmpfs none ../outside && echo owned > ../outside/ns3'",
        "unshare -Un sh -c 'echo owned > ../outside/ns4'",
    ):
        refused(await shell.run(command))
    assert sorted(p.name for p in shell.outside.iterdir()) == ["victim.txt"]


@needs_sandbox
async def test_no_ptrace_no_proc_peeking_no_signals_outside(shell: Shell) -> None:
    # A process outside the sandbox, of the same user (noqa: it starts at once, no wait).
    sleeper = subprocess.Popen(["sleep", "60"], env={"SECRET_OF_SLEEPER": "s3cret"})  # noqa: ASYNC220
    try:
        attach = (
            "python3 -c 'import ctypes, os, sys; libc = ctypes.CDLL(None, use_errno=True); "
            f"r = libc.ptrace(16, {sleeper.pid}, 0, 0); "
            "print(r, os.strerror(ctypes.get_errno())); sys.exit(r != 0)'"
        )
        refused(await shell.run(attach))
        peek = await shell.run(f"cat /proc/{sleeper.pid}/environ")
        assert peek.is_error and "s3cret" not in peek.text
        if support().landlock_abi >= 6:  # signals are scoped from ABI 6 on
            refused(await shell.run(f"kill -STOP {sleeper.pid}"))
        assert sleeper.poll() is None
        state = Path(f"/proc/{sleeper.pid}/stat").read_text()  # noqa: ASYNC240 - /proc, once
        assert state.rsplit(")", 1)[1].split()[0] != "T"  # not stopped
        control = await shell.run(f"cat /proc/{sleeper.pid}/environ", sandbox=False)
        assert "s3cret" in control.text
    finally:
        sleeper.kill()
        sleeper.wait()


@needs_sandbox
async def test_root_keeps_no_privilege_outside(shell: Shell) -> None:
    if os.geteuid() != 0:
        pytest.skip("about root")
    # Raising priority needs CAP_SYS_NICE outside the user namespace: harmless if it worked.
    # (nice warns and runs the command anyway: the niceness it prints tells.)
    result = await shell.run("id -u && nice -n -5 nice 2>&1")
    assert result.text.splitlines()[0] == "0", result.text  # root inside
    assert result.text.splitlines()[-1] == "0", result.text  # but its niceness stayed 0
    control = await shell.run("nice -n -5 nice", sandbox=False)
    assert control.text == "-5"


class Listener:
    """A TCP listener on the host's loopback that counts the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.got_one = threading.Event()
        self.sock.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            self.got_one.set()
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    made = Listener()
    yield made
    made.close()


@needs_sandbox
async def test_no_network_not_even_the_hosts_loopback(
    shell: Shell, listener: Listener, tmp_path: Path
) -> None:
    connect = f"exec 3<>/dev/tcp/127.0.0.1/{listener.port} && echo connected"
    refused(await shell.run(connect))
    refused(await shell.run("curl -sS --max-time 5 http://example.com/ >/dev/null"))
    refused(await shell.run(f"curl -s --max-time 5 http://127.0.0.1:{listener.port}/"))  # silent
    assert listener.accepted == 0
    # Its own loopback works (a test suite's local server), and it is not the host's.
    local = await shell.run(
        'python3 -c \'import socket; s = socket.create_server(("127.0.0.1", 0)); '
        'c = socket.create_connection(s.getsockname()); print("local ok")\''
    )
    assert local.text == "local ok", local.text
    networked = Shell(tmp_path / "networked", network=True)
    try:
        assert not (await networked.run(connect)).is_error
        assert listener.got_one.wait(5)  # the same command reaches it with the network on
        assert listener.accepted == 1
    finally:
        networked.sandbox.close()


@needs_sandbox
async def test_no_unix_socket_leads_out(shell: Shell) -> None:
    # outside the project, in a short folder: a socket's path may not pass 107 bytes, and
    # pytest's temporary folder under a long TMPDIR or test name may
    outside = Path(tempfile.mkdtemp(prefix="codebot-outside-"))
    path = outside / "service.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    server.settimeout(0.5)
    try:
        code = (
            "import socket; s = socket.socket(socket.AF_UNIX); "
            f"s.connect({str(path)!r}); print('connected')"
        )
        refused(await shell.run(f'python3 -c "{code}"'))
        with pytest.raises(TimeoutError):
            server.accept()
        assert not (await shell.run(f'python3 -c "{code}"', sandbox=False)).is_error
    finally:
        server.close()
        shutil.rmtree(outside, ignore_errors=True)


@needs_sandbox
async def test_git_hooks_and_config_stay_read_only_and_git_writes_ask(shell: Shell) -> None:
    hooks = shell.project / ".git" / "hooks"
    config = shell.project / ".git" / "config"
    before = config.read_text()
    refused(await shell.run("printf '#!/bin/sh\\ntouch /tmp/owned\\n' > .git/hooks/pre-commit"))
    refused(await shell.run("git config core.fsmonitor 'touch /tmp/owned'"))
    refused(await shell.run("rm -rf .git/hooks"))
    assert not (hooks / "pre-commit").exists() and hooks.is_dir()
    assert config.read_text() == before
    commit = "echo more > f && git add f && git -c user.name=t -c user.email=t@t commit -qm two"
    inside = await shell.run(commit)
    refused(inside)  # issue 29: the whole git directory is read-only; the note says what to do
    assert "git directories are read-only" in inside.text and '"sandbox": false' in inside.text
    ok = await shell.run(f"{commit} && echo committed", sandbox=False)
    assert ok.text == "committed", ok.text


@needs_sandbox
async def test_read_only_writes_only_its_temp_dir(tmp_path: Path) -> None:
    shell = Shell(tmp_path, mode="read-only")
    try:
        refused(await shell.run("echo x > in-project.txt"))
        assert not (shell.project / "in-project.txt").exists()
        ok = await shell.run('echo x > "$TMPDIR/scratch" && cat "$TMPDIR/scratch"')
        assert ok.text == "x", ok.text
        assert ok.data["sandbox"] == "read-only"
        private = shell.sandbox.tmpdir()
        assert (private / "scratch").exists() and private.stat().st_mode & 0o777 == 0o700
    finally:
        shell.sandbox.close()
    assert not private.exists()  # the private temp dir goes with the session


@needs_sandbox
async def test_a_failure_the_sandbox_did_not_cause_says_nothing_of_it(shell: Shell) -> None:
    result = await shell.run("echo broken; exit 3")
    assert result.is_error and result.text == "broken\n[exit code 3]"
    missing = await shell.run("ls /no/such/dir")
    assert missing.is_error and "sandbox" not in missing.text


async def test_unsupported_machine_is_named_and_never_claimed(tmp_path: Path) -> None:
    from codebot_mcp.core.sandbox.confinement import Support

    lacking = Support(landlock_abi=0, userns=False, userns_error="Operation not permitted")
    sandbox = Sandbox("workspace-write", workspace=tmp_path, machine=lacking)
    assert not sandbox.active and sandbox.mode == "off"
    notice = sandbox.notice() or ""
    assert "Landlock" in notice and "user namespaces" in notice
    tool = BashTool(tmp_path, tmp_path, sandbox)
    assert tool.sandboxed({"command": "true"}) is None  # so the gate asks
    assert "sandbox" not in tool.schema()["properties"]
    result = await tool.execute({"command": "true"})
    assert result.data["sandbox"] == "off"


def test_a_temp_dir_left_by_a_killed_run_is_removed_by_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    from codebot_mcp.core.sandbox import confinement as sandbox_module
    from codebot_mcp.core.sandbox.confinement import Support

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(sandbox_module, "_swept", False)
    dead = subprocess.Popen(["true"])  # its pid is free once it was waited for
    dead.wait()
    stale = tmp_path / f"codebot-sandbox-{dead.pid}-abcd1234"
    live = tmp_path / f"codebot-sandbox-{os.getpid()}-efgh5678"
    for made in (stale, live):
        made.mkdir()
        (made / "left").write_text("x")
    sandbox = Sandbox("read-only", workspace=tmp_path, machine=Support())
    private = sandbox.tmpdir()
    assert private.name.startswith(f"codebot-sandbox-{os.getpid()}-")
    assert not stale.exists() and live.exists()
    sandbox.close()
    assert not private.exists()
