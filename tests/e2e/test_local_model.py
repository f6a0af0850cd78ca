"""What a small local model server does, and how codebot takes it (the loopback model
server plays llama-cpp-python and llama.cpp; the last test runs it as a process and kills it).

- A streamed request answered ``200 OK`` and closed before its first chunk (llama-cpp-python's
  ``chatml-function-calling`` with tools), or hung up on without any response at all (its
  function-calling server), is asked again once without streaming, and said so; never
  "cannot connect" (on either API). A refused connection still says the server is not running.
- A stream cut mid-answer says the answer above is incomplete, in the REPL as in ``-p``.
- A long wait says it is still going: the time so far, and the tokens once they stream.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from tests.cli.repl_driver import drive
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import write_settings
from tests.servers.util import REPO_ROOT


def chat(capsys: pytest.CaptureFixture[str], cwd: Path, *argv: str) -> tuple[int, str, str]:
    code = run(["--cwd", str(cwd), "chat", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("chunked", [True, False], ids=["broken-chunked-body", "empty-body"])
def test_a_200_closed_before_the_first_chunk_is_asked_again_unstreamed(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str], chunked: bool
) -> None:
    write_settings(tmp_path, {"base_url": fake.base_url})
    (tmp_path / "a.txt").write_text("alpha\n")
    read = fo.tool_calls(("read", {"path": "a.txt"}))
    fake.queue(fo.closed_at_start(read, chunked=chunked), fo.text("it says alpha"))
    code, out, err = chat(capsys, tmp_path, "-p", "what is in a.txt?")
    assert (code, out) == (0, "it says alpha\n"), err
    assert "closed the stream before its first chunk" in err or "ended the stream" in err
    assert "asking again without streaming" in err and "cannot connect" not in err
    # The session learned: requests with tools are no longer streamed to this server.
    assert [b["stream"] for b in fake.bodies] == [True, False, False]


@pytest.mark.parametrize("api", ["chat_completions", "responses"])
def test_a_hang_up_without_any_response_is_asked_again_unstreamed(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str], api: str
) -> None:
    """llama-cpp-python's function-calling server closes the connection on a streamed request
    with tools without a status line or a byte; a refused connection still says the server
    is not running."""
    write_settings(tmp_path, {"base_url": fake.base_url, "api": api})
    (tmp_path / "a.txt").write_text("alpha\n")
    read = fo.tool_calls(("read", {"path": "a.txt"}))
    fake.queue(fo.hang_up(read), fo.text("it says alpha"))
    code, out, err = chat(capsys, tmp_path, "-p", "what is in a.txt?")
    assert (code, out) == (0, "it says alpha\n"), err
    assert "closed the connection without any response to a streamed request" in err
    assert "asking again without streaming" in err and "cannot connect" not in err
    assert [b["stream"] for b in fake.bodies] == [True, False, False]
    with socket.socket() as sock:  # nothing listens on this port
        sock.bind(("127.0.0.1", 0))
        refused = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    code, _, err = chat(capsys, tmp_path, "-p", "hi", "--base-url", refused)
    assert code == 5 and "cannot connect to the model API" in err
    assert "Is the server running" in err and "asking again" not in err


def test_without_tools_too_and_a_second_failure_is_named(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(tmp_path, {"base_url": fake.base_url})
    fake.queue(fo.closed_at_start(fo.error(500, "the model crashed")))
    code, _, err = chat(capsys, tmp_path, "-p", "hi")
    assert code == 5, err
    assert "before its first chunk" in err and "the model crashed" in err
    assert "cannot connect" not in err


def test_a_long_wait_and_a_long_answer_say_they_are_still_going(
    tmp_path: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CODEBOT_PROGRESS_SECONDS", "1")
    write_settings(tmp_path, {"base_url": fake.base_url})
    slow = fo.text("one two three four five six seven eight", chunks=8, delay=0.45)
    fake.queue({**slow, "stall": 2.5})  # 2.5 s before a byte, then ~3.6 s of tokens
    code, out, err = chat(capsys, tmp_path, "-p", "count")
    assert (code, out) == (0, "one two three four five six seven eight\n"), err
    assert "(still thinking… " in err  # before the first token: how long so far
    generating = [line for line in err.splitlines() if line.startswith("(still generating…")]
    assert generating and all(" tokens)" in line for line in generating), err
    tokens = [int(line.rsplit("· ", 1)[1].split()[0]) for line in generating]
    assert tokens == sorted(tokens) and 0 < tokens[-1] <= 9


@pytest.mark.anyio
async def test_the_repl_says_a_cut_answer_is_incomplete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The model server is killed (SIGKILL) in the middle of an answer."""
    script = tmp_path / "script.json"
    words = " ".join(f"word{i}" for i in range(40))
    script.write_text(json.dumps({"turns": [fo.text(words, chunks=40, delay=0.2)]}))
    command = [sys.executable, "-m", "tests.fakes.openai_server", "--script", str(script)]
    server = subprocess.Popen(  # noqa: ASYNC220 - started once, before the REPL runs
        command, cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().split()[1]
        write_settings(tmp_path, {"base_url": base_url, "model": "m"})
        outs: list[str] = []
        errs: list[str] = []

        def seen(text: str) -> bool:
            captured = capsys.readouterr()
            outs.append(captured.out)
            errs.append(captured.err)
            return text in "".join(outs) + "".join(errs)

        def killed() -> bool:
            server.send_signal(signal.SIGKILL)
            server.wait(10)
            return True

        code, _ = await drive(
            tmp_path,
            [
                (0.2, "count\r"),
                (lambda: seen("word3 "), ""),
                (lambda: killed(), ""),
                (lambda: seen("incomplete"), "\x04"),
            ],
        )
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(10)
        if server.stdout is not None:
            server.stdout.close()
    captured = capsys.readouterr()
    out, err = "".join(outs) + captured.out, "".join(errs) + captured.err
    assert code == 0, err
    assert "word3" in out and "word39" not in out
    assert "the answer above is incomplete" in err and "ask again to continue" in err
