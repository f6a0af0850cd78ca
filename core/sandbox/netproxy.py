"""The sandbox's network by domain: the HTTP proxy confined commands reach chosen hosts through.

With ``"sandbox": {"network": ["pypi.org", "*.npmjs.org"]}`` a confined command still gets a
new, empty network namespace (nothing outside is reachable, the host's loopback included);
the exec helper (``--proxy``) runs a forwarder inside it on ``127.0.0.1:`` :data:`PORT` that
relays each connection to this proxy's Unix socket (a filesystem socket crosses network
namespaces), and the command's environment names it (``HTTP_PROXY``, ``HTTPS_PROXY``...).
Why this design: a private namespace keeps "no direct connection to anything" a kernel fact,
whatever the command does; the proxy only adds what it lets through.

The proxy speaks HTTP/1.1 as a forward proxy:

- ``CONNECT host:port`` (HTTPS and anything else over TLS): a tunnel of bytes it never reads;
  it sees the host name only.
- ``GET http://host/...`` (plain HTTP, absolute URI): the request is sent on to the host with
  ``Connection: close`` (one request per connection: a second one cannot go elsewhere).

A host not allowed by the patterns (:func:`allowed`) gets ``403`` with a reason and a body that
say "sandbox" and name the host; the refusal is remembered (:meth:`DomainProxy.refusals_since`)
so the tool result can say so. The proxy resolves names (the sandbox needs no DNS) and refuses
an address that is loopback, link-local (cloud metadata), multicast or unspecified, whatever
name led there. It lives for the session: started on the first confined call that needs it,
threads of codebot's own process (so it ends with codebot, whatever the signal), its socket in
a 0700 directory outside any project (:meth:`DomainProxy.close` removes it; a directory a
SIGKILL left behind is removed by the next start). It is bounded: :data:`MAX_CONNECTIONS` at
once, :data:`MAX_HEADER_BYTES` of request head, timeouts on reading the head, on connecting and
on idle tunnels.

``CODEBOT_TEST_PROXY_HOSTS`` (test-only; ``name=127.0.0.1:port,...``) sends an allowed name to
a local address instead of resolving it: the tests have no internet. It only changes where an
allowed name goes; it never allows a name.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import re
import select
import shutil
import socket
import socketserver
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from codebot_mcp.core.config.sandboxing import normalize_pattern
from codebot_mcp.core.fsutil import sweep_orphans

__all__ = ["DomainProxy", "allowed", "environment", "normalize_pattern"]

PORT = 3128
"""Where the forwarder listens inside each sandbox (a namespace of its own: no clash)."""
MAX_CONNECTIONS = 64
"""At once; one more is answered 503."""
MAX_HEADER_BYTES = 64 * 1024
"""The request line and headers (a real client sends well under 8 KiB)."""
HEADER_SECONDS = 30.0
"""To send the request head (a client that connects and stalls holds a thread no longer)."""
CONNECT_SECONDS = 15.0
"""To reach the host (every address it resolves to, in turn)."""
IDLE_SECONDS = 300.0
"""A tunnel with nothing moving either way for this long is closed."""
ANSWER_DRAIN_SECONDS = 1.0
"""After an error answer: how long the client may take to hang up (see :func:`_answer`)."""
MAX_REFUSALS = 1000
"""Refusals remembered (the oldest go first)."""
TEST_HOSTS_ENV = "CODEBOT_TEST_PROXY_HOSTS"
"""Test-only: ``name=host:port,...`` where allowed names go instead of resolving them."""
DIR_PREFIX = "codebot-proxy-"
SOCKET_NAME = "proxy.sock"
ENV_NAMES = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy")
NO_PROXY_NAMES = ("NO_PROXY", "no_proxy")
_BUFFER = 65536
_HOST = re.compile(r"^(?:[a-z0-9_.-]{1,253}|[0-9a-f:.]{2,45})$")
"""A host name or an IP address (nothing else is looked up, recorded or shown)."""


def allowed(host: str, patterns: Sequence[str]) -> bool:
    """Whether ``host`` matches one of ``patterns`` (:func:`normalize_pattern`): equal to a
    plain name, or ending in ``.x`` for ``*.x`` (``a.b.x`` too; ``x`` itself only if listed)."""
    host = host.lower().rstrip(".")
    for pattern in patterns:
        if pattern.startswith("*."):
            if host.endswith(pattern[1:]):
                return True
        elif host == pattern:
            return True
    return False


def environment(port: int = PORT) -> dict[str, str]:
    """What a confined command's environment gets: every proxy variable on the forwarder, and
    no exception (``NO_PROXY`` empty: nothing goes direct, there is no direct way)."""
    url = f"http://127.0.0.1:{port}"
    return {
        **dict.fromkeys(ENV_NAMES, url),
        **dict.fromkeys(NO_PROXY_NAMES, ""),
        "NODE_USE_ENV_PROXY": "1",  # Node's own fetch (Node 24+) honours the variables then
    }


def test_hosts(value: str | None) -> dict[str, tuple[str, int]]:
    """:data:`TEST_HOSTS_ENV`'s mapping (a malformed item is skipped)."""
    out: dict[str, tuple[str, int]] = {}
    for item in (value or "").split(","):
        name, _, where = item.strip().partition("=")
        host, _, port = where.rpartition(":")
        if name and host and port.isdigit():
            out[name.lower().rstrip(".")] = (host, int(port))
    return out


