"""The sandbox's network by domain (issue 32, item 6), against real processes.

Every command runs through the real ``bash`` tool in the real sandbox, with
``sandbox.network`` a list: the exec helper's forwarder inside the command's own network
namespace, codebot's proxy outside (``core.sandbox.netproxy``), real ``curl`` and Python
clients that use the proxy variables. There is no internet here, so the allowed names are
sent to local servers by the test-only ``CODEBOT_TEST_PROXY_HOSTS``; those servers listen on
the host's loopback, which a direct connection from the sandbox must never reach.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.core.sandbox import netproxy
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
DOMAINS = ("allowed.test", "*.allowed.test")


class Web:
    """A plain HTTP "remote host" on the host's loopback: it answers every GET with the
    path and Host it got, and counts the requests."""

    def __init__(self) -> None:
        seen: list[tuple[str, str]] = []
        self.seen = seen

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append((self.path, self.headers.get("Host", "")))
                body = f"hello {self.path} {self.headers.get('Host')}\n".encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Echo:
    """A TCP echo server on the host's loopback (stands in for a TLS host behind CONNECT)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._echo, args=(conn,), daemon=True).start()

    @staticmethod
    def _echo(conn: socket.socket) -> None:
        with conn:
            while data := conn.recv(65536):
                conn.sendall(data)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture(scope="module")
def web() -> Iterator[Web]:
    made = Web()
    yield made
    made.close()


@pytest.fixture(scope="module")
def echo() -> Iterator[Echo]:
    made = Echo()
    yield made
    made.close()


class Shell:
    """The bash tool in a workspace-write sandbox whose network is ``domains``."""

    def __init__(self, tmp_path: Path, domains: tuple[str, ...] = DOMAINS) -> None:
        self.project = tmp_path / "project"
        self.project.mkdir(parents=True)
        self.sandbox = Sandbox("workspace-write", workspace=self.project, domains=domains)
        self.tool = BashTool(self.project, self.project, self.sandbox)

    async def run(self, command: str, **extra: Any) -> ToolResult:
        return await self.tool.execute({"command": command, "timeout": 30, **extra})


@pytest.fixture
def shell(tmp_path: Path, web: Web, echo: Echo, monkeypatch: pytest.MonkeyPatch) -> Iterator[Shell]:
    mapping = (
        f"allowed.test=127.0.0.1:{web.port},echo.allowed.test=127.0.0.1:{echo.port},"
        f"mapped-but-not-listed.test=127.0.0.1:{web.port}"
    )
    monkeypatch.setenv(netproxy.TEST_HOSTS_ENV, mapping)
    made = Shell(tmp_path)
    yield made
    made.sandbox.close()


def _proxy_dirs() -> list[Path]:
    found: list[Path] = []
    for base in {Path(tempfile.gettempdir()), Path("/tmp")}:
        found += base.glob(f"{netproxy.DIR_PREFIX}{os.getpid()}-*")
    return found


@needs_sandbox
async def test_an_allowed_host_is_reached_through_the_proxy(shell: Shell, web: Web) -> None:
    before = len(web.seen)
    result = await shell.run("curl -sS --max-time 10 http://allowed.test/simple?x=1")
    assert not result.is_error, result.text
    assert result.text == "hello /simple?x=1 allowed.test", result.text
    python = (
        "import urllib.request; "
        "print(urllib.request.urlopen('http://allowed.test/py', timeout=10).read().decode())"
    )
    result = await shell.run(f'python3 -c "{python}"')
    assert not result.is_error, result.text
    assert result.text == "hello /py allowed.test", result.text
    assert web.seen[before:] == [("/simple?x=1", "allowed.test"), ("/py", "allowed.test")]
    assert "sandbox_refused_hosts" not in result.data


@needs_sandbox
async def test_no_direct_connection_not_even_to_the_allowed_hosts_address(
    shell: Shell, web: Web, echo: Echo
) -> None:
    before, accepted = len(web.seen), echo.accepted
    for command in (
        f"curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:{web.port}/direct",
        f"exec 3<>/dev/tcp/127.0.0.1/{echo.port} && echo connected",
        "curl -sS --noproxy '*' --max-time 5 http://allowed.test/direct",  # no DNS inside
        f"env -u HTTP_PROXY -u http_proxy -u ALL_PROXY -u all_proxy curl -sS --max-time 5 "
        f"http://127.0.0.1:{web.port}/",
    ):
        result = await shell.run(command)
        assert result.is_error, (command, result.text)
        assert "sandbox" in result.text, result.text
    assert len(web.seen) == before and echo.accepted == accepted
    # The proxy itself will not lead to the host's loopback by address either.
    result = await shell.run(f"curl -sS --max-time 5 http://127.0.0.1:{web.port}/via-proxy")
    assert "sandbox: refused connection to 127.0.0.1" in result.text, result.text
    assert len(web.seen) == before
    # Control: the same direct connection outside the sandbox arrives.
    outside = await shell.run(
        f"curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:{web.port}/control", sandbox=False
    )
    assert outside.text == f"hello /control 127.0.0.1:{web.port}", outside.text


