"""A server of the Tasks extension (SEP-2663, ``io.modelcontextprotocol/tasks``): "tasker".

The extension is advertised in ``server/discover``; a ``tools/call`` of a task tool from a
request that declares the extension is answered with a ``CreateTaskResult`` (``resultType:
"task"``, flat ``Task`` fields) once the task exists, and the work goes on in the background.
``tasks/get`` returns the ``DetailedTask`` (``result`` inlined when completed, ``error`` when
failed, ``inputRequests`` when input is required); ``tasks/update`` takes ``inputResponses``;
``tasks/cancel`` acks and cancels. All three refuse a request that did not declare the
extension (-32021), an unknown task id (-32602) and, over HTTP, an ``Mcp-Name`` header that is
not the task id (-32020). A request without the extension gets the tool run synchronously (or
-32021 for the tools whose task support is "required"). Handshake-era connections never get
tasks. It passes the conformance suite's server scenarios of the extension
(``tests/mcpbridge/test_tasks.py``).

Two transports, one task logic (:class:`TaskBook`: the state machine, the three methods, TTL
and poll interval, ``--rude``, the log; the work runs in a thread per task):

- **stdio** (the default, 20 starts a test run) stands on the raw two-era base
  (:mod:`tests.servers._era`) and imports only the standard library: a start costs 0.07 s of
  CPU here, against 1.2 s on the SDK's ``MCPServer``.
- **Streamable HTTP** (``--http``) stays on the SDK's ``MCPServer`` and its ``Extension``
  interface (:mod:`tests.servers._tasker_sdk`), imported only then. It starts twice a run, and
  a raw one would be a second implementation of HTTP sessions, SSE and the SEP-2663 routing
  headers, which are what the conformance suite's scenarios check there; it would save two
  seconds of CPU. ``--sdk`` serves stdio through the same SDK server: the reference that
  ``tests/test_servers_smoke.py`` holds the raw one to, answer for answer, in both eras.

Tools (the conformance suite's fixture names where it has one):

- ``greet(name)``: never a task; ``Hello, <name>!``;
- ``slow_compute(seconds, steps=4)``: a task that sleeps ``seconds`` in ``steps`` steps, its
  ``statusMessage`` saying ``step i of n``; result ``computed in <seconds>s``; cancellable;
- ``confirm_delete(path)``: a task that needs input: ``input_required`` with one
  ``elicitation/create`` (``confirm``: boolean, default true); result ``deleted <path>`` or
  ``kept <path>``;
- ``multi_input()``: a task that asks two things at once (``name``, ``confirm``); either may be
  answered first; result ``got <answer> and <answer>``;
- ``failing_job()``: a task that completes with ``isError: true`` (``the job failed``); task
  support "required";
- ``protocol_error_job()``: a task that fails with a JSON-RPC error (-32603);
- ``required_task()``: task support "required": without the extension, -32021;
- ``test_tool_with_task()``: first an ``InputRequiredResult`` asking ``name`` (SEP-2322), then,
  called again with the answer, a task whose result is ``Hello, <name>!`` ("required");
- ``wait_forever(marker)``: a task that runs until cancelled (or the server stops), then
  writes ``cancelled`` to ``marker``.

A task's work that raises anything else fails the task with -32603 and the exception's text.

Options: ``--poll-ms N`` (the ``pollIntervalMs`` it asks for; default 200), ``--ttl-ms N``
(default 600000), ``--rude`` (advertises nothing and answers every 2026-07-28 client with
tasks, declared or not: a server that breaks the spec), ``--log FILE`` (one JSON line per
``tools/call`` and ``tasks/*`` request: ``{"t": <unix time>, "method", "params"}``),
``--http`` (Streamable HTTP on 127.0.0.1 instead of stdio; prints ``READY <url>``, as
``tests.servers.http_server`` does), ``--sdk`` (stdio through the SDK: the reference).

Run: ``python -m tests.servers.tasker [--poll-ms N] [--ttl-ms N] [--rude] [--log FILE]
[--http | --sdk]``
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, ClassVar

from tests.servers._era import (
    Call,
    EraServer,
    InvalidParams,
    RpcError,
    ToolError,
    arguments_of,
    schema_of,
    text_result,
    tool_error,
)

TASKS = "io.modelcontextprotocol/tasks"
TASK_TOOLS = {
    "slow_compute",
    "confirm_delete",
    "multi_input",
    "failing_job",
    "protocol_error_job",
    "required_task",
    "wait_forever",
}
REQUIRED = {"required_task", "failing_job", "test_tool_with_task"}
"""Task support "required": a request without the extension gets -32021."""
TERMINAL = ("completed", "failed", "cancelled")
SHUTDOWN_GRACE_SECONDS = 5.0
"""How long a stopping server waits for cancelled work to end (``wait_forever`` writes its
marker then)."""
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
HEADER_MISMATCH = -32020
INTERNAL_ERROR = -32603


def _tool(name: str, description: str, function: str, params: dict[str, str]) -> dict[str, Any]:
    """A tool as ``MCPServer`` lists it: its schema is titled after the Python function."""
    return {"description": description, "inputSchema": schema_of(function, params), "name": name}


TOOLS: list[dict[str, Any]] = [
    _tool("greet", "Greet someone (never a task).", "greet", {"name": "string"}),
    {
        "description": "Compute slowly (a task): seconds of work in steps.",
        "inputSchema": {
            "properties": {
                "seconds": {"default": 1, "title": "Seconds", "type": "number"},
                "steps": {"default": 4, "title": "Steps", "type": "integer"},
            },
            "title": "slow_compute_toolArguments",
            "type": "object",
        },
        "name": "slow_compute",
    },
    _tool(
        "confirm_delete",
        "Delete a path after asking (a task that needs input).",
        "confirm_delete_tool",
        {"path": "string"},
    ),
    _tool("failing_job", "A job that ends with a tool error (a task).", "failing_job_tool", {}),
    _tool(
        "protocol_error_job",
        "A job that fails with a protocol error (a task).",
        "protocol_error_job_tool",
        {},
    ),
    _tool("required_task", "A job that must run as a task.", "required_task_tool", {}),
    _tool(
        "multi_input",
        "Ask two things at once (a task that needs input).",
        "multi_input_tool",
        {},
    ),
    _tool(
        "test_tool_with_task",
        "Ask a name first (SEP-2322), then greet it in a task.",
        "test_tool_with_task_tool",
        {},
    ),
    _tool(
        "wait_forever",
        "Wait until cancelled (a task), then write a marker file.",
        "wait_forever_tool",
        {"marker": "string"},
    ),
]
SCHEMAS = {t["name"]: t["inputSchema"] for t in TOOLS}


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_task_id() -> str:
    """``secrets.token_urlsafe(16)``, without importing ``secrets`` (a tenth of the start)."""
    return base64.urlsafe_b64encode(os.urandom(16)).rstrip(b"=").decode("ascii")


def missing_capability() -> RpcError:
    return RpcError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        "Missing required client capability",
        {"requiredCapabilities": {"extensions": {TASKS: {}}}},
    )


class Cancelled(Exception):
    """The work of a cancelled task (or call) stops with this."""


def pause(cancelled: threading.Event, seconds: float) -> None:
    """Sleep ``seconds``; ``Cancelled`` as soon as ``cancelled`` is set."""
    if cancelled.wait(max(0.0, seconds)):
        raise Cancelled


class Job:
    """One task: its wire state, and what its work waits on (``changed`` guards it all)."""

    def __init__(self, task_id: str, book: TaskBook) -> None:
        self.task_id = task_id
        self.book = book
        self.status = "working"
        self.status_message: str | None = None
        self.created = now()
        self.updated = now()
        self.result: dict[str, Any] | None = None
        self.error: dict[str, Any] | None = None
        self.pending: dict[str, dict[str, Any]] = {}
        self.answers: dict[str, Any] = {}
        self.keys = 0
        self.cancelled = threading.Event()
        self.changed = threading.Condition()

    def touch(self, status: str, message: str | None = None, **outcome: Any) -> None:
        """Move to ``status``; nothing moves a task out of a terminal status."""
        with self.changed:
            if self.status in TERMINAL:
                return
            for name, value in outcome.items():
                setattr(self, name, value)
            self.status, self.status_message, self.updated = status, message, now()

    def wire(self) -> dict[str, Any]:
        with self.changed:
            task: dict[str, Any] = {
                "taskId": self.task_id,
                "status": self.status,
                "createdAt": self.created,
                "lastUpdatedAt": self.updated,
                "ttlMs": self.book.ttl_ms,
                "pollIntervalMs": self.book.poll_ms,
            }
            if self.status_message:
                task["statusMessage"] = self.status_message
            if self.status == "completed":
                task["result"] = self.result
            elif self.status == "failed":
                task["error"] = self.error
            elif self.status == "input_required":
                task["inputRequests"] = dict(self.pending)
            return task

    def ask(self, *requests: dict[str, Any]) -> list[Any]:
        """Park in ``input_required`` until ``tasks/update`` answered every one of
        ``requests`` (several at once: each answered key leaves ``inputRequests`` at once)."""
        with self.changed:
            keys = []
            for request in requests:
                self.keys += 1
                key = f"{self.task_id[:6]}-input-{self.keys}"  # unique over the task's life
                self.pending[key] = request
                keys.append(key)
            self.touch("input_required", "waiting for your answer")
            while not all(k in self.answers for k in keys):
                if self.cancelled.is_set():
                    raise Cancelled
                self.changed.wait()
            self.touch("working")
            return [self.answers.pop(k) for k in keys]

    def answer(self, responses: Mapping[str, Any]) -> None:
        with self.changed:
            for key, answer in responses.items():
                if key in self.pending:  # unknown or already answered keys are ignored
                    del self.pending[key]
                    self.answers[key] = answer
            self.changed.notify_all()

    def cancel(self) -> None:
        """Cancelled now (a ``tasks/get`` after the ack says so); the work stops at once."""
        with self.changed:
            self.touch("cancelled", "cancelled at the client's request")
            self.cancelled.set()
            self.changed.notify_all()


# -- the work of each tool (``job`` is None when it runs synchronously) ----------------------

Work = Callable[[dict[str, Any], Job | None, threading.Event], dict[str, Any]]


def greet(args: dict[str, Any], job: Job | None, cancelled: threading.Event) -> dict[str, Any]:
    return text_result(f"Hello, {args.get('name')}!")


def slow_compute(
    args: dict[str, Any], job: Job | None, cancelled: threading.Event
) -> dict[str, Any]:
    seconds = float(args.get("seconds", 1))
    steps = max(1, int(args.get("steps", 4)))
    for step in range(1, steps + 1):
        if job is not None:
            job.touch("working", f"step {step} of {steps}")
        pause(cancelled, seconds / steps)
    return text_result(f"computed in {args.get('seconds', 1)}s")


def _elicit(message: str, field: str, kind: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {field: {"type": kind}}, "required": [field]}
    return {
        "method": "elicitation/create",
        "params": {"mode": "form", "message": message, "requestedSchema": schema},
    }


def confirm_delete(
    args: dict[str, Any], job: Job | None, cancelled: threading.Event
) -> dict[str, Any]:
    path = str(args.get("path", ""))
    if job is None:
        return text_result(f"kept {path} (nobody to ask without a task)")
    [answer] = job.ask(
        {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": f"Delete {path}?",
                "requestedSchema": {
                    "type": "object",
                    "properties": {
                        "confirm": {"type": "boolean", "title": "Delete it", "default": True}
                    },
                    "required": ["confirm"],
                },
            },
        }
    )
    accepted = isinstance(answer, dict) and answer.get("action") == "accept"
    confirmed = accepted and (answer.get("content") or {}).get("confirm") is True
    return text_result(f"deleted {path}" if confirmed else f"kept {path}")


def multi_input(
    args: dict[str, Any], job: Job | None, cancelled: threading.Event
) -> dict[str, Any]:
    if job is None:
        return text_result("nobody to ask without a task")
    first, second = job.ask(
        _elicit("Your name?", "name", "string"), _elicit("Sure?", "confirm", "boolean")
    )
    return text_result(f"got {json.dumps(first)} and {json.dumps(second)}")


def failing_job(
    args: dict[str, Any], job: Job | None, cancelled: threading.Event
) -> dict[str, Any]:
    pause(cancelled, 0.3)
    return text_result("the job failed", is_error=True)


def protocol_error_job(
    args: dict[str, Any], job: Job | None, cancelled: threading.Event
) -> dict[str, Any]:
    pause(cancelled, 0.3)
    raise RpcError(INTERNAL_ERROR, "the job's backend broke")


def required_task(
    args: dict[str, Any], job: Job | None, cancelled: threading.Event
) -> dict[str, Any]:
    return text_result("ran as a task")


def test_tool_with_task(
    args: dict[str, Any], job: Job | None, cancelled: threading.Event
) -> dict[str, Any]:
    if job is None:  # its task support is "required": never run without one
        return text_result("needs the tasks extension")
    return text_result(f"Hello, {args.get('user_name')}!")


def wait_forever(
    args: dict[str, Any], job: Job | None, cancelled: threading.Event
) -> dict[str, Any]:
    marker = str(args["marker"])
    cancelled.wait()
    with open(marker, "w", encoding="utf-8") as out:
        out.write("cancelled")
    raise Cancelled


WORK: dict[str, Work] = {
    "greet": greet,
    "slow_compute": slow_compute,
    "confirm_delete": confirm_delete,
    "multi_input": multi_input,
    "failing_job": failing_job,
    "protocol_error_job": protocol_error_job,
    "required_task": required_task,
    "test_tool_with_task": test_tool_with_task,
    "wait_forever": wait_forever,
}


class TaskBook:
    """The tasks of one server and the three methods on them, whatever the transport: a
    transport says whether a request declared the extension, and maps :class:`RpcError`."""

    def __init__(self, poll_ms: int, ttl_ms: int, rude: bool, log: str | None) -> None:
        self.poll_ms = poll_ms
        self.ttl_ms = ttl_ms
        self.rude = rude
        self.log_path = log
        self.jobs: dict[str, Job] = {}
        self._log_lock = threading.Lock()
        self._running: set[threading.Event] = set()
        self._idle = threading.Condition()

    def log(self, method: str, params: Any) -> None:
        if self.log_path:
            line = json.dumps({"t": time.time(), "method": method, "params": params}) + "\n"
            with self._log_lock, open(self.log_path, "a", encoding="utf-8") as out:
                out.write(line)

    def declared(self, modern: bool, extensions: Any) -> bool:
        """Whether a request may get tasks: never on a handshake-era wire (no task shape
        there); on 2026-07-28 when it declared the extension, or always when ``--rude``."""
        if not modern:
            return False
        return self.rude or (isinstance(extensions, Mapping) and TASKS in extensions)

    # -- tools/call ----------------------------------------------------------------------

    def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        *,
        declared: bool,
        input_responses: Any,
    ) -> dict[str, Any] | None:
        """A ``tools/call`` (logged by the transport first): the ``CreateTaskResult`` or an
        ``InputRequiredResult`` to answer, or None when the tool runs synchronously."""
        if name not in TASK_TOOLS | REQUIRED:
            return None
        if not declared:
            if name in REQUIRED:
                raise missing_capability()
            return None  # synchronous, as for any client
        args = dict(arguments or {})
        if name == "test_tool_with_task":  # input first (SEP-2322), then a task
            answers = input_responses or {}
            answer = answers.get("user_name") if isinstance(answers, dict) else None
            if not isinstance(answer, dict):
                request = _elicit("Your name?", "name", "string")
                return {"resultType": "input_required", "inputRequests": {"user_name": request}}
            args = {"user_name": (answer.get("content") or {}).get("name")}
        job = Job(new_task_id(), self)
        self.jobs[job.task_id] = job  # durably created before the answer goes out
        created = {"resultType": "task", **job.wire()}  # as created, whatever the work does
        self._start(self._run_job, job, name, args)
        return created

    def run(self, name: str, args: dict[str, Any], cancelled: threading.Event) -> dict[str, Any]:
        """A tool run synchronously (its arguments checked): its one text, as ``MCPServer``
        returns a ``str``; ``RpcError`` for a protocol error, ``Cancelled`` when cancelled."""
        with self._idle:
            self._running.add(cancelled)
        try:
            result = WORK[name](args, None, cancelled)
        finally:
            self._done(cancelled)
        return text_result(str(result["content"][0]["text"]))

    def _start(self, target: Callable[..., None], job: Job, *args: Any) -> None:
        with self._idle:
            self._running.add(job.cancelled)
        threading.Thread(target=target, args=(job, *args), daemon=True).start()

    def _done(self, cancelled: threading.Event) -> None:
        with self._idle:
            self._running.discard(cancelled)
            self._idle.notify_all()

    def _run_job(self, job: Job, tool: str, args: dict[str, Any]) -> None:
        try:
            result = WORK[tool](args, job, job.cancelled)
        except Cancelled:
            job.cancel()
        except RpcError as exc:
            error = {"code": exc.code, "message": exc.message}
            job.touch("failed", f"the job failed: {exc.message}", error=error)
        except Exception as exc:  # boundary: a broken job fails its task, not the server
            error = {"code": INTERNAL_ERROR, "message": str(exc)}
            job.touch("failed", f"the job failed: {exc}", error=error)
        else:
            job.touch("completed", result=result)
        finally:
            self._done(job.cancelled)

    # -- tasks/get, tasks/update, tasks/cancel -------------------------------------------

    def job_of(self, task_id: str, declared: bool, mcp_name: str | None = None) -> Job:
        if not declared:
            raise missing_capability()
        if mcp_name is not None and mcp_name != task_id:  # SEP-2663 routing header
            raise RpcError(HEADER_MISMATCH, "Mcp-Name does not match params.taskId")
        job = self.jobs.get(task_id)
        if job is None:
            raise RpcError(-32602, "Failed to retrieve task: Task not found")
        return job

    def get(self, task_id: str, declared: bool, mcp_name: str | None = None) -> dict[str, Any]:
        self.log("tasks/get", {"taskId": task_id})
        return {"resultType": "complete", **self.job_of(task_id, declared, mcp_name).wire()}

    def update(
        self,
        task_id: str,
        responses: Mapping[str, Any],
        declared: bool,
        mcp_name: str | None = None,
    ) -> dict[str, Any]:
        self.log("tasks/update", {"taskId": task_id, "inputResponses": dict(responses)})
        self.job_of(task_id, declared, mcp_name).answer(responses)
        return {"resultType": "complete"}

    def cancel(self, task_id: str, declared: bool, mcp_name: str | None = None) -> dict[str, Any]:
        self.log("tasks/cancel", {"taskId": task_id})
        job = self.job_of(task_id, declared, mcp_name)
        if job.status not in TERMINAL:
            job.cancel()
        return {"resultType": "complete"}

    def shutdown(self) -> None:
        """The server stops: every task and call still running is cancelled, and given
        :data:`SHUTDOWN_GRACE_SECONDS` to end (as the SDK's lifespan cancels its task group)."""
        for job in list(self.jobs.values()):
            job.cancel()
        deadline = time.monotonic() + SHUTDOWN_GRACE_SECONDS
        with self._idle:
            for cancelled in self._running:
                cancelled.set()
            while self._running and time.monotonic() < deadline:
                self._idle.wait(deadline - time.monotonic())


# -- the raw stdio transport ------------------------------------------------------------------

TASK_METHODS = ("tasks/get", "tasks/update", "tasks/cancel")


class Tasker(EraServer):
    """tasker over stdio on the raw two-era base; the extension is advertised."""

    name = "tasker"
    tools = TOOLS
    modern_capabilities: ClassVar[dict[str, Any]] = {
        **EraServer.modern_capabilities,
        "extensions": {TASKS: {}},
    }

    def __init__(self, book: TaskBook) -> None:
        super().__init__()
        self.book = book

    def declared(self, call: Call) -> bool:
        return self.book.declared(call.modern, call.client_capabilities.get("extensions"))

    def known_tool(self, name: str) -> bool:
        return True  # every call is logged, an unknown tool's too (call_tool answers it)

    def call_tool(self, name: str, arguments: dict[str, Any], call: Call) -> dict[str, Any]:
        self.book.log("tools/call", {"name": name, "arguments": call.params.get("arguments")})
        started = self.book.call(
            name,
            arguments,
            declared=self.declared(call),
            input_responses=call.params.get("inputResponses"),
        )
        if started is not None:
            return started
        if name not in SCHEMAS:
            return text_result(f"Unknown tool: {name}", is_error=True)
        try:
            return self.book.run(name, arguments_of(SCHEMAS[name], arguments), call.cancelled)
        except ToolError as exc:
            return tool_error(name, str(exc))
        except Cancelled:
            return text_result("cancelled")  # never sent: the call was cancelled

    def handle(self, method: str, call: Call) -> dict[str, Any]:
        if method not in TASK_METHODS:
            return super().handle(method, call)
        task_id = call.params.get("taskId")
        responses = call.params.get("inputResponses", {}) if method == "tasks/update" else {}
        if not isinstance(task_id, str) or not isinstance(responses, dict):
            raise InvalidParams  # as the SDK validates params before any handler runs
        declared = self.declared(call)
        if method == "tasks/get":
            return self.book.get(task_id, declared)
        if method == "tasks/update":
            return self.book.update(task_id, responses, declared)
        return self.book.cancel(task_id, declared)

    def serve(self) -> None:
        try:
            super().serve()
        finally:
            self.book.shutdown()


class RudeTasker(Tasker):
    """``--rude``: serves the methods, but does not say so in ``server/discover``."""

    modern_capabilities = EraServer.modern_capabilities


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--poll-ms", type=int, default=200)
    parser.add_argument("--ttl-ms", type=int, default=600_000)
    parser.add_argument("--log", default=None)
    parser.add_argument("--rude", action="store_true")
    transport = parser.add_mutually_exclusive_group()
    transport.add_argument("--http", action="store_true")
    transport.add_argument("--sdk", action="store_true")
    options = parser.parse_args()
    book = TaskBook(options.poll_ms, options.ttl_ms, options.rude, options.log)
    if options.http or options.sdk:
        from tests.servers._tasker_sdk import serve

        serve(book, http=options.http)
    else:
        (RudeTasker if options.rude else Tasker)(book).serve()


if __name__ == "__main__":
    main()
