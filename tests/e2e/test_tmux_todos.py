"""Issue 32 items 7 and 8 in a real terminal: the plan ``todo_write`` keeps, shown as a
checklist when it changes and by ``/todos``, ``/export``, and the plan back after
``--continue``."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.test_tmux import DEADLINE, Terminal, leave, model_server
from tests.e2e.test_tmux import terminal as terminal
from tests.fakes import openai_turns as fo
from tests.fakes.procs import CODEBOT, codebot_env, wait_until
from tests.helpers import write_settings

PLAN = [
    {"content": "Read the code", "status": "completed"},
    {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
    {"content": "Run the tests", "status": "pending"},
]


def test_the_plan_in_a_terminal(terminal: Terminal, tmp_path: Path) -> None:
    turns = [fo.tool_calls(("todo_write", {"todos": PLAN})), fo.text("Planned.")]
    with model_server(tmp_path, turns) as (base_url, _):
        root = tmp_path / "repo"
        write_settings(root, {"base_url": base_url})
        env = codebot_env(tmp_path / "home", CODEBOT_TRUST_PROJECT="1")
        pid = terminal.start([str(CODEBOT), "chat"], root, env)
        terminal.expect("/help for commands")
        terminal.type_line("plan the fix")
        screen = terminal.expect("Planned.")
        assert "✓ todo_write" in screen  # no approval asked
        assert "☑ Read the code" in screen and "◐ Fix the bug" in screen, screen
        assert "☐ Run the tests" in screen
        wait_until(lambda: terminal.screen().rstrip().endswith("›"), DEADLINE, "the prompt")
        terminal.type_line("/todos")
        terminal.expect("todo list: 1/3 completed")
        terminal.type_line("/export")
        screen = terminal.expect("(exported session ")
        (exported,) = root.glob("codebot-*.md")
        assert "### Tool call `todo_write`" in exported.read_text()
        leave(terminal, pid, [])

    second = Terminal(tmp_path / "tmux2.sock")
    try:
        pid = second.start([str(CODEBOT), "chat", "--continue"], root, env)
        second.expect("/help for commands")
        second.type_line("/todos")
        screen = second.expect("todo list: 1/3 completed")
        assert "◐ Fix the bug" in screen and "☐ Run the tests" in screen
        leave(second, pid, [])
    finally:
        second.close()
