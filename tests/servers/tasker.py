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

Two transports, one task logic (:class:`~tests.servers._tasker_book.TaskBook`: the state
machine, the three methods, TTL and poll interval, ``--rude``, the log; the work runs in a
thread per task):

- **stdio** (the default, 20 starts a test run) stands on the raw two-era base
  (:mod:`tests.servers._era`) and imports only the standard library: a start costs 0.07 s of
  CPU here, against 1.2 s on the SDK's ``MCPServer``.
- **Streamable HTTP** (``--http``) stays on the SDK's ``MCPServer`` and its ``Extension``
  interface (:mod:`tests.servers._tasker_sdk`), imported only then. It starts twice a run, and
  a raw one would be a second implementation of HTTP sessions, SSE and the SEP-2663 routing
  headers, which are what the conformance suite's scenarios check there; it would save two
  seconds of CPU. ``--sdk`` serves stdio through the same SDK server: the reference that
  ``tests/test_servers_tasker.py`` holds the raw one to, answer for answer, in both eras.

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
from typing import Any, ClassVar

from tests.servers._era import (
    Call,
    EraServer,
    InvalidParams,
    schema_of,
    text_result,
    tool_error,
)
from tests.servers._mcpserver import ToolFailure, check_arguments
from tests.servers._tasker_book import TASKS, Cancelled, TaskBook


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
        schema = SCHEMAS[name]
        try:
            checked = check_arguments(schema["title"].removesuffix("Arguments"), schema, arguments)
            return self.book.run(name, checked, call.cancelled)
        except ToolFailure as exc:
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
