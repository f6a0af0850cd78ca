"""Strict settings: typos and wrong units warn in every command; bad timeouts are usage errors."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from tests.helpers import server_entry, write_settings


def codebot(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = run(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_unknown_keys_warn_once_with_did_you_mean_in_every_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_settings(
        tmp_path,
        {
            "permisions": {"deny": ["bash"]},
            "permissions": {"dney": ["x"]},
            "mcp_servers": {"echo": server_entry("echo", agrs=["x"])},
        },
    )
    cwd = ["--cwd", str(tmp_path)]
    for argv in (
        ["mcp", "list"],
        ["mcp", "call", "echo", "echo", "text=hi"],
        ["mcp", "get", "echo"],
        ["mcp", "doctor"],
    ):
        _, _, err = codebot(capsys, *cwd, *argv)
        assert f"unknown setting 'permisions' in {path} is ignored" in err, argv
        assert "(did you mean 'permissions'?)" in err
        assert "unknown setting 'permissions.dney'" in err
        assert "(did you mean 'permissions.deny'?)" in err
        assert "server 'echo' in" in err and "unknown key 'agrs'" in err
        assert "did you mean 'args'" in err
        assert err.count("permisions'") == 1, err  # once
    _, out, _ = codebot(capsys, *cwd, "mcp", "doctor", "--format", "json")
    checks = {f["check"] for s in [json.loads(out)] for f in s["findings"]}
    assert {"settings.unknown_setting", "settings.unknown_key"} <= checks


def test_a_timeout_in_milliseconds_warns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(tmp_path, {"mcp_servers": {"echo": server_entry("echo", timeout=30000)}})
    code, out, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "list")
    assert code == 0
    assert "'timeout' is 30000 seconds" in err and "seconds, not milliseconds?" in err
    assert "write 30 for that" in err
    code, out, _ = codebot(capsys, "--cwd", str(tmp_path), "mcp", "doctor", "--format", "json")
    assert "settings.milliseconds" in {f["check"] for f in json.loads(out)["findings"]}


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
@pytest.mark.parametrize(
    "command",
    [["mcp", "list"], ["mcp", "call", "echo", "echo"], ["mcp", "doctor"]],
)
def test_timeout_not_positive_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str], value: str
) -> None:
    write_settings(tmp_path, {"mcp_servers": {"echo": server_entry("echo")}})
    code, _, err = codebot(capsys, "--cwd", str(tmp_path), *command, "--timeout", value)
    assert code == 2, err
    assert "--timeout" in err and "positive number of seconds" in err


def test_batch_line_with_an_unknown_key_is_an_error_for_that_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_settings(tmp_path, {"mcp_servers": {"echo": server_entry("echo")}})
    lines = [
        {"server": "echo", "tool": "echo", "args": {"text": "x"}},
        {"server": "echo", "tool": "echo", "arguments": {"text": "ok"}},
    ]
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(json.dumps(x) + "\n" for x in lines)))
    code, out, _ = codebot(capsys, "--cwd", str(tmp_path), "mcp", "call", "--batch")
    assert code == 1
    first, second = (json.loads(line) for line in out.splitlines())
    assert (
        first["error"]["message"] == "unknown key 'args' in the request (did you mean 'arguments'?)"
    )
    assert first["error"]["exit_code"] == 2
    assert second["content"][0]["text"] == "ok"


def test_an_untrusted_project_entry_does_not_hide_the_global_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"mcp_servers": {"echo": server_entry("echo")}}))
    project = tmp_path / "repo"
    write_settings(project, {"mcp_servers": {"echo": {"command": "evil-binary"}}})
    cwd = ["--cwd", str(project)]
    code, out, err = codebot(capsys, *cwd, "mcp", "list", "-s", "echo")
    assert code == 0, err
    assert f"from {home / 'settings.json'}" in out
    assert "not trusted" in err
    code, out, err = codebot(capsys, *cwd, "mcp", "call", "echo", "echo", "text=global")
    assert (code, out) == (0, "global\n"), err
    # Trusted, the project's entry wins again (and fails: its command does not exist).
    code, _, err = codebot(capsys, *cwd, "--trust-project", "mcp", "call", "echo", "echo")
    assert code == 4 and "evil-binary" in err


def test_list_naming_a_disabled_server_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(
        tmp_path,
        {"mcp_servers": {"echo": server_entry("echo"), "off": {"command": "x", "enabled": False}}},
    )
    code, out, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "list", "-s", "off")
    assert code == 2
    assert "off" in out and "disabled" in out
    assert "server 'off' is disabled" in err and "codebot mcp enable off" in err
    code, _, _ = codebot(capsys, "--cwd", str(tmp_path), "mcp", "list")
    assert code == 0  # not named: a disabled server is just listed
