"""Sessions in a real terminal: ``codebot chat --resume`` lists, picks and carries on; the
REPL's ``/usage``, ``/context`` and ``/compact`` as a person types them."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_tmux import DEADLINE, Terminal, leave, model_server, requests
from tests.fakes import openai_turns as fo
from tests.fakes import zygote
from tests.fakes.procs import CODEBOT, codebot_env, wait_until
from tests.helpers import children_of, write_settings

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@pytest.fixture
def term(tmp_path: Path) -> Iterator[Terminal]:
    terminal = Terminal(tmp_path / "tmux.sock")
    yield terminal
    terminal.close()


def test_resume_without_id_lists_then_the_repl_carries_on(term: Terminal, tmp_path: Path) -> None:
    turns = [
        fo.text("The first answer."),
        fo.text("Welcome back."),
        fo.text("Summary: a greeting was exchanged."),
    ]
    with model_server(tmp_path, turns) as (base_url, log):
        root = tmp_path / "repo"
        write_settings(root, {"base_url": base_url, "usage_line_after": 0})
        env = codebot_env(tmp_path / "home", CODEBOT_TRUST_PROJECT="1")
        first = subprocess.run(
            [*zygote.command(), "chat", "-p", "remember the word teapot"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert first.returncode == 0 and first.stdout == "The first answer.\n", first.stderr

        pid = term.start([str(CODEBOT), "chat", "--resume"], root, env)
        screen = term.expect("remember the word teapot")  # the list, with the first prompt
        assert "1. " in screen
        term.type_line("1")
        term.expect("(resumed session ")
        wait_until(lambda: term.screen().rstrip().endswith("›"), DEADLINE, "the prompt")
        term.type_line("what was the word?")
        term.expect("Welcome back.")
        # usage_line_after 0: a line after each answer. It is printed after the answer, so
        # wait for it rather than reading the screen the moment the answer appears.
        screen = term.expect("tokens this answer: ")
        assert screen.index("Welcome back.") < screen.rindex("tokens this answer: ")
        wait_until(lambda: len(requests(log)) == 2, 5, "the request log")
        sent = [m.get("content") for m in requests(log)[1]["messages"][1:]]
        assert sent == ["remember the word teapot", "The first answer.", "what was the word?"]

        term.type_line("/usage")
        term.expect("last turn: ")
        term.type_line("/compact the word")
        term.expect("summarised")
        wait_until(lambda: len(requests(log)) == 3, 5, "the request log")
        assert "the word" in requests(log)[2]["messages"][0]["content"]
        term.type_line("/context")
        screen = term.expect("context window: ")
        screen = term.expect("free")  # the table's last row; one write, but the pane may lag
        assert "history" in screen.split("context window: ")[-1]
        leave(term, pid, children_of(pid))
