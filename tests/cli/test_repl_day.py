"""Issue 32 (items 1-3) through prompt-toolkit's pipe input and ``chat -p``: tool result
previews (masked, escaped, errors always), ``/expand``, ``--verbose``, one-key answers that
type-ahead cannot give, the first screen and ``/model``. The model is the fake server; the
MCP server is the real echo server; bash runs for real."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from codebot_mcp.cli.app import run
from codebot_mcp.cli.chat_runtime import ChatOptions
from codebot_mcp.cli.repl.preview import head, preview
from codebot_mcp.cli.repl.repl_loop import Repl
from tests.cli.repl_driver import connected, drive, question_open, until
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import server_entry as entry
from tests.helpers import write_settings

CANARY = "sk-canary-preview-9a8b7c6d"
PRINTS = f"echo {CANARY}; printf 'a\\033[31mred\\n'; seq 1 10"


@pytest.fixture
def project(tmp_path: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)  # a secret of the run: masked everywhere
    write_settings(tmp_path, {"base_url": fake.base_url, "mcp_servers": {"echo": entry("echo")}})
    return tmp_path


def bash(command: str) -> fo.Turn:
    return fo.tool_calls(("bash", {"command": command}))


async def finished(fake: FakeOpenAI) -> None:
    await until(lambda: fake.remaining == 0)
    await anyio.sleep(0.4)


@pytest.mark.anyio
async def test_previews_mask_escape_and_expand(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(bash(PRINTS), fo.text("Printed."))
    fake.queue(bash("echo first; echo second; exit 3"), fo.text("It failed."))

    async def steps(repl: Repl, inp: Any) -> None:
        await until(lambda: bool(connected(repl)))
        inp.send_text("print things\r")
        await until(lambda: len(fake.bodies) >= 2)
        await anyio.sleep(0.3)
        inp.send_text("/expand\r")
        await anyio.sleep(0.3)
        inp.send_text("now fail\r")
        await finished(fake)
        inp.send_text("\x04")

    code, _ = await drive(project, steps, options=ChatOptions(allow=["bash"]), seconds=45)
    out, err = capsys.readouterr()
    assert code == 0
    assert CANARY not in out + err
    # The preview: four lines, the secret masked, the escape shown, then the count.
    assert "    │ ***\n    │ a\\x1b[31mred\n    │ 1\n    │ 2\n" in err
    assert "    │ 3\n" not in err
    assert "    … +8 lines (Ctrl-O or /expand shows all)" in err
    # /expand: the whole result, still masked and escaped.
    assert "── bash result ──" in err
    assert "***\na\\x1b[31mred\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n" in out
    # An error shows its text, first line on the mark's line.
    assert "✗ bash [sandbox: " in err or "✗ bash: first" in err
    assert "    │ second\n    │ [exit code 3]\n" in err


@pytest.mark.anyio
async def test_one_key_answers_and_type_ahead_never_answers(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("a", "b", "c"):
        fake.queue(fo.tool_calls(("write", {"path": f"{name}.txt", "content": name})))
        fake.queue(fo.text(f"done {name}"))

    def asked(n: int) -> Any:
        return lambda: len(fake.bodies) >= n

    async def steps(repl: Repl, inp: Any) -> None:
        await until(lambda: bool(connected(repl)))
        inp.send_text("write a\r")
        await until(asked(1))
        await question_open()
        inp.send_text("y")  # one key, no Enter
        await until(asked(2))
        await anyio.sleep(0.5)
        inp.send_text("write b\ra")  # "a" typed ahead, before the question exists
        await until(asked(3))
        await question_open()
        inp.send_text("\x1b")  # Esc: no
        await until(asked(4))
        await anyio.sleep(0.5)
        inp.send_text("write c\r")
        await until(asked(5))
        await question_open()
        inp.send_text("A")  # upper case counts too: always
        await finished(fake)
        inp.send_text("\x04")

    code, _ = await drive(project, steps, seconds=45)
    err = capsys.readouterr().err
    assert code == 0
    assert (project / "a.txt").read_text() == "a"
    assert not (project / "b.txt").exists(), "a key typed ahead answered the question"
    assert (project / "c.txt").read_text() == "c"
    assert "allow? [y]es once, [a]lways, [n]o: " in err or err.count("? write") == 3
    assert "write denied" in err


@pytest.mark.anyio
async def test_trust_takes_one_key(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")

    async def steps(repl: Repl, inp: Any) -> None:
        await anyio.sleep(0.5)
        inp.send_text("n")  # no Enter
        await until(lambda: repl.runtime is not None)
        await anyio.sleep(0.3)
        inp.send_text("\x04")

    code, repl = await drive(project, steps, seconds=45)
    assert code == 0
    assert repl.runtime is not None and repl.runtime.untrusted == ("echo",)
    err = capsys.readouterr().err
    assert "project not trusted (1 server skipped" in err


@pytest.mark.anyio
async def test_first_screen_and_model_switch_keep_the_conversation(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.serve_models(["fake-model", "other-model"])
    write_settings(
        tmp_path,
        {
            "base_url": fake.base_url,
            "model": "fake-model",
            "mcp_servers": {"echo": entry("echo")},
        },
    )
    fake.queue(fo.text("First."), fo.text("Second."))

    async def steps(repl: Repl, inp: Any) -> None:
        await until(lambda: bool(connected(repl)))
        inp.send_text("one\r")
        await until(lambda: len(fake.bodies) >= 1)
        await anyio.sleep(0.4)
        for line in ("/model\r", "/model nosuch\r", "/model other-model\r", "two\r"):
            inp.send_text(line)
            await anyio.sleep(0.4)
        await finished(fake)
        inp.send_text("\x04")

    code, _ = await drive(tmp_path, steps, seconds=45)
    out, err = capsys.readouterr()
    assert code == 0
    first = err.index("codebot · model fake-model at " + fake.base_url)
    assert "1 MCP server connecting…" in err[first:]
    assert "/help for commands" in err and "project trusted" in err
    assert "sandbox" in err.splitlines()[err[:first].count("\n") + 1]
    assert " * fake-model\n   other-model\n" in out
    assert "does not serve that model" in err
    assert "(now using model other-model at" in out
    assert [b["model"] for b in fake.bodies] == ["fake-model", "other-model"]
    assert [m["content"] for m in fake.bodies[1]["messages"] if m["role"] == "user"][-2:] == [
        "one",
        "two",
    ]


def test_p_without_verbose_shows_no_preview(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(bash("seq 1 6"), fo.text("Counted."))
    code = run(["--cwd", str(project), "chat", "-p", "count", "--allow", "bash"])
    got = capsys.readouterr()
    assert code == 0
    assert got.out.strip() == "Counted."
    assert "✓ bash" in got.err and "│" not in got.err


def test_p_verbose_shows_the_preview(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(bash("seq 1 6"), fo.text("Counted."))
    code = run(["--cwd", str(project), "chat", "-p", "count", "--allow", "bash", "--verbose"])
    got = capsys.readouterr()
    assert code == 0
    assert got.out.strip() == "Counted."
    assert "    │ 1\n    │ 2\n    │ 3\n    │ 4\n" in got.err
    assert "… +2 lines" in got.err


def test_p_errors_show_their_text_without_verbose(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(bash("echo one; echo two; exit 4"), fo.text("Failed."))
    code = run(["--cwd", str(project), "chat", "-p", "fail", "--allow", "bash"])
    got = capsys.readouterr()
    assert code == 0
    assert "    │ two\n    │ [exit code 4]\n" in got.err


def test_a_preview_reads_only_what_it_shows() -> None:
    text = "\n".join(f"line {i}" for i in range(10_000))
    assert head(text, 4) == (["line 0", "line 1", "line 2", "line 3"], 9_996)
    assert head("one\ntwo\n", 4) == (["one", "two"], 0)
    assert preview("") == [] and preview("  \n") == []
    lines = preview(text, width=40)
    assert lines[-1] == "    … +9996 lines (Ctrl-O or /expand shows all)"
    began = time.perf_counter()
    for _ in range(20):
        preview(text, width=100)
    assert (time.perf_counter() - began) / 20 < 0.02
