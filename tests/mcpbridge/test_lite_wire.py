"""The hot path against the SDK path, on the wire: every JSON-RPC message, the server's log,
and how often the tool was called.

Each case runs one command twice in process, on the hot path and with ``CODEBOT_SDK_PATH=1``,
with the server behind ``tests/servers/wiretap`` (a recording wrapper placed as its
``command``), and compares, for each launch of the server:

- what codebot sent, message by message, and what the server answered (each direction in its
  own order: which of two messages crosses first is the scheduler's);
- the server's log file of the run (its stderr and its ``notifications/message`` lines);
- the ``tools/call`` requests: the same on both paths, exactly one that starts the call (the
  rest carry the answers of SEP-2322 input rounds), never one more for a fallback;
- exit code, stdout and stderr, byte for byte.

Where the two may differ, and why (nothing else is normalized; client info and capabilities
must be equal as sent):

- request ids: each path numbers its own requests; ids (and progress tokens, which the SDK
  makes of them) are replaced by their order of first use. The probe's own ids are fixed;
- the SDK path opens a listen stream on a 2026-07-28 connection (``subscriptions/listen``, its
  acknowledgment and answers, the ``notifications/cancelled`` that closes it): its connection
  lives on in chat, a one-shot command has nothing to listen for;
- ``requestState``: opaque, minted by the server; checked to be echoed as it came, then masked.

Every case launches the server once on each path. A case the hot path hands to the SDK path
before calling (a listing or a ``server/discover`` answer the SDK's model reads, a server that
offers tasks) goes on on the same process; its test compares the outcome and what was sent.
Should a path ever launch twice, the first launch must not have called anything, and the last
must equal the SDK path's.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run
from codebot_mcp.core.config import paths
from codebot_mcp.mcpbridge.transport import wire
from tests.helpers import everything_entry, server_entry, write_settings
from tests.servers.util import REPO_ROOT, server_command

PROBE_IDS = ("codebot-discover-unknown", "codebot-discover-sentinel")
WAIT_SECONDS = 30.0
SECRET = "sk-chatty-0123456789abcdef"


@dataclass
class Run:
    """One command on one path."""

    outcome: tuple[int, str, str]
    launches: list[list[dict[str, Any]]]
    """Each launch of the server: the wiretap's records, in the order written."""
    logs: list[str]
    """The server's log files of this run, oldest first."""

    def calls(self) -> list[dict[str, Any]]:
        return [
            r["msg"]
            for launch in self.launches
            for r in launch
            if r.get("dir") == ">" and _method(r) == "tools/call"
        ]


def _method(record: dict[str, Any]) -> Any:
    message = record.get("msg")
    return message.get("method") if isinstance(message, dict) else None


