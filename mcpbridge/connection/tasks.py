"""Tasks (SEP-2663, ``io.modelcontextprotocol/tasks``): a ``tools/call`` that a server answers
with a task handle instead of a result, followed to its end.

codebot declares the extension on every 2026-07-28 request (the SDK advertises a client
extension that claims a result shape, :class:`TasksExtension`; handshake-era connections know
no tasks). A ``CreateTaskResult`` (``resultType: "task"``) is then resolved by :func:`follow`
before the call returns, so callers (``MCPTool``, ``mcp call``) get the ordinary
``CallToolResult`` and ``core`` sees nothing but progress events:

- ``tasks/get`` is polled, waiting ``pollIntervalMs`` between polls (the latest value the
  server gave; bounded to :data:`MIN_POLL_SECONDS`..:data:`MAX_POLL_SECONDS` so a hostile
  server can neither make us spin nor park us for hours); each status goes to the progress
  hook;
- ``input_required``: each new key of ``inputRequests`` is answered through the same callbacks
  as any server request (elicitation, sampling, roots: the REPL or the ``--elicit`` policy),
  then ``tasks/update`` carries the answers; a key is never answered twice;
- ``completed`` returns the inlined result; ``failed`` raises its JSON-RPC error;
  ``cancelled`` is an error result naming the server's message;
- a cancellation (Ctrl-C) sends ``tasks/cancel`` (shielded, bounded), unless the process is
  being terminated (SIGTERM/SIGHUP: a closed terminal): then the task is left running for
  ``--continue`` to pick up;
- a journal (the session log) records each task when it starts and when it ends, so a task
  still running when codebot stops is resumed by id with :func:`resume`.

Each request is bounded by the server's ``tool_timeout``; the whole task by its ``ttlMs``
(and by :data:`MAX_TASK_SECONDS` when it has none).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import anyio
import mcp_types as types
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientRequestContext, ClientSession
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter

from codebot_mcp.mcpbridge.connection.taskpolicy import TaskPolicy, TaskStatus
from codebot_mcp.mcpbridge.transport.wire import TASKS as TASKS_EXTENSION

if TYPE_CHECKING:
    from collections.abc import Sequence

logger = logging.getLogger(__name__)

TERMINAL = frozenset({"completed", "failed", "cancelled"})
DEFAULT_POLL_SECONDS = 1.0
"""When the server suggests no ``pollIntervalMs``."""
MIN_POLL_SECONDS = 0.1
MAX_POLL_SECONDS = 600.0
MAX_TASK_SECONDS = 24 * 3600.0
"""A task without a ``ttlMs`` is followed at most this long (Ctrl-C ends it sooner)."""
CANCEL_SECONDS = 5.0
"""How long ``tasks/cancel`` may take while a cancelled call unwinds."""
MAX_STATUS_MESSAGE = 300
_INPUT_REQUEST: TypeAdapter[types.InputRequest] = TypeAdapter(types.InputRequest)


class TaskState(types.Result):
    """A ``Task`` as ``CreateTaskResult`` and ``tasks/get`` carry it (flat fields)."""

    task_id: str
    status: str
    status_message: str | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class CreateTaskResult(TaskState):
    """``resultType: "task"``: the server answered a ``tools/call`` with a task handle."""

    result_type: Literal["task"] = "task"


class DetailedTask(TaskState):
    """``tasks/get``: the state, with the result, the error or the input requests inlined."""

    result_type: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None


class TaskParams(types.RequestParams):
    task_id: str


class UpdateParams(TaskParams):
    input_responses: dict[str, Any]


class GetTask(types.Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskParams
    name_param = "taskId"  # Streamable HTTP: Mcp-Name carries the task id (SEP-2663)


class UpdateTask(types.Request[UpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: UpdateParams
    name_param = "taskId"


class CancelTask(types.Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskParams
    name_param = "taskId"


@dataclass
class TaskHooks:
    """What one connection's tasks report to, and how they end."""

    server: str
    progress: Callable[[float, str], None] = lambda value, message: None
    """The call's progress hook (the REPL spinner; ``mcp call``'s stderr line)."""
    policy: TaskPolicy = field(default_factory=TaskPolicy)
    """The run's (the manager's) policy."""
    redact: Callable[[str], str] = lambda text: text
    _last: dict[str, tuple[str, str | None]] = field(
        default_factory=dict[str, tuple[str, str | None]]
    )

    def report(self, state: TaskState, tool: str, started: float) -> None:
        message = state.status_message
        if message is not None:
            message = self.redact(message)[:MAX_STATUS_MESSAGE]
        view = TaskStatus(state.task_id, tool, state.status, message, time.monotonic() - started)
        self.progress(view.seconds, view.describe())
        on_status = self.policy.on_status
        if on_status is not None and self._last.get(state.task_id) != (state.status, message):
            self._last[state.task_id] = (state.status, message)
            on_status(self.server, view)


