"""The warm holder's server side (see :mod:`mcpbridge.warm`): one Manager behind a Unix socket.

Every request is served by the cold path's own parts: ``Manager`` (start, restart policy, status),
``call_once`` (tool lookup, argument check, errors) and ``server_view`` (redacted views).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys
from contextlib import suppress
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import SocketAttribute, SocketListener, SocketStream

from codebot_mcp.core import gcpause, jsonutil
from codebot_mcp.core.config import effective, paths
from codebot_mcp.core.errors import CodebotError
from codebot_mcp.core.tools.arguments import Pairs
from codebot_mcp.mcpbridge.calls.call import ManagedServers, call_once
from codebot_mcp.mcpbridge.connection.manager import Manager
from codebot_mcp.mcpbridge.connection.report import listed_view
from codebot_mcp.mcpbridge.warm.callhere import Resolved, resolve
from codebot_mcp.mcpbridge.warm.holder_client import (
    ACCEPT_TIMEOUT,
    HEARTBEAT_SECONDS,
    MAX_LINE_BYTES,
    SOCKET_PATH_LIMIT,
    environment_digest,
    environment_file,
    fingerprint,
    socket_path,
)

BUSY_RECHECK_SECONDS = 1.0
"""While a call runs past the idle timeout, look again this often."""


def _peer_uid(sock: socket.socket) -> int:
    so_peercred = getattr(socket, "SO_PEERCRED", None)
    if so_peercred is None:  # pragma: no cover - not Linux: the 0600 socket is the guard
        return os.getuid()
    data = sock.getsockopt(socket.SOL_SOCKET, so_peercred, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", data)
    return int(uid)


def _error(exit_code: int, message: str, hint: str | None = None) -> dict[str, Any]:
    return {"error": {"exit_code": exit_code, "message": message, "hint": hint}}


def _is_names(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


_SHAPES: dict[str, Any] = {
    "op": lambda v: isinstance(v, str),
    "digest": lambda v: v is None or isinstance(v, str),
    "servers": lambda v: v is None or _is_names(v),
    "schemas": lambda v: v is None or isinstance(v, bool),
    "server": lambda v: isinstance(v, str),
    "tool": lambda v: isinstance(v, str),
    "arguments": lambda v: v is None or isinstance(v, dict),
    "pairs": lambda v: v is None or isinstance(v, bool),
    "cwd": lambda v: isinstance(v, str),
    "environ": lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in v.values()),
    "words": _is_names,
}
"""What each field of a request may hold; a request is checked whole before anything runs, so
no value a client sends reaches the Manager in a shape it does not expect."""
_REQUIRED = {
    "call": ("server", "tool"),
    "call_here": ("server", "tool", "cwd", "environ", "words"),
}


def malformed(request: dict[str, Any]) -> str | None:
    """What is wrong with a request object's shape, or None when it can be served."""
    if not isinstance(request.get("op"), str):
        return 'a request needs an "op" string'
    for key in _REQUIRED.get(request["op"], ()):
        if key not in request:
            return f'a {request["op"]!r} request needs "{key}"'
    for key, value in request.items():
        check = _SHAPES.get(key)
        if check is not None and not check(value):
            return f'"{key}" has the wrong type ({type(value).__name__})'
    if request["op"] == "call" and request.get("pairs"):
        values = (request.get("arguments") or {}).values()
        if not all(isinstance(v, str) for v in values):
            return 'key=value arguments ("pairs") must all be strings'
    return None


