"""The task logic of tasker (:mod:`tests.servers.tasker`), written once for both transports.

:class:`TaskBook` holds the tasks of one server: the state machine of each (``working``,
``input_required``, then ``completed``, ``failed`` or ``cancelled``, never out of a terminal
one), what ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` answer, the TTL and poll
interval a task advertises, ``--rude`` and the request log. A transport says whether a request
declared the extension (and, over HTTP, what its ``Mcp-Name`` header says) and maps
:class:`~tests.servers._era.RpcError` to its own errors: the raw stdio one
(:class:`tests.servers.tasker.Tasker`) and the SDK's (:mod:`tests.servers._tasker_sdk`).

Each task's work runs in a thread of its own and stops at once when the task is cancelled (it
waits on :attr:`Job.cancelled`); a synchronous call's work is the same function without a
task. Only the standard library is used.
"""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from tests.servers._era import RpcError, text_result

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
WAKE_GRACE_SECONDS = 0.1
"""How long a ``tasks/get`` waits for work whose sleep just ended (:meth:`Job.wire`)."""
SHUTDOWN_GRACE_SECONDS = 5.0
"""How long a stopping server waits for cancelled work to end (``wait_forever`` writes its
marker then)."""
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
HEADER_MISMATCH = -32020
INTERNAL_ERROR = -32603


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


def nap(job: Job | None, cancelled: threading.Event, seconds: float) -> None:
    """:func:`pause`, or :meth:`Job.sleep` for a task's work."""
    if job is None:
        pause(cancelled, seconds)
    else:
        job.sleep(seconds)


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
        self.due: float | None = None
        """When the work's current sleep ends (monotonic), while it sleeps."""
        self.cancelled = threading.Event()
        self.changed = threading.Condition()

    def touch(self, status: str, message: str | None = None, **outcome: Any) -> None:
        """Move to ``status``; nothing moves a task out of a terminal status."""
        with self.changed:
            self.due = None  # the work moved on: a tasks/get waiting for it may answer
            self.changed.notify_all()
            if self.status in TERMINAL:
                return
            for name, value in outcome.items():
                setattr(self, name, value)
            self.status, self.status_message, self.updated = status, message, now()

    def sleep(self, seconds: float) -> None:
        """Sleep ``seconds`` (``Cancelled`` when cancelled); until the work's next change of
        state, a ``tasks/get`` that comes after the sleep's end waits for that change."""
        with self.changed:
            self.due = time.monotonic() + seconds
        pause(self.cancelled, seconds)

    def wire(self) -> dict[str, Any]:
        """The task as ``tasks/get`` answers it. A poll that comes as a sleep of the work
        ends (the period of a task's steps is often its poll interval) sees what the work
        does next, as a single event loop would show it, not whichever thread the scheduler
        woke first: it waits for the work up to :data:`WAKE_GRACE_SECONDS`."""
        with self.changed:
            while self.due is not None:
                late = time.monotonic() - self.due
                if late < 0 or late >= WAKE_GRACE_SECONDS:
                    break
                self.changed.wait(WAKE_GRACE_SECONDS - late)
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
        nap(job, cancelled, seconds / steps)
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
    nap(job, cancelled, 0.3)
    return text_result("the job failed", is_error=True)


def protocol_error_job(
    args: dict[str, Any], job: Job | None, cancelled: threading.Event
) -> dict[str, Any]:
    nap(job, cancelled, 0.3)
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
        """The cancel events of the work running now (tasks and synchronous calls)."""
        self._idle = threading.Condition()
        self._stopping = False

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
        self._track(cancelled)
        try:
            result = WORK[name](args, None, cancelled)
        finally:
            self._done(cancelled)
        return text_result(str(result["content"][0]["text"]))

    def _start(self, target: Callable[..., None], job: Job, *args: Any) -> None:
        self._track(job.cancelled)
        threading.Thread(target=target, args=(job, *args), daemon=True).start()

    def _track(self, cancelled: threading.Event) -> None:
        with self._idle:
            self._running.add(cancelled)
            if self._stopping:  # started while the server stops: stopped at once
                cancelled.set()

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
            self._stopping = True
            for cancelled in self._running:
                cancelled.set()
            while self._running and time.monotonic() < deadline:
                self._idle.wait(deadline - time.monotonic())
