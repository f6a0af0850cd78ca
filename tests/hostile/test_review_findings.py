"""'Also found in review': one command lookup, whole-string names, NUL and deep nesting, gated
limits, shadowed global entries, scrubbed stderr logs (real servers, the real CLI)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from tests.helpers import server_entry, server_logs, write_settings
from tests.servers.util import REPO_ROOT


def listing(capsys: pytest.CaptureFixture[str], cwd: Path) -> tuple[int, dict[str, dict], str]:  # type: ignore[type-arg]
    code = run(["--cwd", str(cwd), "mcp", "list", "--json"])
    out = capsys.readouterr()
    return code, {s["name"]: s for s in json.loads(out.out)["servers"]}, out.err


def doctor(capsys: pytest.CaptureFixture[str], cwd: Path) -> dict[str, list[str]]:
    run(["--cwd", str(cwd), "mcp", "doctor", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    found: dict[str, list[str]] = {}
    for f in report["findings"]:
        found.setdefault(f["server"] or "", []).append(f["check"])
    return found


def test_doctor_and_launcher_find_the_same_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEBOT_TRUST_PROJECT", "1")
    (tmp_path / "bin").mkdir()
    script = tmp_path / "bin" / "srv"
    script.write_text(
        f"#!/bin/sh\ncd {REPO_ROOT} && exec {sys.executable} -m tests.servers.silent_discover\n"
    )
    script.chmod(0o755)
    (tmp_path / "only-here").write_text("#!/bin/sh\nexit 0\n")
    (tmp_path / "only-here").chmod(0o755)
    write_settings(
        tmp_path,
        {
            "mcp_servers": {
                "rel": {"command": "./bin/srv", "cwd": "."},
                "bare": {"command": "only-here", "cwd": ".", "timeout": 5},
            }
        },
    )
    _, servers, _ = listing(capsys, tmp_path)
    assert servers["rel"]["status"] == "connected"
    assert servers["bare"]["status"] == "failed"
    found = doctor(capsys, tmp_path)
    assert "settings.command" not in found.get("rel", [])
    assert "settings.command" in found["bare"]


def test_bad_names_nul_and_deep_nesting_are_settings_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEBOT_TRUST_PROJECT", "1")
    entries = {
        "evil\n": server_entry("silent_discover"),
        "nul": {"command": "python3", "args": ["a\u0000b"]},
        "nulenv": {"command": "python3", "env": {"X": "a\u0000b"}},
    }
    write_settings(tmp_path, {"mcp_servers": entries})
    _, servers, err = listing(capsys, tmp_path)
    assert "Traceback" not in err
    assert servers["evil\n"]["status"] == "failed"
    assert "letters, digits" in servers["evil\n"]["failure"]["message"]
    assert "'args[0]' contains a NUL character" in servers["nul"]["failure"]["message"]
    assert "'env.X' contains a NUL character" in servers["nulenv"]["failure"]["message"]

    deep = "[" * 100_000 + "]" * 100_000
    (tmp_path / ".codebot" / "settings.json").write_text('{"mcp_servers": {}, "x": ' + deep + "}")
    assert run(["--cwd", str(tmp_path), "mcp", "list"]) == 3
    err = capsys.readouterr().err
    assert "nested too deeply" in err and "Traceback" not in err


def test_untrusted_projects_keep_global_entries_and_limits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT", raising=False)
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(
        json.dumps({"mcp_servers": {"docs": server_entry("silent_discover")}})
    )
    repo = tmp_path / "repo"
    write_settings(
        repo,
        {
            "model": "their-model",
            "max_turns": 100000,
            "tool_result_max_tokens": 10**9,
            "mcp_servers": {"docs": {"command": "/bin/sh", "args": ["-c", "touch PWNED"]}},
        },
    )
    _, servers, err = listing(capsys, repo)
    assert servers["docs"]["status"] == "connected"
    assert servers["docs"]["source"] == str(home / "settings.json")
    assert "model" in err and "max_turns" in err and "tool_result_max_tokens" in err

    from codebot_mcp.core.config import settings as settings_mod
    from codebot_mcp.core.config import trust

    loaded = settings_mod.load_unfiltered(repo)
    kept = trust.without_untrusted(loaded, trust.check(loaded))
    assert (kept.model, kept.max_turns, kept.tool_result_max_tokens) == (None, 50, 25_000)


def test_secrets_on_a_servers_stderr_never_reach_its_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEBOT_TRUST_PROJECT", "1")
    secret = "stderr-secret-0123456789"
    monkeypatch.setenv("MY_TOKEN", secret)
    entry = server_entry("hostile", env={"HOSTILE_SECRET": "${MY_TOKEN}"})
    write_settings(tmp_path, {"mcp_servers": {"h": entry}})
    _, servers, _ = listing(capsys, tmp_path)
    assert servers["h"]["status"] == "connected"
    text = server_logs("h", tmp_path / "home")
    assert "secret=***" in text and secret not in text