_CALL: ContextVar[tuple[str, dict[str, Any]] | None] = ContextVar("codebot_task_call", default=None)


def calling(tool: str, arguments: dict[str, Any]) -> Any:
    """Mark the tool call in flight (the journal records its arguments); returns the token."""
    return _CALL.set((tool, arguments))


def done_calling(token: Any) -> None:
    _CALL.reset(token)


class TasksExtension(ClientExtension):
    """Declares the extension and resolves ``CreateTaskResult`` by following the task."""

    identifier = TASKS_EXTENSION

    def __init__(self, hooks: TaskHooks) -> None:
        self.hooks = hooks

    def claims(self) -> Sequence[ResultClaim[Any]]:
        """``resultType: "task"`` on ``tools/call`` (the SDK activates it on modern wires)."""
        return (ResultClaim(result_type="task", model=CreateTaskResult, resolve=self._resolve),)

    async def _resolve(self, created: CreateTaskResult, ctx: ClaimContext) -> types.CallToolResult:
        call = _CALL.get()
        arguments = call[1] if call is not None and call[0] == ctx.tool_name else {}
        record = {
            "server": self.hooks.server,
            "tool": ctx.tool_name,
            "arguments": arguments,
            "task_id": created.task_id,
            "started": time.time(),
        }
        journal = self.hooks.policy.journal
        if journal is not None:
            journal.task_started(record)
        state = DetailedTask.model_validate(created.model_dump(by_alias=True))
        return await follow(ctx.session, state, ctx.tool_name, self.hooks, ctx.read_timeout_seconds)


async def follow(
    session: ClientSession,
    state: DetailedTask,
    tool: str,
    hooks: TaskHooks,
    request_timeout: float | None,
) -> types.CallToolResult:
    """Poll ``state``'s task to its end, answering its input requests; the tool's result.

    Raises:
        MCPError: the task failed (its JSON-RPC error), or a ``tasks/*`` request failed.
        TimeoutError: the task outlived its ``ttlMs`` (or :data:`MAX_TASK_SECONDS`).
        pydantic.ValidationError: the completed task's result is no ``CallToolResult``.
    """
    started = time.monotonic()
    answered: set[str] = set()
    task_id = state.task_id
    try:
        with anyio.fail_after(_lifetime(state)):
            while state.status not in TERMINAL:
                hooks.report(state, tool, started)
                if state.status == "input_required" and state.input_requests:
                    await _answer(session, state, answered, request_timeout)
                await anyio.sleep(_interval(state))
                state = await _get(session, task_id, request_timeout)
    except anyio.get_cancelled_exc_class():
        if hooks.policy.cancel_on_interrupt():
            await _cancel_quietly(session, task_id, hooks)
        raise
    except MCPError:
        _ended(hooks, task_id, "lost")
        raise
    hooks.report(state, tool, started)
    _ended(hooks, task_id, state.status)
    return outcome(state, hooks.server)


