"""Everyday use as a new user meets it: managing servers, importing other clients' configs, and
model discovery on the four well-known ports (completion: ``test_completion_shells.py``).

Two tiers. The installed entry point (``.venv/bin/codebot``, a real process: :func:`codebot`)
runs what needs the process: the ``mcp call`` lines (the path a user's call takes, its servers real
processes), model discovery on the real ports against its own clock, a real pipe on stdin. The
rest run the CLI in the test's own process (the ``cli`` fixture: ``cli.app.run`` with ``--cwd``,
the same variables over the test's environment, stdin from /dev/null, as :func:`codebot` gives
its child): adding, listing, getting, enabling and importing entries, their errors and exit
codes. What the console script adds around ``run`` (the reaper hand-off, the sweep of orphaned
descendants, the exit) is proved in tests/e2e and tests/hostile."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.cli.entry_point import add_global, codebot, project, user
from tests.fakes import zygote
from tests.helpers import cli_in_process, server_entry, write_settings

__all__ = ["project", "user"]  # fixtures


class Cli:
    """``codebot`` in this process as :func:`codebot` starts it: in ``cwd`` (``--cwd``), with
    ``env`` over the test's environment, stdin from /dev/null."""

    def __init__(self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
        self.capsys = capsys
        self.monkeypatch = monkeypatch

    def __call__(
        self, *argv: str, cwd: Path, env: dict[str, str] | None = None
    ) -> tuple[int, str, str]:
        return cli_in_process(
            self.capsys, self.monkeypatch, "--cwd", str(cwd), *argv, env=dict(env or {})
        )


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    return Cli(capsys, monkeypatch)


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "imports"


# -- managing servers -------------------------------------------------------------------------


def test_a_disabled_entry_is_disabled_even_with_an_unset_variable(
    cli: Cli, user: Path, project: Path
) -> None:
    code, out, err = cli(
        "mcp",
        "add",
        "gh",
        "--url",
        "https://example.invalid/mcp",
        "--header",
        "Authorization: Bearer ${UNSET_GH_TOKEN}",
        "--disabled",
        cwd=project,
    )
    assert code == 0, err
    code, out, err = cli("mcp", "list", "-s", "gh", cwd=project)
    assert code == 2, err
    assert "gh  http · disabled" in out and "codebot mcp enable gh" in err
    assert "UNSET_GH_TOKEN" not in out + err  # a disabled entry needs none of its variables
    code, _, err = codebot("mcp", "call", "gh", "tool", cwd=project)
    assert code == 2 and "disabled" in err and "codebot mcp enable gh" in err
    code, out, _ = cli("mcp", "doctor", "-s", "gh", cwd=project)
    assert code == 0 and "gh  http · disabled" in out
    assert cli("mcp", "enable", "gh", cwd=project)[0] == 0
    code, out, err = cli("mcp", "get", "gh", cwd=project)
    assert code == 0, err
    assert "gh  (not usable)" in out
    assert (
        "problem: " in out and "${UNSET_GH_TOKEN}" in out and "hint: Export UNSET_GH_TOKEN" in out
    )
    code, out, _ = cli("mcp", "list", "-s", "gh", cwd=project)
    assert code == 4 and "config failed" in out and "http" in out


def test_get_shows_the_global_entry_an_untrusted_project_entry_waits_behind(
    cli: Cli, user: Path, project: Path, tmp_path: Path
) -> None:
    add_global("echo", server_entry("echo"), cwd=project)
    global_file = tmp_path / "home" / "settings.json"
    write_settings(project, {"mcp_servers": {"echo": {"command": "evil\x1b[2J", "agrs": ["-x"]}}})
    code, out, err = cli("mcp", "get", "echo", cwd=project)
    assert code == 0, err
    assert out.splitlines()[0] == "echo  (enabled)"
    assert f"from {global_file}" in out
    assert "replaces it once the project is trusted (`codebot trust`)" in out
    code, out, err = cli("mcp", "get", "echo", "--json", cwd=project)
    view = json.loads(out)
    assert view["source"] == str(global_file) and view["trusted"] is True
    pending = view["overridden_by_untrusted"]
    assert pending["source"] == str(project / ".codebot" / "settings.json")
    assert pending["entry"]["command"] == "evil\x1b[2J"  # JSON escapes it as \u001b
    assert "\x1b" not in out
    # The entry in use is the one that runs: mcp list and mcp call agree with get.
    code, out, err = codebot("mcp", "call", "echo", "echo", "text=123", cwd=project)
    assert (code, out.strip()) == (0, "123"), err
    # Trusted, the project's entry is the one shown, escaped, its warnings in --json.
    trusted = {"CODEBOT_TRUST_PROJECT": "1"}
    code, out, err = cli("mcp", "get", "echo", cwd=project, env=trusted)
    assert "command: evil\\x1b[2J" in out and "\x1b" not in out
    assert f"overrides the entry in {global_file}" in out
    assert err.count("unknown key 'agrs'") == 1  # warned once, on stderr only
    code, out, err = cli("mcp", "get", "echo", "--json", cwd=project, env=trusted)
    assert code == 0, err
    assert json.loads(out)["warnings"] == ["unknown key 'agrs' is ignored (did you mean 'args'?)"]


def test_commands_that_write_settings_warn_about_typos_too(
    cli: Cli, user: Path, project: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(
        json.dumps({"permisions": {"deny": ["bash"]}, "mcp_servers": {"t": {"command": "x"}}})
    )
    for argv in (
        ("mcp", "add", "z", "--", "true"),
        ("mcp", "add-json", "y", '{"command": "true"}'),
        ("mcp", "import", "--dry-run"),
    ):
        _, _, err = cli(*argv, cwd=project)
        assert err.count("unknown setting 'permisions'") == 1, (argv, err)
        assert "(did you mean 'permissions'?)" in err
    # A broken project file does not block adding a global server; it blocks its own edit.
    write_settings(project, {})
    (project / ".codebot" / "settings.json").write_text("{bad")
    assert cli("mcp", "add", "w", "--", "true", cwd=project)[0] == 0
    code, _, err = cli("mcp", "add", "v", "--scope", "project", "--", "true", cwd=project)
    assert code == 3 and f"invalid JSON in {project / '.codebot' / 'settings.json'}" in err
    assert (project / ".codebot" / "settings.json").read_text() == "{bad"


@pytest.mark.parametrize(
    ("argv", "suggestion"),
    [
        (
            ["--url", "https://x.example/mcp?token=abcdef0123456789abcdef&x=1"],
            "Export it as TOKEN and write --url 'https://x.example/mcp?token=${TOKEN}&x=1'",
        ),
        (
            ["--url", "https://bob:hunter2pass@x.example/mcp"],
            "Export it as PASSWORD and write --url 'https://bob:${PASSWORD}@x.example/mcp'",
        ),
        (
            ["--", "server", "--api-key", "sk-proj-abcdefghijklmnop1234567890"],
            "Export it as API_KEY and write '${API_KEY}' as that argument",
        ),
        (
            ["--", "server", "--api-key=sk-proj-abcdefghijklmnop1234567890"],
            "Export it as API_KEY and write '--api-key=${API_KEY}' as that argument",
        ),
        (
            ["-e", "GITHUB_TOKEN=ghp_abcdefabcdefabcdefabcdefabcdefabcdef12", "--", "server"],
            "Export it as GITHUB_TOKEN and write -e GITHUB_TOKEN='${GITHUB_TOKEN}'",
        ),
    ],
)
def test_a_secret_in_clear_is_refused_with_the_exact_command_to_write(
    cli: Cli, user: Path, project: Path, tmp_path: Path, argv: list[str], suggestion: str
) -> None:
    code, out, err = cli("mcp", "add", "s", *argv, cwd=project)
    assert code == 2, out
    assert "looks like a secret; codebot does not write secrets to settings in clear" in err
    assert suggestion in err
    for secret in ("abcdef0123456789abcdef", "hunter2pass", "sk-proj-", "ghp_"):
        assert secret not in err  # the refusal never echoes the secret
    assert not (tmp_path / "home" / "settings.json").exists()


def test_an_sse_entry_says_what_to_write_instead(cli: Cli, user: Path, project: Path) -> None:
    entry = '{"type": "sse", "url": "https://x.example/sse"}'
    code, _, err = cli("mcp", "add-json", "s", entry, cwd=project)
    assert code == 2
    assert "codebot speaks Streamable HTTP, not the older SSE transport" in err
    assert 'hint: Write "type": "http"' in err


def test_an_untrusted_project_server_named_on_the_command_line_is_not_trusted_everywhere(
    cli: Cli, user: Path, project: Path
) -> None:
    write_settings(project, {"mcp_servers": {"x": {"command": "evil"}}})
    for argv in (("mcp", "list", "-s", "x"), ("mcp", "call", "x", "t"), ("mcp", "lock", "-s", "x")):
        code, _, err = cli(*argv, cwd=project)
        assert code == 3, (argv, err)
        assert "server 'x' is defined by" in err and "not trusted" in err
        assert "unknown server" not in err
    code, out, _ = cli("mcp", "get", "x", cwd=project)
    assert code == 0 and "x  (enabled, project not trusted: will not start)" in out


# -- importing other clients' configs --------------------------------------------------------


def place(name: str, target: Path, replace: dict[str, str] | None = None) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    text = (FIXTURES / name).read_text()
    for old, new in (replace or {}).items():
        text = text.replace(old, new)
    target.write_text(text)


def test_claude_json_project_entries_are_found_from_a_subdirectory(
    cli: Cli, user: Path, project: Path
) -> None:
    place("claude.json", user / ".claude.json", {"PROJECT_DIR": str(project)})
    sub = project / "src" / "pkg"
    sub.mkdir(parents=True)
    code, out, err = cli("mcp", "import", "--from", "claude-code", "--dry-run", cwd=sub)
    assert code == 0, err
    assert f"(project {project})" in out and "+ postgres" in out
    assert "other" not in out  # another project's entry


def test_a_project_entry_that_hides_a_global_one_is_reported(
    cli: Cli, user: Path, project: Path
) -> None:
    place("claude.json", user / ".claude.json")  # user-level 'github': npx
    place("vscode.mcp.json", project / ".vscode" / "mcp.json")  # project 'github': http
    code, out, err = cli(
        "mcp", "import", "--from", "claude-code", "--from", "vscode", "--dry-run", cwd=project
    )
    assert code == 0, err
    assert (
        f"note: in this project it overrides the global 'github' (from {user / '.claude.json'})"
        in out
    )


def test_importing_a_repositorys_own_file_never_trusts_the_project(
    cli: Cli, user: Path, project: Path
) -> None:
    place("vscode.mcp.json", project / ".vscode" / "mcp.json")
    code, out, err = cli("mcp", "import", "--from", "vscode", cwd=project)
    assert code == 0, err
    assert "+ fetch" in out
    assert "is not trusted: run `codebot trust`" in err
    code, out, err = cli("mcp", "list", "-s", "fetch", cwd=project)
    assert "skipping project servers" in err and "not trusted" in err


def test_importing_your_own_per_project_entries_keeps_the_project_usable(
    cli: Cli, user: Path, project: Path
) -> None:
    claude = json.loads((FIXTURES / "claude.json").read_text())
    echo = server_entry("echo")
    claude["projects"] = {str(project): {"mcpServers": {"mine": {"type": "stdio", **echo}}}}
    (user / ".claude.json").write_text(json.dumps(claude))
    code, out, err = cli("mcp", "import", "--from", "claude-code", cwd=project)
    assert code == 0, err
    assert "+ mine" in out and "not trusted" not in err
    code, out, err = codebot("mcp", "call", "mine", "echo", "text=hi", cwd=project)
    assert (code, out.strip()) == (0, "hi"), err


def test_an_unreadable_config_is_reported_once_with_exit_3(
    cli: Cli, user: Path, project: Path
) -> None:
    (user / ".gemini").mkdir()
    (user / ".gemini" / "settings.json").write_text("{bad")
    code, _, err = cli("mcp", "import", "--from", "gemini", cwd=project)
    assert code == 3
    assert f"invalid JSON in {user / '.gemini' / 'settings.json'} at line 1" in err
    assert "no gemini configuration found" not in err


def test_vscode_user_home_and_hostile_names_in_the_report(
    cli: Cli, user: Path, project: Path
) -> None:
    config = {
        "servers": {
            "notes": {"command": "notes", "args": ["${userHome}/notes.db"]},
            "bad\x1b[2Jname": {"command": "x"},
        }
    }
    (project / ".vscode").mkdir()
    (project / ".vscode" / "mcp.json").write_text(json.dumps(config))
    code, out, err = cli("mcp", "import", "--from", "vscode", "--dry-run", cwd=project)
    assert code == 0, err
    assert f"notes {user}/notes.db" in out.replace("  ", " ")
    assert "- bad\\x1b[2Jname" in out and "\x1b" not in out


# -- model discovery on the four well-known ports --------------------------------------------


def _handler(models: list[str], delay: float = 0.0, status: int = 200) -> type:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            time.sleep(delay)
            body = json.dumps({"object": "list", "data": [{"id": m} for m in models]}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def four_ports() -> Iterator[None]:
    """Ollama answers; llama.cpp says 404; LM Studio accepts and never answers; vLLM answers
    after 30 s. Skipped when any of the ports is taken on this machine."""
    servers: list[ThreadingHTTPServer] = []
    silent = socket.socket()
    try:
        for port, handler in (
            (11434, _handler(["qwen2.5-coder:7b", "llama3.2"])),
            (8080, _handler([], status=404)),
            (8000, _handler(["slow"], delay=30)),
        ):
            server = ThreadingHTTPServer(("127.0.0.1", port), handler)
            server.daemon_threads = True
            servers.append(server)
        silent.bind(("127.0.0.1", 1234))
        silent.listen(8)
    except OSError as exc:
        for server in servers:
            server.server_close()
        silent.close()
        pytest.skip(f"a well-known model port is taken: {exc}")
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield
    for server in servers:
        server.shutdown()
        server.server_close()
    silent.close()


@pytest.mark.usefixtures("four_ports")
def test_models_finds_the_local_server_on_the_real_ports_without_waiting_for_slow_ones(
    user: Path, project: Path
) -> None:
    started = time.monotonic()
    code, out, err = codebot("models", "--json", cwd=project)
    elapsed = time.monotonic() - started
    assert code == 0, err
    assert json.loads(out) == {
        "endpoints": [
            {
                "name": "Ollama",
                "base_url": "http://127.0.0.1:11434/v1",
                "models": ["qwen2.5-coder:7b", "llama3.2"],
            }
        ]
    }
    # The silent and the 30 s servers are given up on (a bound, not a benchmark: see make bench).
    assert elapsed < 20


def test_batch_reads_a_real_pipe_line_by_line(user: Path, project: Path) -> None:
    """`mcp call --batch` through the installed script with a real pipe on stdin: many lines
    arrive in one read, a multi-byte character, a blank line and a last line without its
    newline each come out as their own answer, in order."""
    add_global("echo", server_entry("echo"), cwd=project)
    texts = [f"n{i}" for i in range(40)] + ["é€😀"]
    request = {"server": "echo", "tool": "echo"}
    lines = [json.dumps({**request, "arguments": {"text": t}}) for t in texts]
    body = "\n".join(lines[:20]) + "\n\n" + "\n".join(lines[20:])  # no final newline
    done = subprocess.run(
        [*zygote.command(), "mcp", "call", "--batch"],
        cwd=project,
        input=body.encode(),
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode()
    answers = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert [a["content"][0]["text"] for a in answers] == texts
