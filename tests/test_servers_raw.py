"""The raw test servers (``tests/servers/_era.py``: no SDK, a twentieth of the start-up CPU)
answer as the SDK-built servers they replaced did: ``echo`` against ``echo_sdk`` live, the others
against the SDK versions' recorded answers in ``tests/servers/golden/``; and they import the
standard library alone."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.servers.talk import ENVELOPE, conversation
from tests.servers.util import REPO_ROOT

pytestmark = pytest.mark.anyio

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("echo", {"text": "hi"}),
    ("echo", {}),
    ("echo", {"text": 5}),
    ("echo", {"text": "x", "extra": 1}),
    ("add", {"a": 1, "b": 2}),
    ("add", {"a": "3", "b": 2.0}),
    ("add", {"a": 1.5, "b": "x"}),
    ("fail", {"message": "boom"}),
    ("read_notes", {}),
    ("delete_note", {"id": "1"}),
    ("fetch_url", {"url": "http://x"}),
    ("mystery", {}),
    ("image", {}),
    ("link", {}),
    ("embedded", {}),
    ("binary", {}),
    ("big", {"size": 5}),
    ("big", {"size": -1}),
    ("sleep", {"seconds": 0.01}),
    ("sleep", {"seconds": "0"}),
    ("env", {"name": "CODEBOT_NO_SUCH_VARIABLE"}),
    ("nope", {}),
]


@pytest.mark.parametrize("era", ["2026-07-28", "handshake"])
def test_the_raw_echo_answers_as_the_sdk_echo_does(era: str) -> None:
    """tests.servers.echo (no SDK, fast) stands in for tests.servers.echo_sdk: every answer to
    the same conversation is the same JSON, validation messages and envelopes included."""
    if era == "handshake":
        script: list[dict[str, Any]] = [
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            },
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
        ]
        extra = ["ping", "logging/setLevel", "nope/x"]
        wrap = lambda params: params  # noqa: E731
    else:
        script = [
            {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": ENVELOPE}}
        ]
        extra = ["ping", "nope/x"]
        wrap = lambda params: {**params, "_meta": ENVELOPE}  # noqa: E731
    methods = ["tools/list", "prompts/list", "resources/list", "resources/templates/list", *extra]
    methods += [
        "prompts/get",
        "resources/read",
        "tools/call",
    ]  # no such prompt or resource; no name
    given = {"logging/setLevel": {"level": "info"}, "prompts/get": {"name": "x"}}
    given["resources/read"] = {"uri": "file:///x"}
    for i, method in enumerate(methods):
        params = given.get(method, {})
        script.append({"jsonrpc": "2.0", "id": 10 + i, "method": method, "params": wrap(params)})
    for i, (name, arguments) in enumerate(CALLS):
        params = wrap({"name": name, "arguments": arguments})
        script.append({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call", "params": params})
    sdk = conversation("echo_sdk", script)
    raw = conversation("echo", script)
    assert len(sdk) == len(script) - (1 if era == "handshake" else 0)
    assert raw == sdk


GOLDEN = REPO_ROOT / "tests" / "servers" / "golden"
GOLDEN_CASES = [
    pytest.param(path, index, id=f"{path.stem}-{case['era']}-{index}")
    for path in sorted(GOLDEN.glob("*.json"))
    for index, case in enumerate(json.loads(path.read_text(encoding="utf-8"))["cases"])
]


def _fill(value: Any, tmp: str, port: int) -> Any:
    """``value`` with ``"{tmp}"`` (in strings) and ``"{port}"`` (a whole string) filled in."""
    if isinstance(value, str):
        return port if value == "{port}" else value.replace("{tmp}", tmp)
    if isinstance(value, list):
        return [_fill(item, tmp, port) for item in value]
    if isinstance(value, dict):
        return {key: _fill(item, tmp, port) for key, item in value.items()}
    return value


def _with_envelope(message: dict[str, Any], envelope: dict[str, Any]) -> dict[str, Any]:
    """A 2026-07-28 request: the recording left the envelope out of every request's ``_meta``."""
    if "id" not in message or "method" not in message:
        return message
    params = message.get("params") or {}
    return {**message, "params": {**params, "_meta": {**envelope, **params.get("_meta", {})}}}


