"""`codebot mcp add|add-json|remove|get|enable|disable` through the real entry point."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from tests.helpers import server_entry, write_settings
from tests.servers.util import REPO_ROOT


def codebot(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = run(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def global_file(home: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((home / "settings.json").read_text())
    return data


def test_add_then_list_and_call_the_new_server(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    command, args = server_entry("echo")["command"], server_entry("echo")["args"]
    code, out, err = codebot(
        capsys,
        "--cwd",
        str(tmp_path),
        "mcp",
        "add",
        "echo",
        "-e",
        "GREETING=hi",
        "--timeout",
        "20",
        "--exclude-tools",
        "delete_*",
        "--",
        command,
        *args,
    )
    assert code == 0, err
    assert f"added server 'echo' in {home / 'settings.json'}" in out
    path = home / "settings.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert global_file(home) == {
        "mcp_servers": {
            "echo": {
                "command": command,
                "args": args,
                "env": {"GREETING": "hi"},
                "timeout": 20,
                "exclude_tools": ["delete_*"],
            }
        }
    }
    # The test server must be importable from any cwd: set PYTHONPATH through the entry.
    entry = global_file(home)["mcp_servers"]["echo"]  # type: ignore[index]
    entry["env"]["PYTHONPATH"] = str(REPO_ROOT)
    path.write_text(json.dumps(global_file(home) | {"mcp_servers": {"echo": entry}}))
    code, out, err = codebot(
        capsys, "--cwd", str(tmp_path), "mcp", "call", "echo", "echo", "text=yo"
    )
    assert (code, out) == (0, "yo\n"), err
    code, out, _ = codebot(capsys, "--cwd", str(tmp_path), "mcp", "list")
    assert "mcp__echo__echo" in out and "mcp__echo__delete_note" not in out


def test_add_keeps_other_keys_and_their_order(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home.mkdir()
    original = {
        "model": "m",
        "mcpServers": {"b": {"command": "b"}, "a": {"command": "a"}},
        "permissions": {"deny": ["bash"]},
        "max_turns": 7,
    }
    (home / "settings.json").write_text(json.dumps(original))
    os.chmod(home / "settings.json", 0o640)
    code, _, err = codebot(capsys, "mcp", "add", "web", "--url", "https://example.com/mcp")
    assert code == 0, err
    data = global_file(home)
    assert list(data) == ["model", "mcpServers", "permissions", "max_turns"]
    assert list(data["mcpServers"]) == ["b", "a", "web"]  # type: ignore[call-overload]
    assert data["mcpServers"]["web"] == {"type": "http", "url": "https://example.com/mcp"}  # type: ignore[index]
    assert stat.S_IMODE((home / "settings.json").stat().st_mode) == 0o640  # an existing mode stays
    assert [p.name for p in home.iterdir()] == ["settings.json"]  # no temporary file left


def test_add_refuses_secrets_in_clear_and_suggests_a_variable(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = [
        ["-e", "GITHUB_TOKEN=ghp_0123456789abcdefABCDEF0123456789", "--", "npx", "server"],
        ["-e", "API_KEY=hunter2-long", "--", "npx", "server"],
        ["--url", "https://x.example/mcp", "--header", "Authorization: Bearer abcdefghijklmnop"],
        ["--url", "https://x.example/mcp?api_key=abcdef123456"],
        ["--", "npx", "server", "--token=sk-proj-abcdefghijklmnopqrstuvwxyz012345"],
    ]
    for argv in cases:
        code, out, err = codebot(capsys, "mcp", "add", "s", *argv)
        assert code == 2, argv
        assert "looks like a secret" in err and "${" in err, err
        for secret in ("ghp_0123", "hunter2", "abcdefghijklmnop", "abcdef123456", "sk-proj"):
            assert secret not in out + err
    assert not (home / "settings.json").exists()
    code, _, err = codebot(
        capsys, "mcp", "add", "s", "-e", "GITHUB_TOKEN=${GITHUB_TOKEN}", "--", "npx", "server"
    )
    assert code == 0, err
    code, _, err = codebot(
        capsys,
        "mcp",
        "add",
        "w",
        "--url",
        "https://x.example/mcp",
        "--header",
        "Authorization: Bearer ${TOKEN}",
    )
    assert code == 0, err


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["s"], "missing the command"),
        (["s", "--url", "https://x/mcp", "--", "npx"], "either --url or a command"),
        (["s", "--timeout", "0", "--", "npx"], "--timeout 0: must be a positive number"),
        (["s", "--timeout", "-3", "--", "npx"], "must be a positive number"),
        (["bad__name", "--", "npx"], "invalid server name"),
        (["s", "-e", "NOEQUALS", "--", "npx"], "expected KEY=VALUE"),
        (["s", "--url", "ftp://x"], "'url' must be an http:// or https:// URL"),
        (["s", "--header", "X: y", "--", "npx"], "--header is for http servers"),
        (["s", "--transport", "http", "--", "npx"], "--transport http needs --url"),
    ],
)
def test_add_usage_errors(
    home: Path, capsys: pytest.CaptureFixture[str], argv: list[str], fragment: str
) -> None:
    code, _, err = codebot(capsys, "mcp", "add", *argv)
    assert code == 2
    assert fragment in err
    assert "Traceback" not in err
    assert not (home / "settings.json").exists()


def test_add_existing_name_needs_force(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert codebot(capsys, "mcp", "add", "s", "--", "a")[0] == 0
    code, _, err = codebot(capsys, "mcp", "add", "s", "--", "b")
    assert code == 2 and "already exists" in err and "--force" in err
    assert codebot(capsys, "mcp", "add", "s", "--force", "--", "b")[0] == 0
    assert global_file(home)["mcp_servers"] == {"s": {"command": "b"}}


def test_transport_http_takes_the_url_positionally(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = codebot(
        capsys, "mcp", "add", "--transport", "http", "w", "https://x.example/mcp"
    )
    assert code == 0, err
    assert global_file(home)["mcp_servers"] == {
        "w": {"type": "http", "url": "https://x.example/mcp"}
    }


def test_add_json_validates_like_loading(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = codebot(capsys, "mcp", "add-json", "s", '{"command": "npx", "agrs": ["x"]}')
    assert code == 2
    assert "unknown key 'agrs'" in err and "did you mean 'args'" in err
    assert "ignored" not in err and "nothing was written" in err  # refused, so said as such
    assert not (home / "settings.json").exists()
    code, _, err = codebot(capsys, "mcp", "add", "s", "--timeout", "30000", "--", "npx")
    assert code == 2 and "ignored" not in err and "nothing was written" in err
    code, _, err = codebot(capsys, "mcp", "add-json", "s", "{oops")
    assert code == 2 and "invalid JSON for server 's'" in err
    code, _, err = codebot(capsys, "mcp", "add-json", "s", '{"command": "npx", "timeout": "5"}')
    assert code == 2 and "'timeout' must be a positive number" in err
    code, _, err = codebot(
        capsys, "mcp", "add-json", "s", '{"type": "streamable-http", "url": "https://h/mcp"}'
    )
    assert code == 0, err
    assert global_file(home)["mcp_servers"] == {
        "s": {"type": "streamable-http", "url": "https://h/mcp"}
    }


def test_project_scope_and_get_shows_source_and_override(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cwd = ["--cwd", str(tmp_path)]
    assert codebot(capsys, *cwd, "mcp", "add", "s", "-e", "A=1", "--", "global-cmd")[0] == 0
    code, out, err = codebot(
        capsys, *cwd, "mcp", "add", "s", "--scope", "project", "-e", "B=2", "--", "project-cmd"
    )
    assert code == 0, err
    project_file = tmp_path / ".codebot" / "settings.json"
    assert json.loads(project_file.read_text()) == {
        "mcp_servers": {"s": {"command": "project-cmd", "env": {"B": "2"}}}
    }
    code, out, _ = codebot(capsys, *cwd, "mcp", "get", "s")
    assert code == 0
    assert f"from {project_file}" in out
    assert f"overrides the entry in {home / 'settings.json'}" in out
    assert "command: project-cmd" in out
    assert '"B": "2"' in out  # configuration is shown (a secret is masked: test_redaction)
    code, out, _ = codebot(capsys, *cwd, "mcp", "get", "s", "--json")
    view = json.loads(out)
    assert view["source"] == str(project_file)
    assert view["overrides"] == str(home / "settings.json")
    assert view["entry"]["env"] == {"B": "2"}

    # Defined in both files: remove needs --scope.
    code, _, err = codebot(capsys, *cwd, "mcp", "remove", "s")
    assert code == 2 and "--scope" in err
    assert codebot(capsys, *cwd, "mcp", "remove", "s", "--scope", "project")[0] == 0
    code, out, _ = codebot(capsys, *cwd, "mcp", "get", "s")
    assert f"from {home / 'settings.json'}" in out and "overrides" not in out


def test_get_masks_secrets_but_shows_variable_references(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOKEN", "canary-secret-9f8e7d")
    write_settings(
        tmp_path,
        {
            "mcp_servers": {
                "w": {
                    "url": "https://u:pw@h.example/mcp?token=abc",
                    "headers": {"Authorization": "Bearer ${TOKEN}", "X-Key": "plain-secret-v"},
                }
            }
        },
    )
    code, out, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "get", "w")
    assert code == 0, err
    assert "canary-secret-9f8e7d" not in out and "plain-secret-v" not in out and "pw@" not in out
    assert "Bearer ${TOKEN}" in out
    assert '"X-Key": "***"' in out


def test_enable_disable_and_list_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_settings(tmp_path, {"mcp_servers": {"echo": server_entry("echo")}})
    cwd = ["--cwd", str(tmp_path)]
    code, out, err = codebot(capsys, *cwd, "mcp", "disable", "echo")
    assert code == 0, err
    assert f"disabled server 'echo' in {path}" in out
    assert json.loads(path.read_text())["mcp_servers"]["echo"]["enabled"] is False
    code, out, _ = codebot(capsys, *cwd, "mcp", "get", "echo")
    assert "(disabled)" in out
    assert codebot(capsys, *cwd, "mcp", "enable", "echo")[0] == 0
    assert "enabled" not in json.loads(path.read_text())["mcp_servers"]["echo"]
    code, _, err = codebot(capsys, *cwd, "mcp", "enable", "nope")
    assert code == 2 and "unknown server 'nope'" in err


def test_remove_unknown_and_nothing_configured_hint_names_both_files(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "remove", "nope")
    assert code == 2
    assert str(home / "settings.json") in err
    assert str(tmp_path / ".codebot" / "settings.json") in err
    code, _, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "list")
    assert code == 0
    assert str(home / "settings.json") in err and str(tmp_path / ".codebot") in err
    assert "codebot mcp add" in err


def test_editing_a_trusted_project_keeps_it_trusted_but_not_an_untrusted_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")
    cwd = ["--cwd", str(tmp_path)]
    write_settings(tmp_path, {"mcp_servers": {"a": {"command": "a"}}})
    assert codebot(capsys, *cwd, "trust", "--yes")[0] == 0
    assert codebot(capsys, *cwd, "mcp", "add", "b", "--scope", "project", "--", "b")[0] == 0
    code, out, _ = codebot(capsys, *cwd, "mcp", "get", "b", "--json")
    assert json.loads(out)["trusted"] is True

    other = tmp_path / "other"
    write_settings(other, {"mcp_servers": {"evil": {"command": "evil"}}})
    code, _, err = codebot(
        capsys, "--cwd", str(other), "mcp", "add", "b", "--scope", "project", "--", "b"
    )
    assert code == 0
    assert "not trusted" in err
    code, out, _ = codebot(capsys, "--cwd", str(other), "mcp", "get", "evil", "--json")
    assert json.loads(out)["trusted"] is False


def test_ordinary_values_under_secret_sounding_names_are_not_refused(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["-e", "SESSION_DIR=/tmp/sessions", "-e", "AUTH_URL=https://auth.example.com/cb"]
    code, _, err = codebot(capsys, "mcp", "add", "s", *argv, "-e", "TOKEN_TTL=3600", "--", "x")
    assert code == 0, err
    assert global_file(home)["mcp_servers"]["s"]["env"]["SESSION_DIR"] == "/tmp/sessions"  # type: ignore[index]


def test_a_servers_option_without_dashes_gets_a_hint(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = codebot(capsys, "mcp", "add", "fs", "npx", "-y", "pkg", "/tmp")
    assert code == 2 and "No such option: -y" in err
    assert "hint: '-y' is the server's, not codebot's" in err
    assert "codebot mcp add fs -- npx -y pkg /tmp" in err
    assert not (home / "settings.json").exists()
    code, _, err = codebot(capsys, "mcp", "call", "s", "tool", "--verbose")
    assert code == 2 and "'--verbose' is not an option of `codebot mcp call`" in err
    assert "after `--`" in err
    code, _, err = codebot(capsys, "mcp", "add", "--forse", "fs", "--", "npx")
    assert code == 2 and "hint:" not in err  # codebot's own option, mistyped: Click's words
