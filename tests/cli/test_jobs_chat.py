"""Background jobs in the chat (issue 32 item 5): a job that outlives the turn (and the
prompt) that started it, ``/jobs`` and ``/jobs kill`` in the REPL, the checkpoint of the turn
that started a job, ``-p`` killing what still runs at its end (text, ``--json``,
stream-json), and a real ``codebot chat -p`` ended by SIGTERM or SIGHUP leaving no job
process behind (checked in /proc).

The model is the loopback fake; the jobs are real shells. ``-p`` and the REPL run in this
process (``cli_in_process``, the piped REPL driver); the signal test runs the console script.
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from codebot_mcp.cli.chat_runtime import ChatOptions
from codebot_mcp.cli.repl.repl_loop import Repl
from codebot_mcp.core.checkpoints.turns import Checkpoints
from tests.cli.repl_driver import drive, until
from tests.cli.test_stream_json import events, of
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.procs import Running, alive, codebot_env, wait_until
from tests.helpers import children_of, cli_in_process, write_settings

KEY = "sk-jobs-chat-key-0123456789"


@pytest.fixture
def project(tmp_path: Path, fake: FakeOpenAI) -> Path:
    root = tmp_path / "repo"
    write_settings(root, {"base_url": fake.base_url})
    return root


def cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, cwd: Path, *argv: str
) -> tuple[int, str, str]:
    return cli_in_process(
        capsys, monkeypatch, "--cwd", str(cwd), *argv, env={"OPENAI_API_KEY": KEY}
    )


def background(command: str) -> tuple[str, dict[str, Any]]:
    return ("bash", {"command": command, "run_in_background": True})


def tool_messages(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def pid_in(path: Path) -> int:
    return int(path.read_text().split()[0])


def changed_paths(project: Path, session_id: str, number: int) -> list[str]:
    checkpoints = Checkpoints(project, session_id)
    (turn,) = [t for t in checkpoints.turns() if t.number == number]
    return [c.path for c in checkpoints.changes(turn) or []]


def test_print_mode_reads_a_job_across_model_turns_then_kills_it_and_says_so(
    project: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    job = (
        "echo $$ > job.pid; echo started; sleep 1; echo data > job.txt; echo written; "
        "exec sleep 300"
    )
    fake.queue(
        fo.tool_calls(background(job)),
        fo.tool_calls(("bash_output", {"job_id": "1", "wait": 20, "filter": "written"})),
        fo.text("The job runs."),
    )
    code, out, err = cli(capsys, monkeypatch, project, "chat", "-p", "go", "--json", "--yes")
    assert code == 0, err
    doc = json.loads(out)
    started, read = doc["tool_calls"]
    assert "Started background job 1" in started["result"]
    assert "started" in started["result"] and "written" not in started["result"]
    assert "bash_output" in [t["function"]["name"] for t in fake.bodies[0]["tools"]]
    # the second model turn read what the job printed, while it kept running
    assert "written" in tool_messages(fake.bodies[2])[-1]
    assert "[job 1 is running" in read["result"]
    # -p ended with its answer: the job was killed, and that is said (stderr, --json)
    (killed,) = doc["jobs_killed"]
    assert killed["id"] == "1" and killed["state"] == "killed", killed
    assert "sleep 300" in killed["command"]
    assert "background job 1" in err and "killed" in err and "-p does not wait" in err
    pid = pid_in(project / "job.pid")
    assert not alive(pid)
    # The turn's checkpoint covers the file the job wrote before the turn ended.
    assert "job.txt" in changed_paths(project, doc["session_id"], 1)


def test_stream_json_reports_the_killed_jobs_before_the_result(
    project: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake.queue(fo.tool_calls(background("echo $$ > job.pid; exec sleep 300")), fo.text("ok"))
    argv = ("chat", "-p", "go", "--output-format", "stream-json", "--yes")
    code, out, err = cli(capsys, monkeypatch, project, *argv)
    assert code == 0, err
    found = events(out)  # each checked against docs/stream-json.schema.json
    (event,) = of(found, "jobs_killed")
    assert [j["id"] for j in event["jobs"]] == ["1"]
    assert found.index(event) == len(found) - 2  # right before the final result
    assert not alive(pid_in(project / "job.pid"))
    # a run that started no job has no such event
    fake.queue(fo.text("nothing"))
    code, out, err = cli(capsys, monkeypatch, project, *argv)
    assert code == 0 and not of(events(out), "jobs_killed")


@pytest.mark.anyio
async def test_repl_job_outlives_its_prompt_and_jobs_lists_and_kills_it(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    job = (
        "echo $$ > job.pid; echo early > early.txt; echo first; "
        "while [ ! -e go ]; do sleep 0.05; done; echo after-the-turn; exec sleep 300"
    )
    fake.queue(fo.tool_calls(background(job)), fo.text("Started it."))
    pid_file = project / "job.pid"

    async def steps(repl: Repl, inp: Any) -> None:
        inp.send_text("start the server\r")
        await until(lambda: fake.remaining == 0)
        await anyio.sleep(0.5)  # the answer is printed: the prompt is over
        (project / "go").touch()
        inp.send_text("/jobs\r")
        await anyio.sleep(0.4)
        fake.queue(
            fo.tool_calls(("bash_output", {"job_id": "1", "wait": 20})), fo.text("It printed.")
        )
        inp.send_text("what did it print?\r")
        await until(lambda: fake.remaining == 0)
        await anyio.sleep(0.5)
        inp.send_text("/jobs kill 1\r")
        await until(lambda: not alive(pid_in(pid_file)))
        await anyio.sleep(0.2)
        inp.send_text("/jobs\r")
        await anyio.sleep(0.4)
        inp.send_text("\x04")

    code, repl = await drive(project, steps, options=ChatOptions(yes=True), seconds=60)
    out, err = capsys.readouterr()
    assert code == 0, err
    # The second prompt read what the job printed after the first prompt had ended.
    assert "after-the-turn" in tool_messages(fake.bodies[-1])[-1]
    assert "background jobs: 1 running" in out
    assert "killed job 1" in out
    assert "background jobs: 0 running" in out and "killed" in out
    assert "echo $$ > job.pid; echo early" in out  # the command, in the table
    # The first turn's checkpoint covers what the job wrote during it (before its first
    # output, which the bash call waited for).
    assert repl.runtime is not None and repl.runtime.log is not None
    assert "early.txt" in changed_paths(project, repl.runtime.log.id, 1)


@pytest.fixture
def runs() -> Iterator[list[Running]]:
    started: list[Running] = []
    yield started
    for run in started:
        run.close()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_to_codebot_kills_its_jobs(
    project: Path, fake: FakeOpenAI, runs: list[Running], sig: signal.Signals
) -> None:
    # The job ignores SIGTERM (so do its children, inherited): only the SIGKILL that follows
    # ends them; one child left the process group.
    job = "trap '' TERM; setsid sleep 301 & sleep 302 & echo $$ > job.pid; wait"
    fake.queue(fo.tool_calls(background(job)), fo.hang(120))
    env = codebot_env(project.parent / "home", CODEBOT_TRUST_PROJECT="1", OPENAI_API_KEY=KEY)
    runs.append(run := Running(["chat", "-p", "go", "--yes"], project, env))
    pid_file = project / "job.pid"
    wait_until(lambda: pid_file.exists() and pid_file.read_text().strip() != "", 40, "the job")
    shell = pid_in(pid_file)
    wait_until(lambda: len(children_of(shell)) >= 2, 20, "the job's two sleeps")
    tree = [shell, *children_of(shell)]
    wait_until(lambda: len(fake.bodies) >= 2, 20, "the model asked again (the job runs)")
    time.sleep(0.2)
    assert all(alive(p) for p in tree)
    run.proc.send_signal(sig)
    code = run.wait(30)
    assert code == 130, run.stderr
    assert "Traceback" not in run.stderr
    wait_until(lambda: not any(alive(p) for p in tree), 10, f"the job's processes {tree} to end")


def test_without_a_sandbox_a_job_asks_as_bash_does(
    tmp_path: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = tmp_path / "off"
    write_settings(root, {"base_url": fake.base_url, "sandbox": {"mode": "off"}})
    fake.queue(fo.tool_calls(background("echo $$ > job.pid; exec sleep 300")), fo.text("no"))
    code, out, err = cli(capsys, monkeypatch, root, "chat", "-p", "go", "--json")  # no --yes
    assert code == 0, err
    (call,) = json.loads(out)["tool_calls"]
    assert call["denied"] and "non-interactive" in call["result"], call
    assert not (root / "job.pid").exists()  # nothing ran
    assert json.loads(out)["jobs_killed"] == []


def test_a_subagents_job_belongs_to_the_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.cli.test_subagents import Router, task

    said: list[str] = []

    def sub(prompt: str) -> dict[str, Any]:
        said.append(prompt)
        if len(said) == 1:
            job = "echo $$ > job.pid; while :; do echo from-the-subagent-job; sleep 0.2; done"
            return fo.tool_calls(background(job))
        return fo.text("started job 1")

    router = Router(
        [
            fo.tool_calls(task("start the server")),
            fo.tool_calls(("bash_output", {"job_id": "1", "wait": 20})),
            fo.text("done"),
        ],
        sub,
    )
    with FakeOpenAI(respond=router) as model:
        root = tmp_path / "repo"
        write_settings(root, {"base_url": model.base_url})
        code, out, err = cli(capsys, monkeypatch, root, "chat", "-p", "go", "--json", "--yes")
    assert code == 0, err
    doc = json.loads(out)
    # the main agent reads the job its subagent started, after the subagent ended
    read = doc["tool_calls"][-1]["result"]
    assert "from-the-subagent-job" in read and "[job 1 is running" in read, doc["tool_calls"]
    assert [j["id"] for j in doc["jobs_killed"]] == ["1"]
    assert not alive(pid_in(root / "job.pid"))