@needs_sandbox
async def test_a_refused_host_says_sandbox_and_names_it(shell: Shell, web: Web) -> None:
    before = len(web.seen)
    result = await shell.run("curl -sS --max-time 5 http://elsewhere.example/x")
    # curl prints the proxy's 403 body: the model reads it in the output itself
    assert "sandbox: refused connection to elsewhere.example" in result.text, result.text
    assert result.data["sandbox_refused_hosts"] == ["elsewhere.example"]
    https = await shell.run("curl -sS --max-time 5 https://pypi.example/simple/")
    assert https.is_error
    assert "403" in https.text  # curl: "CONNECT tunnel failed, response 403"
    assert "[sandbox: refused connection to pypi.example" in https.text, https.text
    # What pip sees (urllib's tunnel error carries the reason phrase).
    python = "import urllib.request; urllib.request.urlopen('https://files.example/x', timeout=10)"
    pip_like = await shell.run(f'python3 -c "{python}"')
    assert "Tunnel connection failed: 403 Forbidden by the codebot sandbox" in pip_like.text
    assert pip_like.data["sandbox_refused_hosts"] == ["files.example"]
    # The test mapping says where a name goes, never that it may go: not listed, refused.
    mapped = await shell.run("curl -sS --max-time 5 http://mapped-but-not-listed.test/")
    assert "refused connection to mapped-but-not-listed.test" in mapped.text, mapped.text
    assert len(web.seen) == before


@needs_sandbox
async def test_connect_tunnels_bytes_to_an_allowed_host(shell: Shell, echo: Echo) -> None:
    script = textwrap.dedent(
        """
        import os, socket, threading, urllib.parse
        proxy = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
        s = socket.create_connection((proxy.hostname, proxy.port), timeout=20)
        target = b"echo.allowed.test:443"
        s.sendall(b"CONNECT " + target + b" HTTP/1.1\\r\\nHost: " + target + b"\\r\\n\\r\\n")
        head = b""
        while b"\\r\\n\\r\\n" not in head:
            head += s.recv(1)
        print(head.split(b"\\r\\n")[0].decode())
        payload = os.urandom(3_000_000)
        sender = threading.Thread(target=s.sendall, args=(payload,))
        sender.start()
        got = bytearray()
        while len(got) < len(payload):
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
        sender.join()
        print("echoed", len(got), bytes(got) == payload)
        """
    )
    (shell.project / "tunnel.py").write_text(script)
    accepted = echo.accepted
    result = await shell.run("python3 tunnel.py")
    assert not result.is_error, result.text
    assert result.text.splitlines() == [
        "HTTP/1.1 200 Connection established",
        "echoed 3000000 True",
    ], result.text
    assert echo.accepted == accepted + 1


