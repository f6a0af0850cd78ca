"""Issue 32 item 6 in a real terminal: ``sandbox.network`` as a list of hosts. A confined
``bash`` reaches a listed host through codebot's proxy, a host not listed is refused with a
note that names it, ``/sandbox`` shows the list, and the proxy is gone when codebot exits."""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_tmux import Terminal, leave, model_server
from tests.e2e.test_tmux import terminal as terminal
from tests.fakes import openai_turns as fo
from tests.fakes.procs import CODEBOT, codebot_env
from tests.helpers import children_of, write_settings


@pytest.fixture
def remote() -> Iterator[int]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = f"remote says hi {self.path}\n".encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_network_by_domain_in_the_repl(terminal: Terminal, tmp_path: Path, remote: int) -> None:
    turns = [
        fo.tool_calls(("bash", {"command": "curl -sS --max-time 10 http://pkgs.example/simple/"})),
        fo.text("Fetched it."),
        fo.tool_calls(("bash", {"command": "curl -sS --max-time 10 https://other.example/"})),
        fo.text("That host is refused."),
    ]
    with model_server(tmp_path, turns) as (base_url, _):
        root = tmp_path / "repo"
        sandbox = {"mode": "workspace-write", "network": ["pkgs.example", "*.pkgs.example"]}
        write_settings(root, {"base_url": base_url, "sandbox": sandbox})
        env = codebot_env(
            tmp_path / "home",
            CODEBOT_TRUST_PROJECT="1",
            CODEBOT_TEST_PROXY_HOSTS=f"pkgs.example=127.0.0.1:{remote}",
        )
        pid = terminal.start([str(CODEBOT), "chat"], root, env)
        screen = terminal.expect("/help for commands")
        assert "network: pkgs.example, *.pkgs.example only" in screen, screen  # the first screen

        terminal.type_line("fetch the index")
        screen = terminal.expect("Fetched it.")
        assert "✓ bash" in screen and "remote says hi /simple/" in screen, screen
        assert "allow?" not in screen  # confined: no question
        proxies = list(Path(tempfile.gettempdir()).glob(f"codebot-proxy-{pid}-*"))
        proxies += list(Path("/tmp").glob(f"codebot-proxy-{pid}-*"))
        assert len(set(proxies)) == 1, proxies  # started by the first confined call

        terminal.type_line("fetch the other one")
        screen = terminal.expect("That host is refused.")
        assert "refused connection to other.example" in screen, screen
        # the line under the call says so too
        assert "[sandbox: workspace-write; refused connection to other.example]" in screen, screen

        terminal.type_line("/sandbox")
        screen = terminal.expect("over HTTP and HTTPS through codebot's proxy")
        assert "network: only pkgs.example, *.pkgs.example" in screen, screen

        kids = children_of(pid)
        leave(terminal, pid, kids)
        assert not any(p.exists() for p in proxies)  # gone with codebot
