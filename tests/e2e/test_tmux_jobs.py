"""Issue 32 item 5 in a real terminal: a background job asked for (the approval says it is
one), listed by ``/jobs`` after its prompt ended, and gone with codebot when the chat ends."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.test_tmux import DEADLINE, Terminal, leave, model_server
from tests.e2e.test_tmux import terminal as terminal
from tests.fakes import openai_turns as fo
from tests.fakes.procs import CODEBOT, alive, codebot_env, wait_until
from tests.helpers import write_settings


def test_a_background_job_in_a_terminal(terminal: Terminal, tmp_path: Path) -> None:
    job = "echo $$ > job.pid; echo serving on 8000; exec sleep 300"
    turns = [
        fo.tool_calls(("bash", {"command": job, "run_in_background": True})),
        fo.text("The server runs in the background."),
    ]
    with model_server(tmp_path, turns) as (base_url, _):
        root = tmp_path / "repo"
        # no sandbox: the call asks, and the question says it starts a background job
        write_settings(root, {"base_url": base_url, "sandbox": {"mode": "off"}})
        env = codebot_env(tmp_path / "home", CODEBOT_TRUST_PROJECT="1")
        pid = terminal.start([str(CODEBOT), "chat"], root, env)
        terminal.expect("/help for commands")
        terminal.type_line("start the dev server")
        screen = terminal.expect("allow? [y]es once")
        assert "run_in_background=true" in screen, screen
        assert "BACKGROUND JOB" in screen, screen
        terminal.send("-l", "y")
        screen = terminal.expect("The server runs in the background.")
        assert "Started background job 1" in screen, screen
        assert "serving on 8000" in screen, screen
        job_pid = int((root / "job.pid").read_text())
        wait_until(lambda: terminal.screen().rstrip().endswith("›"), DEADLINE, "the prompt")
        terminal.type_line("/jobs")
        screen = terminal.expect("background jobs: 1 running")
        assert "running" in screen and "echo $$ > job.pid" in screen, screen
        assert alive(job_pid)
        leave(terminal, pid, [job_pid])  # Ctrl-D: codebot exits, and the job with it