def _tapped(tap: Path, entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` behind the wiretap (which runs from the repository, as the test servers do)."""
    command, args = server_command("wiretap", str(tap), "--", entry["command"], *entry["args"])
    return {**entry, "command": command, "args": args, "cwd": entry.get("cwd", str(REPO_ROOT))}


def _finished(tap: Path) -> list[list[dict[str, Any]]] | None:
    files = sorted(tap.glob("*.jsonl")) if tap.exists() else []
    launches = []
    for file in files:
        records = [json.loads(line) for line in file.read_text().splitlines() if line.strip()]
        if not records or "end" not in records[-1]:
            return None
        launches.append(records[:-1])
    return launches


def record(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    entry: dict[str, Any],
    argv: list[str],
    *,
    sdk: bool,
) -> Run:
    """Run ``codebot <argv>`` against server ``s`` (``entry`` behind the wiretap) on one path.

    Both paths run in the same project with the same settings (paths show in the output);
    each run's recordings are moved aside once read, and its log files told apart by name."""
    side = "sdk" if sdk else "hot"
    tap = tmp_path / "tap"
    write_settings(tmp_path, {"mcp_servers": {"s": _tapped(tap, entry)}})
    monkeypatch.setenv("CODEBOT_SDK_PATH", "1" if sdk else "")
    before = set((paths.log_dir() / "s").glob("*.log"))
    code = run(["--cwd", str(tmp_path), *argv])
    out = capsys.readouterr()
    deadline = time.monotonic() + WAIT_SECONDS
    while (launches := _finished(tap)) is None or not launches:
        assert time.monotonic() < deadline, f"the {side} run's server never finished"
        time.sleep(0.02)
    tap.rename(tmp_path / f"tap-{side}")
    logs = sorted(set((paths.log_dir() / "s").glob("*.log")) - before)
    return Run((code, out.out, out.err), launches, [p.read_text() for p in logs])


class _Normalizer:
    """One launch's records, normalized as the module docstring says."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}
        self.listens: set[str] = set()
        self.states: list[Any] = []

    def ours(self, value: Any) -> Any:
        """A request id of codebot's (or a progress token made of one), by order of first use."""
        key = json.dumps(value)
        if value in PROBE_IDS or key in self.listens:
            return value
        return self.ids.setdefault(key, f"#{len(self.ids) + 1}")

    def sent(self, message: dict[str, Any]) -> dict[str, Any] | None:
        method, params = message.get("method"), message.get("params") or {}
        if method == "subscriptions/listen":
            self.listens.add(json.dumps(message["id"]))
            return None
        if method == "notifications/cancelled" and json.dumps(params.get("requestId")) in (
            self.listens
        ):
            return None
        if method is not None and "id" in message:
            message["id"] = self.ours(message["id"])
            meta = params.get("_meta") or {}
            if "progressToken" in meta:
                meta["progressToken"] = self.ours(meta["progressToken"])
            if "requestState" in params:
                assert self.states and params["requestState"] == self.states[-1], "not echoed"
                params["requestState"] = "<state>"
        return message

    def received(self, message: dict[str, Any]) -> dict[str, Any] | None:
        if message.get("method") == "notifications/subscriptions/acknowledged":
            return None
        if "method" not in message and "id" in message:
            if json.dumps(message["id"]) in self.listens:
                return None
            message["id"] = self.ours(message["id"])
            result = message.get("result")
            if isinstance(result, dict) and "requestState" in result:
                self.states.append(result["requestState"])
                result["requestState"] = "<state>"
        return message


def normalized(launch: list[dict[str, Any]]) -> tuple[list[Any], list[Any]]:
    """(what codebot sent, what the server sent), each in its own order."""
    norm = _Normalizer()
    sent: list[Any] = []
    received: list[Any] = []
    for item in launch:
        out = sent if item["dir"] == ">" else received
        if "msg" not in item:
            out.append(item)  # junk, or an oversized line
            continue
        message = json.loads(json.dumps(item["msg"]))
        if not isinstance(message, dict):  # JSON, but not JSON-RPC
            out.append(message)
            continue
        kept = norm.sent(message) if item["dir"] == ">" else norm.received(message)
        if kept is not None:
            out.append(kept)
    return sent, received


def assert_same_wire(hot: Run, sdk: Run) -> None:
    """Everything the module docstring lists, and one call at most (one if any was made)."""
    assert hot.outcome == sdk.outcome
    assert len(sdk.launches) == 1, "the SDK path launched the server more than once"
    *handed_over, last = hot.launches
    for launch in handed_over:  # the hot path gave up: before any call, never after
        assert not [r for r in launch if _method(r) == "tools/call"], "a call before a fallback"
    assert normalized(last) == normalized(sdk.launches[0])
    assert hot.logs[-1:] == sdk.logs[-1:]
    assert len(hot.calls()) == len(sdk.calls())
    starts = [c for c in hot.calls() if "requestState" not in c["params"]]
    assert len(starts) <= 1, "tools/call was sent twice"


def both(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    entry: dict[str, Any],
    *argv: str,
) -> tuple[Run, Run]:
    hot = record(tmp_path, capsys, monkeypatch, entry, list(argv), sdk=False)
    sdk = record(tmp_path, capsys, monkeypatch, entry, list(argv), sdk=True)
    assert_same_wire(hot, sdk)
    return hot, sdk


def chatty(*args: str) -> dict[str, Any]:
    return server_entry("chatty", *args, env={"CHATTY_TOKEN": SECRET}, timeout=20)


CALL = ["mcp", "call", "--no-warm", "s"]


@pytest.mark.parametrize("era", ["legacy", "modern", "silent"])
def test_a_plain_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, era: str
) -> None:
    """Handshake era, 2026-07-28, and a server that ignores ``server/discover``."""
    hot, _ = both(tmp_path, capsys, monkeypatch, chatty("--era", era), *CALL, "echo", "text=hi")
    assert hot.outcome == (0, "hi\n", "")
    assert len(hot.launches) == 1 and len(hot.calls()) == 1
    # Both paths sent the same (asserted above): both declare what the wire module says.
    sent = {r["msg"].get("method"): r["msg"] for r in hot.launches[0] if r["dir"] == ">"}
    envelope = sent["server/discover"]["params"]["_meta"]
    assert envelope[wire.CLIENT_CAPABILITIES_KEY] == wire.MODERN_CAPABILITIES
    assert envelope[wire.CLIENT_INFO_KEY] == wire.client_info()
    if era == "modern":
        assert "initialize" not in sent
    else:
        assert sent["initialize"]["params"]["capabilities"] == wire.CLIENT_CAPABILITIES


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_log_messages_reach_the_servers_log_as_on_the_sdk_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, era: str
) -> None:
    """During the handshake and during the call; scrubbed; a malformed one dropped by both."""
    entry = chatty("--era", era, "--log-at-start")
    hot, _ = both(tmp_path, capsys, monkeypatch, entry, *CALL, "log", "count=9")
    assert hot.outcome[:2] == (0, "logged 9\n")
    log = hot.logs[-1]
    assert "[info chatty] started\n" in log
    assert "[debug chatty] line 0\n" in log
    assert '[info] {"i": 1, "text": "two\\nlines", "token": "***"}\n' in log
    assert SECRET not in log and "loud" not in log
    assert log.count("\n") == 10


def test_log_messages_during_mcp_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    hot, _ = both(tmp_path, capsys, monkeypatch, chatty("--log-at-start"), "mcp", "list")
    assert hot.logs[-1] == "[info chatty] started\n"


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_an_oversized_answer_fails_the_call_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, era: str
) -> None:
    hot, _ = both(tmp_path, capsys, monkeypatch, chatty("--era", era), *CALL, "huge", "mb=40")
    assert hot.outcome[0] == 4 and "larger than 32 MB" in hot.outcome[2]
    assert [r["size"] > 32 * 2**20 for r in hot.launches[0] if "size" in r] == [True]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_junk_lines_during_a_call_are_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, era: str
) -> None:
    hot, _ = both(tmp_path, capsys, monkeypatch, chatty("--era", era), *CALL, "junk")
    assert hot.outcome == (0, "after junk\n", "")
    assert len(hot.launches) == 1


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_result_the_sdk_rejects_is_rejected_in_the_same_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, era: str
) -> None:
    hot, _ = both(tmp_path, capsys, monkeypatch, chatty("--era", era), *CALL, "bad_block")
    assert hot.outcome[0] == 4
    assert "sent a result that does not follow the MCP schema" in hot.outcome[2]


@pytest.mark.parametrize("tool", ["ask", "sample"])
def test_server_requests_during_a_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tool: str
) -> None:
    """roots/list, elicitation/create and sampling/createMessage mid-call (handshake era):
    answered by the default policy, in the same words."""
    hot, _ = both(tmp_path, capsys, monkeypatch, chatty(), *CALL, tool)
    answers = [r["msg"] for r in hot.launches[0] if r["dir"] == ">" and "method" not in r["msg"]]
    assert len(answers) == (2 if tool == "ask" else 1)
    assert len(hot.launches) == 1


@pytest.mark.parametrize(
    "args", [("--era", "legacy"), ("--handshake-version", "2024-11-05"), ("--era", "modern")]
)
def test_plain_server_requests_during_a_call_pass_the_sdks_version_gate(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    args: tuple[str, str],
) -> None:
    """``ping``, ``roots/list``, a form and an unknown method asked mid-call: answered as the
    SDK path's session answers them (its version gate: no elicitation at 2024-11-05, no plain
    request at 2026-07-28; ``"data"`` naming an unknown method), the wire equal."""
    hot, _ = both(tmp_path, capsys, monkeypatch, chatty(*args), *CALL, "ask_plain")
    assert hot.outcome[0] == 0
    got = json.loads(hot.outcome[1])
    assert got[3] == {"code": -32601, "message": "Method not found", "data": "chatty/unknown"}
    refused = [g.get("code") == -32601 for g in got[:3]]
    if args[1] == "modern":
        assert refused == [True, True, True]
    else:
        assert refused == [False, False, args[1] == "2024-11-05"]
    assert len(hot.launches) == 1


@pytest.mark.parametrize(("tool", "calls"), [("ask", 2), ("sample", 1), ("wait_state", 2)])
def test_input_required_rounds_are_answered_without_calling_again(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tool: str,
    calls: int,
) -> None:
    """An ``InputRequiredResult`` (SEP-2322): the hot path answers and retries as the SDK's
    driver does (a refused sampling ends the call; a state-only round waits, then retries);
    it never hands the call to the SDK path, which would call the tool again from scratch."""
    hot, _ = both(tmp_path, capsys, monkeypatch, chatty("--era", "modern"), *CALL, tool)
    assert len(hot.launches) == 1
    assert len(hot.calls()) == calls


@pytest.mark.parametrize(
    ("tool", "protocol"),
    [
        ("ask_name", "auto"),
        ("ask_color", "auto"),
        ("roots", "auto"),
        ("summarize", "auto"),
        ("ask_name", "legacy"),
        ("visit", "legacy"),
        ("summarize", "legacy"),
    ],
)
def test_an_sdk_built_server_that_asks(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tool: str,
    protocol: str,
) -> None:
    """``asker`` (the SDK's ``MCPServer``): input rounds at 2026-07-28, requests mid-call in
    the handshake era."""
    args = ["text=x"] if tool == "summarize" else []
    entry = server_entry("asker", protocol=protocol)
    hot, _ = both(tmp_path, capsys, monkeypatch, entry, *CALL, tool, *args)
    assert len(hot.launches) == 1


@pytest.mark.parametrize("argv", [[*CALL, "echo", "text=x"], ["mcp", "list"]], ids=["call", "list"])
def test_a_listing_the_sdk_rejects_is_handed_over_on_the_same_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: Any
) -> None:
    """A 2026-07-28 ``tools/list`` without its cache hints: the SDK's model refuses it. The
    hot path hands the running process over with its ``server/discover`` result; the SDK
    path lists again on it and words the failure: one launch, one discover, nothing called.
    On the wire: the SDK path's messages, and the hot path's one listing before them."""
    entry = chatty("--era", "modern", "--no-cache-hints")
    hot = record(tmp_path, capsys, monkeypatch, entry, argv, sdk=False)
    sdk = record(tmp_path, capsys, monkeypatch, entry, argv, sdk=True)
    assert hot.outcome == sdk.outcome
    assert hot.outcome[0] == 4 and "list failed" in hot.outcome[1] + hot.outcome[2]
    assert len(hot.launches) == len(sdk.launches) == 1 and not hot.calls()
    sent = [_method(r) for r in hot.launches[0] if r.get("dir") == ">"]
    sdk_sent = [_method(r) for r in sdk.launches[0] if r.get("dir") == ">"]
    assert sent.count("server/discover") == 1 and "initialize" not in sent
    assert sorted(map(str, sent)) == sorted(map(str, [*sdk_sent, "tools/list"]))


@pytest.mark.parametrize(
    ("flag", "code"), [("--odd-listing", 0), ("--refuse-initialize", 4)], ids=["listing", "refused"]
)
@pytest.mark.parametrize("argv", [[*CALL, "echo", "text=x"], ["mcp", "list"]], ids=["call", "list"])
def test_a_handshake_era_server_is_handed_over_with_its_initialize_answer(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    flag: str,
    code: int,
    argv: Any,
) -> None:
    """A handshake-era server whose listing only the SDK's model reads (``readOnlyHint: 1``),
    or whose ``initialize`` fails: the hot path hands the process over with the answer to its
    ``initialize``, which is replayed to the SDK's own; the SDK path goes on (lists, calls, or
    words the failure) on the one launch, with one ``initialize`` on the wire."""
    entry = chatty(flag)
    hot = record(tmp_path, capsys, monkeypatch, entry, argv, sdk=False)
    sdk = record(tmp_path, capsys, monkeypatch, entry, argv, sdk=True)
    assert hot.outcome == sdk.outcome and hot.outcome[0] == code
    assert len(hot.launches) == len(sdk.launches) == 1
    assert len(hot.calls()) == len(sdk.calls())
    sent = [_method(r) for r in hot.launches[0] if r.get("dir") == ">"]
    assert sent.count("initialize") == 1
    assert sent.count("notifications/initialized") == (1 if code == 0 else 0)


def test_a_handed_over_server_that_dies_during_the_call_ends_it_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that dies during the call on a handed-over handshake-era process: the call
    fails as closed, in the SDK path's words, on the one launch, not after its timeout."""
    entry = {**chatty("--odd-listing"), "tool_timeout": 30}
    started = time.monotonic()
    hot = record(tmp_path, capsys, monkeypatch, entry, [*CALL, "die"], sdk=False)
    assert time.monotonic() - started < 15
    sdk = record(tmp_path, capsys, monkeypatch, entry, [*CALL, "die"], sdk=True)
    assert hot.outcome == sdk.outcome and hot.outcome[0] == 4
    assert "closed the connection during 'die'" in hot.outcome[2]
    assert len(hot.launches) == len(sdk.launches) == 1 and len(hot.calls()) == 1


def test_a_server_that_advertises_tasks_is_handed_over_on_the_same_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 2026-07-28 server that offers tasks: the SDK path takes the call over on the process
    the hot path launched, adopting its ``server/discover`` result (one launch, one discover,
    one call), with the SDK path's outcome."""
    argv = [*CALL, "greet", "name=x"]
    hot = record(tmp_path, capsys, monkeypatch, server_entry("tasker"), argv, sdk=False)
    sdk = record(tmp_path, capsys, monkeypatch, server_entry("tasker"), argv, sdk=True)
    assert hot.outcome == sdk.outcome == (0, "Hello, x!\n", "")
    assert len(hot.launches) == 1 and len(hot.calls()) == 1
    sent = [_method(r) for r in hot.launches[0] if r.get("dir") == ">"]
    assert sent.count("server/discover") == 1 and "initialize" not in sent


def test_junk_during_the_handshake_is_skipped_as_the_sdk_path_skips_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plain text, broken JSON and JSON that is not JSON-RPC before the call: skipped as the
    SDK path's transport skips them, on the one launch (nothing is handed over)."""
    entry = server_entry("garbage_stdout")
    hot, _ = both(tmp_path, capsys, monkeypatch, entry, *CALL, "echo", "text=x")
    assert hot.outcome[0] == 0
    assert len(hot.launches) == 1 and len(hot.calls()) == 1


@pytest.mark.parametrize(
    "entry",
    [
        pytest.param(lambda: server_entry("echo_sdk"), id="sdk-built-2026"),
        pytest.param(lambda: server_entry("echo_sdk", protocol="legacy"), id="sdk-built-legacy"),
        pytest.param(lambda: server_entry("silent_discover"), id="drops-discover"),
        pytest.param(lambda: everything_entry(), id="server-everything"),
    ],
)
def test_list_and_call_published_and_sdk_built_servers(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    entry: Any,
) -> None:
    hot, _ = both(tmp_path, capsys, monkeypatch, entry(), "mcp", "list", "--schemas")
    assert hot.outcome[0] == 0 and len(hot.launches) == 1


@pytest.mark.parametrize(
    ("entry", "call"),
    [
        pytest.param(lambda: server_entry("echo_sdk"), ["echo", "text=hi"], id="sdk-built-2026"),
        pytest.param(
            lambda: server_entry("echo_sdk", protocol="legacy"),
            ["add", "a=1", "b=2", "--json"],
            id="sdk-built-legacy",
        ),
        pytest.param(lambda: server_entry("silent_discover"), ["hello"], id="drops-discover"),
        pytest.param(lambda: everything_entry(), ["echo", "message=hi"], id="everything-text"),
        pytest.param(
            lambda: everything_entry(), ["get-tiny-image", "--json"], id="everything-image"
        ),
    ],
)
def test_calls_to_published_and_sdk_built_servers(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    entry: Any,
    call: list[str],
) -> None:
    hot, _ = both(tmp_path, capsys, monkeypatch, entry(), *CALL, *call)
    assert hot.outcome[0] == 0 and len(hot.launches) == 1 and len(hot.calls()) == 1


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_an_unknown_tool_is_worded_after_one_launch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, era: str
) -> None:
    """A tool name the listing does not have, found after the handshake: the hot path words
    the usage error itself (close matches), as the SDK path does; the server starts once."""
    hot, _ = both(tmp_path, capsys, monkeypatch, chatty("--era", era), *CALL, "ech", "text=x")
    assert hot.outcome[0] == 2 and "has no tool 'ech'" in hot.outcome[2]
    assert "Did you mean echo" in hot.outcome[2]
    assert len(hot.launches) == 1 and not hot.calls()


def _server_tail_only(outcome: tuple[int, str, str]) -> tuple[int, str, str]:
    """The stderr tail cut after the server's own line: the wiretap's dying words that may
    follow (a Python interpreter's, with memory addresses) come or not as the pipes close."""
    code, out, err = outcome
    own = r"(\(this is a test server\)\n)(?:    .*\n)*"
    return code, re.sub(own, r"\1", out), re.sub(own, r"\1", err)


@pytest.mark.parametrize("argv", [["mcp", "list"], [*CALL, "echo", "text=x"]], ids=["list", "call"])
def test_a_server_that_dies_at_start_is_launched_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: Any
) -> None:
    """A server that closes the connection during the handshake: the hot path records the
    failure as the SDK path does (stage, message, hint, the stderr tail), on its one launch."""
    entry = server_entry("crash_on_start")
    hot = record(tmp_path, capsys, monkeypatch, entry, argv, sdk=False)
    sdk = record(tmp_path, capsys, monkeypatch, entry, argv, sdk=True)
    assert _server_tail_only(hot.outcome) == _server_tail_only(sdk.outcome)
    code, out, err = hot.outcome
    assert code == 4 and "handshake failed: the server closed the connection" in out + err
    assert "database connection refused" in out + err
    assert len(hot.launches) == len(sdk.launches) == 1


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("argv", [[*CALL, "echo", "text=x"], ["mcp", "list"]], ids=["call", "list"])
def test_server_requests_before_the_call_are_answered_on_the_one_launch(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    era: str,
    argv: Any,
) -> None:
    """A server that asks before the call (a form, sampling, a form without its schema, an
    unknown method): the hot path answers each as the SDK path's session does (its version
    gate, its model, then the default policy; sampling refused in the command's words), on
    the one launch, the wire and the server's log equal."""
    hot, _ = both(tmp_path, capsys, monkeypatch, chatty("--era", era, "--ask-first"), *argv)
    assert hot.outcome[0] == 0
    assert len(hot.launches) == 1
    answers = [r["msg"] for r in hot.launches[0] if r["dir"] == ">" and "method" not in r["msg"]]
    assert len(answers) == 4


def test_a_discover_answer_of_handshake_era_versions_goes_on_with_initialize(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A handshake-era server that answers ``server/discover`` with its own versions: the hot
    path sends ``initialize`` on the same connection, as the SDK does; the wire is equal."""
    entry = chatty("--discover-shape", "legacy")
    hot, _ = both(tmp_path, capsys, monkeypatch, entry, *CALL, "echo", "text=x")
    assert hot.outcome[0] == 0 and len(hot.launches) == 1
    sent = [_method(r) for r in hot.launches[0] if r.get("dir") == ">"]
    assert sent.count("server/discover") == sent.count("initialize") == 1


@pytest.mark.parametrize("argv", [[*CALL, "echo", "text=x"], ["mcp", "list"]], ids=["call", "list"])
def test_a_discover_answer_only_the_sdk_reads_is_handed_over_on_the_same_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: Any
) -> None:
    """A 2026-07-28 ``server/discover`` answer without the server's info: the hot path hands
    the process over once the probe's requests are answered, and the SDK path makes its own
    handshake on it: one launch, the SDK path's outcome, its messages after the hot path's
    probe."""
    entry = chatty("--era", "modern", "--discover-shape", "bare")
    hot = record(tmp_path, capsys, monkeypatch, entry, argv, sdk=False)
    sdk = record(tmp_path, capsys, monkeypatch, entry, argv, sdk=True)
    assert hot.outcome == sdk.outcome
    assert len(hot.launches) == len(sdk.launches) == 1
    assert len(hot.calls()) == len(sdk.calls())
    sent = [_method(r) for r in hot.launches[0] if r.get("dir") == ">"]
    sdk_sent = [_method(r) for r in sdk.launches[0] if r.get("dir") == ">"]
    probe = ["server/discover", wire.UNKNOWN_METHOD, "ping"]
    assert sorted(map(str, sent)) == sorted(map(str, [*sdk_sent, *probe]))
