"""The raw task server (``tests.servers.tasker`` on stdio, no SDK) answers as the same server on
the SDK's ``MCPServer`` does (``--sdk``): every answer of one conversation, in both eras and
with ``--rude``, and the request log, are the same JSON once task ids and times are masked.

Both carry the same task logic (``TaskBook``); what this holds equal is what the raw transport
does by hand: ``server/discover`` with the extension, the tool list and its schemas, argument
checks, ``CreateTaskResult`` and ``DetailedTask`` as answered, every error shape (-32021,
-32602, -32601, -32600), the handshake era, the envelope. A few facts are checked on their own
too, so that a drift of both at once cannot pass.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.servers.util import REPO_ROOT

TASKS = "io.modelcontextprotocol/tasks"
WAIT_SECONDS = 20.0
"""How long a task may take to reach the status a step waits for."""


@dataclass(frozen=True)
class Until:
    """Send ``message`` again until its answer's ``field`` is ``value``; keep the last answer."""

    field: str
    value: str
    message: dict[str, Any]


@dataclass(frozen=True)
class Marker:
    """Wait until ``wait_forever`` wrote its marker file."""


Step = dict[str, Any] | Until | Marker


def start_tasker(*args: str) -> subprocess.Popen[str]:
    """``python -m tests.servers.tasker <args>`` with its stdin and stdout as text pipes."""
    return subprocess.Popen(
        [sys.executable, "-m", "tests.servers.tasker", *args],
        cwd=REPO_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def envelope(extension: bool) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}}
        if extension
        else {},
    }


def req(
    rid: int, method: str, params: dict[str, Any] | None = None, *, era: str = "modern", **kw: Any
) -> dict[str, Any]:
    """A request; ``ext=True`` declares the extension (2026-07-28)."""
    body = dict(params or {})
    if era == "modern":
        body["_meta"] = envelope(bool(kw.get("ext")))
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": body}


