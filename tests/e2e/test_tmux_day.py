"""Issue 32 in a real terminal: the first screen, tool previews (``bash`` streaming into its
own), Ctrl-O, one-key approvals that type-ahead cannot answer, and ``/model``."""

from __future__ import annotations

import time
from pathlib import Path

from tests.e2e.test_tmux import DEADLINE, Terminal, leave, model_server, project, requests
from tests.e2e.test_tmux import terminal as terminal
from tests.fakes import openai_turns as fo
from tests.fakes.procs import CODEBOT, codebot_env, wait_until
from tests.helpers import children_of

SCRIPT = "echo alpha; sleep 2; echo omega; seq 1 30"


def test_a_day_in_the_repl(terminal: Terminal, tmp_path: Path) -> None:
    turns = [
        fo.tool_calls(("bash", {"command": SCRIPT})),
        fo.text("Ran it."),
        fo.tool_calls(("mcp__echo__delete_note", {"id": "7"}), delay=3.0),
        fo.text("Deleted note 7 for you."),
        fo.text("Same model, same talk."),
    ]
    with model_server(tmp_path, turns) as (base_url, log):
        root = project(tmp_path / "repo", base_url)
        env = codebot_env(tmp_path / "home", CODEBOT_TRUST_PROJECT="1")
        pid = terminal.start([str(CODEBOT), "chat", "--allow", "bash"], root, env)

        # The first screen: model and endpoint, servers, sandbox, trust, /help.
        screen = terminal.expect("/help for commands")
        assert f"codebot · model fake-model at {base_url}" in screen
        assert "1 MCP server connecting" in screen
        assert "sandbox" in screen and "project trusted" in screen
        terminal.expect("1 MCP server ready")
        kids = children_of(pid)

        # bash streams into its preview while it runs; the preview stays, cut, with a hint.
        terminal.type_line("run the script")
        screen = terminal.expect("│ alpha")
        assert "│ omega" not in screen and "✓ bash" not in screen, screen
        screen = terminal.expect("Ran it.")
        assert "✓ bash" in screen and "│ omega" in screen
        assert "… +28 lines (Ctrl-O or /expand shows all)" in screen, screen
        assert "│ 3\n" not in screen  # only four lines in the preview

        # Ctrl-O at the prompt: the last result whole.
        wait_until(lambda: terminal.screen().rstrip().endswith("›"), DEADLINE, "the prompt")
        terminal.send("C-o")
        screen = terminal.expect("── bash result ──")
        terminal.expect("\n30\n")

        # A key typed before the question exists does not answer it.
        terminal.type_line("delete note 7")
        wait_until(lambda: len(requests(log)) == 3, DEADLINE, "the model to be asked")
        terminal.send("-l", "y")  # typed ahead while the model thinks (3 s): in the tty's queue
        screen = terminal.expect("allow? [y]es once")
        time.sleep(0.8)
        assert "Deleted note 7" not in terminal.screen()
        assert len(requests(log)) == 3  # the call has not run: no 4th request
        terminal.send("-l", "y")  # one key, no Enter
        terminal.expect("Deleted note 7 for you.")

        # /model lists the endpoint's models and switches; the conversation is kept.
        terminal.type_line("/model")
        terminal.expect("* fake-model")
        terminal.type_line("/model nosuch")
        terminal.expect("does not serve that model")
        terminal.type_line("/model fake-model")
        terminal.expect("(now using model fake-model")
        terminal.type_line("still there?")
        terminal.expect("Same model, same talk.")
        wait_until(lambda: len(requests(log)) == 5, 5, "the request log")
        assert len(requests(log)[-1]["messages"]) > 5  # the earlier turns went with it
        leave(terminal, pid, kids)


def test_codebot_trust_takes_one_key_and_esc_is_no(terminal: Terminal, tmp_path: Path) -> None:
    from codebot_mcp.core.errors import ExitCode

    root = project(tmp_path / "repo", "http://127.0.0.1:9/v1")
    env = codebot_env(tmp_path / "home")
    terminal.start([str(CODEBOT), "trust"], root, env)
    terminal.expect("[y/N]")
    terminal.send("x")  # not an answer: nothing happens
    time.sleep(0.3)
    assert terminal.exit_status() is None
    terminal.send("Escape")
    wait_until(lambda: terminal.exit_status() is not None, DEADLINE, "codebot to exit")
    assert terminal.exit_status() == ExitCode.DECLINED, terminal.screen()
    assert not (tmp_path / "home" / "state" / "trust.json").exists()

    second = Terminal(tmp_path / "tmux2.sock")
    try:
        second.start([str(CODEBOT), "trust"], root, env)
        second.expect("[y/N]")
        second.send("-l", "y")  # no Enter
        wait_until(lambda: second.exit_status() is not None, DEADLINE, "codebot to exit")
        assert second.exit_status() == 0, second.screen()
        second.expect("Trusted (recorded in")
    finally:
        second.close()