def refusal_text(host: str, patterns: Sequence[str]) -> str:
    """The 403 body: says "sandbox", names the host and what to do."""
    listed = ", ".join(patterns) or "none"
    return (
        f"sandbox: refused connection to {host}: it is not in sandbox.network (allowed: "
        f"{listed}). Ask the user to add it to sandbox.network in the settings, or to run "
        'the command outside the sandbox ("sandbox": false).\n'
    )


def _forbidden_address(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%")[0])
    mapped = getattr(ip, "ipv4_mapped", None)
    if mapped is not None:
        ip = mapped
    return ip.is_loopback or ip.is_link_local or ip.is_multicast or ip.is_unspecified


class _RefusedError(Exception):
    def __init__(self, status: int, reason: str, body: str) -> None:
        super().__init__(body)
        self.status = status
        self.reason = reason
        self.body = body


class DomainProxy:
    """The session's proxy for ``patterns`` (normalized): :meth:`start` it, hand
    :attr:`socket_path` to the exec helper, :meth:`close` it at the end.

    Args:
        patterns: Allowed host patterns (normalized: :func:`normalize_pattern`).
    """

    def __init__(self, patterns: Sequence[str]) -> None:
        self.patterns = tuple(patterns)
        self.socket_path: Path | None = None
        self._dir: Path | None = None
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._refusals: list[tuple[float, str]] = []
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._test_hosts = test_hosts(os.environ.get(TEST_HOSTS_ENV))

    def start(self) -> Path:
        """Listen (once; later calls return the same socket).

        Raises:
            OSError: the socket cannot be made.
        """
        with self._lock:
            if self.socket_path is not None:
                return self.socket_path
            _sweep_stale()
            base = Path(tempfile.gettempdir())
            if len(str(base)) > 60:  # a Unix socket's path holds 107 bytes
                base = Path("/tmp")
            folder = Path(tempfile.mkdtemp(prefix=f"{DIR_PREFIX}{os.getpid()}-", dir=base))
            path = folder / SOCKET_NAME
            try:
                server = _Server(str(path), self)
            except OSError:
                shutil.rmtree(folder, ignore_errors=True)
                raise
            thread = threading.Thread(
                target=server.serve_forever,
                kwargs={"poll_interval": 0.1},
                name="codebot-netproxy",
                daemon=True,
            )
            thread.start()
            self._dir, self._server, self._thread = folder, server, thread
            self.socket_path = path
            return path

    def mark(self) -> float:
        """A point in time for :meth:`refusals_since`."""
        return time.monotonic()

    def refusals_since(self, mark: float) -> list[str]:
        """The hosts refused since ``mark``, each once, in order."""
        with self._lock:
            hosts = [host for at, host in self._refusals if at >= mark]
        return list(dict.fromkeys(hosts))

    def note(self, hosts: Sequence[str]) -> str:
        """What a call's result says when the proxy refused ``hosts`` during it."""
        shown = ", ".join(hosts[:6]) + (f" and {len(hosts) - 6} more" if len(hosts) > 6 else "")
        return (
            f"[sandbox: refused connection to {shown}: not in sandbox.network (allowed: "
            f"{', '.join(self.patterns)}). If the command really needs it, ask the user to add "
            'it to sandbox.network, or call bash again with "sandbox": false: it then runs '
            "outside the sandbox, after the user approves.]"
        )

    def close(self) -> None:
        """Stop listening and remove the socket's directory (open tunnels end with codebot)."""
        with self._lock:
            server, folder = self._server, self._dir
            self._server = self._dir = self.socket_path = None
        if server is not None:
            server.shutdown()
            server.server_close()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    # -- one connection -------------------------------------------------------------------

    def _refuse(self, host: str) -> _RefusedError:
        with self._lock:
            self._refusals.append((time.monotonic(), host))
            del self._refusals[:-MAX_REFUSALS]
        return _RefusedError(
            403, "Forbidden by the codebot sandbox", refusal_text(host, self.patterns)
        )

    def _connect(self, host: str, port: int) -> socket.socket:
        if not allowed(host, self.patterns):
            raise self._refuse(host)
        mapped = self._test_hosts.get(host.lower().rstrip("."))
        if mapped is not None:  # test-only: where the name goes, never whether it may
            return socket.create_connection(mapped, timeout=CONNECT_SECONDS)
        try:
            found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            why = f"sandbox proxy: cannot resolve {host}: {exc}\n"
            raise _RefusedError(502, "Bad Gateway", why) from None
        addresses = [a for a in found if not _forbidden_address(str(a[4][0]))]
        if not addresses:
            raise _RefusedError(
                403,
                "Forbidden by the codebot sandbox",
                f"sandbox: refused connection to {host}: it resolves only to loopback or "
                "link-local addresses, which the sandbox never reaches.\n",
            )
        error: OSError | None = None
        for family, kind, proto, _, where in addresses:
            upstream = socket.socket(family, kind, proto)
            upstream.settimeout(CONNECT_SECONDS)
            try:
                upstream.connect(where)
                return upstream
            except OSError as exc:
                upstream.close()
                error = exc
        raise _RefusedError(
            502, "Bad Gateway", f"sandbox proxy: cannot connect to {host}:{port}: {error}\n"
        )

    def handle(self, client: socket.socket) -> None:
        """Serve one connection from a forwarder (bounded; never raises)."""
        if not self._slots.acquire(blocking=False):
            _answer(client, 503, "Service Unavailable", "sandbox proxy: too many connections\n")
            return
        try:
            self._serve(client)
        except _RefusedError as exc:
            _answer(client, exc.status, exc.reason, exc.body)
        except OSError:  # boundary: a client or host that went away; the connection ends
            pass
        finally:
            self._slots.release()

    def _serve(self, client: socket.socket) -> None:
        client.settimeout(HEADER_SECONDS)
        head, rest = _read_head(client)
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/"):
            raise _RefusedError(400, "Bad Request", "sandbox proxy: not an HTTP request\n")
        method, target, version = parts
        if method.upper() == "CONNECT":
            host, port = _host_port(target, 443)
            upstream = self._connect(host, port)
            with upstream:
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                if rest:
                    upstream.sendall(rest)
                _pipe(client, upstream)
            return
        match = re.match(r"(?i)^http://([^/?#]+)([^#]*)", target)
        if match is None:
            raise _RefusedError(
                400,
                "Bad Request",
                "sandbox proxy: only absolute http:// requests and CONNECT are proxied\n",
            )
        host, port = _host_port(match.group(1), 80)
        path = match.group(2) or "/"
        upstream = self._connect(host, port)
        with upstream:
            headers = [
                line
                for line in lines[1:]
                if line
                and line.split(":", 1)[0].strip().lower()
                not in ("connection", "proxy-connection", "keep-alive", "proxy-authorization")
            ]
            if not any(h.split(":", 1)[0].strip().lower() == "host" for h in headers):
                headers.insert(0, f"Host: {match.group(1)}")
            out = "\r\n".join([f"{method} {path} {version}", *headers, "Connection: close"])
            upstream.sendall(out.encode("latin-1") + b"\r\n\r\n" + rest)
            _pipe(client, upstream)


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128

    def __init__(self, path: str, proxy: DomainProxy) -> None:
        self.proxy = proxy
        super().__init__(path, _Handler)
        os.chmod(path, 0o600)


class _Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        server = self.server
        assert isinstance(server, _Server)
        request = self.request
        assert isinstance(request, socket.socket)
        server.proxy.handle(request)


def _read_head(client: socket.socket) -> tuple[bytes, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > MAX_HEADER_BYTES:
            raise _RefusedError(
                431,
                "Request Header Fields Too Large",
                f"sandbox proxy: the request head passed {MAX_HEADER_BYTES} bytes\n",
            )
        chunk = client.recv(_BUFFER)
        if not chunk:
            raise OSError("the client closed the connection")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    if len(head) > MAX_HEADER_BYTES:
        raise _RefusedError(
            431, "Request Header Fields Too Large", "sandbox proxy: head too large\n"
        )
    return head, rest


def _host_port(authority: str, default: int) -> tuple[str, int]:
    authority = authority.rpartition("@")[2]  # user:password@ is not a host
    if authority.startswith("["):
        host, _, tail = authority[1:].partition("]")
        port = tail[1:] if tail.startswith(":") else ""
    else:
        host, _, port = authority.partition(":")
    host = host.lower().rstrip(".")
    if not _HOST.match(host) or (port and not port.isdigit()) or int(port or default) > 65535:
        raise _RefusedError(400, "Bad Request", f"sandbox proxy: bad host {authority!r}\n")
    return host, int(port or default)


def _answer(client: socket.socket, status: int, reason: str, body: str) -> None:
    data = body.encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n"
    )
    with contextlib.suppress(OSError):
        client.settimeout(5)
        client.sendall(head.encode() + data)
        # Closing with unread bytes (the head, when it was not read) resets the connection,
        # and the client may lose the answer: end ours, then read a little of theirs.
        client.shutdown(socket.SHUT_WR)
        client.settimeout(ANSWER_DRAIN_SECONDS)
        for _ in range(16):
            if not client.recv(_BUFFER):
                break


def _pipe(a: socket.socket, b: socket.socket) -> None:
    """Relay both ways until both ends are done or nothing moves for :data:`IDLE_SECONDS`."""
    a.settimeout(IDLE_SECONDS)  # a peer that stops reading blocks a send no longer
    b.settimeout(IDLE_SECONDS)
    by_fd = {a.fileno(): (a, b), b.fileno(): (b, a)}
    poller = select.poll()  # not select(): codebot may hold descriptors past 1024
    for fd in by_fd:
        poller.register(fd, select.POLLIN)
    live = len(by_fd)
    while live:
        ready = poller.poll(IDLE_SECONDS * 1000)
        if not ready:
            return
        for fd, _ in ready:
            source, sink = by_fd[fd]
            data = source.recv(_BUFFER)
            if data:
                sink.sendall(data)
                continue
            poller.unregister(fd)
            live -= 1
            with contextlib.suppress(OSError):
                sink.shutdown(socket.SHUT_WR)


_swept = False


def _sweep_stale() -> None:
    """Remove proxy directories of codebot processes that are gone (once per process)."""
    global _swept
    if _swept:
        return
    _swept = True
    sweep_orphans((Path(tempfile.gettempdir()), Path("/tmp")), DIR_PREFIX)