def call(rid: int, name: str, arguments: Any = None, **kw: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return req(rid, "tools/call", params, **kw)


def get(rid: int, task: int) -> dict[str, Any]:
    return req(rid, "tasks/get", {"taskId": f"$task:{task}"}, ext=True)


def until(status: str, rid: int, task: int) -> Until:
    return Until("status", status, get(rid, task))


def update(rid: int, task: int, responses: dict[str, Any]) -> dict[str, Any]:
    params = {"taskId": f"$task:{task}", "inputResponses": responses}
    return req(rid, "tasks/update", params, ext=True)


def cancel(rid: int, task: int, **kw: Any) -> dict[str, Any]:
    return req(rid, "tasks/cancel", {"taskId": f"$task:{task}"}, **kw)


def modern(marker: Path) -> list[Step]:
    t: dict[str, Any] = {"ext": True}
    accept = {"action": "accept", "content": {"confirm": True}}
    return [
        req(1, "server/discover"),
        req(2, "tools/list"),
        # Without the extension: synchronous, checked as pydantic checks, or -32021.
        call(3, "greet", {"name": "x"}),
        call(4, "greet", {"name": "x"}, **t),
        call(5, "slow_compute", {"seconds": 0.01}),
        call(6, "slow_compute", {"seconds": 0, "steps": "2"}),
        call(7, "slow_compute", {"seconds": "x"}),
        call(8, "confirm_delete", {"path": "a"}),
        call(9, "multi_input"),
        call(10, "required_task"),
        call(11, "failing_job"),
        call(12, "test_tool_with_task"),
        call(13, "protocol_error_job"),
        call(14, "nope"),
        call(15, "nope", **t),
        call(16, "greet", {}),
        call(17, "slow_compute", {"steps": 1}),  # a default stands as it is: 1, not 1.0
        # Tasks: created, polled, cancelled.
        call(20, "slow_compute", {"seconds": 0.05}, **t),
        until("completed", 21, 20),
        call(22, "slow_compute", {"seconds": 30, "steps": 1}, **t),
        Until("statusMessage", "step 1 of 1", get(23, 22)),
        cancel(24, 22, ext=True),
        get(25, 22),
        cancel(26, 20, ext=True),  # a completed task stays completed
        get(27, 20),
        # Input through tasks/update (an unknown key is ignored).
        call(30, "confirm_delete", {"path": "a.txt"}, **t),
        until("input_required", 31, 30),
        update(32, 30, {"$key:31:0": accept, "bogus": {}}),
        until("completed", 33, 30),
        call(34, "confirm_delete", {"path": "b.txt"}, **t),
        until("input_required", 35, 34),
        update(36, 34, {"$key:35:0": {"action": "decline"}}),
        until("completed", 37, 34),
        call(40, "multi_input", {}, **t),
        until("input_required", 41, 40),
        update(42, 40, {"$key:41:1": {"action": "accept", "content": {"confirm": False}}}),
        get(43, 40),  # the other key is still asked
        update(44, 40, {"$key:41:0": {"action": "accept", "content": {"name": "Ann"}}}),
        until("completed", 45, 40),
        # How tasks end.
        call(50, "failing_job", None, **t),
        call(51, "protocol_error_job", None, **t),
        call(52, "required_task", {}, **t),
        until("completed", 53, 50),
        until("failed", 54, 51),
        until("completed", 55, 52),
        call(60, "test_tool_with_task", {}, **t),
        req(
            61,
            "tools/call",
            {
                "name": "test_tool_with_task",
                "arguments": {},
                "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Bo"}}},
            },
            **t,
        ),
        until("completed", 62, 61),
        call(70, "wait_forever", {"marker": str(marker)}, **t),
        cancel(71, 70, ext=True),
        get(72, 70),
        Marker(),
        # Refusals.
        req(80, "tasks/get", {"taskId": "nope"}, **t),
        req(81, "tasks/get", {"taskId": "$task:20"}),
        req(82, "tasks/get", {}, **t),
        req(83, "tasks/update", {"taskId": "nope"}, **t),
        req(84, "tasks/cancel", {"taskId": "nope"}, **t),
        req(85, "tasks/update", {"taskId": "$task:20"}, **t),
        cancel(86, 20),
        req(87, "tasks/get", {"taskId": 5}, **t),
        req(88, "tasks/update", {"taskId": "$task:20", "inputResponses": []}, **t),
        req(89, "tasks/list", {}, **t),
        req(90, "ping", {}),
        call(91, "slow_compute", None, **t),  # still running at EOF
        {"jsonrpc": "2.0", "id": 92, "method": "tasks/get", "params": {"taskId": "$task:20"}},
        req(93, "tools/call", {"arguments": {}}, **t),
        req(94, "tools/call", {"name": "greet", "arguments": []}, **t),
        req(95, "tools/call", {"name": 5}, **t),
    ]


def handshake(marker: Path) -> list[Step]:
    h: dict[str, Any] = {"era": "handshake"}
    initialize = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"extensions": {TASKS: {}}},
        "clientInfo": {"name": "t", "version": "1"},
    }
    return [
        req(1, "initialize", initialize, **h),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        req(2, "tools/list", **h),
        req(3, "ping", **h),
        call(4, "slow_compute", {"seconds": 0.01}, **h),
        call(5, "required_task", **h),
        call(6, "confirm_delete", {"path": "p"}, **h),
        call(7, "test_tool_with_task", **h),
        call(8, "greet", {"name": "h"}, **h),
        call(9, "nope", **h),
        req(10, "tasks/get", {"taskId": "nope"}, **h),
        req(11, "tasks/cancel", {"taskId": "x"}, **h),
        req(12, "tasks/update", {"taskId": "x", "inputResponses": {}}, **h),
        req(13, "tasks/get", {}, **h),
        req(14, "server/discover"),
        call(15, "slow_compute", {"seconds": 0.01}, ext=True),  # no task on this wire
    ]


