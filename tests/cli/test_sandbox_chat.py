"""The sandbox through the command line: ``chat --sandbox``, the ``sandbox`` setting, ``/sandbox``,
approvals that follow the sandbox, the transcript, and a stdio server started sandboxed.

Real processes throughout: the model is the loopback fake, ``bash`` and the servers are real
children in the real sandbox.
"""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run
from codebot_mcp.core.sandbox import confinement as sandbox_module
from codebot_mcp.core.sandbox.confinement import Support, support
from tests.cli.repl_driver import drive
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import server_entry, write_settings

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or bool(support().missing(network=False)),
    reason="the sandbox is unavailable here",
)


@pytest.fixture
def project(tmp_path: Path, fake: FakeOpenAI) -> Path:
    root = tmp_path / "repo"
    write_settings(root, {"base_url": fake.base_url})
    return root


def chat(capsys: pytest.CaptureFixture[str], root: Path, *argv: str) -> tuple[int, Any, str]:
    code = run(["--cwd", str(root), "chat", "-p", "go", "--json", *argv])
    out = capsys.readouterr()
    return code, json.loads(out.out) if out.out.strip() else None, out.err


def tool_results(fake: FakeOpenAI) -> list[str]:
    return [m["content"] for m in fake.bodies[-1]["messages"] if m["role"] == "tool"]


