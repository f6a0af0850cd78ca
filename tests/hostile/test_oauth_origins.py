"""OAuth sends credentials only where the authorization server said, scrubs tokens a server
echoes, never prints a client secret, and fetches no metadata from another origin.

Against ``tests/servers/oauth_server.py`` (the authorization server under ``/as``, so the
resource server's origin is not the issuer; its ``/token`` is a trap that records what it was
sent), the real CLI, and the headless browser stand-in.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run
from tests.cli.test_oauth import BROWSER, browser_log, global_settings, stats
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.servers.util import run_http_server


@pytest.fixture(autouse=True)
def _browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BROWSER", str(BROWSER))
    monkeypatch.setenv("FAKE_BROWSER_LOG", str(tmp_path / "browser.jsonl"))


def codebot(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = run(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def stored_tokens(tmp_path: Path) -> dict[str, Any]:
    [path] = list((tmp_path / "home" / "state" / "oauth").rglob("tokens.json"))
    data: dict[str, Any] = json.loads(path.read_text())["token"]
    return data


def test_a_fresh_process_refreshes_at_the_authorization_servers_token_endpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tokens expire between two runs: the second run (a new process, nothing discovered
    yet) refreshes at the issuer's token endpoint, never at ``<resource origin>/token``."""
    with run_http_server(
        "--token-lifetime", "5", "--issuer-path", "/as", module="oauth_server"
    ) as url:
        global_settings(tmp_path, {"prot": {"type": "http", "url": url}})
        cwd = ("--cwd", str(tmp_path))
        assert codebot(capsys, *cwd, "mcp", "login", "prot")[0] == 0
        refresh = stored_tokens(tmp_path)["refresh_token"]
        code, out, err = codebot(capsys, *cwd, "mcp", "call", "prot", "echo", "text=x", "--no-warm")
        assert (code, out) == (0, "x\n"), err
        seen = stats(url)
        assert seen["rs_token_requests"] == [], "credentials went to the resource server"
        assert seen["stats"]["token:refresh_token"] == 1
        assert refresh not in json.dumps(seen["rs_token_requests"])
        assert len(browser_log(tmp_path)) == 1  # refreshed, not logged in again


def test_tokens_a_server_echoes_are_scrubbed_from_results_transcripts_and_sessions(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    with run_http_server("--issuer-path", "/as", module="oauth_server") as url:
        global_settings(tmp_path, {"prot": {"type": "http", "url": url}})
        home = tmp_path / "home"
        settings = json.loads((home / "settings.json").read_text())
        (home / "settings.json").write_text(json.dumps({**settings, "base_url": fake.base_url}))
        cwd = ("--cwd", str(tmp_path))
        assert codebot(capsys, *cwd, "mcp", "login", "prot")[0] == 0
        access = stored_tokens(tmp_path)["access_token"]

        code, out, err = codebot(capsys, *cwd, "mcp", "call", "prot", "echo_token", "--no-warm")
        assert code == 0, err
        assert "you sent: Bearer ***" in out and access not in out + err
        code, out, err = codebot(
            capsys, *cwd, "mcp", "call", "prot", "echo_token", "--json", "--no-warm"
        )
        assert code == 0, err
        assert access not in out + err

        fake.queue(fo.tool_calls(("mcp__prot__echo_token", {})), fo.text("done"))
        code, out, err = codebot(capsys, *cwd, "chat", "-p", "go", "--yes", "--json")
        assert code == 0, err
        assert access not in json.dumps(fake.bodies)  # the model never saw it
        assert access not in out + err
        sessions = list((home / "state" / "sessions").rglob("*"))
        assert sessions
        for path in sessions:
            if path.is_file():
                assert access not in path.read_text(errors="replace"), path


def test_get_json_never_prints_a_client_secret_and_add_json_refuses_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "s3cr3t-client-value-9f8e7d"
    entry = {
        "type": "http",
        "url": "https://mcp.example.com/mcp",
        "oauth": {"client_id": "codebot", "client_secret": secret, "private_key": None},
    }
    entry["oauth"].pop("private_key")
    global_settings(tmp_path, {"prot": entry})  # written by hand, in clear
    cwd = ("--cwd", str(tmp_path))
    for argv in (("mcp", "get", "prot", "--json"), ("mcp", "get", "prot")):
        code, out, err = codebot(capsys, *cwd, *argv)
        assert code == 0, err
        assert secret not in out + err
    view = json.loads(codebot(capsys, *cwd, "mcp", "get", "prot", "--json")[1])
    assert view["entry"]["oauth"]["client_secret"] == "***"
    assert view["entry"]["oauth"]["client_id"] == "codebot"

    code, out, err = codebot(capsys, *cwd, "mcp", "add-json", "other", json.dumps(entry))
    assert code == 2, out + err
    assert "oauth.client_secret" in err and "${" in err
    assert secret not in out + err
    referenced = {**entry, "oauth": {"client_id": "codebot", "client_secret": "${MY_SECRET}"}}
    code, out, err = codebot(capsys, *cwd, "mcp", "add-json", "other", json.dumps(referenced))
    assert code == 0, err
    monkeypatch.setenv("MY_SECRET", secret)
    view = json.loads(codebot(capsys, *cwd, "mcp", "get", "other", "--json")[1])
    assert view["entry"]["oauth"]["client_secret"] == "${MY_SECRET}"


@pytest.mark.parametrize(
    ("host", "path"),
    [
        ("127.0.0.2", "/.well-known/oauth-protected-resource/mcp"),  # another origin
        ("127.0.0.1", "/latest/meta-data/iam"),  # the same host, another port (internal)
    ],
)
def test_a_401_never_fetches_resource_metadata_from_another_origin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], host: str, path: str
) -> None:
    """Stored tokens, then a 401 whose ``resource_metadata`` points elsewhere: codebot uses
    the well-known URLs of the server's own origin and never asks the other one."""
    import socket
    import threading

    hits: list[str] = []
    listener = socket.socket()
    listener.bind((host, 0))
    listener.listen(8)
    listener.settimeout(0.2)
    stop = threading.Event()

    def trap() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn:
                hits.append(conn.recv(4096).decode(errors="replace"))
                conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=trap, daemon=True)
    thread.start()
    try:
        target = f"http://{host}:{listener.getsockname()[1]}{path}"
        with run_http_server(
            "--token-lifetime", "2", "--no-refresh", "--resource-metadata", target,
            module="oauth_server",
        ) as url:  # fmt: skip
            global_settings(tmp_path, {"prot": {"type": "http", "url": url}})
            cwd = ("--cwd", str(tmp_path))
            assert codebot(capsys, *cwd, "mcp", "login", "prot")[0] == 0
            time.sleep(2.5)  # the stored token expires; no refresh token: a 401 follows
            code, out, err = codebot(capsys, *cwd, "mcp", "call", "prot", "echo", "text=x")
            assert code == 4, out + err
            assert "login" in err
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()
    assert hits == [], hits


def test_the_origin_rule_is_documented() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "security.md").read_text()
    assert "resource_metadata" in text and "origin" in text
