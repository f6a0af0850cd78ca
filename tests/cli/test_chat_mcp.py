"""Chat with the rest of MCP: resource tools, sampling (approval, usage, cap), elicitation in
the REPL, ``@server:uri`` and ``/mcp__server__prompt``, against real servers and the fake model.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run
from tests.cli.repl_driver import NEXT, drive
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import server_entry, write_settings


@pytest.fixture
def project(tmp_path: Path, fake: FakeOpenAI) -> Path:
    write_settings(
        tmp_path,
        {
            "base_url": fake.base_url,
            "mcp_servers": {"ask": server_entry("asker", protocol="legacy")},
        },
    )
    return tmp_path


def chat(capsys: pytest.CaptureFixture[str], cwd: Path, *argv: str) -> tuple[int, str, str]:
    code = run(["--cwd", str(cwd), "chat", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def tool_results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def test_model_lists_and_reads_resources_through_the_gate(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(
        fo.tool_calls(("list_mcp_resources", {})),
        fo.tool_calls(("read_mcp_resource", {"server": "ask", "uri": "note://hello"})),
        fo.tool_calls(("read_mcp_resource", {"server": "ask", "uri": "nope://x"})),
        fo.text("done"),
    )
    code, out, err = chat(capsys, project, "-p", "look at the resources")
    assert code == 0, err
    assert out == "done\n"
    names = [t["function"]["name"] for t in fake.bodies[0]["tools"]]
    assert "list_mcp_resources" in names and "read_mcp_resource" in names
    listing = tool_results(fake.bodies[1])[-1]
    assert json.loads(listing.splitlines()[0])["uri"] == "bin://blob"
    assert any(
        json.loads(line).get("uriTemplate") == "note://{name}" for line in listing.splitlines()
    )
    assert tool_results(fake.bodies[2])[-1] == "hello resource"
    assert "server 'ask' rejected reading nope://x" in tool_results(fake.bodies[3])[-1]


def test_one_shot_sampling_needs_the_flag_and_counts_in_usage(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    call = fo.tool_calls(("mcp__ask__summarize", {"text": "hi"}))
    fake.queue(call, fo.text("refused, fine"))
    code, _, err = chat(capsys, project, "-p", "summarize", "--yes", "--json")
    assert code == 0, err
    assert len(fake.bodies) == 2  # no sampling request reached the model
    refusal = tool_results(fake.bodies[1])[-1]
    assert (
        "sampling refused: no one is asked in a non-interactive run; --allow-sampling ask"
        in refusal
    )
    fake.queue(call, fo.text("sampled answer"), fo.text("ok"))
    code, out, err = chat(
        capsys, project, "-p", "summarize", "--yes", "--json", "--allow-sampling", "ask"
    )
    assert code == 0, err
    transcript = json.loads(out)
    assert transcript["tool_calls"][0]["result"] == "model said: sampled answer"
    # three model requests (turn, sampling, turn), 10 + 5 tokens each
    usage = transcript["usage"]
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == (30, 15)


def test_sampling_is_capped_per_server_per_turn(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = [("mcp__ask__summarize", {"text": f"t{i}"}) for i in range(6)]
    fake.queue(fo.tool_calls(*calls), *[fo.text(f"s{i}") for i in range(5)], fo.text("end"))
    code, out, err = chat(capsys, project, "-p", "go", "--yes", "--json", "--allow-sampling", "ask")
    assert code == 0, err
    results = [c["result"] for c in json.loads(out)["tool_calls"]]
    assert sum(r.startswith("model said: s") for r in results) == 5
    assert sum("limit of 5 sampling requests for this turn" in r for r in results) == 1


@pytest.mark.anyio
async def test_repl_mentions_prompts_elicitation_and_sampling(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.queue(
        fo.text("read it"),  # the @mention turn
        fo.text("greeted"),  # the prompt command's turn
        fo.tool_calls(("mcp__ask__ask_name", {})),
        fo.text("named"),
        fo.tool_calls(("mcp__ask__summarize", {"text": "hi"})),
        fo.text("sampled"),
        fo.text("summarized"),
    )

    def bodies(n: int) -> Callable[[], bool]:
        return lambda: len(fake.bodies) >= n

    code, _ = await drive(
        project,
        [
            (0.3, "what is @ask:note://hello about?\r"),
            (bodies(1), "/mcp__ask__greet name=Bo style=pirate\r"),
            (bodies(2), "who am I\r"),
            (bodies(3), "y"),  # approve the call (unknown capability asks): one key
            (NEXT, "y\r"),  # answer the form
            (NEXT, "Ada\r"),  # name
            (NEXT, "\r"),  # color: the default
            (bodies(4), "summarize\r"),
            (bodies(5), "y"),  # approve the call
            (1.0, "y"),  # allow sampling once
            (bodies(7), "\x04"),
        ],
        servers=1,
        seconds=90,
    )
    _, err = capsys.readouterr()
    assert code == 0, err
    first = fake.bodies[0]["messages"][-1]["content"]
    assert first.startswith("what is @ask:note://hello about?")
    assert '<resource server="ask" uri="note://hello">\nhello resource\n</resource>' in first
    assert fake.bodies[1]["messages"][-1] == {
        "role": "user",
        "content": "Greet Bo in a pirate style.",
    }
    assert "server 'ask' asks: Who are you?" in err
    assert tool_results(fake.bodies[3])[-1] == "hello Ada (blue)"
    assert "server 'ask' wants to use the model (up to 50 tokens, 1 messages)" in err
    assert fake.bodies[5]["messages"][-1] == {"role": "user", "content": "hi"}
    assert tool_results(fake.bodies[6])[-1] == "model said: sampled"


@pytest.mark.parametrize(
    ("flags", "answer"), [((), "decline"), (("--elicit", "defaults"), "3 x blue")]
)
def test_one_shot_chat_answers_elicitation_by_flag(
    flags: tuple[str, ...],
    answer: str,
    project: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake.queue(fo.tool_calls(("mcp__ask__ask_color", {})), fo.text("ok"))
    code, _, err = chat(capsys, project, "-p", "pick a colour", "--yes", *flags)
    assert code == 0, err
    assert tool_results(fake.bodies[1])[-1] == answer


def test_one_shot_inserts_a_mention_and_stops_on_a_server_it_cannot_read(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-p`` reads ``@server:uri`` as the REPL does: a known resource is inserted; a server
    that is not configured (or disabled) stops the prompt with exit 2 before the model."""
    settings = json.loads((project / ".codebot" / "settings.json").read_text())
    settings["mcp_servers"]["off"] = {**server_entry("asker"), "enabled": False}
    write_settings(project, settings)
    fake.queue(fo.text("read it"))
    code, out, err = chat(capsys, project, "-p", "what is @ask:note://hello about?")
    assert code == 0 and out == "read it\n", err
    sent = fake.bodies[0]["messages"][-1]["content"]
    assert sent.startswith("what is @ask:note://hello about?")
    assert '<resource server="ask" uri="note://hello">' in sent

    code, out, err = chat(capsys, project, "-p", "what is @nosuch:note://hello about?")
    assert code == 2, err
    assert "unknown server 'nosuch' in @nosuch:note://hello (configured: ask, off)" in err
    code, out, err = chat(capsys, project, "-p", "and @off:note://hello", "--json")
    assert code == 2, err
    document = json.loads(out)
    assert document["exit_code"] == 2 and document["outcome"] == "error"
    assert "server 'off' in @off:note://hello is disabled" in document["error"]["message"]
    assert len(fake.bodies) == 1  # neither prompt reached the model


def test_one_shot_mention_of_a_server_that_did_not_start_says_why(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    servers = {"gone": {"command": str(tmp_path / "no-such-server")}}
    write_settings(tmp_path, {"base_url": fake.base_url, "mcp_servers": servers})
    code, _, err = chat(capsys, tmp_path, "-p", "see @gone:note://x")
    assert code == 2, err
    assert "server 'gone' in @gone:note://x did not start:" in err
    assert not fake.bodies


def test_one_shot_mention_of_an_untrusted_project_server_says_so(
    project: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")
    argv = ("-p", "see @ask:note://hello", "--base-url", fake.base_url)
    code, _, err = chat(capsys, project, *argv)
    assert code == 2, err
    assert (
        "server 'ask' in @ask:note://hello is defined by this project, which is not trusted" in err
    )
    assert not fake.bodies
