"""The SDK-free hot path (:mod:`mcpbridge.calls.lite`) against the SDK path, with real servers.

Every case runs ``mcp list``/``mcp call`` twice in process, once on the hot path and once with
``CODEBOT_SDK_PATH=1`` (the SDK's ``Client`` and models), and compares exit code, stdout and
stderr byte for byte (``handshake_ms`` aside). The constants of :mod:`mcpbridge.transport.wire`
are checked against the SDK's own. What both paths send and receive on the wire, the
servers' log files and the number of calls are compared in ``test_lite_wire.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run
from codebot_mcp.core.config.servers import LOG_LEVELS
from codebot_mcp.core.tools.useragent import Policy
from codebot_mcp.mcpbridge.calls import lite, lite_wire
from codebot_mcp.mcpbridge.connection import requests
from codebot_mcp.mcpbridge.transport import wire
from tests.helpers import everything_entry, server_entry, write_settings
from tests.servers.util import REPO_ROOT

SERVERS: dict[str, dict[str, Any]] = {
    # The raw echo answers as the SDK-built echo_sdk does in both eras (tests/test_servers_raw.py
    # holds them to the same answers) for a thirtieth of the start-up CPU; test_lite_wire.py
    # lists and calls echo_sdk itself in both eras, comparing the wire, logs and call counts.
    "echo": server_entry("echo"),
    "faulty": server_entry("faulty"),  # raw, handshake era only
    "many": server_entry("many_raw", "--count", "120", "--page-size", "50"),  # pagination
    "garbage": server_entry("garbage_stdout"),  # junk lines: falls back to the SDK path
    "legacy": server_entry("echo", protocol="legacy"),
}


def both(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *argv: str
) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
    results = []
    for sdk in ("", "1"):
        monkeypatch.setenv("CODEBOT_SDK_PATH", sdk)
        code = run(list(argv))
        out = capsys.readouterr()
        results.append((code, out.out, out.err))
    return results[0], results[1]


def without_timing(text: str) -> Any:
    data = json.loads(text)
    for server in data["servers"]:
        server.pop("handshake_ms", None)
        if server.get("failure"):  # each run logs to a file of its own
            assert Path(server["failure"].pop("log_file")).parent.name == server["name"]
    return data


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_settings(tmp_path, {"mcp_servers": {**SERVERS, "everything": everything_entry()}})
    return tmp_path


def test_constants_match_the_sdk() -> None:
    """The wire module's copies of the SDK's constants (it must not import the SDK)."""
    import mcp_types as types
    from mcp.client import _input_required
    from mcp_types import version

    assert wire.MODERN_VERSION == version.LATEST_MODERN_VERSION
    assert (wire.MODERN_VERSION,) == version.MODERN_PROTOCOL_VERSIONS
    assert wire.LEGACY_VERSION == version.LATEST_HANDSHAKE_VERSION
    assert wire.LEGACY_VERSIONS == version.HANDSHAKE_PROTOCOL_VERSIONS
    assert wire.METHOD_NOT_FOUND == types.METHOD_NOT_FOUND
    assert wire.INVALID_PARAMS == types.INVALID_PARAMS
    assert wire.INTERNAL_ERROR == types.INTERNAL_ERROR
    assert wire.CONNECTION_CLOSED == types.CONNECTION_CLOSED
    assert wire.REQUEST_TIMEOUT == types.REQUEST_TIMEOUT
    assert wire.HEADER_MISMATCH == types.HEADER_MISMATCH
    assert wire.UNSUPPORTED_VERSION == types.UNSUPPORTED_PROTOCOL_VERSION
    assert LOG_LEVELS == typing.get_args(types.LoggingLevel)
    assert lite_wire.STATE_ONLY_PAUSE == (
        _input_required._STATE_ONLY_BACKOFF_INITIAL_SECONDS,
        _input_required._STATE_ONLY_BACKOFF_CAP_SECONDS,
    )
    assert (
        wire.MAX_INPUT_ROUNDS
        == requests.ServerRequests("s", Policy()).callbacks()["input_required_max_rounds"]
    )


def test_the_wire_module_imports_no_sdk() -> None:
    code = (
        "import sys; import codebot_mcp.mcpbridge.transport.wire; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('mcp', 'mcp_types', 'pydantic', 'pydantic_core')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


@pytest.mark.parametrize("server", [*SERVERS, "everything"])
def test_list_text_is_identical(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    server: str,
) -> None:
    hot, sdk = both(capsys, monkeypatch, "--cwd", str(project), "mcp", "list", "-s", server)
    assert hot == sdk
    assert hot[0] == 0


def test_list_json_with_schemas_is_identical_for_all_servers(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    hot, sdk = both(
        capsys, monkeypatch, "--cwd", str(project), "mcp", "list", "--json", "--schemas"
    )
    assert (hot[0], hot[2]) == (sdk[0], sdk[2])
    assert without_timing(hot[1]) == without_timing(sdk[1])


@pytest.mark.parametrize(
    "call",
    [
        ["echo", "echo", "text=hi"],
        ["echo", "add", "a=1", "b=2", "--json"],  # structured content, output schema
        ["legacy", "add", "a=1", "b=2", "--json"],
        ["faulty", "echo", "text=x", "--json"],
        ["faulty", "bad_bytes"],  # not UTF-8: exit 4, same words
        ["faulty", "huge", "mb=40"],  # over the message size limit
        ["faulty", "storm", "count=50"],  # list_changed notifications during the call
        ["faulty", "nope"],  # unknown tool: close matches, exit 2
        ["faulty", "echo", "text=1", "extra"],  # bad arguments: exit 2
        ["faulty", "die"],  # the server exits during the call
        ["everything", "echo", "message=hi"],
        ["everything", "get-tiny-image", "--json"],  # an image block: through the SDK model
        ["everything", "get-resource-links", "--json"],
        ["everything", "get-structured-content", "location=Chicago", "--json"],
        ["everything", "get-annotated-message", "messageType=error", "--json"],
        ["garbage", "echo", "text=x"],
    ],
    ids=lambda c: "-".join(c[:2]),
)
def test_call_is_identical(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    call: list[str],
) -> None:
    hot, sdk = both(capsys, monkeypatch, "--cwd", str(project), "mcp", "call", "--no-warm", *call)
    assert hot == sdk


def test_timeouts_and_launch_failures_fall_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_settings(
        tmp_path,
        {
            "mcp_servers": {
                "hang": server_entry("hang", timeout=1),
                "missing": {"command": "no-such-command-xyz"},
                "crash": server_entry("crash_on_start"),
            }
        },
    )
    hot, sdk = both(capsys, monkeypatch, "--cwd", str(tmp_path), "mcp", "list")
    assert hot == sdk and hot[0] == 4


def test_a_handshake_timeout_is_reported_as_the_sdk_path_reports_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hot path records the timeout itself (no second wait on the SDK path)."""
    write_settings(
        tmp_path,
        {"mcp_servers": {"hang": server_entry("hang", timeout=1), "faulty": SERVERS["faulty"]}},
    )
    hot, sdk = both(capsys, monkeypatch, "--cwd", str(tmp_path), "mcp", "list")
    assert hot == sdk and hot[0] == 4 and "no answer within 1 s" in hot[1]
    hot, sdk = both(capsys, monkeypatch, "--cwd", str(tmp_path), "mcp", "list", "--json")
    assert without_timing(hot[1]) == without_timing(sdk[1])
    hot, sdk = both(capsys, monkeypatch, "--cwd", str(tmp_path), "mcp", "call", "hang", "x")
    assert hot == sdk and hot[0] == 4