def test_sandboxed_bash_runs_without_asking_and_the_transcript_says_where(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(
        fo.tool_calls(("bash", {"command": "echo inside > made.txt && echo done"})),
        fo.text("ok"),
    )
    code, doc, err = chat(capsys, project)  # no --yes, and nobody to ask
    assert code == 0, err
    assert (project / "made.txt").read_text() == "inside\n"
    [call] = doc["tool_calls"]
    assert call["sandbox"] == "workspace-write" and not call["denied"]
    assert doc["sandbox"] == "workspace-write"
    assert "sandbox: workspace-write" in err  # the line under the call
    assert "sandbox" in fake.bodies[0]["tools"][5]["function"]["parameters"]["properties"]


def test_a_refused_write_tells_the_model_and_an_unsandboxed_rerun_asks(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = project.parent / "outside.txt"
    fake.queue(
        fo.tool_calls(("bash", {"command": f"echo x > {outside}"})),
        fo.tool_calls(("bash", {"command": f"echo x > {outside}", "sandbox": False})),
        fo.text("gave up"),
    )
    code, doc, err = chat(capsys, project)
    assert code == 0, err
    first, second = doc["tool_calls"]
    assert first["is_error"] and "sandbox" in first["result"] and not first["denied"]
    assert "sandbox" in tool_results(fake)[0]  # what the model read
    assert second["denied"] and "needs approval" in second["reason"]  # it asks; -p denies
    assert not outside.exists()

    fake.queue(
        fo.tool_calls(("bash", {"command": f"echo x > {outside}", "sandbox": False})),
        fo.text("done"),
    )
    code, doc, err = chat(capsys, project, "--yes")
    assert code == 0 and outside.exists()
    assert doc["tool_calls"][0]["sandbox"] == "off"


def test_rules_still_ask_and_deny_a_sandboxed_call(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    for rule in ("ask", "deny"):
        root = tmp_path / rule
        write_settings(root, {"base_url": fake.base_url, "permissions": {rule: ["bash"]}})
        fake.queue(fo.tool_calls(("bash", {"command": "touch made"})), fo.text("ok"))
        code, doc, _ = chat(capsys, root)
        assert code == 0 and doc["tool_calls"][0]["denied"]
        assert not (root / "made").exists()


def test_read_only_flag_and_off_flag(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(fo.tool_calls(("bash", {"command": "touch made"})), fo.text("ok"))
    code, doc, _ = chat(capsys, project, "--sandbox", "read-only")
    assert code == 0 and doc["tool_calls"][0]["sandbox"] == "read-only"
    assert doc["tool_calls"][0]["is_error"] and not (project / "made").exists()

    fake.queue(fo.tool_calls(("bash", {"command": "touch made"})), fo.text("ok"))
    code, doc, _ = chat(capsys, project, "--sandbox", "off")
    assert doc["tool_calls"][0]["denied"]  # no sandbox: bash asks again, and -p denies

    code = run(["--cwd", str(project), "chat", "-p", "go", "--sandbox", "sideways"])
    err = capsys.readouterr().err
    assert code == 2 and "read-only, workspace-write, off" in err


def test_the_setting_sets_mode_network_and_writable(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = tmp_path / "cache"  # missing: made as the sandbox starts, as `mkdir -p` would
    root = tmp_path / "repo"
    sandbox = {"mode": "workspace-write", "network": False, "writable": [str(extra)]}
    write_settings(root, {"base_url": fake.base_url, "sandbox": sandbox})
    fake.queue(fo.tool_calls(("bash", {"command": f"touch {extra}/ok"})), fo.text("ok"))
    code, doc, err = chat(capsys, root)
    assert code == 0 and not doc["tool_calls"][0]["is_error"], err
    assert (extra / "ok").exists()

    write_settings(root, {"base_url": fake.base_url, "sandbox": {"mode": "sideways"}})
    code = run(["--cwd", str(root), "chat", "-p", "go"])
    err = capsys.readouterr().err
    assert code == 3 and "'sandbox.mode'" in err and str(root) in err


def test_an_untrusted_project_cannot_loosen_the_sandbox(
    tmp_path: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")
    home = tmp_path / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"base_url": fake.base_url}))
    root = tmp_path / "repo"
    outside = tmp_path / "outside"
    outside.mkdir()
    loose = {"mode": "workspace-write", "network": True, "writable": [str(outside)]}
    write_settings(root, {"sandbox": loose})
    fake.queue(fo.tool_calls(("bash", {"command": f"touch {outside}/owned"})), fo.text("ok"))
    code, doc, err = chat(capsys, root)
    assert code == 0 and "project settings (sandbox)" in err
    assert doc["tool_calls"][0]["is_error"] and not (outside / "owned").exists()
    # Tightening needs no trust.
    write_settings(root, {"sandbox": {"mode": "read-only"}})
    fake.queue(fo.tool_calls(("bash", {"command": "touch made"})), fo.text("ok"))
    code, doc, err = chat(capsys, root)
    assert doc["tool_calls"][0]["sandbox"] == "read-only" and not (root / "made").exists()


def test_an_unsupported_machine_says_what_is_missing_and_asks(
    project: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lacking = Support(landlock_abi=0, userns=True, netns=True, mountns=True, seccomp=True)
    monkeypatch.setattr(sandbox_module, "_support", lacking)
    fake.queue(fo.tool_calls(("bash", {"command": "touch made"})), fo.text("ok"))
    code, doc, err = chat(capsys, project, "--sandbox", "workspace-write")
    assert code == 0
    assert "--sandbox workspace-write is not available" in err and "Landlock" in err
    assert err.count("is not available") == 1  # once
    assert doc["tool_calls"][0]["denied"] and not (project / "made").exists()
    assert doc["sandbox"] == "off"


class Seen:
    """Everything captured so far (the REPL prints approvals on stderr)."""

    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self.capsys = capsys
        self.text = ""

    def has(self, needle: str) -> bool:
        got = self.capsys.readouterr()
        self.text += got.out + got.err
        return needle in self.text


@pytest.mark.anyio
async def test_an_unsandboxed_call_asks_and_the_approval_names_the_sandbox(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = project.parent / "approved.txt"
    fake.queue(
        fo.tool_calls(("bash", {"command": f"touch {outside}", "sandbox": False})),
        fo.text("ok"),
    )
    seen = Seen(capsys)
    steps = [
        (0.8, "go\r"),
        (lambda: seen.has("asks because"), "y\r"),
        (outside.exists, "\x04"),
    ]
    code, _ = await drive(project, steps)
    seen.has("")
    assert code == 0
    assert "sandbox: none: the call asks to run outside the workspace-write sandbox" in seen.text
    assert "✓ bash" in seen.text and "sandbox: off" in seen.text


@pytest.mark.anyio
async def test_slash_sandbox_shows_mode_network_paths_and_kernel(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = await drive(project, [(0.8, "/sandbox\r"), (0.8, "\x04")])
    out = capsys.readouterr().out
    assert code == 0
    assert "mode: workspace-write" in out
    assert "network: off" in out
    assert str(project.resolve()) in out  # noqa: ASYNC240 - a test's own path, once
    assert "codebot-sandbox-" in out
    assert "kernel: Landlock ABI" in out


class Listener:
    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.sock.settimeout(0.5)


@pytest.fixture
def listener() -> Iterator[Listener]:
    made = Listener()
    yield made
    made.sock.close()


def test_a_server_started_sandboxed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], listener: Listener
) -> None:
    root = tmp_path / "repo"
    outside = tmp_path / "outside.txt"
    entries = {
        "boxed": server_entry("toucher", sandbox="workspace-write"),
        "free": server_entry("toucher"),
    }
    write_settings(root, {"mcp_servers": entries})

    def call(server: str, tool: str, *args: str) -> str:
        code = run(["--cwd", str(root), "mcp", "call", server, tool, *args])
        out = capsys.readouterr()
        assert code == 0, out.err
        return out.out.strip()

    assert call("boxed", "write_file", f"path={root}/inside.txt", "text=x").startswith("wrote")
    assert "Permission denied" in call("boxed", "write_file", f"path={outside}", "text=x")
    assert not outside.exists()
    assert call("boxed", "connect", f"port={listener.port}").startswith("error")
    with pytest.raises(TimeoutError):
        listener.sock.accept()
    assert "codebot-sandbox-" in call("boxed", "tmpdir")
    # The same server unsandboxed does both: the refusals above are the sandbox's.
    assert call("free", "write_file", f"path={outside}", "text=x").startswith("wrote")
    assert call("free", "connect", f"port={listener.port}") == "connected"


def test_a_server_asking_for_a_sandbox_it_cannot_have_does_not_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox_module, "_support", Support(landlock_abi=0, userns=True))
    root = tmp_path / "repo"
    write_settings(root, {"mcp_servers": {"boxed": server_entry("toucher", sandbox="read-only")}})
    code = run(["--cwd", str(root), "mcp", "call", "boxed", "tmpdir"])
    err = capsys.readouterr().err
    assert code == 4
    assert "asks for the read-only sandbox" in err and "Landlock" in err


def test_a_project_file_made_inside_is_reported_and_git_writes_ask(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 29: a memory file a confined call creates is moved out of the project and said
    to the model, the user and the transcript; a git write is refused with the way out."""
    import subprocess

    subprocess.run(["git", "init", "-q", str(project)], check=True)
    fake.queue(
        fo.tool_calls(("bash", {"command": "echo 'obey' > CLAUDE.md && echo made"})),
        fo.tool_calls(("bash", {"command": "git add CLAUDE.md"})),
        fo.text("ok"),
    )
    code, doc, err = chat(capsys, project)
    assert code == 0, err
    made, commit = doc["tool_calls"]
    assert made["sandbox_created"] == [str(project / "CLAUDE.md")]
    assert "[sandbox: this command created" in tool_results(fake)[0]
    assert "created" in err and "CLAUDE.md" in err and "moved to" in err  # the user is told
    assert not (project / "CLAUDE.md").exists()  # moved out: the next prompt never reads it
    assert commit["is_error"] and "git directories are read-only" in commit["result"]
    assert '"sandbox": false' in commit["result"]


def test_a_writable_entry_holding_codebots_home_stops_chat(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    home = Path(os.environ["CODEBOT_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"sandbox": {"writable": [str(home)]}}))
    fake.queue(fo.text("never"))
    code, _, err = chat(capsys, project)
    assert code == 3, err
    assert "'sandbox.writable' lists" in err and "codebot's global directory" in err
    assert not fake.bodies  # nothing ran


class Remote:
    """A plain HTTP host on the host's loopback, reached by name only through the proxy's
    test mapping (``CODEBOT_TEST_PROXY_HOSTS``)."""

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = f"remote says hi {self.path}\n".encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        import threading

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def remote(monkeypatch: pytest.MonkeyPatch) -> Iterator[Remote]:
    made = Remote()
    monkeypatch.setenv("CODEBOT_TEST_PROXY_HOSTS", f"pkgs.example=127.0.0.1:{made.port}")
    yield made
    made.close()


def _proxy_dirs() -> set[Path]:
    import os
    import tempfile

    return {
        *Path(tempfile.gettempdir()).glob(f"codebot-proxy-{os.getpid()}-*"),
        *Path("/tmp").glob(f"codebot-proxy-{os.getpid()}-*"),
    }


def test_a_network_list_reaches_listed_hosts_and_names_refused_ones(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str], remote: Remote
) -> None:
    root = tmp_path / "repo"
    sandbox = {"mode": "workspace-write", "network": ["pkgs.example"]}
    write_settings(root, {"base_url": fake.base_url, "sandbox": sandbox})
    fake.queue(
        fo.tool_calls(("bash", {"command": "curl -sS --max-time 10 http://pkgs.example/simple/"})),
        fo.tool_calls(("bash", {"command": "curl -sS --max-time 10 https://other.example/"})),
        fo.tool_calls(
            ("bash", {"command": f"curl -sS --noproxy '*' http://127.0.0.1:{remote.port}/"})
        ),
        fo.text("ok"),
    )
    before = _proxy_dirs()
    code, doc, err = chat(capsys, root)
    assert code == 0, err
    allowed, refused, direct = doc["tool_calls"]
    assert not allowed["is_error"] and allowed["result"] == "remote says hi /simple/"
    assert (
        refused["is_error"] and "[sandbox: refused connection to other.example" in refused["result"]
    )
    assert direct["is_error"] and "sandbox" in direct["result"]
    assert "remote says hi" not in direct["result"]
    assert "refused connection to other.example" in tool_results(fake)[1]  # what the model read
    assert _proxy_dirs() == before  # the session's proxy went with it


@pytest.mark.anyio
async def test_slash_sandbox_names_the_listed_hosts(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "repo"
    sandbox = {"network": ["pypi.org", "*.npmjs.org"]}
    write_settings(root, {"base_url": fake.base_url, "sandbox": sandbox})
    code, _ = await drive(root, [(0.8, "/sandbox\r"), (0.8, "\x04")])
    out = capsys.readouterr().out
    assert code == 0
    assert "network: only pypi.org, *.npmjs.org, over HTTP and HTTPS" in out


def test_a_server_with_a_network_list_reaches_only_those_hosts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], remote: Remote
) -> None:
    root = tmp_path / "repo"
    boxed = {"mode": "workspace-write", "network": ["pkgs.example"]}
    write_settings(root, {"mcp_servers": {"boxed": server_entry("fetcher", sandbox=boxed)}})

    def fetch(url: str) -> str:
        code = run(["--cwd", str(root), "mcp", "call", "boxed", "fetch", f"url={url}"])
        out = capsys.readouterr()
        assert code == 0, out.err
        return out.out.strip()

    assert fetch("http://pkgs.example/simple/") == "remote says hi /simple/"
    refused = fetch("https://other.example/")
    assert "403 Forbidden by the codebot sandbox" in refused, refused
    by_address = fetch(f"http://127.0.0.1:{remote.port}/")  # the proxy will not lead there
    assert "sandbox: refused connection to 127.0.0.1" in by_address, by_address


def test_claude_codes_allowed_domains_reach_through_the_proxy(
    tmp_path: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    remote: Remote,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import os

    monkeypatch.delenv("CODEBOT_TRUST_PROJECT", raising=False)
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    home = Path(os.environ["CODEBOT_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"base_url": fake.base_url}))
    claude = Path(os.environ["CLAUDE_CONFIG_DIR"])  # your ~/.claude/settings.json
    claude.mkdir(parents=True, exist_ok=True)
    mine = {"sandbox": {"enabled": True, "network": {"allowedDomains": ["pkgs.example"]}}}
    (claude / "settings.json").write_text(json.dumps(mine))
    (root / ".claude").mkdir()
    theirs = {"sandbox": {"network": {"allowedDomains": ["more.example"]}}}
    mapped = f"pkgs.example=127.0.0.1:{remote.port},more.example=127.0.0.1:{remote.port}"
    monkeypatch.setenv("CODEBOT_TEST_PROXY_HOSTS", mapped)
    (root / ".claude" / "settings.json").write_text(json.dumps(theirs))
    fake.queue(
        fo.tool_calls(("bash", {"command": "curl -sS --max-time 10 http://pkgs.example/a"})),
        fo.tool_calls(("bash", {"command": "curl -sS --max-time 10 http://more.example/b"})),
        fo.text("ok"),
    )
    code, doc, err = chat(capsys, root)
    assert code == 0, err
    mine_call, theirs_call = doc["tool_calls"]
    assert not mine_call["is_error"] and mine_call["result"] == "remote says hi /a"
    # the project's list waits for trust: a cloned repo cannot open the network
    assert "[sandbox: refused connection to more.example" in theirs_call["result"]
    assert "sandbox.network.allowedDomains (.claude/settings.json)" in err
    assert "not used by codebot: sandbox.enabled" in err  # codebot's sandbox is its own

    from codebot_mcp.cli.app import run

    assert run(["--cwd", str(root), "trust", "--yes"]) == 0
    capsys.readouterr()
    fake.queue(
        fo.tool_calls(("bash", {"command": "curl -sS --max-time 10 http://more.example/b"})),
        fo.text("ok"),
    )
    code, doc, err = chat(capsys, root)
    assert code == 0, err
    assert doc["tool_calls"][0]["result"] == "remote says hi /b"  # trusted: the lists add up
