"""The REPL against real servers: ``/mcp`` with resource and prompt counts, URL-mode
elicitation with a ``$BROWSER`` stand-in that records what it was asked to open, and
completion of prompt names, arguments and resource URIs."""

from __future__ import annotations

import json
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.chat_runtime import ChatOptions
from codebot_mcp.cli.repl.repl_loop import Repl
from tests.cli.repl_driver import NEXT, Step, drive, until
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import everything_entry, server_entry, write_settings


def tool_results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


@pytest.mark.npm
@pytest.mark.anyio
async def test_mcp_view_counts_resources_and_prompts(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(
        tmp_path,
        {
            "base_url": fake.base_url,
            "mcp_servers": {
                "ask": server_entry("asker", protocol="legacy"),
                "ev": everything_entry(),
                "echo": server_entry("echo"),
            },
        },
    )
    code, _ = await drive(tmp_path, [(0.2, "/mcp\r"), (2.0, "\x04")], servers=3)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "ask: connected, 8 tools, 2 resources + 1 template, 1 prompt" in out
    assert "ev: connected, 17 tools, 7 resources + 2 templates, 4 prompts" in out
    assert "echo: connected, 15 tools, 0 resources, 0 prompts" in out


@pytest.fixture
def browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``$BROWSER`` that records the URL it was given, one per line, and opens nothing."""
    log = tmp_path / "opened.txt"
    script = tmp_path / "browser.sh"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$1" >> {log}\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("BROWSER", str(script))
    return log


@pytest.mark.anyio
async def test_url_elicitation_opens_only_after_a_yes(
    tmp_path: Path, fake: FakeOpenAI, browser: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(
        tmp_path,
        {
            "base_url": fake.base_url,
            "mcp_servers": {"ask": server_entry("asker", protocol="legacy")},
        },
    )
    visit = "mcp__ask__visit"
    lookalike = "https://pаypal.com/login"  # a Cyrillic "а"
    fake.queue(
        fo.tool_calls((visit, {})),
        fo.text("one"),
        fo.tool_calls((visit, {"url": "https://user@example.com/connect?x=1"})),
        fo.text("two"),
        fo.tool_calls((visit, {"url": "file:///etc/passwd"})),
        fo.text("three"),
        fo.tool_calls((visit, {"url": lookalike})),
        fo.text("four"),
    )

    def bodies(n: int) -> Callable[[], bool]:
        return lambda: len(fake.bodies) >= n

    code, _ = await drive(
        tmp_path,
        [
            (0.2, "visit it\r"),
            (bodies(1), "n\r"),  # decline: nothing is opened
            (bodies(2), "visit again\r"),
            (bodies(3), "y\r"),  # accept: opened
            (bodies(4), "a file\r"),  # file: is never opened, not even asked
            (bodies(6), "a look-alike\r"),
            (bodies(7), "c\r"),  # cancel
            (bodies(8), "\x04"),
        ],
        servers=1,
        options=ChatOptions(yes=True),
    )
    _, err = capsys.readouterr()
    assert code == 0, err
    results = [tool_results(fake.bodies[i])[-1] for i in (1, 3, 5, 7)]
    assert results == ["decline", "accept", "decline", "cancel"]
    assert "it wants you to open: https://example.com/connect" in err
    assert "host: example.com" in err
    assert "'user' before the '@' is not the host" in err
    assert "(declined: codebot opens only http(s) URLs, not 'file:')" in err
    assert "host: xn--pypal-4ve.com" in err
    assert "the host has non-ASCII letters: it is xn--pypal-4ve.com" in err
    await until(browser.exists, 10)  # the browser runs in a thread
    opened = browser.read_text()  # noqa: ASYNC240 - a test reading its record, once
    assert opened.splitlines() == ["https://user@example.com/connect?x=1"]


@pytest.mark.npm
@pytest.mark.anyio
async def test_completion_of_prompts_arguments_and_uris(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(
        tmp_path,
        {
            "base_url": fake.base_url,
            "mcp_servers": {
                "ask": server_entry("asker", protocol="legacy"),
                "ev": everything_entry(),
            },
        },
    )
    found: dict[str, list[str]] = {}

    async def complete(repl: Repl) -> None:
        from prompt_toolkit.completion import CompleteEvent
        from prompt_toolkit.document import Document

        completer = repl.completer()
        for text in (
            "/mcp__a",
            "/mcp__ask__greet ",
            "/mcp__ask__greet name=Bo style=p",
            "/mcp__ev__completable-prompt department=",
            "look at @e",
            "look at @ask:note",
            "look at @ev:demo://resource/static/document/a",
            "look at @ask:note://a",
            "look at @ev:demo://resource/dynamic/text/3",
        ):
            document = Document(text)
            found[text] = [
                c.text async for c in completer.get_completions_async(document, CompleteEvent())
            ]

    code, _ = await drive(tmp_path, [(0.2, "\x04")], servers=2, during=complete)
    assert code == 0
    assert found["/mcp__a"] == ["/mcp__ask__greet"]
    assert found["/mcp__ask__greet "] == ["name=", "style="]
    assert found["/mcp__ask__greet name=Bo style=p"] == ["plain", "pirate", "poem"]
    assert "Engineering" in found["/mcp__ev__completable-prompt department="]
    assert found["look at @e"] == ["ev:"]
    assert found["look at @ask:note"] == ["note://hello", "note://{name}"]
    assert found["look at @ev:demo://resource/static/document/a"] == [
        "demo://resource/static/document/architecture.md"
    ]
    assert found["look at @ask:note://a"] == ["note://alpha"]  # completion/complete
    assert found["look at @ev:demo://resource/dynamic/text/3"] == ["demo://resource/dynamic/text/3"]
    json.dumps(found)  # plain strings only


@pytest.mark.npm
@pytest.mark.anyio
async def test_subscriptions_mark_updated_resources(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    # ask: 2026-07-28 (updates on the listen stream); ev: 2025-11-25 (resources/subscribe)
    write_settings(
        tmp_path,
        {
            "base_url": fake.base_url,
            "mcp_servers": {"ask": server_entry("asker"), "ev": everything_entry()},
        },
    )
    doc = "demo://resource/static/document/architecture.md"
    fake.queue(
        fo.text("read both"),
        fo.tool_calls(
            ("mcp__ask__touch", {"uri": "note://hello"}),
            ("mcp__ev__toggle-subscriber-updates", {}),
        ),
        fo.text("touched"),
        fo.tool_calls(("list_mcp_resources", {})),
        fo.text("listed"),
    )

    def bodies(n: int) -> Callable[[], bool]:
        return lambda: len(fake.bodies) >= n

    outs: list[str] = []
    errs: list[str] = []

    def shown(text: str) -> Callable[[], bool]:
        def check() -> bool:
            captured = capsys.readouterr()
            outs.append(captured.out)
            errs.append(captured.err)
            return text in "".join(outs)

        return check

    code, _ = await drive(
        tmp_path,
        [
            (0.2, f"read @ask:note://hello and @ev:{doc}\r"),
            (bodies(1), "change them\r"),
            (bodies(3), "/mcp\r"),
            (shown("ev: connected"), "list them\r"),  # the /mcp view is done
            (bodies(5), "\x04"),
        ],
        servers=2,
        options=ChatOptions(yes=True),
    )
    captured = capsys.readouterr()
    out, err = "".join(outs) + captured.out, "".join(errs) + captured.err
    assert code == 0, err
    assert "ask: connected, 8 tools, 2 resources + 1 template (1 updated), 1 prompt" in out
    assert "ev: connected, 17 tools, 7 resources + 2 templates (1 updated), 4 prompts" in out
    assert (
        "(server 'ask' updated note://hello; mention @ask:note://hello again for its new "
        "contents)" in err
    )
    assert f"(server 'ev' updated {doc}; mention @ev:{doc} again" in err
    listing = [json.loads(line) for line in tool_results(fake.bodies[4])[-1].splitlines()]
    updated = {(e["server"], e.get("uri")) for e in listing if e.get("updated")}
    assert updated == {("ask", "note://hello"), ("ev", doc)}


@pytest.mark.anyio
async def test_repl_always_sampling_decline_and_cancel(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(
        tmp_path,
        {
            "base_url": fake.base_url,
            "mcp_servers": {"ask": server_entry("asker", protocol="legacy")},
        },
    )
    fake.queue(
        fo.tool_calls(("mcp__ask__summarize", {"text": "one"})),
        fo.text("first sample"),
        fo.tool_calls(("mcp__ask__summarize", {"text": "two"})),
        fo.text("second sample"),
        fo.text("both sampled"),
        fo.tool_calls(("mcp__ask__ask_name", {})),
        fo.text("declined it"),
        fo.tool_calls(("mcp__ask__ask_name", {})),
        fo.text("cancelled it"),
    )

    def bodies(n: int) -> Callable[[], bool]:
        return lambda: len(fake.bodies) >= n

    code, _ = await drive(
        tmp_path,
        [
            (0.2, "sample twice\r"),
            (bodies(1), "a\r"),  # always for 'ask': the second request is not asked
            (bodies(5), "ask me\r"),
            (bodies(6), "d\r"),
            (bodies(7), "ask me again\r"),
            (bodies(8), "c\r"),
            (bodies(9), "\x04"),
        ],
        servers=1,
        options=ChatOptions(yes=True),
    )
    _, err = capsys.readouterr()
    assert code == 0, err
    assert err.count("server 'ask' wants to use the model") == 1
    assert tool_results(fake.bodies[2])[-1] == "model said: first sample"
    assert tool_results(fake.bodies[4])[-1] == "model said: second sample"
    assert tool_results(fake.bodies[6])[-1] == "declined"
    assert tool_results(fake.bodies[8])[-1] == "cancelled"


@pytest.mark.npm
@pytest.mark.anyio
async def test_repl_fills_server_everythings_form(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every field kind of trigger-elicitation-request, with wrong answers asked again."""
    write_settings(tmp_path, {"base_url": fake.base_url, "mcp_servers": {"ev": everything_entry()}})
    fake.queue(fo.tool_calls(("mcp__ev__trigger-elicitation-request", {})), fo.text("filled"))
    answers = [
        "y",  # answer the form
        "",  # name: required, asked again
        "Ada",
        "y",  # check
        "",  # firstLine: its default
        "ada.example.com",  # email: not one, asked again
        "ada@example.com",
        "https://ada.dev",  # homepage
        "1815-12-10",  # birthdate
        "",  # integer: 42
        "2000",  # number: over 1000, asked again
        "7.5",
        "2",  # untitled single select: Rachel
        "1,2,3,4",  # untitled multiple: at most 3, asked again
        "1,3",  # Guitar, Violin
        "3",  # titled single: hero-3
        "",  # titled multiple: the default
        "pet-2",  # legacy titled: by value
    ]
    steps: list[Step] = [(0.2, "fill the form\r")]
    steps += [(NEXT, a + "\r") for a in answers]  # each field once it is asked
    steps.append((lambda: len(fake.bodies) >= 2, "\x04"))
    code, _ = await drive(tmp_path, steps, servers=1, options=ChatOptions(yes=True))
    _, err = capsys.readouterr()
    assert code == 0, err
    result = tool_results(fake.bodies[1])[-1]
    raw = json.loads(result.split("Raw result: ", 1)[1])
    assert raw == {
        "action": "accept",
        "content": {
            "name": "Ada",
            "check": True,
            "firstLine": "It was a dark and stormy night.",
            "email": "ada@example.com",
            "homepage": "https://ada.dev",
            "birthdate": "1815-12-10",
            "integer": 42,
            "number": 7.5,
            "untitledSingleSelectEnum": "Rachel",
            "untitledMultipleSelectEnum": ["Guitar", "Violin"],
            "titledSingleSelectEnum": "hero-3",
            "titledMultipleSelectEnum": ["fish-1"],
            "legacyTitledEnum": "pet-2",
        },
    }
    assert "(required)" in err and "(not an email address (name@example.com))" in err
    assert "(the maximum is 1000)" in err and "(pick at most 3)" in err
    assert "Number in range 1-1000 (number, optional, 0 to 1000)" in err
    assert "1. hero-1 (Superman)" in err


@pytest.mark.anyio
async def test_reload_with_new_roots_tells_the_servers(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    record = tmp_path / "record.jsonl"
    entry = server_entry("inquirer", "--record", str(record), "--asks", "q-roots")
    settings: dict[str, Any] = {"base_url": fake.base_url, "mcp_servers": {"inq": entry}}
    write_settings(tmp_path, settings)
    extra = tmp_path / "docs"

    def answers() -> list[dict[str, Any]]:
        lines = [json.loads(line) for line in record.read_text().splitlines()]
        return [line for line in lines if line.get("method") == "roots/list"]

    def add_root() -> bool:
        write_settings(tmp_path, {**settings, "roots": [str(extra)]})
        return True

    code, _ = await drive(
        tmp_path,
        [
            (add_root, "/mcp reload\r"),
            (lambda: len(answers()) >= 2, "/mcp reload\r"),  # unchanged roots: no notification
            (1.5, "\x04"),
        ],
        servers=1,
    )
    _, err = capsys.readouterr()
    assert code == 0, err
    first, second = ([r["uri"] for r in a["result"]["roots"]] for a in answers())
    project, docs = (p.resolve().as_uri() for p in (tmp_path, extra))
    assert (first, second) == ([project], [project, docs])
    notices = [line for line in record.read_text().splitlines() if "list_changed" in line]
    assert len(notices) == 1


@pytest.mark.anyio
async def test_a_mention_of_an_unknown_or_disabled_server_stops_the_prompt(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    """As an unknown resource does: the error is shown and nothing goes to the model."""
    off = {**server_entry("asker", protocol="legacy"), "enabled": False}
    servers = {"ask": server_entry("asker", protocol="legacy"), "off": off}
    write_settings(tmp_path, {"base_url": fake.base_url, "mcp_servers": servers})
    fake.queue(fo.text("only this one"))
    errs: list[str] = []

    def errors(n: int) -> Callable[[], bool]:
        def check() -> bool:
            errs.append(capsys.readouterr().err)
            return "".join(errs).count("error:") >= n

        return check

    code, _ = await drive(
        tmp_path,
        [
            (0.2, "what is @nosuch:note://hello about\r"),
            (errors(1), "and @off:note://hello\r"),
            (errors(2), "and @ask:nope://missing\r"),
            (errors(3), "plain question\r"),
            (lambda: fake.remaining == 0, "\x04"),
        ],
        servers=1,
    )
    err = "".join(errs) + capsys.readouterr().err
    assert code == 0, err
    assert "unknown server 'nosuch' in @nosuch:note://hello (configured: ask, off)" in err
    assert "server 'off' in @off:note://hello is disabled" in err
    assert "nope://missing" in err  # the unknown resource, as before
    assert [b["messages"][-1]["content"] for b in fake.bodies] == ["plain question"]
