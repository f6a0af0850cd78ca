"""Everyday use through the installed entry point (``.venv/bin/codebot``, a real process), as a
new user meets it: managing servers, importing other clients' configs, completion in real
bash, zsh and fish, and model discovery on the four well-known ports."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import server_entry, write_settings

CODEBOT = str(Path(sys.executable).with_name("codebot"))
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "imports"


def codebot(*argv: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run the installed ``codebot`` in ``cwd`` and return (exit code, stdout, stderr)."""
    done = subprocess.run(
        [CODEBOT, *argv],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh $HOME (other clients' configs live there) and an untrusted-by-default run."""
    home = tmp_path / "user"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT", raising=False)
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


# -- managing servers -------------------------------------------------------------------------


def test_a_disabled_entry_is_disabled_even_with_an_unset_variable(
    user: Path, project: Path
) -> None:
    code, out, err = codebot(
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
    code, out, err = codebot("mcp", "list", "-s", "gh", cwd=project)
    assert code == 2, err
    assert "gh  http · disabled" in out and "codebot mcp enable gh" in err
    assert "UNSET_GH_TOKEN" not in out + err  # a disabled entry needs none of its variables
    code, _, err = codebot("mcp", "call", "gh", "tool", cwd=project)
    assert code == 2 and "disabled" in err and "codebot mcp enable gh" in err
    code, out, _ = codebot("mcp", "doctor", "-s", "gh", cwd=project)
    assert code == 0 and "gh  http · disabled" in out
    assert codebot("mcp", "enable", "gh", cwd=project)[0] == 0
    code, out, err = codebot("mcp", "get", "gh", cwd=project)
    assert code == 0, err
    assert "gh  (not usable)" in out
    assert (
        "problem: " in out and "${UNSET_GH_TOKEN}" in out and "hint: Export UNSET_GH_TOKEN" in out
    )
    code, out, _ = codebot("mcp", "list", "-s", "gh", cwd=project)
    assert code == 4 and "config failed" in out and "http" in out


def test_get_shows_the_global_entry_an_untrusted_project_entry_waits_behind(
    user: Path, project: Path, tmp_path: Path
) -> None:
    echo = server_entry("echo")
    assert codebot("mcp", "add", "echo", "--", echo["command"], *echo["args"], cwd=project)[0] == 0
    global_file = tmp_path / "home" / "settings.json"
    write_settings(project, {"mcp_servers": {"echo": {"command": "evil\x1b[2J", "agrs": ["-x"]}}})
    code, out, err = codebot("mcp", "get", "echo", cwd=project)
    assert code == 0, err
    assert out.splitlines()[0] == "echo  (enabled)"
    assert f"from {global_file}" in out
    assert "replaces it once the project is trusted (`codebot trust`)" in out
    code, out, err = codebot("mcp", "get", "echo", "--json", cwd=project)
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
    code, out, err = codebot("mcp", "get", "echo", cwd=project, env=trusted)
    assert "command: evil\\x1b[2J" in out and "\x1b" not in out
    assert f"overrides the entry in {global_file}" in out
    assert err.count("unknown key 'agrs'") == 1  # warned once, on stderr only
    code, out, err = codebot("mcp", "get", "echo", "--json", cwd=project, env=trusted)
    assert code == 0, err
    assert json.loads(out)["warnings"] == ["unknown key 'agrs' is ignored (did you mean 'args'?)"]


# -- importing other clients' configs --------------------------------------------------------


def place(name: str, target: Path, replace: dict[str, str] | None = None) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    text = (FIXTURES / name).read_text()
    for old, new in (replace or {}).items():
        text = text.replace(old, new)
    target.write_text(text)


def test_claude_json_project_entries_are_found_from_a_subdirectory(
    user: Path, project: Path
) -> None:
    place("claude.json", user / ".claude.json", {"PROJECT_DIR": str(project)})
    sub = project / "src" / "pkg"
    sub.mkdir(parents=True)
    code, out, err = codebot("mcp", "import", "--from", "claude-code", "--dry-run", cwd=sub)
    assert code == 0, err
    assert f"(project {project})" in out and "+ postgres" in out
    assert "other" not in out  # another project's entry


def test_a_project_entry_that_hides_a_global_one_is_reported(user: Path, project: Path) -> None:
    place("claude.json", user / ".claude.json")  # user-level 'github': npx
    place("vscode.mcp.json", project / ".vscode" / "mcp.json")  # project 'github': http
    code, out, err = codebot(
        "mcp", "import", "--from", "claude-code", "--from", "vscode", "--dry-run", cwd=project
    )
    assert code == 0, err
    assert (
        f"note: in this project it overrides the global 'github' (from {user / '.claude.json'})"
        in out
    )


def test_importing_a_repositorys_own_file_never_trusts_the_project(
    user: Path, project: Path
) -> None:
    place("vscode.mcp.json", project / ".vscode" / "mcp.json")
    code, out, err = codebot("mcp", "import", "--from", "vscode", cwd=project)
    assert code == 0, err
    assert "+ fetch" in out
    assert "is not trusted: run `codebot trust`" in err
    code, out, err = codebot("mcp", "list", "-s", "fetch", cwd=project)
    assert "skipping project servers" in err and "not trusted" in err


def test_importing_your_own_per_project_entries_keeps_the_project_usable(
    user: Path, project: Path
) -> None:
    claude = json.loads((FIXTURES / "claude.json").read_text())
    echo = server_entry("echo")
    claude["projects"] = {str(project): {"mcpServers": {"mine": {"type": "stdio", **echo}}}}
    (user / ".claude.json").write_text(json.dumps(claude))
    code, out, err = codebot("mcp", "import", "--from", "claude-code", cwd=project)
    assert code == 0, err
    assert "+ mine" in out and "not trusted" not in err
    code, out, err = codebot("mcp", "call", "mine", "echo", "text=hi", cwd=project)
    assert (code, out.strip()) == (0, "hi"), err


def test_an_unreadable_config_is_reported_once_with_exit_3(user: Path, project: Path) -> None:
    (user / ".gemini").mkdir()
    (user / ".gemini" / "settings.json").write_text("{bad")
    code, _, err = codebot("mcp", "import", "--from", "gemini", cwd=project)
    assert code == 3
    assert f"invalid JSON in {user / '.gemini' / 'settings.json'} at line 1" in err
    assert "no gemini configuration found" not in err


def test_vscode_user_home_and_hostile_names_in_the_report(user: Path, project: Path) -> None:
    config = {
        "servers": {
            "notes": {"command": "notes", "args": ["${userHome}/notes.db"]},
            "bad\x1b[2Jname": {"command": "x"},
        }
    }
    (project / ".vscode").mkdir()
    (project / ".vscode" / "mcp.json").write_text(json.dumps(config))
    code, out, err = codebot("mcp", "import", "--from", "vscode", "--dry-run", cwd=project)
    assert code == 0, err
    assert f"notes {user}/notes.db" in out.replace("  ", " ")
    assert "- bad\\x1b[2Jname" in out and "\x1b" not in out


# -- shell completion in the real shells -------------------------------------------------------


@pytest.fixture
def completing(user: Path, project: Path) -> Path:
    """A global echo server whose tools `mcp list` has seen, and a project 'alpha'."""
    echo = server_entry("echo")
    assert codebot("mcp", "add", "echo", "--", echo["command"], *echo["args"], cwd=project)[0] == 0
    write_settings(
        project,
        {"mcp_servers": {"alpha": {"command": "x", "include_tools": ["get_time", "x_*"]}}},
    )
    code, _, err = codebot("mcp", "list", "-s", "echo", cwd=project)
    assert code == 0, err
    return project


def in_bash(project: Path, *words: str) -> list[str]:
    script = (
        'source <(codebot --show-completion bash); COMP_WORDS=("$@"); '
        'COMP_CWORD=$(($# - 1)); _codebot_completion codebot; printf "%s\\n" "${COMPREPLY[@]}"'
    )
    return _shell(["bash", "-c", script, "bash", *words], project)


def in_zsh(project: Path, *words: str) -> list[str]:
    # _arguments prints what the completion would offer: "*: :(("a" "b"))".
    script = (
        'compdef(){ :; }; _arguments(){ print -r -- "$@"; }; _files(){ print FILES; }; '
        'eval "$(codebot --show-completion zsh)"; words=("$@"); CURRENT=$#; _codebot_completion'
    )
    out = _shell(["zsh", "-fc", script, "zsh", *words], project)
    return [w.strip('"') for line in out for w in line.split("((", 1)[-1].rstrip(")").split()]


def in_fish(project: Path, line: str) -> list[str]:
    script = f"source (codebot --show-completion fish | psub); complete -C {json.dumps(line)}"
    return _shell(["fish", "-c", script], project)


def _shell(argv: list[str], cwd: Path) -> list[str]:
    if shutil.which(argv[0]) is None:
        pytest.skip(f"{argv[0]} is not installed")
    path = f"{Path(CODEBOT).parent}{os.pathsep}{os.environ['PATH']}"
    done = subprocess.run(
        argv,
        cwd=cwd,
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return [line.split("\t")[0] for line in done.stdout.splitlines() if line]


def test_bash_completes_servers_and_the_tools_mcp_list_saw(completing: Path) -> None:
    assert in_bash(completing, "codebot", "mcp", "call", "") == ["alpha", "echo"]
    assert in_bash(completing, "codebot", "mcp", "call", "echo", "de") == ["delete_note"]
    assert in_bash(completing, "codebot", "mcp", "call", "alpha", "") == ["get_time"]
    for command in ("get", "remove", "enable", "disable", "login", "resources", "prompts"):
        assert in_bash(completing, "codebot", "mcp", command, "a") == ["alpha"], command
    assert in_bash(completing, "codebot", "mcp", "lock", "--server", "e") == ["echo"]
    assert in_bash(completing, "codebot", "chat", "--allow-sampling", "e") == ["echo"]
    assert in_bash(completing, "codebot", "mcp", "import", "--from", "c") == [
        "claude-code",
        "claude-desktop",
        "cursor",
        "codex",
    ]
    # Global options after the command count, as on a command line.
    elsewhere = completing.parent / "elsewhere"
    elsewhere.mkdir()
    assert in_bash(elsewhere, "codebot", "mcp", "call", "") == ["echo"]
    assert in_bash(elsewhere, "codebot", "mcp", "call", "--cwd", str(completing), "") == [
        "alpha",
        "echo",
    ]


def test_tool_names_are_not_offered_for_an_entry_mcp_list_did_not_see(
    completing: Path, tmp_path: Path
) -> None:
    # Another project's server of the same name is another server: its tools are not these.
    other = tmp_path / "other"
    echo = server_entry("echo")
    write_settings(other, {"mcp_servers": {"echo": {**echo, "env": {"GREETING": "x"}}}})
    assert in_bash(other, "codebot", "mcp", "call", "echo", "de") == []
    # The entry itself changed since: not offered either, until the next `mcp list`.
    code, _, err = codebot(
        "mcp",
        "add",
        "echo",
        "--force",
        "-e",
        "A=1",
        "--",
        echo["command"],
        *echo["args"],
        cwd=completing,
    )
    assert code == 0, err
    assert in_bash(completing, "codebot", "mcp", "call", "echo", "de") == []
    assert codebot("mcp", "list", "-s", "echo", cwd=completing)[0] == 0
    assert in_bash(completing, "codebot", "mcp", "call", "echo", "de") == ["delete_note"]


def test_nothing_unsafe_is_handed_to_the_shell(completing: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    hostile = f"$(touch {marker})"
    write_settings(
        completing,
        {
            "mcp_servers": {
                "alpha": {"command": "x", "include_tools": [hostile, "ok_tool", "a b"]},
                f"`touch {marker}`": {"command": "x"},
            }
        },
    )
    assert in_zsh(completing, "codebot", "mcp", "call", "") == ["alpha", "echo"]
    assert in_zsh(completing, "codebot", "mcp", "call", "alpha", "") == ["ok_tool"]
    assert in_bash(completing, "codebot", "mcp", "call", "alpha", "") == ["ok_tool"]
    assert not marker.exists()


def test_zsh_and_fish_complete_servers_and_tools(completing: Path) -> None:
    assert in_zsh(completing, "codebot", "mcp", "call", "echo", "de") == ["delete_note"]
    assert in_zsh(completing, "codebot", "mcp", "get", "") == ["alpha", "echo"]
    assert in_fish(completing, "codebot mcp call echo de") == ["delete_note"]
    assert in_fish(completing, "codebot mcp get ") == ["alpha", "echo"]
    assert in_fish(completing.parent, f"codebot mcp get --cwd {completing} a") == ["alpha"]


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
