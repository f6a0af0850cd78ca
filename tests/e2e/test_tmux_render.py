"""The REPL's answer on a real terminal (tmux): Markdown with highlighted code blocks on a tty,
plain text under ``NO_COLOR``, streaming block by block, coloured approval diffs, and a dropped
stream's error on its own line.

``capture-pane -e`` keeps the escape sequences, so colour is checked as the terminal got it.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_tmux import DEADLINE, Terminal, leave, model_server, requests
from tests.fakes import openai_turns as fo
from tests.fakes.procs import CODEBOT, codebot_env, wait_until
from tests.helpers import children_of, write_settings

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

ANSWER = (
    "# Plan\n\nFirst a **bold** step.\n\n"
    "```python\ndef greet(name):\n    return f'hi {name}'\n```\n\nDone."
)
SGR = re.compile(r"\x1b\[[0-9;:]*m")


@pytest.fixture
def term(tmp_path: Path) -> Iterator[Terminal]:
    terminal = Terminal(tmp_path / "tmux.sock")
    yield terminal
    terminal.close()


def coloured_screen(terminal: Terminal) -> str:
    """The pane with its escape sequences (SGR colour codes) kept."""
    return terminal.tmux("capture-pane", "-p", "-e", "-J", "-t", "t", "-S", "-500")


def start(term: Terminal, tmp_path: Path, base_url: str, **env: str) -> tuple[int, Path]:
    root = tmp_path / "repo"
    write_settings(root, {"base_url": base_url})
    environment = codebot_env(tmp_path / "home", CODEBOT_TRUST_PROJECT="1", TERM="xterm-256color")
    environment.pop("NO_COLOR")  # codebot_env sets it; these tests decide
    environment.update(env)
    pid = term.start([str(CODEBOT), "chat"], root, environment)
    wait_until(lambda: term.screen().rstrip().endswith("›"), DEADLINE, "the prompt")
    return pid, root


def test_markdown_is_rendered_with_highlighted_code_on_a_terminal(
    term: Terminal, tmp_path: Path
) -> None:
    with model_server(tmp_path, [fo.text(ANSWER, chunks=7)]) as (base_url, _):
        pid, _ = start(term, tmp_path, base_url)
        term.type_line("show me")
        term.expect("Done.")
        screen = term.screen()
        answer = screen.split("show me", 1)[1]
        assert "Plan" in answer and "bold" in answer and "greet" in answer
        # Rendered, not raw: no Markdown syntax left on screen.
        assert "**" not in answer and "```" not in answer and "# Plan" not in answer
        colours = coloured_screen(term).split("show me", 1)[1]
        code_line = next(line for line in colours.splitlines() if "greet" in line)
        assert len(set(SGR.findall(code_line))) >= 3, repr(code_line)  # highlighted tokens
        bold_line = next(line for line in colours.splitlines() if "bold" in line)
        assert "\x1b[1m" in bold_line or "\x1b[1;" in bold_line, repr(bold_line)
        leave(term, pid, children_of(pid))


def test_no_color_shows_the_answer_as_plain_text(term: Terminal, tmp_path: Path) -> None:
    with model_server(tmp_path, [fo.text(ANSWER, chunks=7)]) as (base_url, _):
        pid, _ = start(term, tmp_path, base_url, NO_COLOR="1")
        term.type_line("show me")
        term.expect("Done.")
        answer = term.screen().split("show me", 1)[1]
        assert "First a **bold** step." in answer and "```python" in answer
        assert "    return f'hi {name}'" in answer
        colours = coloured_screen(term).split("show me", 1)[1]
        code_line = next(line for line in colours.splitlines() if "greet" in line)
        assert not SGR.search(code_line), repr(code_line)
        leave(term, pid, children_of(pid))


def test_streaming_shows_text_before_the_answer_ends(term: Terminal, tmp_path: Path) -> None:
    # The stream sends two finished paragraphs and an open one, then stays open.
    streaming = {**fo.text("First **paragraph** here.\n\nSecond one.\n\nStill typ", chunks=3)}
    streaming["hang"] = 60
    with model_server(tmp_path, [streaming, fo.text("Back.")]) as (base_url, log):
        pid, _ = start(term, tmp_path, base_url)
        term.type_line("stream please")
        # The open block is shown live, mid-stream (its last few characters may be held back
        # by the secret scrubber until more arrives: a secret could begin there).
        screen = term.expect("Still")
        assert "First paragraph here." in screen and "Second one." in screen
        assert "**" not in screen.split("stream please", 1)[1]  # finished blocks are rendered
        wait_until(lambda: len(requests(log)) == 1, 5, "the request log")  # still open
        term.send("C-c")
        term.expect("(interrupted)")
        term.type_line("again")
        term.expect("Back.")
        leave(term, pid, children_of(pid))


def test_edit_and_write_approvals_show_coloured_diffs_and_a_drop_errors_on_a_new_line(
    term: Terminal, tmp_path: Path
) -> None:
    turns = [
        fo.tool_calls(("edit", {"path": "app.py", "old_string": "x = 1", "new_string": "x = 2"})),
        fo.text("Edited."),
        fo.tool_calls(("write", {"path": "app.py", "content": "import sys\nx = 2\n"})),
        fo.text("Rewritten."),
        fo.drop(after_text="half an answ"),
    ]
    with model_server(tmp_path, turns) as (base_url, _):
        (tmp_path / "repo").mkdir()
        (tmp_path / "repo" / "app.py").write_text("import os\nx = 1\nprint(x)\n")
        pid, root = start(term, tmp_path, base_url)
        term.type_line("bump x")
        term.expect("allow? [y]es once")
        colours = coloured_screen(term)
        removed = next(line for line in colours.splitlines() if "-x = 1" in line)
        added = next(line for line in colours.splitlines() if "+x = 2" in line)
        assert "\x1b[31m" in removed and "\x1b[32m" in added, (removed, added)
        term.send("y")
        term.expect("Edited.")
        assert (root / "app.py").read_text() == "import os\nx = 2\nprint(x)\n"
        term.type_line("rewrite it")  # write over an existing file: a diff too
        term.expect("allow? [y]es once", count=2)
        colours = coloured_screen(term).split("rewrite it", 1)[1]
        assert any("-import os" in line and "\x1b[31m" in line for line in colours.splitlines())
        assert any("+import sys" in line and "\x1b[32m" in line for line in colours.splitlines())
        assert any("-print(x)" in line for line in colours.splitlines())
        term.send("y")
        term.expect("Rewritten.")
        assert (root / "app.py").read_text() == "import sys\nx = 2\n"
        term.type_line("go on")
        screen = term.expect("dropped mid-answer")
        lines = screen.splitlines()
        partial = next(i for i, line in enumerate(lines) if "half an answ" in line)
        assert lines[partial].strip() == "half an answ", lines[partial]
        assert any(line.startswith("error: ") for line in lines[partial + 1 :]), screen
        assert "cannot connect" not in screen
        leave(term, pid, children_of(pid))


def test_stdout_not_a_terminal_gets_plain_text(term: Terminal, tmp_path: Path) -> None:
    out = tmp_path / "answer.txt"
    with model_server(tmp_path, [fo.text(ANSWER, chunks=7)]) as (base_url, _):
        root = tmp_path / "repo"
        write_settings(root, {"base_url": base_url})
        env = codebot_env(tmp_path / "home", CODEBOT_TRUST_PROJECT="1", TERM="xterm-256color")
        env.pop("NO_COLOR")
        command = f"exec {CODEBOT} chat > {out}"
        term.start(["sh", "-c", command], root, env)
        wait_until(lambda: out.exists() and "›" in out.read_text(), DEADLINE, "the prompt")
        term.type_line("show me")
        wait_until(lambda: "Done." in out.read_text(), DEADLINE, "the answer in the file")
        # Ctrl-D only once the next prompt reads: typed while the turn is still closing, the
        # terminal is out of raw mode and may keep it as its own end-of-file, not a key.
        after = lambda: out.read_text().partition("Done.")[2]  # noqa: E731
        wait_until(lambda: "›" in after(), DEADLINE, "the next prompt")
        term.send("C-d")
        wait_until(lambda: term.exit_status() is not None, DEADLINE, "codebot to exit")
        assert term.exit_status() == 0, term.screen()
        text = out.read_text()
        assert "First a **bold** step." in text and "```python" in text, text
        assert "\x1b[38;5" not in text and "\x1b[1m" not in text
