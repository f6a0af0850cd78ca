"""Headless chat: ``--output-format stream-json``, ``--input-format stream-json``,
``--include-partial``, ``--output-schema``, and a document or final event on every exit.

Every event of every run here is validated against ``docs/stream-json.schema.json``. What is
about the process (events flushed while it runs, a conversation over stdin) runs the real
console script; the rest runs ``cli.app.run`` in the worker.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from jsonschema import validators  # type: ignore[import-untyped]

from tests.fakes import openai_turns as fo
from tests.fakes import zygote
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import cli_in_process, write_settings
from tests.helpers import server_entry as entry
from tests.servers.util import REPO_ROOT

SCHEMA = json.loads((REPO_ROOT / "docs" / "stream-json.schema.json").read_text())
VALIDATOR: Any = validators.Draft202012Validator(SCHEMA)
KEY = "sk-streamjson-secret-0123456789"


STREAMING = ("--input-format", "stream-json", "--output-format", "stream-json")


def events(out: str) -> list[dict[str, Any]]:
    """Every line of stdout as an event, each valid against the schema; the last is the final
    result, and it is the only final one."""
    lines = out.splitlines()
    assert lines, "no event on stdout"
    parsed = [json.loads(line) for line in lines]
    for event in parsed:
        errors = [e.message for e in VALIDATOR.iter_errors(event)]
        assert not errors, (event, errors)
    assert [e["seq"] for e in parsed] == list(range(len(parsed)))
    assert parsed[-1]["type"] == "result" and parsed[-1]["final"] is True
    assert [e for e in parsed if e["type"] == "result" and e["final"]] == [parsed[-1]]
    return parsed


def buffered_env() -> dict[str, str]:
    """The environment of a real run, with stdout buffered as Python buffers a pipe: without
    ``PYTHONUNBUFFERED``, an event is on stdout only if codebot flushed it."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return {**env, "OPENAI_API_KEY": KEY}


def of(found: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in found if e["type"] == kind]


@pytest.fixture
def project(tmp_path: Path, fake: FakeOpenAI) -> Path:
    write_settings(tmp_path, {"base_url": fake.base_url, "mcp_servers": {"echo": entry("echo")}})
    return tmp_path


def chat(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    cwd: Path,
    *argv: str,
    env: dict[str, str | None] | None = None,
) -> tuple[int, str, str]:
    return cli_in_process(
        capsys,
        monkeypatch,
        "--cwd",
        str(cwd),
        "chat",
        *argv,
        env={"OPENAI_API_KEY": KEY, **(env or {})},
    )


