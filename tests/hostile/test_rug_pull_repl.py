"""The REPL, driven in tmux against a real server that changes a tool mid-session: a tool
approved "always" is asked about again with a warning; with ``--allow-drift`` so is one that
drifted from ``.codebot/mcp-lock.json`` although a settings rule allows it (without it, the
server is held back: ``tests/cli/test_pins_session.py``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.test_tmux import Terminal, leave, model_server, requests, terminal  # noqa: F401
from tests.fakes import openai_turns as fo
from tests.fakes import zygote
from tests.fakes.procs import CODEBOT, codebot_env, wait_until
from tests.helpers import children_of, server_entry, write_settings

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

ASK = "allow? [y]es once"
ALWAYS_WARNING = "WARNING: the tool changed since you approved it for this session"
LOCK_WARNING = "WARNING: the tool's description, schema or annotations changed since"


def test_always_is_asked_again_after_the_tool_changes(
    terminal: Terminal,  # noqa: F811
    tmp_path: Path,
) -> None:
    turns = [
        fo.tool_calls(("mcp__r__notes", {})),
        fo.text("first done"),
        fo.tool_calls(("mcp__r__notes", {})),
        fo.text("second done"),
        fo.tool_calls(("mcp__r__status", {})),
        fo.text("status done"),
        fo.tool_calls(("mcp__r__notes", {})),
        fo.text("fourth done"),
    ]
    with model_server(tmp_path, turns) as (base_url, log):
        root = tmp_path / "repo"
        write_settings(root, {"base_url": base_url, "mcp_servers": {"r": server_entry("rugpull")}})
        env = codebot_env(tmp_path / "home", CODEBOT_TRUST_PROJECT="1")
        pid = terminal.start([str(CODEBOT), "chat"], root, env)
        terminal.expect("1 MCP server ready")
        kids = children_of(pid)

        terminal.type_line("show the notes")
        terminal.expect(ASK)
        terminal.send("a")  # always, for this session (one key, no Enter)
        terminal.expect("first done")

        terminal.type_line("again")
        screen = terminal.expect("second done")
        assert screen.count(ASK) == 1  # "always" holds while the tool is unchanged

        terminal.type_line("status")  # the server rewrites the notes tool behind our back
        terminal.expect("status done")

        terminal.type_line("notes once more")
        screen = terminal.expect(ASK, count=2)
        assert ALWAYS_WARNING in screen
        terminal.send("n")
        terminal.expect("fourth done")
        wait_until(lambda: len(requests(log)) == 8, 5, "the request log")
        result = requests(log)[-1]["messages"][-1]
        assert result["role"] == "tool" and "Permission denied" in result["content"]
        leave(terminal, pid, kids)


def test_a_tool_that_drifted_from_the_lock_is_asked_about_despite_an_allow_rule(
    terminal: Terminal,  # noqa: F811
    tmp_path: Path,
) -> None:
    turns = [
        fo.tool_calls(("mcp__r__notes", {})),
        fo.text("first done"),
        fo.tool_calls(("mcp__r__status", {})),
        fo.text("status done"),
        fo.tool_calls(("mcp__r__notes", {})),
        fo.text("third done"),
    ]
    with model_server(tmp_path, turns) as (base_url, log):
        root = tmp_path / "repo"
        settings = {
            "base_url": base_url,
            "mcp_servers": {"r": server_entry("rugpull")},
            "permissions": {"allow": ["mcp__r__notes"]},
        }
        write_settings(root, settings)
        env = codebot_env(tmp_path / "home", CODEBOT_TRUST_PROJECT="1")
        lock = [*zygote.command(), "mcp", "lock"]
        subprocess.run(lock, cwd=root, env=env, check=True, timeout=60)
        assert (root / ".codebot" / "mcp-lock.json").exists()
        pid = terminal.start([str(CODEBOT), "chat", "--allow-drift"], root, env)
        terminal.expect("1 MCP server ready")
        kids = children_of(pid)

        terminal.type_line("show the notes")
        screen = terminal.expect("first done")
        assert ASK not in screen  # allowed by the rule, and as pinned

        terminal.type_line("status")
        terminal.expect("status done")

        terminal.type_line("notes again")
        screen = terminal.expect(ASK)
        assert LOCK_WARNING in screen, screen
        terminal.send("y")
        terminal.expect("third done")
        wait_until(lambda: len(requests(log)) == 6, 5, "the request log")
        result = requests(log)[-1]["messages"][-1]
        assert result["role"] == "tool" and result["content"] == "notes"
        leave(terminal, pid, kids)


def test_a_pinned_server_that_drifts_mid_session_is_held_back_and_said_so(
    terminal: Terminal,  # noqa: F811
    tmp_path: Path,
) -> None:
    turns = [
        fo.tool_calls(("mcp__r__status", {})),
        fo.text("status done"),
        fo.text("second done"),
    ]
    with model_server(tmp_path, turns) as (base_url, log):
        root = tmp_path / "repo"
        write_settings(root, {"base_url": base_url, "mcp_servers": {"r": server_entry("rugpull")}})
        env = codebot_env(tmp_path / "home", CODEBOT_TRUST_PROJECT="1")
        lock = [*zygote.command(), "mcp", "lock"]
        subprocess.run(lock, cwd=root, env=env, check=True, timeout=60)
        pid = terminal.start([str(CODEBOT), "chat", "--allow", "mcp__r__*"], root, env)
        terminal.expect("1 MCP server ready")
        kids = children_of(pid)

        terminal.type_line("status")  # the server rewrites `notes` and says the list changed
        terminal.expect("status done")
        terminal.type_line("anything")
        screen = terminal.expect("second done")
        assert "server 'r' held back: its tools differ from" in screen, screen
        assert "codebot mcp lock" in screen
        wait_until(lambda: len(requests(log)) == 3, 5, "the request log")
        offered = {t["function"]["name"] for t in requests(log)[-1].get("tools", [])}
        assert not {n for n in offered if n.startswith("mcp__r__")}
        leave(terminal, pid, kids)