def rude(marker: Path) -> list[Step]:
    return [
        req(1, "server/discover"),
        call(2, "slow_compute", {"seconds": 0.01}),
        Until("status", "completed", req(3, "tasks/get", {"taskId": "$task:2"})),
        call(4, "required_task"),
        Until("status", "completed", req(5, "tasks/get", {"taskId": "$task:4"})),
        call(6, "greet", {"name": "r"}),
    ]


def _substitute(value: Any, answers: dict[int, Any]) -> Any:
    """``$task:<id>``: the task id answered to request <id>; ``$key:<id>:<n>``: the n-th
    ``inputRequests`` key (sorted) answered to request <id>."""
    if isinstance(value, dict):
        return {_substitute(k, answers): _substitute(v, answers) for k, v in value.items()}
    if isinstance(value, str) and value.startswith("$task:"):
        return answers[int(value[6:])]["result"]["taskId"]
    if isinstance(value, str) and value.startswith("$key:"):
        _, rid, n = value.split(":")
        return sorted(answers[int(rid)]["result"]["inputRequests"])[int(n)]
    return value


def _wait_for(check: Any, what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.02)


def _talk(args: list[str], script: list[Step], marker: Path) -> list[dict[str, Any]]:
    """The answers of ``python -m tests.servers.tasker <args>`` to ``script``, one at a time."""
    proc = start_tasker(*args)
    assert proc.stdin is not None and proc.stdout is not None
    answers: dict[int, Any] = {}

    def ask(message: dict[str, Any]) -> dict[str, Any]:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(_substitute(message, answers)) + "\n")
        proc.stdin.flush()
        answer: dict[str, Any] = json.loads(proc.stdout.readline())
        return answer

    try:
        for step in script:
            if isinstance(step, Marker):
                _wait_for(marker.exists, "wait_forever wrote its marker")
            elif isinstance(step, Until):
                last: list[dict[str, Any]] = []

                def reached(step: Until = step, last: list[dict[str, Any]] = last) -> bool:
                    last[:] = [ask(step.message)]
                    return bool(last[0].get("result", {}).get(step.field) == step.value)

                _wait_for(reached, f"{step.field} is {step.value}")
                answers[step.message["id"]] = last[0]
            elif "id" in step:
                answers[step["id"]] = ask(step)
            else:
                proc.stdin.write(json.dumps(step) + "\n")
                proc.stdin.flush()
    finally:
        proc.stdin.close()
        proc.wait(10)
        proc.stdout.close()
    return list(answers.values())


