"""Your own (global) hooks and servers that run a script *inside* the project (issue 29
follow-up, issue 31; a hook of your ``~/.claude/settings.json`` too): the script is the
project's, so a confined ``bash`` could rewrite it and have it run as you. The project's
trust covers such files; while the project is not trusted (new, or changed since), those
entries run confined.

Real processes: the model is the loopback fake, ``bash`` and the hooks run in the real
sandbox, the hook is a real shell script.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run
from codebot_mcp.core.hooks.hooksection import of as of_hooks
from codebot_mcp.core.sandbox.confinement import support
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI

sandboxed = pytest.mark.skipif(
    not sys.platform.startswith("linux") or bool(support().missing(network=False)),
    reason="the sandbox is unavailable here",
)


@pytest.fixture(autouse=True)
def _untrusted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT", raising=False)


def setup(tmp_path: Path, fake: FakeOpenAI, extra: dict[str, Any] | None = None) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)  # a clone: no settings of its own
    (root / "hooks").mkdir()
    (root / "hooks" / "log.sh").write_text("exit 0\n")
    hook = {"type": "command", "command": 'sh "${CLAUDE_PROJECT_DIR}/hooks/log.sh"'}
    settings = {
        "base_url": fake.base_url,
        "hooks": {"UserPromptSubmit": [{"hooks": [hook]}]},
        **(extra or {}),
    }
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "settings.json").write_text(json.dumps(settings))
    return root


def chat(capsys: pytest.CaptureFixture[str], root: Path) -> tuple[int, Any, str]:
    code = run(["--cwd", str(root), "chat", "-p", "go", "--json"])
    out = capsys.readouterr()
    return code, json.loads(out.out) if out.out.strip() else None, out.err


@sandboxed
def test_a_confined_edit_of_a_script_a_global_hook_runs_asks_again_and_runs_confined(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    root = setup(tmp_path, fake)
    marker = tmp_path / "pwned"  # outside the project: only an unconfined run can write it
    assert run(["--cwd", str(root), "trust", "--yes"]) == 0
    assert "file hooks/log.sh" in capsys.readouterr().out

    fake.queue(
        fo.tool_calls(("bash", {"command": f"echo 'echo x > {marker}' > hooks/log.sh"})),
        fo.text("done"),
    )
    code, doc, err = chat(capsys, root)
    assert code == 0, err
    assert doc["tool_calls"][0]["sandbox"] == "workspace-write"  # the edit ran confined
    assert (root / "hooks" / "log.sh").read_text().startswith("echo x")
    assert doc["trust_changes"] == ["hooks/log.sh"]
    assert not marker.exists()

    fake.queue(fo.text("hi"))  # the next session: the global hook runs the edited script
    code, _, err = chat(capsys, root)
    assert "(changed: hooks/log.sh)" in err
    assert "until then your own hook hooks.UserPromptSubmit[0].hooks[0] of " in err
    assert not marker.exists()  # confined: it could not write outside the project
    assert code == 1 and "Permission denied" in err  # its exit 2 blocks the prompt

    assert run(["--cwd", str(root), "trust"]) == 2  # no terminal: shows, then refuses
    assert "changed since trusted: hooks/log.sh" in capsys.readouterr().out
    assert run(["--cwd", str(root), "trust", "--yes"]) == 0
    capsys.readouterr()
    fake.queue(fo.text("hi"))  # trusted again, by you: it runs as you
    code, _, err = chat(capsys, root)
    assert code == 0, err
    assert marker.exists()


def test_a_global_server_that_runs_a_project_script_is_covered_and_confined_untrusted(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    from codebot_mcp.core.config import effective

    (tmp_path / "repo" / "tools").mkdir(parents=True)
    (tmp_path / "repo" / "tools" / "srv.py").write_text("pass\n")
    servers = {
        "mcp_servers": {
            "local": {"command": sys.executable, "args": ["tools/srv.py"]},
            "boxed": {
                "command": sys.executable,
                "args": ["tools/srv.py"],
                "sandbox": "read-only",
            },
        }
    }
    root = setup(tmp_path, fake, servers)
    loaded = effective.load(root)
    names = [p.name for p in loaded.trust.files]
    assert "srv.py" in names and "log.sh" in names and loaded.trust.needs_trust
    local = loaded.settings.servers["local"]
    assert local.sandbox is not None and local.sandbox.mode == "workspace-write"
    assert loaded.settings.servers["boxed"].sandbox.mode == "read-only"  # its own, kept
    [hook] = of_hooks(loaded.settings)
    assert hook.sandbox == "workspace-write"

    from codebot_mcp.core.config import trust

    trust.record(loaded.trust)
    again = effective.load(root)
    assert not again.trust.needs_trust
    assert again.settings.servers["local"].sandbox is None  # trusted: as you
    assert of_hooks(again.settings)[0].sandbox is None


def test_a_global_hook_outside_the_project_asks_nothing(tmp_path: Path, fake: FakeOpenAI) -> None:
    from codebot_mcp.core.config import effective

    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    home = tmp_path / "home"
    (home / "hooks").mkdir(parents=True)
    (home / "hooks" / "log.sh").write_text("exit 0\n")
    hook = {"type": "command", "command": f"sh {home}/hooks/log.sh"}
    settings = {"base_url": fake.base_url, "hooks": {"Stop": [{"hooks": [hook]}]}}
    (home / "settings.json").write_text(json.dumps(settings))
    loaded = effective.load(root)
    assert not loaded.trust.asks and of_hooks(loaded.settings)[0].sandbox is None


@sandboxed
@pytest.mark.parametrize("whose", ["global", "project"])
def test_a_hook_whose_script_a_turn_rewrote_runs_confined_in_the_same_session(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str], whose: str
) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "hooks").mkdir()
    (root / "hooks" / "log.sh").write_text("exit 0\n")
    hook = {"type": "command", "command": 'sh "${CLAUDE_PROJECT_DIR}/hooks/log.sh"'}
    hooks = {"PostToolUse": [{"matcher": "Bash", "hooks": [hook]}]}
    home = tmp_path / "home"
    home.mkdir()
    mine: dict[str, Any] = {"base_url": fake.base_url}
    if whose == "global":
        mine["hooks"] = hooks
    else:
        (root / ".codebot").mkdir()
        (root / ".codebot" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    (home / "settings.json").write_text(json.dumps(mine))
    assert run(["--cwd", str(root), "trust", "--yes"]) == 0
    capsys.readouterr()

    marker = tmp_path / "pwned"
    fake.queue(
        fo.tool_calls(("bash", {"command": f"echo 'echo x > {marker}' > hooks/log.sh"})),
        fo.tool_calls(("bash", {"command": "true"})),  # the hook fires again, after the edit
        fo.text("done"),
    )
    code, doc, err = chat(capsys, root)
    assert code == 0, err
    assert (root / "hooks" / "log.sh").read_text().startswith("echo x")
    assert not marker.exists()  # the edited script ran confined, in this very session
    assert "runs confined for the rest of this session: hooks/log.sh changed" in err
    assert doc["trust_changes"] == ["hooks/log.sh"]


@sandboxed
def test_your_server_that_runs_a_project_script_starts_confined_until_trusted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.helpers import REPO_ROOT

    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "tools").mkdir()
    marker = tmp_path / "outside"
    (root / "tools" / "server.py").write_text(
        "import pathlib, runpy, sys\n"
        f"sys.path.insert(0, {str(REPO_ROOT)!r})\n"
        "try:\n"
        f"    pathlib.Path({str(marker)!r}).write_text('as you')\n"
        "except OSError:\n"
        "    pass\n"
        'runpy.run_module("tests.servers.echo", run_name="__main__")\n'
    )
    entry = {"command": sys.executable, "args": ["tools/server.py"]}
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"mcp_servers": {"local": entry}}))

    assert run(["--cwd", str(root), "mcp", "call", "local", "echo", "text=hi"]) == 0
    out = capsys.readouterr()
    assert "hi" in out.out
    assert not marker.exists()  # it started, confined: nothing written outside the project

    assert run(["--cwd", str(root), "trust", "--yes"]) == 0
    assert "file tools/server.py" in capsys.readouterr().out
    assert run(["--cwd", str(root), "mcp", "call", "local", "echo", "text=hi"]) == 0
    capsys.readouterr()
    assert marker.read_text() == "as you"


# --- the same for a hook of your ~/.claude/settings.json (Claude Code's file, read in place) ---


def claude_hook(tmp_path: Path, fake: FakeOpenAI, hooks: dict[str, Any]) -> Path:
    """A clone whose hooks/log.sh your ``~/.claude/settings.json`` runs (``$CLAUDE_CONFIG_DIR``
    is ``tmp_path/claude-home`` in every test)."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "hooks").mkdir()
    (root / "hooks" / "log.sh").write_text("exit 0\n")
    claude = tmp_path / "claude-home"
    claude.mkdir(exist_ok=True)
    (claude / "settings.json").write_text(json.dumps({"hooks": hooks}))
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"base_url": fake.base_url}))
    return root