def test_the_hot_path_imports_no_sdk(project: Path) -> None:
    code = (
        "import sys; from cli.app import run; "
        f"rc = run(['--cwd', {str(project)!r}, 'mcp', 'call', '--no-warm', 'faulty', 'echo', "
        "'text=x']); "
        "print(rc, sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', "
        "'mcp_types', 'pydantic'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip().splitlines()[-1] == "0 []", done.stdout + done.stderr


def test_http_and_pinned_servers_are_not_for_the_hot_path() -> None:
    from codebot_mcp.core.config.servers import parse_server

    def config(entry: dict[str, Any]) -> Any:
        return parse_server("s", entry, Path("/x/settings.json"), {}, Path("/x"))

    assert not lite.usable({"s": config({"url": "http://127.0.0.1:1/mcp"})})
    assert not lite.usable({"s": config({"command": "x", "enabled": False})})
    assert lite.usable({"s": config({"command": "x"})})
    assert not lite.usable({})


@pytest.mark.parametrize("mode", ["string-result", "no-result", "bad-error", "not-jsonrpc"])
def test_a_malformed_call_answer_is_the_calls_error_and_the_tool_runs_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """Once ``tools/call`` is sent the hot path never falls back: the SDK path would run the
    tool a second time (a call is not idempotent). A broken answer is that call's error."""
    count = tmp_path / "calls"
    entry = server_entry("malformed_call", "--answer", mode, "--count", str(count), timeout=5)
    write_settings(tmp_path, {"mcp_servers": {"m": {**entry, "tool_timeout": 5}}})
    monkeypatch.setenv("CODEBOT_SDK_PATH", "")
    code = run(["--cwd", str(tmp_path), "mcp", "call", "--no-warm", "m", "act"])
    err = capsys.readouterr().err
    assert count.read_text() == "call\n", "the tool ran more than once (or never)"
    assert code == 4, err
    assert "'act' failed: server 'm' sent an answer to the call that is not valid JSON-RPC" in err


def test_a_server_that_cannot_start_is_worded_without_the_sdk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A launch failure is recorded by the hot path as the SDK path records it (the same
    words, the same exit codes), and nothing is launched or imported a second time."""
    servers = {"missing": {"command": "no-such-command-xyz"}, "faulty": SERVERS["faulty"]}
    write_settings(tmp_path, {"mcp_servers": servers})
    where = ["--cwd", str(tmp_path)]
    for argv in (["mcp", "list"], ["mcp", "list", "--json"], ["mcp", "call", "missing", "x"]):
        hot, sdk = both(capsys, monkeypatch, *where, *argv)
        assert (hot[0], hot[2]) == (sdk[0], sdk[2]) and hot[0] == 4
        if "--json" in argv:  # the handshake's time is the run's own
            views = [json.loads(out)["servers"] for out in (hot[1], sdk[1])]
            for view in (v for side in views for v in side):
                view.pop("handshake_ms")
            assert views[0] == views[1]
        else:
            assert hot[1] == sdk[1]
    monkeypatch.delenv("CODEBOT_SDK_PATH")  # the hot path again, in a fresh process
    code = (
        "import sys; from cli.app import run; "
        f"rc = run(['--cwd', {str(tmp_path)!r}, 'mcp', 'list']); "
        "print(rc, sorted(m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip().splitlines()[-1] == "4 []", done.stdout + done.stderr


def test_mcp_list_hands_one_server_over_and_lists_the_rest_itself(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``mcp list`` with a 2026-07-28 server whose listing only the SDK's model reads (no
    cache hints) beside plain ones: that one is handed over on its process, the others are
    shown as the hot path listed them; the same output as the SDK path, in the same order."""
    odd = server_entry("chatty", "--era", "modern", "--no-cache-hints")
    write_settings(
        tmp_path, {"mcp_servers": {"a": SERVERS["echo"], "m": odd, "z": SERVERS["faulty"]}}
    )
    hot, sdk = both(capsys, monkeypatch, "--cwd", str(tmp_path), "mcp", "list")
    assert hot == sdk and hot[0] == 4 and "list failed" in hot[1]
    assert hot[1].index("✓ a") < hot[1].index("✗ m") < hot[1].index("✓ z")
    hot, sdk = both(capsys, monkeypatch, "--cwd", str(tmp_path), "mcp", "list", "--json")
    assert without_timing(hot[1]) == without_timing(sdk[1])
