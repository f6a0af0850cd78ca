"""``codebot chat -p`` on the Responses API (``"api": "responses"``), end to end: the loopback
model server speaks the Responses wire format (SSE events), the real ``openai`` client reads
it, real MCP servers (``tests/servers/echo``) serve tools.

Each test checks what went over the wire: ``store: false``, the encrypted reasoning asked
for (``include``) and sent back in the next request's ``input`` before the call it led to,
and the tool results as ``function_call_output``; and what the user gets: the answer, the
reasoning summaries (dimmed on stderr; in ``--json`` and the saved session), the reasoning
tokens in the usage. Everything that works on Chat Completions works here too: MCP tools,
tool search, approvals, compaction, resume and rewind.

The CLI runs in the test's process (``cli.app.run``, as ``tests/e2e/test_local_model.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run
from codebot_mcp.core.agent.history import sessions_dir
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import server_entry, write_settings

ENCRYPTED = ["reasoning.encrypted_content"]


@pytest.fixture
def project(tmp_path: Path, fake: FakeOpenAI) -> Path:
    write_settings(
        tmp_path,
        {
            "base_url": fake.base_url,
            "model": "gpt-5",
            "api": "responses",
            "mcp_servers": {"echo": server_entry("echo")},
        },
    )
    (tmp_path / "a.txt").write_text("alpha\n")
    return tmp_path


def chat(capsys: pytest.CaptureFixture[str], cwd: Path, *argv: str) -> tuple[int, str, str]:
    code = run(["--cwd", str(cwd), "chat", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def kinds(body: dict[str, Any]) -> list[str]:
    """The input items of a Responses request: their type, or the role of a message."""
    return [item.get("type") or item["role"] for item in body["input"]]


def outputs(body: dict[str, Any]) -> dict[str, str]:
    """The tool results a request carries, by call id."""
    return {
        i["call_id"]: i["output"] for i in body["input"] if i.get("type") == "function_call_output"
    }


def test_builtin_and_mcp_tools_keep_their_reasoning_across_the_calls(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(
        fo.reasoned(fo.tool_calls(("read", {"path": "a.txt"})), "I should read a.txt first."),
        fo.reasoned(
            fo.tool_calls(("mcp__echo__echo", {"text": "alpha seen"})), "Now echo what it says."
        ),
        fo.reasoned(fo.text("a.txt says alpha"), ["Both done.", "Answer now."], tokens=10),
    )
    code, out, err = chat(capsys, project, "-p", "read a.txt and echo it", "--yes", "--json")
    assert code == 0, err
    assert all(r.path.endswith("/v1/responses") for r in fake.requests)
    first, second, third = fake.bodies
    for body in fake.bodies:
        assert (body["store"], body["include"], body["stream"]) == (False, ENCRYPTED, True)
        assert body["reasoning"] == {"summary": "auto"}
    names = [t["name"] for t in first["tools"]]
    assert "read" in names and "mcp__echo__echo" in names
    assert "## echo" in first["instructions"]  # the server's instructions, in the system prompt
    assert kinds(second) == ["user", "reasoning", "function_call", "function_call_output"]
    assert second["input"][1]["encrypted_content"] == "enc:rs_1"
    assert list(outputs(second).values()) == ["     1\talpha"]
    assert kinds(third) == [
        *("user", "reasoning", "function_call", "function_call_output"),
        *("reasoning", "function_call", "function_call_output"),
    ]
    reasoning = [i for i in third["input"] if i.get("type") == "reasoning"]
    assert [r["encrypted_content"] for r in reasoning] == ["enc:rs_1", "enc:rs_4"]
    assert list(outputs(third).values())[-1] == "alpha seen"
    assert third["instructions"] == first["instructions"]  # the prompt cache holds

    data = json.loads(out)
    assert (data["answer"], data["api"], data["outcome"]) == (
        "a.txt says alpha",
        "responses",
        "answer",
    )
    assert data["reasoning"] == [
        "I should read a.txt first.",
        "Now echo what it says.",
        "Both done.\n\nAnswer now.",
    ]
    assert data["usage"]["reasoning_tokens"] == 64 + 64 + 10
    assert [c["name"] for c in data["tool_calls"]] == ["read", "mcp__echo__echo"]
    kept = [m for m in data["messages"] if m.get("reasoning")]
    assert [m["reasoning"][0]["encrypted_content"] for m in kept] == [
        "enc:rs_1",
        "enc:rs_4",
        "enc:rs_7",
    ]
    assert "I should read a.txt first." in err  # shown (dimmed) on stderr
    saved = (sessions_dir(project) / f"{data['session_id']}.jsonl").read_text()
    assert saved.count('"encrypted_content": "enc:rs_') == 3
    assert "Now echo what it says." in saved


def test_resume_sends_the_saved_reasoning_back(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(
        fo.reasoned(fo.tool_calls(("read", {"path": "a.txt"})), "Read it."),
        fo.reasoned(fo.text("alpha"), "Say it."),
    )
    assert chat(capsys, project, "-p", "what is in a.txt?")[0] == 0
    fake.queue(fo.text("you asked about a.txt"))
    code, out, err = chat(capsys, project, "-p", "what did I ask?", "--continue")
    assert (code, out) == (0, "you asked about a.txt\n"), err
    resumed = fake.bodies[-1]
    assert kinds(resumed) == [
        *("user", "reasoning", "function_call", "function_call_output"),
        *("reasoning", "assistant", "user"),
    ]
    assert [i["encrypted_content"] for i in resumed["input"] if i.get("type") == "reasoning"] == [
        "enc:rs_1",
        "enc:rs_4",
    ]


def test_effort_flag_and_setting_and_bad_values(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(fo.text("hi"), fo.text("hi"), fo.text("hi"))
    assert chat(capsys, project, "-p", "hi", "--effort", "high")[0] == 0
    assert fake.bodies[-1]["reasoning"] == {"effort": "high", "summary": "auto"}
    settings = json.loads((project / ".codebot" / "settings.json").read_text())
    write_settings(project, {**settings, "reasoning_effort": "low"})
    assert chat(capsys, project, "-p", "hi")[0] == 0
    assert fake.bodies[-1]["reasoning"]["effort"] == "low"
    code, _, err = chat(capsys, project, "-p", "hi", "--api", "chat_completions")
    assert code == 0, err
    assert fake.requests[-1].path.endswith("/chat/completions")
    assert fake.bodies[-1]["reasoning_effort"] == "low" and "input" not in fake.bodies[-1]
    code, _, err = chat(capsys, project, "-p", "hi", "--effort", "extreme")
    assert code == 2 and "--effort extreme" in err and "low, medium, high" in err
    code, _, err = chat(capsys, project, "-p", "hi", "--api", "soap")
    assert code == 2 and "chat_completions, responses" in err
    write_settings(project, {**settings, "api": "soap"})
    code, _, err = chat(capsys, project, "-p", "hi")
    assert code == 3 and "'api'" in err and '"responses"' in err
    assert len(fake.bodies) == 3


def test_approvals_and_tool_search_work_the_same(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = json.loads((project / ".codebot" / "settings.json").read_text())
    write_settings(project, {**settings, "tool_search": True})
    fake.queue(
        fo.reasoned(fo.tool_calls(("search_tools", {"query": "delete note"})), "Find the tool."),
        fo.tool_calls(("mcp__echo__delete_note", {"id": "1"})),
        fo.text("could not delete it"),
    )
    code, out, err = chat(capsys, project, "-p", "delete note 1")
    assert (code, out) == (0, "could not delete it\n"), err
    first, second, third = fake.bodies
    assert "mcp__echo__delete_note" not in [t["name"] for t in first["tools"]]
    assert "mcp__echo__delete_note" in [t["name"] for t in second["tools"]]  # loaded by search
    assert kinds(second)[1] == "reasoning"
    assert "mcp__echo__delete_note denied" in err  # no terminal and no --yes: the gate says no
    assert list(outputs(third).values())[-1].startswith("Error: Permission denied")


def test_an_overflow_compacts_over_the_responses_api(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(fo.reasoned(fo.text("first answer " * 40), "Long answer."))
    assert chat(capsys, project, "-p", "hi")[0] == 0
    fake.queue(fo.overflow(8192), fo.text("the summary"), fo.text("after compacting"))
    code, out, err = chat(capsys, project, "-p", "more", "--continue", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["answer"] == "after compacting" and len(data["compactions"]) == 1
    summary, retried = fake.bodies[-2], fake.bodies[-1]
    assert fake.requests[-2].path.endswith("/responses")
    assert "compacting a coding session" in summary["instructions"]
    assert "first answer" not in json.dumps(retried["input"])
    assert retried["input"][-1] == {"role": "user", "content": "more"}


def test_rewind_takes_files_and_conversation_back(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(
        fo.reasoned(fo.tool_calls(("write", {"path": "w.txt", "content": "new\n"})), "Write."),
        fo.reasoned(fo.text("written"), "Done."),
    )
    code, out, err = chat(capsys, project, "-p", "write w.txt", "--yes", "--json")
    assert code == 0, err
    session = json.loads(out)["session_id"]
    assert (project / "w.txt").read_text() == "new\n"
    code = run(
        ["--cwd", str(project), "rewind", "1", "--session", session, "--yes", "--conversation"]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert not (project / "w.txt").exists() and "conversation taken back" in out
    fake.queue(fo.text("fresh"))
    assert chat(capsys, project, "-p", "again", "--resume", session)[0] == 0
    assert kinds(fake.bodies[-1]) == ["user"]  # the rewound turn and its reasoning are gone


@pytest.mark.anyio
async def test_the_repl_shows_the_reasoning_dimmed_and_counts_its_tokens(
    tmp_path: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io

    import anyio

    from codebot_mcp.cli.repl.chatview import TurnView
    from tests.cli.repl_driver import drive, until

    write_settings(tmp_path, {"base_url": fake.base_url, "model": "o4-mini", "api": "responses"})
    fake.queue(fo.reasoned(fo.text("The answer is 4."), ["Two and two.", "That makes four."]))

    async def typist(repl: Any, inp: Any) -> None:
        await anyio.sleep(0.3)
        inp.send_text("what is 2+2?\r")
        await until(lambda: repl.runtime is not None and len(repl.runtime.session.history) == 2)
        for keys in ("/context\r", "/usage\r", "\x04"):
            await anyio.sleep(0.3)
            inp.send_text(keys)

    code, _ = await drive(tmp_path, typist, seconds=45)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "Two and two.\n\nThat makes four.\n\nThe answer is 4." in out
    assert "reasoning: 64 tokens in the last answer, 64 this session" in out
    assert "1 reasoning item(s) go back with the history" in out
    assert "69 completion (64 reasoning)" in out

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Tty()
    monkeypatch.setattr("sys.stdout", screen)
    view = TurnView()
    view.reasoning("thinking \x1b[2J hard")
    view.text("answer")
    view.end_line()
    assert screen.getvalue() == "\x1b[2mthinking \\x1b[2J hard\x1b[0m\n\nanswer\n"