class Holder:
    """The servers of one settings digest, kept connected, answering list and call requests."""

    def __init__(self, manager: Manager, digest: str, idle: float) -> None:
        self.manager = manager
        self.digest = digest
        self.idle = idle
        self.stop = anyio.Event()
        self._lock = anyio.Lock()
        self._last_used = anyio.current_time()
        self._busy = 0
        self._resolving = anyio.CapacityLimiter(1)
        """One ``call_here`` resolution at a time (in a worker thread: a large project's trust
        fingerprint must not hold up the heartbeats of the calls running)."""

    async def _send(self, stream: SocketStream, message: dict[str, Any]) -> None:
        await stream.send(json.dumps({"digest": self.digest, **message}).encode() + b"\n")

    async def _retry_failed(self) -> None:
        """Failed and crashed servers start afresh on the next request, as in a cold run (the
        restart policy's "the next call restarts it"); connected ones keep their connection.
        """
        manager = self.manager
        async with self._lock:
            if any(not c.connected for c in manager.clients.values()):
                await manager.reconfigure(manager.servers)
            await manager.refresh_if_dirty()

    async def _list(self, request: dict[str, Any]) -> dict[str, Any]:
        await self._retry_failed()
        names = request.get("servers") or list(self.manager.servers)
        schemas = bool(request.get("schemas"))
        show = bool(request.get("all"))  # mcp list --all: app-only tools too
        listing = ManagedServers(self.manager).listing()  # started already: kept connected
        views = [
            listed_view(s, schemas=schemas, show_app_tools=show) for s in listing if s.name in names
        ]
        return {"views": views}

    async def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        arguments = request.get("arguments") or {}
        if request.get("pairs") and isinstance(arguments, dict):
            arguments = Pairs(arguments)  # key=value text, typed by the tool's schema as cold
        return await self._run(request["server"], str(request.get("tool")), arguments)

    async def _call_here(self, here: Resolved) -> dict[str, Any]:
        """A call resolved from the client's settings: what it prints, already redacted with
        their secrets (the client has not read them)."""
        reply = await self._run(here.config.name, here.tool, here.arguments)
        if "error" in reply:
            error = reply["error"]
            hint = error["hint"]
            return _error(
                error["exit_code"], here.redact(error["message"]), hint and here.redact(hint)
            )
        result = reply["result"]
        return {"result": {"text": here.redact(result["text"]), "is_error": result["is_error"]}}

    async def _run(self, server: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        await self._retry_failed()
        config = self.manager.servers[server]
        try:
            outcome = await call_once(self.manager, config, tool, arguments)
        except CodebotError as exc:
            return _error(int(exc.exit_code), exc.message, exc.hint)
        return {
            "result": {"text": outcome.text, "is_error": outcome.is_error, "data": outcome.data}
        }

    async def _read_request(self, stream: SocketStream) -> dict[str, Any] | None:
        """The first line as a JSON object, or None: junk, too long, too slow, too deep."""
        buffer = bytearray()
        try:
            with anyio.fail_after(ACCEPT_TIMEOUT):
                while True:
                    chunk = await stream.receive()
                    end = chunk.find(b"\n")  # only the new bytes: a huge line costs O(n)
                    if end >= 0:
                        buffer += chunk[:end]
                        break
                    buffer += chunk
                    if len(buffer) > MAX_LINE_BYTES:
                        return None
            request = jsonutil.loads(bytes(buffer))
        except (TimeoutError, anyio.EndOfStream, ValueError, RecursionError):
            return None
        return request if isinstance(request, dict) else None

    async def handle(self, stream: SocketStream) -> None:
        """One connection: one request, the acceptance line, one answer."""
        async with stream:
            if _peer_uid(stream.extra(SocketAttribute.raw_socket)) != os.getuid():
                return  # not our user: say nothing
            request = await self._read_request(stream)
            if request is None:
                return
            self._last_used = anyio.current_time()
            problem = malformed(request)
            if problem is not None:
                await self._send(stream, {"accepted": True})
                await self._send(stream, _error(2, f"malformed request: {problem}"))
                return
            op = request["op"]
            if op in ("status", "stop"):
                await self._send(stream, {"accepted": True})
                facts = {"pid": os.getpid(), "servers": sorted(self.manager.servers)}
                await self._send(stream, {**facts, "idle_timeout": self.idle})
                if op == "stop":
                    self.stop.set()
                return
            here = None
            if op == "call_here":
                try:
                    here = await anyio.to_thread.run_sync(
                        resolve, request, self.digest, limiter=self._resolving
                    )
                except Exception as exc:  # boundary: the client's ordinary path says what it is
                    print(
                        f"warm holder: a call not resolved: {type(exc).__name__}", file=sys.stderr
                    )
                if here is None or here.config.name not in self.manager.servers:
                    await self._send(stream, {"accepted": False, "declined": True})
                    return
                await self._send(stream, {"accepted": True, "warnings": list(here.warnings)})
            elif request.get("digest") != self.digest:
                await self._send(stream, {"accepted": False, "stale": True})
                return
            else:
                await self._send(stream, {"accepted": True})
            self._busy += 1
            try:
                async with anyio.create_task_group() as beating:
                    beating.start_soon(self._heartbeat, stream)
                    if op == "list":
                        reply = await self._list(request)
                    elif here is not None:
                        reply = await self._call_here(here)
                    elif op == "call" and request["server"] in self.manager.servers:
                        reply = await self._call(request)
                    else:
                        reply = _error(2, f"the warm holder cannot answer {op!r}")
                    beating.cancel_scope.cancel()
            except Exception as exc:  # boundary: one request's failure never ends the holder
                print(f"warm holder: {op!r} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
                reply = _error(1, f"the warm holder failed on this request: {type(exc).__name__}")
            finally:
                self._busy -= 1
                self._last_used = anyio.current_time()
            await self._send(stream, reply)

    async def _heartbeat(self, stream: SocketStream) -> None:
        """Tell the client the request still runs (it gives up on a silent holder)."""
        with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            while True:
                await anyio.sleep(HEARTBEAT_SECONDS)
                await self._send(stream, {"working": True})

    async def serve(self, listener: SocketListener) -> None:
        """Accept connections until stopped (idle timeout, ``--stop``, a signal)."""

        async def one(stream: SocketStream) -> None:
            try:
                await self.handle(stream)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                pass  # a client that went away needs no answer
            except Exception as exc:  # boundary: no connection takes the holder down with it
                print(f"warm holder: a request failed: {type(exc).__name__}", file=sys.stderr)

        async def accept() -> None:
            async with anyio.create_task_group() as tg:
                while True:
                    tg.start_soon(one, await listener.accept())

        async with anyio.create_task_group() as tg:
            tg.start_soon(accept)
            tg.start_soon(self._watch_idle)
            tg.start_soon(self._watch_signals)
            await self.stop.wait()
            tg.cancel_scope.cancel()

    async def _watch_idle(self) -> None:
        while not self.stop.is_set():
            left = self._last_used + self.idle - anyio.current_time()
            if left <= 0 and not self._busy:
                self.stop.set()
                return
            with anyio.move_on_after(max(left, 0) or BUSY_RECHECK_SECONDS):
                await self.stop.wait()

    async def _watch_signals(self) -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as signals:
            async for _ in signals:
                self.stop.set()
                return


async def serve(
    cwd: Path, *, trust_project: bool, idle_timeout: float | None, ready: Any = None
) -> int:
    """Load the settings as the cold path does, start the servers, serve; the exit code."""
    loaded = effective.load(cwd, assume_trusted=trust_project)
    settings, result = loaded.settings, loaded.trust  # roots and limits: trust applied too
    servers = dict(settings.servers)
    from codebot_mcp.core.config.settings import root_dirs
    from codebot_mcp.core.tools.useragent import NoSampling, Policy

    roots = root_dirs(settings.project_root, settings.cwd, settings.roots)
    from codebot_mcp.mcpbridge.tools.tool_pins import settings_pins

    pins = settings_pins(settings)  # as a command's session: every call it serves is checked
    digest = fingerprint(servers, result.trusted, roots, pins.digest() if pins else "")
    # The cold path's default answers: --elicit decline, no sampling (refused, same words).
    agent, sampler = Policy(root_dirs=roots), NoSampling()
    path = socket_path(settings.project_file, settings.cwd)
    idle = idle_timeout if idle_timeout is not None else settings.warm_idle_timeout
    if len(str(path).encode()) > SOCKET_PATH_LIMIT:
        print(f"error: the socket path {path} is too long for a Unix socket", file=sys.stderr)
        return 3
    paths.private_dir(path.parent)
    temporary = path.with_name(f"{path.stem}.{os.getpid()}.tmp")
    with suppress(OSError):
        temporary.unlink()
    old_umask = os.umask(0o177)  # the socket is 0600 from its first moment
    try:
        listener = await anyio.create_unix_listener(temporary, mode=0o600)
    finally:
        os.umask(old_umask)
    async with listener, Manager(servers, agent=agent, sampler=sampler, pins=pins) as manager:
        await manager.start_all()
        _write_environment(path)  # first: a client that reads it finds this socket or none
        os.replace(temporary, path)  # atomic: a holder for changed settings replaces the old
        identity = os.stat(path).st_ino
        if ready is not None:
            ready(digest, manager)
        gcpause.release()  # started: from here on it serves (core.gcpause)
        try:
            await Holder(manager, digest, idle).serve(listener)
        finally:
            with suppress(OSError):
                if os.stat(path).st_ino == identity:  # still ours, not a successor's
                    path.unlink()
                    environment_file(path).unlink()
    return 0


def _write_environment(path: Path) -> None:
    """This holder's :func:`environment_digest` beside its socket, 0600, replaced atomically."""
    record = environment_file(path)
    temporary = record.with_name(f"{record.stem}.{os.getpid()}.envtmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="ascii") as file:
        file.write(environment_digest(os.environ) + "\n")
    os.replace(temporary, record)


def main(argv: list[str]) -> int:
    """``python -m codebot_mcp.mcpbridge.warm --cwd DIR [--trust-project] [--idle SECONDS]``
    (:mod:`.__main__`)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m codebot_mcp.mcpbridge.warm")
    parser.add_argument("--cwd", type=Path, required=True)
    parser.add_argument("--trust-project", action="store_true")
    parser.add_argument("--idle", type=float, default=None)
    args = parser.parse_args(argv)

    def ready(digest: str, manager: Any) -> None:
        failed = sorted(manager.failures)
        line = {
            "digest": digest,
            "pid": os.getpid(),
            "servers": sorted(manager.servers),
            "failed": failed,
        }
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the starter reads to EOF: let it go
        os.close(devnull)

    try:
        return anyio.run(
            lambda: serve(
                args.cwd, trust_project=args.trust_project, idle_timeout=args.idle, ready=ready
            )
        )
    except Exception as exc:  # boundary: the holder's last word goes to its log
        print(f"error: the warm holder failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
