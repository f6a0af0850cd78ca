"""A fork server for the HTTP test servers: the MCP SDK is imported once per test process, and
each server is a fork of a process that has it, instead of a fresh interpreter that imports it
again (~0.6 s of CPU per start, ~40 starts a run).

``python -m tests.servers.forkserver`` imports :data:`PRELOAD`, then serves its stdin, a Unix
``SOCK_SEQPACKET`` socket (one message each): each request is a JSON object
``{"module", "args", "env", "cwd"}`` with two descriptors (the server's stdout and stderr).
It forks; the child takes the descriptors as its stdout and stderr (stdin: ``/dev/null``), the
request's environment and working directory, and runs ``tests.servers.<module>`` as
``python -m`` would (``__main__``, ``sys.argv``). The answer
is ``{"pid": N}``; when a child ends, ``{"exit": N, "code": C}`` (a signal as ``-signo``, as
``subprocess`` reports it). The server ends when the socket closes (its test process is gone).

The child is a process of its own, as a server started with ``subprocess`` is: its own pid,
signals and exit; what differs is only that the SDK's modules are already in memory. Nothing
but the standard library and :data:`PRELOAD` is imported before a fork, and no thread runs. The
fork server itself is detached (its parent is not the test process, whose descendants some tests
count), and kills what it still runs when the socket closes.
:func:`tests.servers.util.run_http_server` is the client.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import runpy
import select
import signal
import socket
import sys

PRELOAD = (
    "mcp.server.mcpserver",
    "uvicorn",
    "uvicorn.protocols.http.h11_impl",
    "uvicorn.lifespan.on",
    "starlette.applications",
    "starlette.routing",
    "starlette.responses",
    "jwt",
)
"""What the SDK-built servers import and a fork inherits (never a server module itself:
``runpy`` runs it afresh as ``__main__``)."""

MAX_REQUEST_BYTES = 1 << 20


def _child(request: dict[str, object], stdout: int, stderr: int) -> None:
    """Become ``python -m tests.servers.<module> args`` (never returns)."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(stdout, 1)
        os.dup2(stderr, 2)
        for fd in (devnull, stdout, stderr):
            os.close(fd)
        os.environ.clear()
        os.environ.update(request["env"])  # type: ignore[arg-type]
        os.chdir(str(request["cwd"]))
        module = f"tests.servers.{request['module']}"
        sys.argv = [module, *request["args"]]  # type: ignore[misc]
        try:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if exc.code is not None and not isinstance(exc.code, int):
                print(exc.code, file=sys.stderr)
    except BaseException:  # boundary: the child's traceback goes to its stderr, as python's would
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)


def _reap(channel: socket.socket, children: set[int]) -> None:
    """Tell the client of every child that ended."""
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        children.discard(pid)
        channel.send(json.dumps({"exit": pid, "code": os.waitstatus_to_exitcode(status)}).encode())


def main() -> None:
    if os.fork() > 0:  # detached: no test process counts it (or its servers) as its child
        os._exit(0)
    gc.disable()  # the SDK's import, without walking its growing heap again and again
    for name in PRELOAD:
        importlib.import_module(name)
    gc.freeze()  # what every fork shares: never walked again, here or in a child
    gc.enable()
    channel = socket.socket(fileno=0)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda _signo, _frame: None)
    children: set[int] = set()
    while True:
        ready, _, _ = select.select([channel, wake_read], [], [])
        if wake_read in ready:
            os.read(wake_read, 512)
            _reap(channel, children)
        if channel not in ready:
            continue
        data, fds, _, _ = socket.recv_fds(channel, MAX_REQUEST_BYTES, 2)
        if not data:  # the test process is gone: none of its servers outlives it
            for pid in children:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            return
        request = json.loads(data)
        pid = os.fork()
        if pid == 0:
            channel.close()
            os.close(wake_read)
            os.close(wake_write)
            _child(request, *fds)
        for fd in fds:
            os.close(fd)
        children.add(pid)
        channel.send(json.dumps({"pid": pid}).encode())
        _reap(channel, children)


if __name__ == "__main__":
    main()
