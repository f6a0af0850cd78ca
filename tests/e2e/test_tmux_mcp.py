"""The REPL in a real terminal with a server that reports progress and notes cancellation
(``tests/servers/asker``): progress in the spinner, and Ctrl-C during a call tells the server
(``notifications/cancelled`` on a 2025-11-25 connection, its 2026-07-28 counterpart on a
modern one) before the call is abandoned."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.e2e.test_tmux import DEADLINE, Terminal, leave, model_server, requests, terminal
from tests.fakes import openai_turns as fo
from tests.fakes.procs import CODEBOT, alive, codebot_env, wait_until
from tests.helpers import children_of, marker_text, server_entry, write_settings

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
__all__ = ["terminal"]  # the fixture, used by name


def test_progress_shows_in_the_spinner(terminal: Terminal, tmp_path: Path) -> None:
    turns = [
        fo.tool_calls(("mcp__ask__progress", {"steps": 4, "delay": 1.5})),
        fo.text("All four steps done."),
    ]
    with model_server(tmp_path, turns) as (base_url, _log):
        root = tmp_path / "repo"
        write_settings(root, {"base_url": base_url, "mcp_servers": {"ask": server_entry("asker")}})
        env = codebot_env(tmp_path / "home", CODEBOT_TRUST_PROJECT="1")
        pid = terminal.start([str(CODEBOT), "chat", "--yes"], root, env)
        terminal.expect("1 MCP server ready")
        kids = children_of(pid)
        terminal.type_line("run the steps")
        terminal.expect("ask: 50% step 2")  # the spinner line, rewritten in place
        terminal.expect("All four steps done.")
        leave(terminal, pid, kids)


@pytest.mark.parametrize("protocol", ["legacy", "auto"])  # 2025-11-25 and 2026-07-28
def test_ctrl_c_during_a_call_tells_the_server(
    protocol: str, terminal: Terminal, tmp_path: Path
) -> None:
    marker = tmp_path / "cancelled.txt"
    turns = [
        fo.tool_calls(("mcp__ask__wait", {"seconds": 120, "marker": str(marker)})),
        fo.text("Back again."),
    ]
    with model_server(tmp_path, turns) as (base_url, log):
        root = tmp_path / "repo"
        entry = server_entry("asker", protocol=protocol)
        write_settings(root, {"base_url": base_url, "mcp_servers": {"ask": entry}})
        env = codebot_env(tmp_path / "home", CODEBOT_TRUST_PROJECT="1")
        pid = terminal.start([str(CODEBOT), "chat", "--yes"], root, env)
        terminal.expect("1 MCP server ready")
        kids = children_of(pid)
        terminal.type_line("wait a while")
        terminal.expect("→ mcp__ask__wait")
        wait_until(
            lambda: marker_text(marker) == "started", DEADLINE, "the call to reach the server"
        )
        terminal.send("C-c")
        terminal.expect("(interrupted)")
        wait_until(lambda: marker_text(marker) == "cancelled", DEADLINE, "the server to be told")
        assert all(alive(k) for k in kids), "the server survives a cancelled call"
        terminal.type_line("still there?")
        terminal.expect("Back again.")
        wait_until(lambda: len(requests(log)) == 2, 5, "the request log")
        leave(terminal, pid, kids)