LOG_HOOK = {"type": "command", "command": 'sh "$CLAUDE_PROJECT_DIR/hooks/log.sh"'}


def test_a_claude_user_hook_that_runs_a_project_script_is_covered_and_confined_untrusted(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    from codebot_mcp.core.config import effective, trust

    root = claude_hook(tmp_path, fake, {"UserPromptSubmit": [{"hooks": [LOG_HOOK]}]})
    loaded = effective.load(root)
    assert loaded.trust.needs_trust  # nothing of the project's but the script
    assert [p.name for p in loaded.trust.files] == ["log.sh"]
    [name] = loaded.trust.confined
    assert name.endswith(f"of {tmp_path / 'claude-home' / 'settings.json'}")
    [hook] = of_hooks(loaded.settings)
    assert hook.sandbox == "workspace-write"  # while untrusted: confined

    trust.record(loaded.trust)
    again = effective.load(root)
    assert not again.trust.needs_trust and of_hooks(again.settings)[0].sandbox is None
    (root / "hooks" / "log.sh").write_text("echo changed\n")  # the digest covers it
    changed = effective.load(root)
    assert changed.trust.needs_trust and of_hooks(changed.settings)[0].sandbox == "workspace-write"


@sandboxed
def test_a_claude_user_hook_whose_script_a_turn_rewrote_runs_confined_in_the_same_session(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    hooks = {"PostToolUse": [{"matcher": "Bash", "hooks": [LOG_HOOK]}]}
    root = claude_hook(tmp_path, fake, hooks)
    assert run(["--cwd", str(root), "trust", "--yes"]) == 0
    assert "file hooks/log.sh" in capsys.readouterr().out

    marker = tmp_path / "pwned"
    fake.queue(
        fo.tool_calls(("bash", {"command": f"echo 'echo x > {marker}' > hooks/log.sh"})),
        fo.tool_calls(("bash", {"command": "true"})),  # the hook fires again, after the edit
        fo.text("done"),
    )
    code, doc, err = chat(capsys, root)
    assert code == 0, err
    assert (root / "hooks" / "log.sh").read_text().startswith("echo x")
    assert not marker.exists()  # the edited script ran confined, in this very session
    assert "runs confined for the rest of this session: hooks/log.sh changed" in err
    assert doc["trust_changes"] == ["hooks/log.sh"]
