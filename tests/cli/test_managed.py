"""Managed settings (``CODEBOT_MANAGED_SETTINGS``, docs/managed-settings.md): read first, denied
and allowed servers on every path, locked keys, and a broken file is exit 3 naming it. The
servers are real processes (``tests.servers.echo``); the commands run through ``cli.app.run``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.core.config import effective, managed
from codebot_mcp.core.sandbox.sandboxsettings import of as sandbox_of
from tests.helpers import cli_in_process, server_config, server_entry, write_settings


def policy_file(tmp_path: Path, data: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "etc" / "managed-settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    monkeypatch.setenv("CODEBOT_MANAGED_SETTINGS", str(path))
    return path


def two_servers(root: Path, **extra: Any) -> None:
    servers = {"good": server_entry("echo"), "bad": server_entry("echo")}
    write_settings(root, {"mcp_servers": servers, **extra})


def test_a_denied_server_is_left_out_of_list_and_call_names_the_managed_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = policy_file(tmp_path, {"denied_mcp_servers": [{"name": "bad"}]}, monkeypatch)
    two_servers(tmp_path)
    code, out, err = cli_in_process(capsys, monkeypatch, "--cwd", str(tmp_path), "mcp", "list")
    assert code == 0
    assert "good" in out and "bad" not in out
    assert "server 'bad' is left out by the managed settings" in err and str(path) in err

    argv = ("--cwd", str(tmp_path), "mcp", "call", "bad", "echo", "text=hi")
    code, out, err = cli_in_process(capsys, monkeypatch, *argv)
    assert code == 3, err
    assert "server 'bad' is not allowed by the managed settings" in err
    assert '{"name": "bad"}' in err and str(path) in err
    code, out, _ = cli_in_process(capsys, monkeypatch, *argv[:4], "good", "echo", "text=hi")
    assert (code, out) == (0, "hi\n")


def test_doctor_says_what_the_policy_removed_and_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = policy_file(
        tmp_path,
        {"allowed_mcp_servers": [{"name": "good"}], "registry_url": "https://r.corp.example"},
        monkeypatch,
    )
    two_servers(tmp_path)
    argv = ("--cwd", str(tmp_path), "mcp", "doctor", "--format", "json")
    code, out, _ = cli_in_process(capsys, monkeypatch, *argv)
    report = json.loads(out)
    assert code == 0
    assert report["policy"]["managed_file"] == str(path)
    assert report["policy"]["locked"] == ["registry_url"]
    [removed] = report["policy"]["removed"]
    assert removed["server"] == "bad" and "not in allowed_mcp_servers" in removed["reason"]
    assert [s["name"] for s in report["servers"]] == ["good"]
    checks = {f["check"]: f for f in report["findings"] if f["check"].startswith("policy.")}
    assert checks["policy.server"]["server"] == "bad"
    assert checks["policy.server"]["severity"] == "warning"
    assert str(path) in checks["policy.managed"]["message"]
    code, out, _ = cli_in_process(capsys, monkeypatch, *argv[:4])
    assert "policy.server  server 'bad' is left out by the managed settings" in out


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("{not json", "invalid JSON"),
        ('{"denied_mcp_server": []}', "did you mean 'denied_mcp_servers'"),
        ('{"denied_mcp_servers": [{"name": "a", "url": "https://x"}]}', "exactly one of"),
        ('{"mcp_servers": {}}', "cannot be set in the managed settings file"),
        ('{"locked": ["base_urls"]}', "not a key codebot can lock"),
    ],
)
def test_a_broken_managed_file_is_exit_3_naming_it(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    text: str,
    words: str,
) -> None:
    path = tmp_path / "managed.json"
    path.write_text(text)
    monkeypatch.setenv("CODEBOT_MANAGED_SETTINGS", str(path))
    two_servers(tmp_path)
    for command in (("mcp", "list"), ("mcp", "doctor"), ("chat", "-p", "hi")):
        code, out, err = cli_in_process(capsys, monkeypatch, "--cwd", str(tmp_path), *command)
        said = out + err  # doctor's report (settings.parse) is on stdout
        assert code == 3, (command, said)
        assert str(path) in said and words in said, (command, said)


def test_mcp_add_refuses_a_server_the_policy_does_not_allow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = policy_file(
        tmp_path,
        {
            "allowed_mcp_servers": [{"url": "https://*.corp.example/*"}, {"name": "ok"}],
            "denied_mcp_servers": [{"command": ["npx", "-y", "evil"]}],
        },
        monkeypatch,
    )
    settings = tmp_path / ".codebot" / "settings.json"
    base = ("--cwd", str(tmp_path), "mcp", "add", "--scope", "project")
    for argv in (
        (*base, "x", "--transport", "http", "https://evil.example/mcp"),
        (*base, "ok", "--", "npx", "-y", "evil"),  # denied wins over an allowed name
    ):
        code, _, err = cli_in_process(capsys, monkeypatch, *argv)
        assert code == 3, err
        assert "is not allowed by the managed settings" in err and str(path) in err
        assert not settings.exists()
    code, _, err = cli_in_process(
        capsys, monkeypatch, *base, "x", "--transport", "http", "https://MCP.Corp.Example/v1"
    )
    assert code == 0, err
    assert "x" in json.loads(settings.read_text())["mcp_servers"]


def test_server_verdict_follows_the_allowlist_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    policy = managed.parse(
        tmp_path / "m.json",
        {
            "allowed_mcp_servers": [
                {"name": "named"},
                {"command": ["python3", "server.py"]},
                {"url": "*://*.corp.example/mcp/*"},
            ],
            "denied_mcp_servers": [{"url": "https://bad.corp.example/*"}],
        },
    )
    stdio = server_config("named", {"command": "python3", "args": ["other.py"]})
    assert "no entry matches its command" in (managed.server_verdict(policy, stdio) or "")
    exact = server_config("any", {"command": "python3", "args": ["server.py"]})
    assert managed.server_verdict(policy, exact) is None
    ok = server_config("h", {"type": "http", "url": "http://A.corp.example/mcp/x"})
    assert managed.server_verdict(policy, ok) is None
    bad = server_config("h", {"type": "http", "url": "https://bad.corp.example/mcp/x"})
    assert "denied by" in (managed.server_verdict(policy, bad) or "")
    names_only = managed.parse(tmp_path / "m.json", {"allowed_mcp_servers": [{"name": "a"}]})
    assert managed.server_verdict(names_only, server_config("a", {"command": "x"})) is None
    empty = managed.parse(tmp_path / "m.json", {"allowed_mcp_servers": []})
    assert managed.server_verdict(empty, server_config("a", {"command": "x"})) is not None


def test_keys_the_managed_file_sets_or_locks_win_over_user_and_project(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    policy_file(
        tmp_path,
        {
            "registry_url": "https://registry.corp.example",
            "permissions": {"deny": ["bash"]},
            "sandbox": {"network": False},
            "locked": ["base_url", "permissions.allow"],
        },
        monkeypatch,
    )
    write_settings(
        tmp_path,
        {
            "base_url": "http://127.0.0.1:9/v1",
            "registry_url": "https://registry.example.com",
            "permissions": {"allow": ["bash", "mcp__x__*"], "deny": ["write"]},
            "sandbox": {"network": True},
        },
    )
    loaded = effective.load(tmp_path)
    settings = loaded.settings
    assert settings.base_url is None
    assert settings.registry_url == ("https://registry.corp.example",)
    assert settings.permissions.allow == ()
    assert settings.permissions.deny == ("bash", "write")
    assert sandbox_of(settings).network is False
    assert any("'base_url' is locked" in w for w in loaded.policy_warnings)
    code, _, err = cli_in_process(
        capsys, monkeypatch, "--cwd", str(tmp_path), "chat", "-p", "hi", "--base-url", "http://x"
    )
    assert "'base_url' is locked by the managed settings file" in err
    assert "no API key" in err and code == 5  # --base-url did not count: the lock wins


def test_managed_only_keys_in_a_user_file_warn_and_do_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    two_servers(tmp_path, denied_mcp_servers=[{"name": "good"}])
    code, out, err = cli_in_process(capsys, monkeypatch, "--cwd", str(tmp_path), "mcp", "list")
    assert code == 0 and "good" in out
    assert "'denied_mcp_servers'" in err and "only the managed settings file" in err


def test_mcp_import_skips_a_server_the_policy_denies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = policy_file(tmp_path, {"denied_mcp_servers": [{"name": "evil"}]}, monkeypatch)
    repo = tmp_path / "repo"
    repo.mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    mcp_json = {"mcpServers": {"evil": {"command": "evil"}, "fine": {"command": "fine"}}}
    (repo / ".mcp.json").write_text(json.dumps(mcp_json))
    argv = ("--cwd", str(repo), "mcp", "import", "--from", "claude-code", "--scope", "project")
    code, out, err = cli_in_process(capsys, monkeypatch, *argv)
    assert code == 0, err
    assert "is not allowed by the managed settings" in out + err and str(path) in out + err
    written = json.loads((repo / ".codebot" / "settings.json").read_text())["mcp_servers"]
    assert set(written) == {"fine"}
