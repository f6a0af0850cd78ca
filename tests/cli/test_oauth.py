"""OAuth end to end: our authorization server + protected MCP server on 127.0.0.1, the real
CLI, and a headless browser stand-in as ``$BROWSER`` (``tests/fakes/browser.py``).

The server's ``/_test/stats`` says what the client really did (grants, auth methods,
revocations, the last authorize request), so no test takes codebot's word for it.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from codebot_mcp.cli.app import run
from tests.helpers import write_settings
from tests.servers.util import REPO_ROOT, run_http_server

BROWSER = REPO_ROOT / "tests" / "fakes" / "browser.py"


def codebot(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = run(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def stats(url: str) -> dict[str, Any]:
    base = url.rsplit("/mcp", 1)[0]
    data: dict[str, Any] = httpx2.get(f"{base}/_test/stats").json()
    return data


def global_settings(tmp_path: Path, servers: dict[str, Any]) -> Path:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    path = home / "settings.json"
    path.write_text(json.dumps({"mcp_servers": servers}))
    return path


def browser_log(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "browser.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(autouse=True)
def _browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BROWSER", str(BROWSER))
    monkeypatch.setenv("FAKE_BROWSER_LOG", str(tmp_path / "browser.jsonl"))


@pytest.fixture
def server() -> Iterator[str]:
    with run_http_server(module="oauth_server") as url:
        yield url


def state_files(tmp_path: Path) -> list[Path]:
    root = tmp_path / "home" / "state" / "oauth"
    return sorted(p for p in root.rglob("*")) if root.exists() else []


def test_login_list_call_logout(
    tmp_path: Path, server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    global_settings(tmp_path, {"prot": {"type": "http", "url": server}})
    cwd = ("--cwd", str(tmp_path))

    # Before login: its own status, stage auth, exit 4, and the hint names the command.
    code, out, err = codebot(capsys, *cwd, "mcp", "list", "--json")
    assert code == 4, err
    [view] = json.loads(out)["servers"]
    assert view["status"] == "needs login"
    assert view["failure"]["stage"] == "auth"
    assert "codebot mcp login prot" in view["failure"]["hint"]
    assert stats(server)["stats"].get("registrations", 0) == 0  # nothing registered silently

    code, out, err = codebot(capsys, *cwd, "mcp", "login", "prot")
    assert code == 0, err
    assert "logged in to 'prot'" in out
    assert "/authorize?" in err  # printed for copy-paste too
    [visit] = browser_log(tmp_path)
    assert visit["status"] == 200 and "codebot is authorized" in visit["page"]
    seen = stats(server)
    assert seen["stats"]["registrations"] == 1
    assert seen["stats"]["token:authorization_code"] == 1
    authorize = seen["last_authorize"]
    assert authorize["code_challenge_method"] == "S256"
    assert authorize["resource"] == server
    assert authorize["scope"].split() == ["mcp", "offline_access"]  # PRM scopes + offline
    assert authorize["redirect_uri"].startswith("http://127.0.0.1:")

    # The store: 0700 folders, 0600 files, under the state dir.
    files = state_files(tmp_path)
    assert files, "no token files written"
    for path in files:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))
    token = json.loads(next(p for p in files if p.name == "tokens.json").read_text())
    access = token["token"]["access_token"]

    code, out, err = codebot(capsys, *cwd, "mcp", "list", "--json")
    assert code == 0, err
    assert json.loads(out)["servers"][0]["status"] == "connected"
    assert access not in out + err
    code, out, err = codebot(capsys, *cwd, "mcp", "call", "prot", "echo", "text=hi")
    assert (code, out) == (0, "hi\n"), err
    assert stats(server)["stats"].get("token:refresh_token", 0) == 0  # still valid: no refresh
    assert len(browser_log(tmp_path)) == 1  # no second browser trip

    code, out, err = codebot(capsys, *cwd, "mcp", "logout", "prot")
    assert code == 0, err
    assert "revoked" in out
    assert stats(server)["stats"]["revoked"] >= 1
    assert not any(p.name == "tokens.json" for p in state_files(tmp_path))
    code, out, _ = codebot(capsys, *cwd, "mcp", "list")
    assert code == 4 and "needs login" in out


def test_expired_token_is_refreshed_without_a_browser(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with run_http_server("--token-lifetime", "5", module="oauth_server") as url:
        global_settings(tmp_path, {"prot": {"type": "http", "url": url}})
        assert codebot(capsys, "--cwd", str(tmp_path), "mcp", "login", "prot")[0] == 0
        # 5 s is inside the expiry margin: the next run refreshes before sending it.
        code, out, err = codebot(
            capsys, "--cwd", str(tmp_path), "mcp", "call", "prot", "echo", "text=x"
        )
        assert (code, out) == (0, "x\n"), err
        assert stats(url)["stats"]["token:refresh_token"] == 1
        assert len(browser_log(tmp_path)) == 1


def test_step_up_needs_login_then_login_adds_the_scope(
    tmp_path: Path, server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    global_settings(tmp_path, {"prot": {"type": "http", "url": server}})
    cwd = ("--cwd", str(tmp_path))
    assert codebot(capsys, *cwd, "mcp", "login", "prot")[0] == 0
    code, _, err = codebot(capsys, *cwd, "mcp", "call", "prot", "admin_op")
    assert code == 4
    assert "more scope" in err and "codebot mcp login prot" in err
    assert len(browser_log(tmp_path)) == 1  # without --login the browser stays shut

    code, out, err = codebot(capsys, *cwd, "mcp", "call", "--login", "prot", "admin_op")
    assert (code, out) == (0, "admin done\n"), err
    scopes = stats(server)["last_authorize"]["scope"].split()
    assert {"mcp", "admin"} <= set(scopes)  # the union, not just the new one
    code, out, _ = codebot(capsys, *cwd, "mcp", "call", "prot", "admin_op")
    assert (code, out) == (0, "admin done\n")  # the stepped-up token was stored


def test_login_inline_with_list_and_batch(
    tmp_path: Path, server: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    global_settings(tmp_path, {"prot": {"type": "http", "url": server}})
    lines = '{"server": "prot", "tool": "echo", "arguments": {"text": "a"}}\n'
    monkeypatch.setattr("sys.stdin", io.StringIO(lines))
    code, out, _ = codebot(capsys, "--cwd", str(tmp_path), "mcp", "call", "--batch")
    answer = json.loads(out)
    assert code == 1 and answer["error"]["exit_code"] == 4
    assert "codebot mcp login prot" in answer["error"]["hint"]
    monkeypatch.setattr("sys.stdin", io.StringIO(lines))
    code, out, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "call", "--batch", "--login")
    assert code == 0, err
    assert json.loads(out)["content"][0]["text"] == "a"
    code, _, _ = codebot(capsys, "--cwd", str(tmp_path), "mcp", "list", "--login")
    assert code == 0


def test_doctor_shows_needs_login(
    tmp_path: Path, server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    global_settings(tmp_path, {"prot": {"type": "http", "url": server}})
    code, out, _ = codebot(capsys, "--cwd", str(tmp_path), "mcp", "doctor", "--format", "json")
    report = json.loads(out)
    assert code == 1
    assert report["servers"][0]["status"] == "needs login"
    assert report["summary"]["needs_login"] == 1
    assert any(f["check"] == "connect.auth" for f in report["findings"])
    code, out, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "doctor", "--login")
    assert code == 0, out + err


def test_client_credentials_basic_never_opens_a_browser(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CC_SECRET", "cc-secret-value-123")
    args = ("--client-id", "machine", "--client-secret", "cc-secret-value-123")
    with run_http_server(*args, module="oauth_server") as url:
        entry = {
            "type": "http",
            "url": url,
            "oauth": {
                "grant": "client_credentials",
                "client_id": "machine",
                "client_secret": "${CC_SECRET}",
            },
        }
        global_settings(tmp_path, {"ci": entry})
        code, out, err = codebot(
            capsys, "--cwd", str(tmp_path), "mcp", "call", "ci", "echo", "text=ci"
        )
        assert (code, out) == (0, "ci\n"), err
        code, out, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "list", "--json")
        assert code == 0
        assert "cc-secret-value-123" not in out + err
        assert json.loads(out)["servers"][0]["oauth"]["client_secret"] == "***"
        seen = stats(url)["stats"]
        assert seen["token:client_credentials"] >= 1
        assert seen["auth:client_secret_basic"] >= 1
        assert browser_log(tmp_path) == []


def test_client_credentials_private_key_jwt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public = tmp_path / "public.pem"
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    monkeypatch.setenv("KEY_PEM", pem)
    args = ("--client-id", "signer", "--jwt-public-key", str(public))
    with run_http_server(*args, module="oauth_server") as url:
        entry = {
            "type": "http",
            "url": url,
            "oauth": {
                "grant": "client_credentials",
                "client_id": "signer",
                "private_key": "${KEY_PEM}",
            },
        }
        global_settings(tmp_path, {"ci": entry})
        code, out, err = codebot(
            capsys, "--cwd", str(tmp_path), "mcp", "call", "ci", "echo", "text=jwt"
        )
        assert (code, out) == (0, "jwt\n"), err
        assert stats(url)["stats"]["auth:private_key_jwt"] >= 1


def test_tokens_stay_with_their_entry_and_project(
    tmp_path: Path, server: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    global_settings(tmp_path, {"prot": {"type": "http", "url": server}})
    assert codebot(capsys, "--cwd", str(tmp_path), "mcp", "login", "prot")[0] == 0

    # A project's entries, of the same name or another, get no token from the global login.
    project = tmp_path / "proj"
    entry = {"type": "http", "url": server}
    write_settings(project, {"mcp_servers": {"prot": entry, "other": entry}})
    code, out, _ = codebot(capsys, "--cwd", str(project), "mcp", "list", "--json")
    assert code == 4
    views = {v["name"]: v["status"] for v in json.loads(out)["servers"]}
    assert views == {"prot": "needs login", "other": "needs login"}
    # Untrusted, the project's server is not even started: no request carries a token.
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")
    before = stats(server)["stats"].get("mcp:ok", 0)
    code, _, err = codebot(capsys, "--cwd", str(project), "mcp", "call", "other", "echo", "text=x")
    assert code == 3 and "not trusted" in err
    code, _, err = codebot(capsys, "--cwd", str(project), "mcp", "login", "other")
    assert code == 3 and "not trusted" in err
    assert stats(server)["stats"].get("mcp:ok", 0) == before
    # The global entry still has its own.
    code, out, _ = codebot(capsys, "--cwd", str(tmp_path), "mcp", "call", "prot", "echo", "text=g")
    assert (code, out) == (0, "g\n")


def test_denied_login_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with run_http_server("--deny", module="oauth_server") as url:
        global_settings(tmp_path, {"prot": {"type": "http", "url": url}})
        code, _, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "login", "prot")
        assert code == 4
        assert "access_denied" in err
        [visit] = browser_log(tmp_path)
        assert "Login failed" in visit["page"]


def test_login_wait_is_bounded(tmp_path: Path, server: str) -> None:
    import os
    import subprocess
    import sys

    # A fresh process: `webbrowser` reads $BROWSER once per process.
    global_settings(tmp_path, {"prot": {"type": "http", "url": server}})
    script = Path(sys.executable).parent / "codebot"
    env = {**os.environ, "BROWSER": "/bin/true"}  # a browser that never comes back
    proc = subprocess.run(
        [str(script), "--cwd", str(tmp_path), "mcp", "login", "prot", "--timeout", "2"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert proc.returncode == 4, proc.stderr
    assert "no answer from the browser within 2 s" in proc.stderr
    assert "hint: " in proc.stderr and "Traceback" not in proc.stderr


def test_oauth_false_never_tries(
    tmp_path: Path, server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    global_settings(tmp_path, {"prot": {"type": "http", "url": server, "oauth": False}})
    code, out, _ = codebot(capsys, "--cwd", str(tmp_path), "mcp", "list", "--json", "--login")
    [view] = json.loads(out)["servers"]
    assert code == 4
    assert view["status"] == "failed" and view["failure"]["stage"] == "auth"
    assert "401" in view["failure"]["message"]
    assert browser_log(tmp_path) == []
    code, _, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "login", "prot")
    assert code == 2 and '"oauth": false' in err


@pytest.mark.anyio
@pytest.mark.timeout(180)  # a whole login through the REPL; slow on a loaded machine
async def test_repl_says_who_needs_login_and_logs_in(
    tmp_path: Path, server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import anyio

    from codebot_mcp.cli.chat_runtime import ChatOptions
    from codebot_mcp.cli.runtime import Globals
    from tests.cli.repl_driver import piped_repl

    global_settings(tmp_path, {"prot": {"type": "http", "url": server}})
    with piped_repl() as (inp, repl):
        seen: list[str] = []

        async def until(text: str) -> None:
            while text not in "".join(seen):
                captured = capsys.readouterr()
                seen.append(captured.out + captured.err)
                await anyio.sleep(0.05)

        async def typist() -> None:
            await until("needs login (/mcp login prot)")  # the start-up line: the server answered
            for keys, answer in [
                ("/mcp\r", "prot: needs login"),
                ("/mcp login prot\r", "(logged in to 'prot'"),
                ("/mcp\r", "prot: connected"),
            ]:
                inp.send_text(keys)
                await until(answer)
            inp.send_text("\x04")

        with anyio.fail_after(150):
            async with anyio.create_task_group() as tg:
                tg.start_soon(typist)
                code = await repl.main(Globals(cwd=tmp_path), ChatOptions())
    captured = capsys.readouterr()
    text = "".join(seen) + captured.out + captured.err
    assert code == 0
    assert "'prot' needs login (/mcp login prot)" in text
    assert "prot: needs login" in text
    assert "(logged in to 'prot'; 3 tools)" in text
    assert "prot: connected, 3 tools" in text
    assert len(browser_log(tmp_path)) == 1