async def resume(
    session: ClientSession,
    record: Mapping[str, Any],
    hooks: TaskHooks,
    request_timeout: float | None,
) -> types.CallToolResult:
    """Pick a journaled task up again by its id (``--continue``) and follow it to its end.

    Raises:
        MCPError: the server no longer knows the task (-32602), or it failed.
    """
    task_id = str(record["task_id"])
    try:
        state = await _get(session, task_id, request_timeout)
    except MCPError:
        _ended(hooks, task_id, "lost")
        raise
    return await follow(session, state, str(record.get("tool", "")), hooks, request_timeout)


def outcome(state: DetailedTask, server: str) -> types.CallToolResult:
    """The call's result for a terminal task (see :func:`follow`)."""
    if state.status == "completed":
        if state.result is None:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"task {state.task_id} completed without a result",
            )
        return types.CallToolResult.model_validate({**state.result, "resultType": "complete"})
    if state.status == "failed":
        error = state.error or {}
        code = error.get("code")
        raise MCPError(
            code=code if isinstance(code, int) else types.INTERNAL_ERROR,
            message=str(error.get("message") or state.status_message or "the task failed"),
            data=error.get("data"),
        )
    why = f": {state.status_message}" if state.status_message else ""
    text = f"server '{server}' cancelled task {state.task_id}{why}"
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _lifetime(state: TaskState) -> float:
    if state.ttl_ms is not None and state.ttl_ms > 0:
        return min(state.ttl_ms / 1000, MAX_TASK_SECONDS)
    return MAX_TASK_SECONDS


def _interval(state: TaskState) -> float:
    if state.poll_interval_ms is None or state.poll_interval_ms < 0:
        return DEFAULT_POLL_SECONDS
    return min(max(state.poll_interval_ms / 1000, MIN_POLL_SECONDS), MAX_POLL_SECONDS)


async def _get(session: ClientSession, task_id: str, request_timeout: float | None) -> DetailedTask:
    request = GetTask(params=TaskParams(task_id=task_id))
    state = await session.send_request(
        request, DetailedTask, request_read_timeout_seconds=request_timeout
    )
    if state.task_id != task_id:
        raise MCPError(
            code=types.INVALID_PARAMS,
            message=f"tasks/get for {task_id} answered about task {state.task_id}",
        )
    return state


async def _answer(
    session: ClientSession, state: DetailedTask, answered: set[str], request_timeout: float | None
) -> None:
    """Answer each input request not answered yet, then send them in one ``tasks/update``."""
    responses: dict[str, Any] = {}
    for key, raw in (state.input_requests or {}).items():
        if key in answered:
            continue  # already sent: the server may show it until it took the answer
        answered.add(key)
        try:
            request = _INPUT_REQUEST.validate_python(raw)
        except ValueError:
            await _cancel_quietly(session, state.task_id, None)
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"task {state.task_id} asked for input codebot cannot read ('{key}')",
            ) from None
        meta = request.params.meta if request.params is not None else None
        ctx = ClientRequestContext(session=session, request_id=key, meta=meta)
        answer = await session.dispatch_input_request(ctx, request)
        if isinstance(answer, types.ErrorData):
            await _cancel_quietly(session, state.task_id, None)
            raise MCPError.from_error_data(answer)
        responses[key] = answer.model_dump(by_alias=True, mode="json", exclude_none=True)
    if responses:
        params = UpdateParams(task_id=state.task_id, input_responses=responses)
        await session.send_request(
            UpdateTask(params=params),
            types.EmptyResult,
            request_read_timeout_seconds=request_timeout,
        )


async def _cancel_quietly(session: ClientSession, task_id: str, hooks: TaskHooks | None) -> None:
    """``tasks/cancel``, shielded and bounded: the call is going away either way."""
    with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_SECONDS):
        try:
            request = CancelTask(params=TaskParams(task_id=task_id))
            await session.send_request(request, types.EmptyResult)
        except Exception as exc:  # boundary: cancelling is best effort
            logger.debug("tasks/cancel %s failed: %s", task_id, exc)
    if hooks is not None:
        _ended(hooks, task_id, "cancelled")


def _ended(hooks: TaskHooks, task_id: str, status: str) -> None:
    journal = hooks.policy.journal
    if journal is not None:
        journal.task_ended(task_id, status)