@needs_sandbox
async def test_a_name_that_resolves_to_loopback_is_refused(
    tmp_path: Path, web: Web, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(netproxy.TEST_HOSTS_ENV, raising=False)
    made = Shell(tmp_path, domains=("localhost",))
    try:
        before = len(web.seen)
        result = await made.run(f"curl -sS --max-time 5 http://localhost:{web.port}/")
        assert "sandbox: refused connection to localhost" in result.text, result.text
        assert "loopback" in result.text
        assert len(web.seen) == before
    finally:
        made.sandbox.close()


@needs_sandbox
async def test_the_proxy_lives_for_the_session(shell: Shell) -> None:
    before = set(_proxy_dirs())
    assert not (await shell.run("true")).is_error  # started on the first confined call
    started = set(_proxy_dirs()) - before
    assert len(started) == 1
    assert (await shell.run("curl -sS --max-time 5 http://allowed.test/again")).text.startswith(
        "hello"
    )
    assert set(_proxy_dirs()) - before == started  # one proxy for every call
    shell.sandbox.close()
    assert not (set(_proxy_dirs()) - before)


@needs_sandbox
async def test_no_proxy_without_a_domain_list(tmp_path: Path) -> None:
    sandbox = Sandbox("workspace-write", workspace=tmp_path)
    try:
        assert sandbox.confinement().proxy is None
        assert "HTTPS_PROXY" not in sandbox.environment({})
    finally:
        sandbox.close()


KILLED = """
import anyio, sys
from pathlib import Path
from codebot_mcp.core.sandbox.confinement import Sandbox
from codebot_mcp.core.tools.builtin import BashTool

async def main():
    sandbox = Sandbox("workspace-write", workspace=Path(sys.argv[1]), domains=("allowed.test",))
    tool = BashTool(Path(sys.argv[1]), Path(sys.argv[1]), sandbox)
    await tool.execute({"command": "true"})
    print(sandbox.confinement().proxy[1], flush=True)
    await anyio.sleep(60)

anyio.run(main)
"""


@needs_sandbox
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_the_proxy_is_gone_when_codebot_dies(tmp_path: Path, how: signal.Signals) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        path = child.stdout.readline().strip()
        assert path.endswith(netproxy.SOCKET_NAME), path
        probe = socket.socket(socket.AF_UNIX)
        probe.connect(path)  # it listens while codebot lives
        probe.close()
        child.send_signal(how)
        child.wait(10)
        probe = socket.socket(socket.AF_UNIX)
        with pytest.raises(OSError):  # nothing listens (the file may stay until the sweep)
            probe.connect(path)
        probe.close()
        # The next codebot's proxy removes what a dead one left behind.
        nxt = (
            "from codebot_mcp.core.sandbox import netproxy as n; "
            "p = n.DomainProxy(()); p.start(); p.close()"
        )
        subprocess.run([sys.executable, "-c", nxt], check=True, timeout=30)
        assert not Path(path).parent.exists()
    finally:
        child.kill()
        child.wait()
        if child.stdout is not None:
            child.stdout.close()


def _ask(path: Path, data: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(10)
        sock.connect(str(path))
        sock.sendall(data)
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
        return out


def test_the_proxy_bounds_the_request_head_and_speaks_only_proxy_http() -> None:
    proxy = netproxy.DomainProxy(("allowed.test",))
    try:
        path = proxy.start()
        huge = b"GET http://allowed.test/ HTTP/1.1\r\nX: " + b"a" * (70 * 1024) + b"\r\n\r\n"
        assert _ask(path, huge).startswith(b"HTTP/1.1 431 ")
        assert _ask(path, b"GET /origin-form HTTP/1.1\r\nHost: x\r\n\r\n").startswith(
            b"HTTP/1.1 400 "
        )
        assert _ask(path, b"nonsense\r\n\r\n").startswith(b"HTTP/1.1 400 ")
        refused = _ask(path, b"CONNECT other.test:443 HTTP/1.1\r\n\r\n")
        assert refused.startswith(b"HTTP/1.1 403 Forbidden by the codebot sandbox\r\n")
        assert b"sandbox: refused connection to other.test" in refused
        assert proxy.refusals_since(0.0) == ["other.test"]
        assert proxy.refusals_since(time.monotonic() + 1) == []
    finally:
        proxy.close()
    assert not path.parent.exists()


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("pypi.org", True),
        ("PyPI.org.", True),
        ("evil-pypi.org", False),
        ("pypi.org.evil.com", False),
        ("registry.npmjs.org", True),
        ("a.b.npmjs.org", True),
        ("npmjs.org", False),  # *.x is the subdomains of x, not x itself
        ("xnpmjs.org", False),
    ],
)
def test_patterns_match_a_host_exactly_or_any_subdomain(host: str, expected: bool) -> None:
    assert netproxy.allowed(host, ("pypi.org", "*.npmjs.org")) is expected


def test_the_proxy_answers_503_past_its_connection_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(netproxy, "MAX_CONNECTIONS", 3)
    proxy = netproxy.DomainProxy(("allowed.test",))
    held: list[socket.socket] = []
    try:
        path = proxy.start()
        for _ in range(3):  # each holds its slot, sending no head
            sock = socket.socket(socket.AF_UNIX)
            sock.connect(str(path))
            held.append(sock)
        time.sleep(0.3)  # the server threads took them
        assert _ask(path, b"CONNECT allowed.test:443 HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 503 ")
        for sock in held:
            sock.close()
        held.clear()
        deadline = time.monotonic() + 5  # the slots come back
        while _ask(path, b"CONNECT other.test:443 HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 503 "):
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        for sock in held:
            sock.close()
        proxy.close()


def _forwarders(marker: str) -> list[int]:
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(entry.name))
    return found


@needs_sandbox
@pytest.mark.parametrize("how", ["exits", "is killed"])
def test_the_forwarder_dies_with_the_command(how: str) -> None:
    from codebot_mcp.core.proc import helper

    located = helper.locate()
    assert located is not None
    # only the forwarder's command line has it; in a short folder, as a Unix socket's path
    # may not pass 107 bytes (pytest's temporary folder may, and then no forwarder starts)
    short = Path(tempfile.mkdtemp(prefix="codebot-fwd-"))
    marker = str(short / "no-proxy-here.sock")
    command = "sleep 0.5" if how == "exits" else "sleep 60"
    options = ["--sandbox", "--no-network", "--proxy", f"3128:{marker}"]
    child = subprocess.Popen([str(located), *options, "--", "bash", "-c", command])
    try:
        deadline = time.monotonic() + 5
        while not [p for p in _forwarders(marker) if p != child.pid]:
            assert time.monotonic() < deadline, "no forwarder started"
            time.sleep(0.05)
        if how == "is killed":
            child.kill()
        child.wait(10)
        deadline = time.monotonic() + 5
        while _forwarders(marker):
            assert time.monotonic() < deadline, _forwarders(marker)
            time.sleep(0.05)
    finally:
        child.kill()
        child.wait()
        shutil.rmtree(short, ignore_errors=True)


def test_a_host_that_is_no_host_name_is_never_recorded_or_shown() -> None:
    proxy = netproxy.DomainProxy(("allowed.test",))
    try:
        path = proxy.start()
        answer = _ask(path, b"CONNECT \x1b[2Jevil:443 HTTP/1.1\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 400 ")
        assert proxy.refusals_since(0.0) == []
    finally:
        proxy.close()
