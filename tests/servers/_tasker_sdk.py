"""tasker on the SDK's ``MCPServer`` and its ``Extension`` interface: ``--http`` and ``--sdk``.

The task logic is :class:`tests.servers._tasker_book.TaskBook`'s; this module only carries it
over the SDK's transports: Streamable HTTP on 127.0.0.1 (``--http``, through
:func:`tests.servers.http_server.serve`, which prints ``READY <url>``), and stdio (``--sdk``,
the reference the raw stdio server is held to in ``tests/test_servers_tasker.py``). The
extension is advertised (unless ``--rude``); ``tools/call`` goes through its interceptor, and
the tools the SDK lists (their schemas made by pydantic from the functions below, so their
names and titles are the wire's) run synchronously in a worker thread. Imported only for those
two options: importing ``mcp`` costs a second of CPU.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import Field

from tests.servers._era import RpcError
from tests.servers._tasker_book import TASKS, TaskBook


def _mcp_error(exc: RpcError) -> MCPError:
    return MCPError(code=exc.code, message=exc.message, data=exc.data)


class TaskIdParams(types.RequestParams):
    task_id: str


class UpdateParams(TaskIdParams):
    input_responses: dict[str, Any] = Field(default_factory=dict[str, Any])


class TasksExtension(Extension):
    """SEP-2663 on the SDK: the three methods and the ``tools/call`` interceptor."""

    identifier = TASKS

    def __init__(self, book: TaskBook) -> None:
        self.book = book

    def declared(self, ctx: ServerRequestContext[Any, Any]) -> bool:
        caps = ctx.session.client_capabilities
        extensions = caps.extensions if caps is not None else None
        return self.book.declared(ctx.protocol_version in MODERN_PROTOCOL_VERSIONS, extensions)

    @staticmethod
    def mcp_name(ctx: ServerRequestContext[Any, Any]) -> str | None:
        headers = getattr(ctx.request, "headers", None)  # Streamable HTTP only
        return headers.get("mcp-name") if headers is not None else None

    def methods(self) -> Sequence[MethodBinding]:
        return (
            MethodBinding("tasks/get", TaskIdParams, self.tasks_get),
            MethodBinding("tasks/update", UpdateParams, self.tasks_update),
            MethodBinding("tasks/cancel", TaskIdParams, self.tasks_cancel),
        )

    async def tasks_get(
        self, ctx: ServerRequestContext[Any, Any], params: TaskIdParams
    ) -> HandlerResult:
        try:
            return self.book.get(params.task_id, self.declared(ctx), self.mcp_name(ctx))
        except RpcError as exc:
            raise _mcp_error(exc) from None

    async def tasks_update(
        self, ctx: ServerRequestContext[Any, Any], params: UpdateParams
    ) -> HandlerResult:
        try:
            return self.book.update(
                params.task_id, params.input_responses, self.declared(ctx), self.mcp_name(ctx)
            )
        except RpcError as exc:
            raise _mcp_error(exc) from None

    async def tasks_cancel(
        self, ctx: ServerRequestContext[Any, Any], params: TaskIdParams
    ) -> HandlerResult:
        try:
            return self.book.cancel(params.task_id, self.declared(ctx), self.mcp_name(ctx))
        except RpcError as exc:
            raise _mcp_error(exc) from None

    async def intercept_tool_call(
        self,
        params: types.CallToolRequestParams,
        ctx: ServerRequestContext[Any, Any],
        call_next: CallNext,
    ) -> HandlerResult:
        self.book.log("tools/call", {"name": params.name, "arguments": params.arguments})
        try:
            started = self.book.call(
                params.name,
                params.arguments,
                declared=self.declared(ctx),
                input_responses=(ctx.params or {}).get("inputResponses"),
            )
        except RpcError as exc:
            raise _mcp_error(exc) from None
        return started if started is not None else await call_next(ctx)


def build(book: TaskBook) -> MCPServer:
    """The ``MCPServer`` of tasker: the extension, and the tools as they run without a task."""

    @asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[dict[str, Any]]:
        try:
            yield {}
        finally:
            await anyio.to_thread.run_sync(book.shutdown)

    mcp = MCPServer("tasker", version="0.1.0", extensions=[TasksExtension(book)], lifespan=lifespan)
    if book.rude:  # serve the methods, but do not say so in server/discover
        mcp._lowlevel_server.extensions.pop(TASKS)
    _add_tools(mcp, book)
    return mcp


def _add_tools(mcp: MCPServer, book: TaskBook) -> None:
    """The tools as the SDK lists them; each runs :meth:`TaskBook.run` in a worker thread."""

    def run(name: str) -> Callable[..., Awaitable[str]]:
        async def synchronously(**args: Any) -> str:
            cancelled = threading.Event()
            try:
                result = await anyio.to_thread.run_sync(
                    book.run, name, args, cancelled, abandon_on_cancel=True
                )
            except RpcError as exc:
                raise _mcp_error(exc) from None
            finally:
                cancelled.set()  # a cancelled call's work stops too
            return str(result["content"][0]["text"])

        return synchronously

    @mcp.tool(description="Greet someone (never a task).", structured_output=False)
    async def greet(name: str) -> str:
        return await run("greet")(name=name)

    @mcp.tool(
        name="slow_compute",
        description="Compute slowly (a task): seconds of work in steps.",
        structured_output=False,
    )
    async def slow_compute_tool(seconds: float = 1, steps: int = 4) -> str:
        return await run("slow_compute")(seconds=seconds, steps=steps)

    @mcp.tool(
        name="confirm_delete",
        description="Delete a path after asking (a task that needs input).",
        structured_output=False,
    )
    async def confirm_delete_tool(path: str) -> str:
        return await run("confirm_delete")(path=path)

    @mcp.tool(
        name="failing_job",
        description="A job that ends with a tool error (a task).",
        structured_output=False,
    )
    async def failing_job_tool() -> str:
        return await run("failing_job")()

    @mcp.tool(
        name="protocol_error_job",
        description="A job that fails with a protocol error (a task).",
        structured_output=False,
    )
    async def protocol_error_job_tool() -> str:
        return await run("protocol_error_job")()

    @mcp.tool(
        name="required_task", description="A job that must run as a task.", structured_output=False
    )
    async def required_task_tool() -> str:
        return await run("required_task")()

    @mcp.tool(
        name="multi_input",
        description="Ask two things at once (a task that needs input).",
        structured_output=False,
    )
    async def multi_input_tool() -> str:
        return await run("multi_input")()

    @mcp.tool(
        name="test_tool_with_task",
        description="Ask a name first (SEP-2322), then greet it in a task.",
        structured_output=False,
    )
    async def test_tool_with_task_tool() -> str:
        return await run("test_tool_with_task")()

    @mcp.tool(
        name="wait_forever",
        description="Wait until cancelled (a task), then write a marker file.",
        structured_output=False,
    )
    async def wait_forever_tool(marker: str) -> str:
        return await run("wait_forever")(marker=marker)


def serve(book: TaskBook, *, http: bool) -> None:
    mcp = build(book)
    if http:
        import asyncio

        from tests.servers.http_server import serve as serve_http

        asyncio.run(serve_http(mcp.streamable_http_app(host="127.0.0.1"), 0))
    else:
        mcp.run()
