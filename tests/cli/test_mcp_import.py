"""`codebot mcp import` on real config files of each client (tests/fixtures/imports)."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run
from tests.helpers import server_entry, write_settings

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "imports"


def codebot(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = run(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "user"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return home


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    return path


def place(name: str, target: Path, replace: dict[str, str] | None = None) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    text = (FIXTURES / name).read_text()
    for old, new in (replace or {}).items():
        text = text.replace(old, new)
    target.write_text(text)
    return target


def global_servers(tmp_path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((tmp_path / "home" / "settings.json").read_text())
    return data["mcp_servers"]


def project_servers(repo: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((repo / ".codebot" / "settings.json").read_text())
    return data["mcp_servers"]


def test_claude_code_project_and_user_files(
    tmp_path: Path, user_home: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    place("claude_code.mcp.json", repo / ".mcp.json")
    place("claude.json", user_home / ".claude.json", {"PROJECT_DIR": str(repo)})
    cwd = ["--cwd", str(repo)]
    code, out, err = codebot(capsys, *cwd, "mcp", "import", "--from", "claude-code", "--dry-run")
    assert code == 0, err
    assert "would import 6 servers" in out and "nothing written" in out
    assert "ghp_R4nd0m" not in out + err
    assert not (tmp_path / "home" / "settings.json").exists()

    code, out, err = codebot(capsys, *cwd, "mcp", "import", "--from", "claude-code")
    assert code == 0, err
    project = project_servers(repo)
    assert project["filesystem"] == {
        "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-filesystem", "${PROJECT_DOCS:-./docs}"],
    }
    assert project["sentry"] == {
        "type": "http",
        "url": "https://mcp.sentry.dev/mcp",
        "headers": {"Authorization": "Bearer ${SENTRY_TOKEN}"},
    }
    assert project["linear"] == {"type": "http", "url": "https://mcp.linear.app/sse"}
    assert "was an SSE server" in out
    assert project["postgres"]["command"] == "npx"  # ~/.claude.json's entry for this project
    assert "other" not in project  # another project's entry
    user = global_servers(tmp_path)
    assert user["time"] == {"command": "uvx", "args": ["mcp-server-time"]}
    # The token in clear is not copied: it becomes a variable to export.
    assert user["github"]["env"] == {
        "GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_PERSONAL_ACCESS_TOKEN}"
    }
    assert "export GITHUB_PERSONAL_ACCESS_TOKEN" in out
    assert "ghp_R4nd0m" not in (tmp_path / "home" / "settings.json").read_text()
    assert stat.S_IMODE((tmp_path / "home" / "settings.json").stat().st_mode) == 0o600

    # Again: everything is already there; nothing changes.
    code, out, _ = codebot(capsys, *cwd, "mcp", "import", "--from", "claude-code")
    assert code == 0 and "imported 0 servers; 6 already there" in out


def test_claude_desktop_linux_and_macos_paths(
    tmp_path: Path, user_home: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    place(
        "claude_desktop_config.json",
        user_home / ".config" / "Claude" / "claude_desktop_config.json",
    )
    mac = user_home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    place("claude_desktop_config.json", mac, {"brave-search": "brave-mac", "filesystem": "fs-mac"})
    code, out, err = codebot(
        capsys, "--cwd", str(repo), "mcp", "import", "--from", "claude-desktop"
    )
    assert code == 0, err
    servers = global_servers(tmp_path)
    assert {"filesystem", "brave-search", "fs-mac", "brave-mac"} <= set(servers)
    assert servers["brave-search"]["env"] == {"BRAVE_API_KEY": "${BRAVE_API_KEY}"}
    assert "BSAq8mX2" not in out + err
    assert "'globalShortcut'" not in out  # top-level keys of the app are not servers


def test_cursor_global_and_project_with_clash_reported(
    tmp_path: Path, user_home: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    place("cursor_global.mcp.json", user_home / ".cursor" / "mcp.json")
    place("cursor_project.mcp.json", repo / ".cursor" / "mcp.json")
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"mcp_servers": {"time": {"command": "mine"}}}))
    code, out, err = codebot(capsys, "--cwd", str(repo), "mcp", "import", "--from", "cursor")
    assert code == 0, err
    assert "! time" in out and "already has a different 'time' (kept)" in out
    assert "1 clash" in out
    servers = global_servers(tmp_path)
    assert servers["time"] == {"command": "mine"}  # yours stays
    assert servers["context7"]["headers"] == {"CONTEXT7_API_KEY": "${CONTEXT7_API_KEY}"}
    notes = project_servers(repo)["notes"]
    assert notes["args"] == [f"{repo}/tools/notes_server.py"]
    assert notes["env"] == {"NOTES_DB": f"{user_home}/.notes.db", "API_TOKEN": "${NOTES_TOKEN}"}
    assert "'envFile' is not imported" in out


def test_vscode_servers_inputs_and_env(
    tmp_path: Path, user_home: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    place("vscode.mcp.json", repo / ".vscode" / "mcp.json")
    code, out, err = codebot(
        capsys, "--cwd", str(repo), "mcp", "import", "--from", "vscode", "--scope", "global"
    )
    assert code == 0, err
    servers = global_servers(tmp_path)
    assert servers["Perplexity"]["env"] == {"PERPLEXITY_API_KEY": "${PERPLEXITY_KEY}"}
    assert "${input:perplexity-key} (Perplexity API Key) is prompted for by VS Code" in out
    assert "export PERPLEXITY_KEY" in out
    assert servers["fetch"]["env"] == {"HOME_DIR": "${HOME}"}
    assert servers["github"] == {"type": "http", "url": "https://api.githubcopilot.com/mcp/"}
    assert "- my.server" in out and "invalid server name" in out
    assert "my.server" not in servers


def test_gemini_http_url_sse_and_milliseconds(
    tmp_path: Path, user_home: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    place("gemini_settings.json", user_home / ".gemini" / "settings.json")
    code, out, err = codebot(capsys, "--cwd", str(repo), "mcp", "import", "--from", "gemini")
    assert code == 0, err
    servers = global_servers(tmp_path)
    assert servers["pythonTools"] == {
        "command": "python",
        "args": ["-m", "my_mcp_server", "--port", "8080"],
        "env": {"DATABASE_URL": "${DB_CONNECTION_STRING}", "API_KEY": "${EXTERNAL_API_KEY}"},
        "cwd": "./mcp-servers/python",
        "timeout": 15,
        "include_tools": ["safe_tool", "file_reader"],
    }
    assert servers["httpServer"] == {
        "type": "http",
        "url": "http://localhost:3000/mcp",
        "timeout": 5,
        "exclude_tools": ["dangerous_tool"],
    }
    assert servers["sseServer"]["headers"] == {"Authorization": "Bearer ${SSE_TOKEN}"}
    assert servers["sseServer"]["timeout"] == 30
    assert "'timeout' 30000 ms → 'timeout' 30 s" in out


def test_codex_config_toml(
    tmp_path: Path, user_home: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    place("codex_config.toml", user_home / ".codex" / "config.toml")
    code, _, err = codebot(capsys, "--cwd", str(repo), "mcp", "import", "--from", "codex")
    assert code == 0, err
    servers = global_servers(tmp_path)
    assert servers["docs"] == {
        "command": "docs-server",
        "args": ["--port", "4000"],
        "env": {"API_KEY": "${DOCS_KEY}", "DOCS_HOME": "${DOCS_HOME}"},
        "timeout": 20,
        "tool_timeout": 60,
        "include_tools": ["search", "open"],
    }
    assert servers["figma"] == {
        "type": "http",
        "url": "https://mcp.figma.com/mcp",
        "headers": {"X-Figma-Region": "us-east-1", "Authorization": "Bearer ${FIGMA_OAUTH_TOKEN}"},
    }
    assert servers["off"] == {"command": "legacy-server", "enabled": False, "timeout": 2.5}


def test_nothing_found_and_unreadable_files(
    user_home: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = codebot(capsys, "--cwd", str(repo), "mcp", "import", "--from", "codex")
    assert code == 1
    assert "no codex configuration found" in err and ".codex/config.toml" in err
    (user_home / ".codex").mkdir()
    (user_home / ".codex" / "config.toml").write_text("[mcp_servers.x\n")
    code, _, err = codebot(capsys, "--cwd", str(repo), "mcp", "import", "--from", "codex")
    assert code == 3 and "invalid TOML" in err and "config.toml" in err
    code, _, err = codebot(capsys, "--cwd", str(repo), "mcp", "import", "--from", "nope")
    assert code == 2


def test_imported_server_runs(
    tmp_path: Path, user_home: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entry = server_entry("echo")
    (repo / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"echo": {"type": "stdio", **entry}}})
    )
    assert codebot(capsys, "--cwd", str(repo), "mcp", "import", "--from", "claude-code")[0] == 0
    shutil.move(repo / ".mcp.json", tmp_path / "moved.json")  # only the imported copy remains
    code, out, err = codebot(capsys, "--cwd", str(repo), "mcp", "call", "echo", "echo", "text=ok")
    assert (code, out) == (0, "ok\n"), err


def test_project_mcp_json_is_read_directly_and_trust_gated(
    tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"echo": {"type": "stdio", **server_entry("echo")}}})
    )
    cwd = ["--cwd", str(repo)]
    code, out, err = codebot(capsys, *cwd, "mcp", "call", "echo", "echo", "text=direct")
    assert (code, out) == (0, "direct\n"), err
    code, out, _ = codebot(capsys, *cwd, "mcp", "list", "--json")
    [server] = json.loads(out)["servers"]
    assert server["source"] == str(repo / ".mcp.json")
    # .codebot/settings.json wins by name over .mcp.json.
    write_settings(repo, {"mcp_servers": {"echo": server_entry("echo", timeout=7)}})
    code, out, _ = codebot(capsys, *cwd, "mcp", "get", "echo", "--json")
    assert json.loads(out)["source"] == str(repo / ".codebot" / "settings.json")
    (repo / ".codebot" / "settings.json").unlink()
    # Untrusted: not started, like the project's own settings.
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")
    code, _, err = codebot(capsys, *cwd, "mcp", "call", "echo", "echo", "text=x")
    assert code == 3 and "not trusted" in err
    assert codebot(capsys, *cwd, "trust", "--yes")[0] == 0
    code, out, err = codebot(capsys, *cwd, "mcp", "call", "echo", "echo", "text=trusted")
    assert (code, out) == (0, "trusted\n"), err
