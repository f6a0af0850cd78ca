"""A server of the Tasks extension (SEP-2663, ``io.modelcontextprotocol/tasks``): "tasker".

Built on the SDK's ``MCPServer`` and its ``Extension`` interface: the extension is advertised
in ``server/discover``; a ``tools/call`` of a task tool from a request that declares the
extension is answered with a ``CreateTaskResult`` (``resultType: "task"``, flat ``Task``
fields) once the task exists, and the work goes on in the background. ``tasks/get`` returns the
``DetailedTask`` (``result`` inlined when completed, ``error`` when failed, ``inputRequests``
when input is required); ``tasks/update`` takes ``inputResponses``; ``tasks/cancel`` acks and
cancels. All three refuse a request that did not declare the extension (-32021), an unknown
task id (-32602) and, over HTTP, an ``Mcp-Name`` header that is not the task id (-32020). A
request without the extension gets the tool run synchronously (or -32021 for the tools whose
task support is "required"). Handshake-era connections never get tasks. It passes the
conformance suite's server scenarios of the extension (``tests/mcpbridge/test_tasks.py``).

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
- ``wait_forever(marker)``: a task that runs until cancelled, then writes ``cancelled`` to
  ``marker``.

Options: ``--poll-ms N`` (the ``pollIntervalMs`` it asks for; default 200), ``--ttl-ms N``
(default 600000), ``--rude`` (advertises nothing and answers every 2026-07-28 client with
tasks, declared or not: a server that breaks the spec), ``--log FILE`` (one JSON line per
``tools/call`` and ``tasks/*`` request: ``{"t": <unix time>, "method", "params"}``),
``--http`` (Streamable HTTP on 127.0.0.1 instead of stdio; prints ``READY <url>``, as
``tests.servers.http_server`` does).

Run: ``python -m tests.servers.tasker [--poll-ms N] [--ttl-ms N] [--rude] [--log FILE]
[--http]``
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import anyio
import mcp_types as types
from anyio.abc import TaskGroup
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import HEADER_MISMATCH
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import Field

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

parser = argparse.ArgumentParser()
parser.add_argument("--poll-ms", type=int, default=200)
parser.add_argument("--ttl-ms", type=int, default=600_000)
parser.add_argument("--log", default=None)
parser.add_argument("--http", action="store_true")
parser.add_argument("--rude", action="store_true")
OPTIONS = parser.parse_args(sys.argv[1:])


def log(method: str, params: Any) -> None:
    if OPTIONS.log:
        with open(OPTIONS.log, "a", encoding="utf-8") as out:
            out.write(json.dumps({"t": time.time(), "method": method, "params": params}) + "\n")


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class JobCancelled(Exception):
    pass


@dataclass
class Job:
    """One task: its wire state, and what its work waits on."""

    task_id: str
    status: str = "working"
    status_message: str | None = None
    created: str = field(default_factory=now)
    updated: str = field(default_factory=now)
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    pending: dict[str, dict[str, Any]] = field(default_factory=dict[str, dict[str, Any]])
    answers: dict[str, Any] = field(default_factory=dict[str, Any])
    answered: anyio.Event = field(default_factory=anyio.Event)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    keys: int = 0

    def touch(self, status: str, message: str | None = None) -> None:
        self.status, self.status_message, self.updated = status, message, now()

    def wire(self) -> dict[str, Any]:
        task: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created,
            "lastUpdatedAt": self.updated,
            "ttlMs": OPTIONS.ttl_ms,
            "pollIntervalMs": OPTIONS.poll_ms,
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

    async def ask(self, *requests: dict[str, Any]) -> list[Any]:
        """Park in ``input_required`` until ``tasks/update`` answered every one of
        ``requests`` (several at once: each answered key leaves ``inputRequests`` at once)."""
        keys = []
        for request in requests:
            self.keys += 1
            key = f"{self.task_id[:6]}-input-{self.keys}"  # unique over the task's life
            self.pending[key] = request
            keys.append(key)
        self.touch("input_required", "waiting for your answer")
        while not all(k in self.answers for k in keys):
            self.answered = anyio.Event()
            await self.answered.wait()
        self.touch("working")
        return [self.answers.pop(k) for k in keys]


JOBS: dict[str, Job] = {}
GROUP: list[TaskGroup] = []


def text(value: str, *, error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": error}


# -- the work of each tool (``job`` is None when it runs synchronously) ----------------------


async def slow_compute(args: dict[str, Any], job: Job | None) -> dict[str, Any]:
    seconds = float(args.get("seconds", 1))
    steps = max(1, int(args.get("steps", 4)))
    for step in range(1, steps + 1):
        if job is not None:
            job.touch("working", f"step {step} of {steps}")
        await anyio.sleep(seconds / steps)
    return text(f"computed in {args.get('seconds', 1)}s")


async def confirm_delete(args: dict[str, Any], job: Job | None) -> dict[str, Any]:
    path = str(args.get("path", ""))
    if job is None:
        return text(f"kept {path} (nobody to ask without a task)")
    [answer] = await job.ask(
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
    return text(f"deleted {path}" if confirmed else f"kept {path}")


def _elicit(message: str, field_: str, kind: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {field_: {"type": kind}}, "required": [field_]}
    return {
        "method": "elicitation/create",
        "params": {"mode": "form", "message": message, "requestedSchema": schema},
    }


async def multi_input(args: dict[str, Any], job: Job | None) -> dict[str, Any]:
    if job is None:
        return text("nobody to ask without a task")
    first, second = await job.ask(
        _elicit("Your name?", "name", "string"), _elicit("Sure?", "confirm", "boolean")
    )
    return text(f"got {json.dumps(first)} and {json.dumps(second)}")


async def failing_job(args: dict[str, Any], job: Job | None) -> dict[str, Any]:
    await anyio.sleep(0.3)
    return text("the job failed", error=True)


async def protocol_error_job(args: dict[str, Any], job: Job | None) -> dict[str, Any]:
    await anyio.sleep(0.3)
    raise MCPError(code=types.INTERNAL_ERROR, message="the job's backend broke")


async def required_task(args: dict[str, Any], job: Job | None) -> dict[str, Any]:
    return text("ran as a task")


async def test_tool_with_task(args: dict[str, Any], job: Job | None) -> dict[str, Any]:
    return text(f"Hello, {args.get('user_name')}!")


async def wait_forever(args: dict[str, Any], job: Job | None) -> dict[str, Any]:
    marker = anyio.Path(str(args["marker"]))
    try:
        await anyio.sleep_forever()
    finally:
        with anyio.CancelScope(shield=True):
            await marker.write_text("cancelled")
    return text("unreachable")  # pragma: no cover


WORK: dict[str, Callable[[dict[str, Any], Job | None], Awaitable[dict[str, Any]]]] = {
    "slow_compute": slow_compute,
    "confirm_delete": confirm_delete,
    "multi_input": multi_input,
    "failing_job": failing_job,
    "protocol_error_job": protocol_error_job,
    "required_task": required_task,
    "test_tool_with_task": test_tool_with_task,
    "wait_forever": wait_forever,
}


async def run_job(job: Job, tool: str, args: dict[str, Any]) -> None:
    with job.scope:
        try:
            job.result = await WORK[tool](args, job)
            job.touch("completed")
            return
        except MCPError as exc:
            job.error = {"code": exc.code, "message": exc.message}
            job.touch("failed", f"the job failed: {exc.message}")
            return
    job.touch("cancelled", "cancelled at the client's request")


# -- the extension ----------------------------------------------------------------------------


def declared(ctx: ServerRequestContext[Any, Any]) -> bool:
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return False  # no task shape on a handshake-era wire
    caps = ctx.session.client_capabilities
    return OPTIONS.rude or (caps is not None and TASKS in (caps.extensions or {}))


def missing_capability() -> MCPError:
    return MCPError(
        code=types.MISSING_REQUIRED_CLIENT_CAPABILITY,
        message="Missing required client capability",
        data={"requiredCapabilities": {"extensions": {TASKS: {}}}},
    )


class TaskIdParams(types.RequestParams):
    task_id: str


class UpdateParams(TaskIdParams):
    input_responses: dict[str, Any] = Field(default_factory=dict[str, Any])


def job_of(ctx: ServerRequestContext[Any, Any], params: TaskIdParams) -> Job:
    if not declared(ctx):
        raise missing_capability()
    headers = getattr(ctx.request, "headers", None)  # Streamable HTTP only
    named = headers.get("mcp-name") if headers is not None else None
    if named is not None and named != params.task_id:  # SEP-2663 routing header
        raise MCPError(code=HEADER_MISMATCH, message="Mcp-Name does not match params.taskId")
    job = JOBS.get(params.task_id)
    if job is None:
        raise MCPError(code=types.INVALID_PARAMS, message="Failed to retrieve task: Task not found")
    return job


async def tasks_get(ctx: ServerRequestContext[Any, Any], params: TaskIdParams) -> HandlerResult:
    log("tasks/get", {"taskId": params.task_id})
    return {"resultType": "complete", **job_of(ctx, params).wire()}


async def tasks_update(ctx: ServerRequestContext[Any, Any], params: UpdateParams) -> HandlerResult:
    log("tasks/update", {"taskId": params.task_id, "inputResponses": params.input_responses})
    job = job_of(ctx, params)
    for key, answer in params.input_responses.items():
        if key in job.pending:  # unknown or already answered keys are ignored
            del job.pending[key]
            job.answers[key] = answer
    job.answered.set()
    return {"resultType": "complete"}


async def tasks_cancel(ctx: ServerRequestContext[Any, Any], params: TaskIdParams) -> HandlerResult:
    log("tasks/cancel", {"taskId": params.task_id})
    job = job_of(ctx, params)
    if job.status not in ("completed", "failed", "cancelled"):
        job.scope.cancel()
    return {"resultType": "complete"}


class Tasks(Extension):
    identifier = TASKS

    def methods(self) -> Sequence[MethodBinding]:
        return (
            MethodBinding("tasks/get", TaskIdParams, tasks_get),  # type: ignore[arg-type]
            MethodBinding("tasks/update", UpdateParams, tasks_update),  # type: ignore[arg-type]
            MethodBinding("tasks/cancel", TaskIdParams, tasks_cancel),  # type: ignore[arg-type]
        )

    async def intercept_tool_call(
        self,
        params: types.CallToolRequestParams,
        ctx: ServerRequestContext[Any, Any],
        call_next: CallNext,
    ) -> HandlerResult:
        log("tools/call", {"name": params.name, "arguments": params.arguments})
        if params.name not in TASK_TOOLS | REQUIRED:
            return await call_next(ctx)
        if not declared(ctx):
            if params.name in REQUIRED:
                raise missing_capability()
            return await call_next(ctx)  # synchronous, as for any client
        arguments = dict(params.arguments or {})
        if params.name == "test_tool_with_task":  # input first (SEP-2322), then a task
            answers = (ctx.params or {}).get("inputResponses") or {}
            answer = answers.get("user_name") if isinstance(answers, dict) else None
            if not isinstance(answer, dict):
                request = _elicit("Your name?", "name", "string")
                return {"resultType": "input_required", "inputRequests": {"user_name": request}}
            arguments = {"user_name": (answer.get("content") or {}).get("name")}
        job = Job(secrets.token_urlsafe(16))
        JOBS[job.task_id] = job  # durably created before the answer goes out
        GROUP[0].start_soon(run_job, job, params.name, arguments)
        return {"resultType": "task", **job.wire()}


@asynccontextmanager
async def lifespan(_: Any) -> AsyncIterator[dict[str, Any]]:
    async with anyio.create_task_group() as tg:
        GROUP.append(tg)
        yield {}
        tg.cancel_scope.cancel()


mcp = MCPServer("tasker", version="0.1.0", extensions=[Tasks()], lifespan=lifespan)
if OPTIONS.rude:  # serve the methods, but do not say so in server/discover
    mcp._lowlevel_server.extensions.pop(TASKS)  # pyright: ignore[reportPrivateUsage]


def _sync(name: str) -> Callable[..., Awaitable[str]]:
    async def run(**args: Any) -> str:
        result = await WORK[name](args, None)
        return str(result["content"][0]["text"])

    return run


@mcp.tool(description="Greet someone (never a task).", structured_output=False)
def greet(name: str) -> str:
    return f"Hello, {name}!"


@mcp.tool(
    name="slow_compute",
    description="Compute slowly (a task): seconds of work in steps.",
    structured_output=False,
)
async def slow_compute_tool(seconds: float = 1, steps: int = 4) -> str:
    return await _sync("slow_compute")(seconds=seconds, steps=steps)


@mcp.tool(
    name="confirm_delete",
    description="Delete a path after asking (a task that needs input).",
    structured_output=False,
)
async def confirm_delete_tool(path: str) -> str:
    return await _sync("confirm_delete")(path=path)


@mcp.tool(
    name="failing_job",
    description="A job that ends with a tool error (a task).",
    structured_output=False,
)
async def failing_job_tool() -> str:
    return await _sync("failing_job")()


@mcp.tool(
    name="protocol_error_job",
    description="A job that fails with a protocol error (a task).",
    structured_output=False,
)
async def protocol_error_job_tool() -> str:
    return await _sync("protocol_error_job")()


@mcp.tool(
    name="required_task", description="A job that must run as a task.", structured_output=False
)
async def required_task_tool() -> str:
    return await _sync("required_task")()


@mcp.tool(
    name="multi_input",
    description="Ask two things at once (a task that needs input).",
    structured_output=False,
)
async def multi_input_tool() -> str:
    return await _sync("multi_input")()


@mcp.tool(
    name="test_tool_with_task",
    description="Ask a name first (SEP-2322), then greet it in a task.",
    structured_output=False,
)
async def test_tool_with_task_tool() -> str:
    return "needs the tasks extension"


@mcp.tool(
    name="wait_forever",
    description="Wait until cancelled (a task), then write a marker file.",
    structured_output=False,
)
async def wait_forever_tool(marker: str) -> str:
    return await _sync("wait_forever")(marker=marker)


def main() -> None:
    if OPTIONS.http:
        import asyncio

        from tests.servers.http_server import serve

        asyncio.run(serve(mcp.streamable_http_app(host="127.0.0.1"), 0))
    else:
        mcp.run()


if __name__ == "__main__":
    main()
