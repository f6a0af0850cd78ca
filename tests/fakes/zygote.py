"""A fork server for ``codebot`` runs whose subject is what the command does, not how a process
starts: the MCP SDK and the openai client are imported once per test process, and each run is a
fork of a process that has them, instead of a fresh interpreter that imports them again
(about 0.65 s of CPU for the SDK and 0.45 s for openai, at every ``chat``, ``acp`` and SDK-path
``mcp`` run: about a quarter of the suite's CPU).

A test runs ``[*command(), *args]`` where it would run ``[CODEBOT, *args]``. That command is
``python -SE tests/fakes/zygote_shim.py SOCKET CODEBOT``, a standard-library script (about 10 ms)
that hands its stdin, stdout and stderr, its environment, working directory and arguments to
this module's server, forwards the signals it gets to the fork, and ends as the fork ended: the
same exit code, or the same signal. The fork runs the installed console script (``runpy``) in
the request's environment and directory, with ``sys.argv``, ``sys.path[0]``, the standard
streams and the signal dispositions a fresh interpreter would have there: what differs is only
that some third-party modules are already in memory (:data:`PRELOAD`; never codebot's own).

What it cannot be, and the tests that need it keep the real console script: the fork is not a
child of the test's process (the process table below ``Popen.pid`` is the shim alone), its
module list is not a fresh one (``tests/test_imports.py``), and it is never started on a
terminal (the shim runs the console script itself when a standard stream is a tty). A request
whose environment changes how Python itself starts (a ``PYTHON*`` variable other than the two
the fork applies, the locale, ``OPENAI_LOG``) runs the console script too: the answer is
``{"fallback": reason}``.

The server is ``python tests/fakes/zygote.py DIR``: it listens on ``DIR/socket``
(``SOCK_SEQPACKET``, one request per connection: a JSON object and three descriptors), is
detached (no test counts it as its child), and ends, killing the forks it still runs, when its
stdin (a socket of the test process that started it) closes.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import importlib
import io
import json
import os
import runpy
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHIM = HERE / "zygote_shim.py"
CODEBOT = Path(sys.executable).parent / "codebot"

PRELOAD = (
    "mcp.client.session",
    "mcp.client.stdio",
    "mcp.client.streamable_http",
    "openai",
    "openai.types.chat",
)
"""Third-party modules only: none of them reads the environment when imported (``openai``'s
``OPENAI_LOG`` is part of the key a request must match)."""

APPLIED = ("PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE")
"""The ``PYTHON*`` variables a fork applies itself (the streams' buffering, bytecode writing)."""

MAX_REQUEST_BYTES = 1 << 20
READY_TIMEOUT_SECONDS = 60


def startup_key(env: dict[str, str]) -> dict[str, str]:
    """What in an environment shapes an interpreter's start (empty values count as unset)."""
    return {
        name: value
        for name, value in env.items()
        if value
        and (
            (name.startswith("PYTHON") and name not in APPLIED)
            or name.startswith("LC_")
            or name in ("LANG", "OPENAI_LOG")
        )
    }


# --- the server ------------------------------------------------------------------------------


class _Fork:
    """What the fork becomes: the request and the three descriptors it was handed."""

    def __init__(self, request: dict[str, object], fds: list[int]) -> None:
        self.request = request
        self.fds = fds


class _Server:
    """The listening socket, the forks running and their shims' connections."""

    def __init__(self, directory: Path) -> None:
        gc.disable()  # the imports, without walking their growing heap again and again
        for name in PRELOAD:
            importlib.import_module(name)
        gc.freeze()  # what every fork shares: never walked again, here or in a fork
        # Both sides as their interpreters left them: the shim's, like this one's, has added
        # PEP 538's LC_CTYPE where the locale was C, as the console script's would.
        self.key = startup_key(dict(os.environ))
        self.control = socket.socket(fileno=0)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.listener.bind(str(directory / "socket"))
        self.listener.listen(64)
        self.wake_read, self.wake_write = os.pipe()
        os.set_blocking(self.wake_write, False)
        signal.set_wakeup_fd(self.wake_write)
        signal.signal(signal.SIGCHLD, lambda _signo, _frame: None)
        self.running: dict[int, socket.socket | None] = {}  # fork pid -> its shim's connection

    def serve(self) -> _Fork | None:
        """Answer requests until the control socket closes; in a fork, what it becomes."""
        self.control.send(b"ready")
        while True:
            shims = [conn for conn in self.running.values() if conn is not None]
            readers = [self.control, self.listener, self.wake_read, *shims]
            ready, _, _ = select.select(readers, [], [])
            if self.wake_read in ready:
                os.read(self.wake_read, 512)
                self._reap()
            if self.control in ready and not self.control.recv(64):  # the test process is gone
                for pid in self.running:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                return None
            for pid, conn in list(self.running.items()):
                if conn is not None and conn in ready and not conn.recv(64):
                    conn.close()  # its shim is gone (killed): so is "codebot"
                    self.running[pid] = None
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
            if self.listener in ready and (fork := self._accept()) is not None:
                return fork

    def _accept(self) -> _Fork | None:
        """Take one request: fork for it (returning, in the fork, what it becomes), or answer
        ``fallback``."""
        conn, _ = self.listener.accept()
        try:
            data, fds, _, _ = socket.recv_fds(conn, MAX_REQUEST_BYTES, 3)
        except OSError:
            conn.close()
            return None
        request = json.loads(data) if data else {}
        env = request.get("env", {})
        differ = sorted({name for name, _ in startup_key(env).items() ^ self.key.items()})
        if len(fds) != 3 or differ:
            for fd in fds:
                os.close(fd)
            reason = f"descriptors: {len(fds)}" if len(fds) != 3 else f"the environment: {differ}"
            with contextlib.suppress(OSError):
                conn.send(json.dumps({"fallback": reason}).encode())
            conn.close()
            return None
        pid = os.fork()
        if pid == 0:
            signal.set_wakeup_fd(-1)
            for sock in (self.control, self.listener, conn, *self.running.values()):
                if sock is not None:
                    sock.close()
            os.close(self.wake_read)
            os.close(self.wake_write)
            return _Fork(request, fds)
        for fd in fds:
            os.close(fd)
        self.running[pid] = conn
        try:
            conn.send(json.dumps({"pid": pid}).encode())
        except OSError:
            os.kill(pid, signal.SIGKILL)
        self._reap()
        return None

    def _reap(self) -> None:
        """Tell the shim of every fork that ended how it ended."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = self.running.pop(pid, None)
            if conn is None:  # its shim is gone
                continue
            with contextlib.suppress(OSError):
                conn.send(json.dumps({"exit": os.waitstatus_to_exitcode(status)}).encode())
            conn.close()


def _stream(fd: int, mode: str, template: io.TextIOWrapper, unbuffered: bool) -> io.TextIOWrapper:
    """``sys.std*`` for ``fd`` as CPython's start-up makes it (``create_stdio``), off a tty."""
    write = mode == "w"
    buffering = 0 if unbuffered and write else -1
    buffer = open(fd, mode + "b", buffering=buffering, closefd=False)
    raw = buffer if buffering == 0 else buffer.raw
    raw.name = {0: "<stdin>", 1: "<stdout>", 2: "<stderr>"}[fd]  # type: ignore[misc,union-attr]
    stream = io.TextIOWrapper(
        buffer,  # type: ignore[arg-type]
        encoding=template.encoding,
        errors=template.errors,
        newline="\n",
        line_buffering=fd == 2 and not unbuffered,
        write_through=unbuffered and write,
    )
    stream.mode = mode  # type: ignore[misc]
    return stream


def _become(fork: _Fork) -> None:
    """Turn this fork into ``codebot ARGS`` as its shim's caller would have started it."""
    request = fork.request
    for signo in range(1, signal.NSIG):
        if signo in (signal.SIGKILL, signal.SIGSTOP) or not signal.getsignal(signo):
            continue
        with contextlib.suppress(OSError, ValueError, RuntimeError):
            signal.signal(signo, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # as CPython's start-up has them
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    for target, fd in enumerate(fork.fds):
        os.dup2(fd, target)
        os.close(fd)
    env: dict[str, str] = request["env"]  # type: ignore[assignment]
    os.environ.clear()
    os.environ.update(env)
    os.chdir(str(request["cwd"]))
    script = str(request["script"])
    sys.argv = [script, *request["argv"]]  # type: ignore[misc]
    sys.orig_argv = [sys.executable, *sys.argv]
    sys.path[0] = str(Path(script).parent)
    sys.dont_write_bytecode = bool(env.get("PYTHONDONTWRITEBYTECODE"))
    unbuffered = bool(env.get("PYTHONUNBUFFERED"))
    templates = (sys.__stdin__, sys.__stdout__, sys.__stderr__)
    sys.stdin, sys.stdout, sys.stderr = (
        _stream(fd, "r" if fd == 0 else "w", template, unbuffered)  # type: ignore[arg-type]
        for fd, template in enumerate(templates)
    )
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr
    gc.enable()  # as a fresh interpreter has it (the console script pauses it itself)
    os._exit(_exit_code(script))


def _exit_code(script: str) -> int:
    """Run the console script and end as CPython's ``Py_FinalizeEx`` does up to where it would
    tear the preloaded modules down (work a fresh interpreter never imported them for): the
    exit code, an uncaught exception's traceback, then the non-daemon threads joined, the
    ``atexit`` functions, and the standard streams flushed (120 when that fails)."""
    interrupted = False
    try:
        runpy.run_path(script, run_name="__main__")
        code = 0
    except SystemExit as exc:
        code = _system_exit_code(exc)
    except KeyboardInterrupt as exc:
        sys.excepthook(type(exc), exc, exc.__traceback__)
        interrupted, code = True, 1
    except BaseException as exc:  # boundary: as the interpreter reports an uncaught exception
        sys.excepthook(type(exc), exc, exc.__traceback__)
        code = 1
    threading._shutdown()  # type: ignore[attr-defined]  # what Py_FinalizeEx calls first
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = 120
    if interrupted:  # CPython ends an uncaught KeyboardInterrupt by the signal itself
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    return code


def _system_exit_code(exc: SystemExit) -> int:
    """The status ``SystemExit(code)`` ends a process with (a message printed, as CPython does)."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    print(exc.code, file=sys.stderr)
    return 1


# --- the client (in a test process) ----------------------------------------------------------

_lock = threading.Lock()
_server: tuple[int, socket.socket, Path] | None = None  # (owner pid, control socket, directory)


def command(script: Path = CODEBOT) -> list[str]:
    """The argv prefix that runs ``script`` (the console script) as a fork of this test process's
    server, started at the first call."""
    global _server
    with _lock:
        if _server is None or _server[0] != os.getpid():
            directory = Path(tempfile.mkdtemp(prefix="cbz-"))
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            with theirs:
                subprocess.run(
                    [sys.executable, str(Path(__file__)), str(directory)],
                    stdin=theirs,
                    stdout=subprocess.DEVNULL,
                    check=True,
                )  # it detaches at once (this process's descendants stay its own)
            ours.settimeout(READY_TIMEOUT_SECONDS)
            if ours.recv(16) != b"ready":
                raise RuntimeError("the codebot fork server did not start")
            ours.settimeout(None)
            _server = (os.getpid(), ours, directory)
        return [sys.executable, "-SE", str(SHIM), str(_server[2] / "socket"), str(script)]


def main() -> None:
    directory = Path(sys.argv[1])
    if os.fork() > 0:  # detached: no test process counts it (or its forks) as its child
        os._exit(0)
    os.setsid()
    fork = _Server(directory).serve()
    if fork is None:
        with contextlib.suppress(OSError):
            (directory / "socket").unlink()
            directory.rmdir()
        return
    _become(fork)  # never returns


if __name__ == "__main__":
    main()