def test_events_stream_as_they_happen_from_the_real_process(
    project: Path, fake: FakeOpenAI
) -> None:
    """MCP tools, a read, a denial, and the answer: each event is on stdout (flushed) before
    the next step happens, here before the model's slow answer arrives."""
    fake.queue(
        fo.tool_calls(
            ("mcp__echo__echo", {"text": f"key {KEY}"}), ("mcp__echo__delete_note", {"id": "1"})
        ),
        fo.text("all done", delay=3.0),
    )
    proc = subprocess.Popen(
        [*zygote.command(), "chat", "-p", "echo then delete", "--output-format", "stream-json"],
        cwd=project,
        env=buffered_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        seen: list[str] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            seen.append(line)
            if '"type": "tool_result"' in line and "delete_note" in line:
                break
        # The answer is 3 s away: the events so far were flushed while the process waits.
        assert proc.poll() is None
        rest, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    found = events("".join(seen) + rest)
    init = found[0]
    assert init["type"] == "init" and init["session_id"] and init["model"] == "fake-model"
    assert init["endpoint"] == fake.base_url
    assert init["servers"] == [
        {"name": "echo", "status": "connected", "tools": 15, "error": None, "stage": None}
    ]
    assert "mcp__echo__echo" in init["tools"] and init["sandbox"]["mode"]
    assert all(e["session_id"] == init["session_id"] for e in found)
    calls = of(found, "tool_call")
    assert [(c["name"], c["server"], c["tool"]) for c in calls] == [
        ("mcp__echo__echo", "echo", "echo"),
        ("mcp__echo__delete_note", "echo", "delete_note"),
    ]
    permissions = of(found, "permission")
    assert [(p["decision"], p["by"]) for p in permissions] == [
        ("allow", "capability"),
        ("deny", "mode"),
    ]
    assert "--yes" in permissions[1]["reason"]
    results = {r["name"]: r for r in of(found, "tool_result")}
    assert results["mcp__echo__echo"]["status"] == "ok"
    assert results["mcp__echo__echo"]["content"] == "key ***"  # the key never reaches stdout
    assert results["mcp__echo__delete_note"]["status"] == "denied"
    assert KEY not in "".join(seen) + rest
    assert [e["message"]["content"] for e in of(found, "assistant")][-1] == "all done"
    assert len(of(found, "usage")) == 2
    final = found[-1]
    assert (final["outcome"], final["exit_code"], final["answer"]) == ("answer", 0, "all done")
    assert final["tool_calls"] == 2 and final["turns"] == 2


def test_a_conversation_over_stdin_with_one_process(project: Path, fake: FakeOpenAI) -> None:
    """Two user messages (and a bad line between them) on stdin, one session: the second
    request carries the first exchange; a call that would ask is denied (no one to ask)."""
    fake.queue(
        fo.text("one"),
        fo.tool_calls(("write", {"path": "x.txt", "content": "x"})),
        fo.text("two"),
    )
    lines = [
        {"type": "user", "message": {"role": "user", "content": "first"}},
        "not json",
        {"type": "user", "message": {"content": [{"type": "text", "text": "second"}]}},
    ]
    stdin = "".join((json.dumps(x) if isinstance(x, dict) else x) + "\n" for x in lines)
    done = subprocess.run(
        [*zygote.command(), "chat", *STREAMING],
        cwd=project,
        env={**os.environ, "OPENAI_API_KEY": KEY},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    found = events(done.stdout)
    assert [e["message"]["content"] for e in of(found, "user")] == ["first", "second"]
    (bad,) = of(found, "input_error")
    assert bad["line"] == 2 and "not JSON" in bad["message"]
    results = of(found, "result")
    assert [(r["final"], r["answer"]) for r in results] == [
        (False, "one"),
        (False, "two"),
        (True, "two"),
    ]
    assert results[-1]["prompts"] == 2
    (permission,) = of(found, "permission")
    assert (permission["decision"], permission["by"]) == ("deny", "mode")
    assert not (project / "x.txt").exists()
    second = [
        m["content"] for m in fake.bodies[1]["messages"] if m["role"] in ("user", "assistant")
    ]
    assert second == ["first", "one", "second"]


def test_no_message_on_stdin_is_a_usage_error_with_its_result(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = chat(
        capsys,
        monkeypatch,
        project,
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
    )
    assert code == 2 and "no user message on stdin" in err
    final = events(out)[-1]
    assert final["exit_code"] == 2 and final["error"]["message"] == "no user message on stdin"


def test_failures_at_start_end_with_the_document_and_the_event(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`OPENAI_API_KEY= codebot chat -p hi --json` (issue 29), bad settings, a bad schema."""
    no_key = {"OPENAI_API_KEY": ""}
    code, out, err = chat(capsys, monkeypatch, tmp_path, "-p", "hi", "--json", env=no_key)
    assert code == 5 and "OPENAI_API_KEY is not set" in err
    document = json.loads(out)
    assert (document["outcome"], document["exit_code"]) == ("error", 5)
    assert "OPENAI_API_KEY" in document["error"]["message"] and document["messages"] == []
    code, out, _ = chat(
        capsys, monkeypatch, tmp_path, "-p", "hi", "--output-format", "stream-json", env=no_key
    )
    (final,) = events(out)
    assert (code, final["outcome"], final["exit_code"], final["prompts"]) == (5, "error", 5, 0)

    (tmp_path / ".codebot").mkdir()
    (tmp_path / ".codebot" / "settings.json").write_text("{not json")
    code, out, err = chat(capsys, monkeypatch, tmp_path, "-p", "hi", "--json")
    assert code == 3 and json.loads(out)["error"]["exit_code"] == 3
    code, out, _ = chat(capsys, monkeypatch, tmp_path, "-p", "hi", "--output-format", "stream-json")
    assert code == 3 and "invalid JSON" in events(out)[-1]["error"]["message"]

    schema = tmp_path / "answer.schema.json"
    schema.write_text('{"type": 12}')
    code, out, err = chat(
        capsys, monkeypatch, tmp_path, "-p", "hi", "--output-format", "stream-json",
        "--output-schema", str(schema),
    )  # fmt: skip
    assert code == 2 and f"--output-schema {schema}: not a valid JSON Schema" in err
    assert str(schema) in events(out)[-1]["error"]["message"]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--include-partial"], "--include-partial needs --output-format stream-json"),
        (["--input-format", "stream-json"], "--input-format stream-json needs"),
        (["--json", "--output-format", "stream-json"], "--json and --output-format"),
        (["--output-format", "yaml"], "--output-format yaml: unknown format"),
    ],
)
def test_options_that_do_not_go_together(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    says: str,
) -> None:
    code, _, err = chat(capsys, monkeypatch, tmp_path, "-p", "hi", *argv)
    assert code == 2 and says in err


def test_partial_text_is_streamed_with_secrets_masked_across_deltas(
    project: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake.queue(fo.text(f"the key is {KEY} ok", chunks=6))
    code, out, _ = chat(
        capsys, monkeypatch, project, "-p", "hi", "--output-format", "stream-json",
        "--include-partial",
    )  # fmt: skip
    assert code == 0
    found = events(out)
    deltas = of(found, "assistant_delta")
    assert len(deltas) >= 2
    assert "".join(d["text"] for d in deltas) == "the key is *** ok"
    assert KEY not in out


def test_a_retry_is_an_event(
    project: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = project / ".codebot" / "settings.json"
    settings.write_text(json.dumps({"base_url": fake.base_url, "model_retries": 1}))
    fake.queue(
        fo.error(500, **{"x-should-retry": "true", "retry-after": "0"}), fo.text("after a retry")
    )
    code, out, _ = chat(capsys, monkeypatch, project, "-p", "hi", "--output-format", "stream-json")
    assert code == 0
    found = events(out)
    (retry,) = of(found, "retry")
    assert retry["attempt"] == 1 and "500" in retry["reason"]
    assert found[-1]["answer"] == "after a retry"


def test_model_error_mid_run_keeps_what_ran(
    project: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake.queue(fo.tool_calls(("mcp__echo__echo", {"text": "hi"})), fo.error(401))
    code, out, err = chat(
        capsys, monkeypatch, project, "-p", "hi", "--output-format", "stream-json"
    )
    assert code == 5 and "rejected the API key" in err
    found = events(out)
    assert [r["status"] for r in of(found, "tool_result")] == ["ok"]
    final = found[-1]
    assert (final["outcome"], final["exit_code"], final["tool_calls"]) == ("error", 5, 1)


SCHEMA_FILE = {
    "type": "object",
    "properties": {"files": {"type": "integer"}, "ok": {"type": "boolean"}},
    "required": ["files", "ok"],
}


@pytest.fixture
def answer_schema(tmp_path: Path) -> Path:
    path = tmp_path / "answer.schema.json"
    path.write_text(json.dumps(SCHEMA_FILE))
    return path


def test_output_schema_asks_for_structured_output_and_validates(
    project: Path,
    fake: FakeOpenAI,
    answer_schema: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake.queue(fo.text('```json\n{"files": 3, "ok": true}\n```'))
    code, out, err = chat(
        capsys, monkeypatch, project, "-p", "count", "--output-schema", str(answer_schema)
    )
    assert code == 0, err
    assert json.loads(out) == {"files": 3, "ok": True}
    body = fake.bodies[0]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == SCHEMA_FILE
    assert "validates against this JSON Schema" in body["messages"][-1]["content"]


def test_output_schema_retries_once_with_the_error_then_fails_with_1(
    project: Path,
    fake: FakeOpenAI,
    answer_schema: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake.queue(fo.text('{"files": "three"}'), fo.text('{"files": 3, "ok": false}'))
    code, out, _ = chat(
        capsys, monkeypatch, project, "-p", "count", "--output-format", "stream-json",
        "--output-schema", str(answer_schema),
    )  # fmt: skip
    assert code == 0
    found = events(out)
    assert found[-1]["structured_output"] == {"files": 3, "ok": False}
    assert any("does not validate" in n["message"] for n in of(found, "notice"))
    retry = fake.bodies[1]["messages"][-1]["content"]
    assert retry.startswith("Your answer does not validate") and "files" in retry

    fake.queue(fo.text("three files"), fo.text('{"files": 3}'))
    code, out, err = chat(
        capsys, monkeypatch, project, "-p", "count", "--json", "--output-schema", str(answer_schema)
    )
    assert code == 1 and "does not validate against" in err and "'ok' is a required" in err
    document = json.loads(out)
    assert document["exit_code"] == 1 and document["answer"] == '{"files": 3}'
    assert document["structured_output"] is None


def test_output_schema_falls_back_when_the_endpoint_rejects_response_format(
    project: Path,
    fake: FakeOpenAI,
    answer_schema: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake.queue(
        fo.error(400, "response_format json_schema is not supported"),
        fo.text('{"files": 1, "ok": true}'),
    )
    code, out, _ = chat(
        capsys, monkeypatch, project, "-p", "count", "--output-format", "stream-json",
        "--output-schema", str(answer_schema),
    )  # fmt: skip
    assert code == 0
    found = events(out)
    (retry,) = of(found, "retry")
    assert "rejected structured output" in retry["reason"]
    assert "response_format" in fake.bodies[0] and "response_format" not in fake.bodies[1]
    assert found[-1]["structured_output"] == {"files": 1, "ok": True}


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_run_still_ends_with_its_result(
    project: Path, fake: FakeOpenAI, sig: signal.Signals
) -> None:
    fake.queue(fo.stall(30))
    proc = subprocess.Popen(
        [*zygote.command(), "chat", "-p", "wait", "--output-format", "stream-json"],
        cwd=project,
        env=buffered_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        seen = [proc.stdout.readline(), proc.stdout.readline()]  # init, user
        assert '"type": "user"' in seen[1]
        deadline = time.monotonic() + 30
        while not fake.requests and time.monotonic() < deadline:  # the request is out
            time.sleep(0.05)
        proc.send_signal(sig)
        rest, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    final = events("".join(seen) + rest)[-1]
    assert (final["outcome"], final["exit_code"]) == ("interrupted", 130)
    assert final["error"]["message"] == "interrupted"


def test_a_compaction_is_an_event(
    project: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (project / "big.txt").write_text("word " * 4000)
    fake.queue(fo.tool_calls(("read", {"path": "big.txt"})), fo.text("read it"))
    assert chat(capsys, monkeypatch, project, "-p", "read big.txt")[0] == 0
    fake.queue(fo.overflow(4096), fo.text("the summary"), fo.text("after compaction"))
    code, out, _ = chat(
        capsys, monkeypatch, project, "-p", "and now?", "--continue",
        "--output-format", "stream-json",
    )  # fmt: skip
    assert code == 0
    found = events(out)
    (compaction,) = of(found, "compaction")
    assert compaction["cut_tool_results"] == 1 and compaction["after_tokens"] < 4096
    assert found[-1]["answer"] == "after compaction"
    assert found[-1]["usage"]["summary_requests"] == 1


def test_a_long_result_is_cut_in_the_stream_but_not_for_the_model(
    project: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake.queue(fo.tool_calls(("mcp__echo__big", {"size": 20_000})), fo.text("big"))
    code, out, _ = chat(
        capsys, monkeypatch, project, "-p", "big", "--yes", "--output-format", "stream-json"
    )
    assert code == 0
    (result,) = of(events(out), "tool_result")
    assert (result["truncated"], result["chars"], len(result["content"])) == (True, 20_000, 16_000)
    assert len(fake.bodies[1]["messages"][-1]["content"]) == 20_000
    (permission,) = of(events(out), "permission")
    assert permission["by"] == "mode" and permission["reason"].startswith("allowed by --yes")


def test_a_rule_that_decides_is_named(
    project: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = project / ".codebot" / "settings.json"
    data = json.loads(settings.read_text())
    settings.write_text(json.dumps({**data, "permissions": {"deny": ["mcp__echo__echo"]}}))
    fake.queue(
        fo.tool_calls(("mcp__echo__delete_note", {"id": "1"}), ("mcp__echo__echo", {"text": "x"})),
        fo.text("done"),
    )
    code, out, _ = chat(
        capsys, monkeypatch, project, "-p", "go", "--allow", "mcp__echo__delete_*",
        "--output-format", "stream-json",
    )  # fmt: skip
    assert code == 0
    decided = [
        (p["name"], p["decision"], p["by"], p["rule"]) for p in of(events(out), "permission")
    ]
    assert decided == [
        ("mcp__echo__delete_note", "allow", "rule", "--allow 'mcp__echo__delete_*'"),
        ("mcp__echo__echo", "deny", "rule", "permissions.deny 'mcp__echo__echo'"),
    ]


def test_init_names_a_server_that_failed(
    tmp_path: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    servers = {"echo": entry("echo"), "crash": entry("crash_on_start")}
    write_settings(tmp_path, {"base_url": fake.base_url, "mcp_servers": servers})
    fake.queue(fo.text("fine without it"))
    code, out, _ = chat(capsys, monkeypatch, tmp_path, "-p", "hi", "--output-format", "stream-json")
    assert code == 0
    init = events(out)[0]
    by_name = {s["name"]: s for s in init["servers"]}
    assert by_name["echo"]["status"] == "connected" and by_name["echo"]["tools"] == 15
    crash = by_name["crash"]
    assert crash["status"] == "failed" and crash["tools"] == 0
    assert crash["stage"] and crash["error"]
    assert not [t for t in init["tools"] if t.startswith("mcp__crash__")]


def test_the_responses_api_streams_the_same_events_and_its_reasoning(
    tmp_path: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 34: stream-json works on the Responses API as on Chat Completions: the same
    events (an MCP tool call and its result), plus a ``reasoning`` event per reasoned turn;
    the encrypted reasoning goes back to the model and never into the stream."""
    settings = {
        "base_url": fake.base_url,
        "model": "o4-mini",
        "api": "responses",
        "mcp_servers": {"echo": entry("echo")},
    }
    write_settings(tmp_path, settings)
    fake.queue(
        fo.reasoned(
            fo.tool_calls(("mcp__echo__echo", {"text": "ping"})),
            "Echo first.",
            encrypted="enc-secret-one",
        ),
        fo.reasoned(fo.text("pong received"), "Done.", encrypted="enc-secret-two"),
    )
    code, out, err = chat(
        capsys, monkeypatch, tmp_path, "-p", "go", "--output-format", "stream-json", "--yes"
    )
    assert code == 0, err
    found = events(out)
    assert [e["summary"] for e in of(found, "reasoning")] == ["Echo first.", "Done."]
    (result,) = of(found, "tool_result")
    assert (result["name"], result["status"], result["content"]) == (
        "mcp__echo__echo",
        "ok",
        "ping",
    )
    assert found[-1]["answer"] == "pong received"
    assert "enc-secret" not in out
    assert all(r.path.endswith("/v1/responses") for r in fake.requests)
    assert any(
        item.get("encrypted_content") == "enc-secret-one"
        for item in fake.bodies[1]["input"]
        if isinstance(item, dict)
    )