def _masked(value: Any, ids: dict[str, str]) -> Any:
    """Task ids (in order of first answer), their input keys and times, masked."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in ("createdAt", "lastUpdatedAt"):
                assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", item), item
                item = "<time>"
            elif key == "taskId" and isinstance(item, str) and re.fullmatch(r"[\w-]{22}", item):
                ids.setdefault(item, f"<task {len(ids)}>")
            out[_masked(key, ids)] = _masked(item, ids)
        return out
    if isinstance(value, list):
        return [_masked(item, ids) for item in value]
    if isinstance(value, str):
        for task_id, name in ids.items():
            if value == task_id:
                return name
            if value.startswith(f"{task_id[:6]}-input-"):
                return name + value[6:]
    return value


def _run(args: list[str], script: Any, tmp_path: Path, side: str) -> dict[str, Any]:
    marker = tmp_path / "marker"
    log = tmp_path / f"{side}.log"
    answers = _talk([*args, "--log", str(log)], script(marker), marker)
    ids: dict[str, str] = {}
    masked = _masked(answers, ids)
    lines: list[dict[str, Any]] = []
    for text in log.read_text().splitlines():
        line = json.loads(text)
        assert isinstance(line.pop("t"), float)
        if not lines or line != lines[-1]:  # how often a step polled is the scheduler's
            lines.append(line)
    written = marker.read_text() if marker.exists() else None
    marker.unlink(missing_ok=True)
    return {"answers": masked, "log": _masked(lines, ids), "marker": written}


CASES = {
    "2026-07-28": (modern, ["--poll-ms", "300", "--ttl-ms", "1000"]),
    "handshake": (handshake, []),
    "rude": (rude, ["--rude"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_raw_tasker_answers_as_the_sdk_tasker_does(case: str, tmp_path: Path) -> None:
    script, args = CASES[case]
    raw = _run(args, script, tmp_path, "raw")
    sdk = _run([*args, "--sdk"], script, tmp_path, "sdk")
    assert raw == sdk
    answers = {a["id"]: a for a in raw["answers"]}
    for answer in answers.values():
        assert ("result" in answer) != ("error" in answer), answer
    if case == "2026-07-28":
        assert TASKS in answers[1]["result"]["capabilities"]["extensions"]
        assert answers[20]["result"]["resultType"] == "task"
        assert {answers[20]["result"]["pollIntervalMs"], answers[20]["result"]["ttlMs"]} == {
            300,
            1000,
        }
        assert answers[17]["result"]["content"][0]["text"] == "computed in 1s"
        assert answers[21]["result"]["result"]["content"][0]["text"] == "computed in 0.05s"
        assert answers[25]["result"]["status"] == "cancelled"
        assert answers[33]["result"]["result"]["content"][0]["text"] == "deleted a.txt"
        assert answers[54]["result"]["error"]["code"] == -32603
        assert [answers[n]["error"]["code"] for n in (10, 80, 81, 92)] == [
            -32021,
            -32602,
            -32021,
            -32602,
        ]
        assert raw["marker"] == "cancelled"
        assert [line["method"] for line in raw["log"]].count("tasks/update") == 6  # 88 is refused
    elif case == "handshake":
        assert "extensions" not in answers[1]["result"]["capabilities"]
        assert answers[4]["result"]["content"][0]["text"] == "computed in 0.01s"
        assert answers[5]["error"]["code"] == answers[10]["error"]["code"] == -32021
        assert answers[15]["error"]["code"] == -32600
    else:
        assert "extensions" not in answers[1]["result"]["capabilities"]
        assert answers[2]["result"]["resultType"] == "task"
        assert answers[5]["result"]["result"]["content"][0]["text"] == "ran as a task"


def test_a_poll_at_the_end_of_a_step_sees_the_next_one() -> None:
    """The steps of ``slow_compute`` last its poll interval, as in the tests that follow a task
    (``tests/mcpbridge/test_tasks.py``): a client that polls one interval after each answer
    sees every step in turn, never one twice and the next missed, as it does on the SDK's
    event loop. Each step's end and each poll then come within a millisecond: the raw server
    answers such a poll only once the work moved on (``Job.wire``)."""
    proc = start_tasker("--poll-ms", "100")
    assert proc.stdin is not None and proc.stdout is not None
    rid = 0

    def ask(method: str, params: dict[str, Any]) -> dict[str, Any]:
        nonlocal rid
        assert proc.stdin is not None and proc.stdout is not None
        rid += 1
        message = req(rid, method, params, ext=True)
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        result: dict[str, Any] = json.loads(proc.stdout.readline())["result"]
        return result

    try:
        for _ in range(8):
            task = ask("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0.4}})
            seen = []
            deadline = time.monotonic() + WAIT_SECONDS
            while task["status"] == "working" and time.monotonic() < deadline:
                time.sleep(task["pollIntervalMs"] / 1000)
                task = ask("tasks/get", {"taskId": task["taskId"]})
                seen.append(task.get("statusMessage", task["status"]))
            assert seen[:3] == ["step 2 of 4", "step 3 of 4", "step 4 of 4"], seen
            assert seen[-1] == "completed", seen
    finally:
        proc.stdin.close()
        proc.wait(10)
        proc.stdout.close()