@pytest.mark.parametrize(("path", "index"), GOLDEN_CASES)
def test_a_raw_server_answers_as_its_sdk_original_did(
    path: Path, index: int, tmp_path: Path
) -> None:
    """Each raw server with a file in ``tests/servers/golden/`` replaced one built on the SDK,
    whose answers to scripted conversations in both eras were recorded there: what was sent,
    every message that came back up to each answer (2026-07-28 requests are stored without
    the envelope, which is put back), the SHA-256 of its stderr (the SDK's own log lines left
    out) and its exit code. The raw server must give the same JSON, message for message: tool
    lists with their schemas, results, errors, log and progress notifications, list_changed
    on listen streams; and the same stderr.

    Recorded once from the SDK-built originals (mcp 2.3.0), never from the raw servers:
    recording the raw ones would make this test unable to fail."""
    import queue
    import socket
    import subprocess
    import threading

    data = json.loads(path.read_text(encoding="utf-8"))
    case = data["cases"][index]
    for name, text in case.get("files", {}).items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    with socket.socket() as listener:  # connect(port) finds someone listening
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        fill = lambda value: _fill(value, str(tmp_path), port)  # noqa: E731
        env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/"), **fill(case["env"])}
        stderr_path = tmp_path / "stderr"
        with open(stderr_path, "wb") as stderr:
            proc = subprocess.Popen(
                [sys.executable, "-m", f"tests.servers.{data['server']}", *fill(case["args"])],
                cwd=REPO_ROOT,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
            )
        assert proc.stdin is not None and proc.stdout is not None
        lines: queue.Queue[bytes] = queue.Queue()
        reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout])
        reader.start()
        try:
            for number, step in enumerate(case["steps"]):
                if "send" in step:
                    message = fill(step["send"])
                    if case["era"] != "handshake":
                        message = _with_envelope(message, data["envelope"])
                    proc.stdin.write(json.dumps(message).encode() + b"\n")
                    proc.stdin.flush()
                    continue
                if step.get("close"):
                    proc.stdin.close()
                got = []
                for _ in step["expect"]:
                    try:
                        got.append(json.loads(lines.get(timeout=15)))
                    except queue.Empty:
                        break
                assert got == fill(step["expect"]), f"step {number} of {path.name} #{index}"
            assert proc.wait(15) == case["exit_code"]
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            reader.join(15)
            proc.stdout.close()
    assert lines.empty(), f"more than the original said: {lines.get()!r}"
    stderr_lines = stderr_path.read_text(encoding="utf-8", errors="replace").splitlines()
    said = "\n".join(line.replace(str(tmp_path), "{tmp}") for line in stderr_lines)
    heads = [line[:100] for line in stderr_lines]
    assert hashlib.sha256(said.encode()).hexdigest() == case["stderr_sha256"], heads


@pytest.mark.parametrize(
    ("server", "args"),
    [
        ("echo", []),
        ("hostile", []),
        ("many_tools", []),
        ("mutating", []),
        ("rugpull", []),
        ("toucher", []),
        ("fetcher", []),
        ("pictures", []),
        ("slow_start", ["--delay", "0"]),
        ("stderr_flood", ["--megabytes", "0"]),
    ],
)
def test_a_raw_server_imports_only_the_standard_library(server: str, args: list[str]) -> None:
    """What makes them start in a twentieth of the SDK's time: no ``mcp``, ``pydantic`` or
    ``anyio``. Run without site-packages (``-S``: importing one would fail), and ``-X
    importtime`` lists every module imported before stdin ends."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-S", "-X", "importtime", "-m", f"tests.servers.{server}", *args],
        cwd=REPO_ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    imported = {
        line.rsplit("|", 1)[1].strip().split(".")[0]
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and not line.endswith("| imported package")
    }
    assert "tests" in imported  # the listing is really there
    assert sorted(imported - set(sys.stdlib_module_names) - {"tests"}) == []
