"""``--continue`` picks running tasks back up (SEP-2663): each task a saved session started and
never saw end is followed again by its id, on the server that runs it.

A resumed task ends like any call: its result (or error) becomes a :class:`ToolResult` for the
model, under the tool's current model-visible name (the chat runtime puts it into the history:
the bridge never reaches into the agent). One that cannot be followed is reported
with the reason: its server is not connected (it stays pending for a later ``--continue``), or
the server no longer knows it (expired, or the server restarted: the journal forgets it).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
from mcp import MCPError
from pydantic import ValidationError

from codebot_mcp.core.tools.base import ToolResult
from codebot_mcp.mcpbridge.connection.explain import describe_invalid_result
from codebot_mcp.mcpbridge.connection.manager import Manager
from codebot_mcp.mcpbridge.connection.tool import to_tool_result
from codebot_mcp.mcpbridge.tools.naming import plain_name


@dataclass(frozen=True, slots=True)
class Resumed:
    """One pending task after ``--continue`` tried it."""

    record: Mapping[str, Any]
    name: str
    """The tool's model-visible name (``mcp__server__tool``)."""
    result: ToolResult | None
    """What the model is told, when the task ended; None when it could not be followed."""
    problem: str | None = None

    @property
    def task_id(self) -> str:
        return str(self.record.get("task_id", ""))

    @property
    def call_id(self) -> str:
        """A stable id for the call in the history (the original call id is not kept)."""
        return "call_task_" + hashlib.sha256(self.task_id.encode()).hexdigest()[:16]

    @property
    def arguments(self) -> str:
        return json.dumps(self.record.get("arguments") or {}, ensure_ascii=False)

    def describe(self) -> str:
        """One line for the user."""
        head = f"task {self.task_id[:8]} ({self.name})"
        if self.result is None:
            return f"{head} was not resumed: {self.problem}"
        state = "ended with an error" if self.result.is_error else "finished"
        return f"{head}, started in an earlier run, {state}; the model sees its result"


async def resume_tasks(manager: Manager, pending: Sequence[Mapping[str, Any]]) -> list[Resumed]:
    """Follow every pending task (in parallel) to its end; results in the order given."""
    out: list[Resumed | None] = [None] * len(pending)

    async def one(index: int, record: Mapping[str, Any]) -> None:
        out[index] = await _resume(manager, record)

    async with anyio.create_task_group() as tg:
        for index, record in enumerate(pending):
            tg.start_soon(one, index, record)
    return [r for r in out if r is not None]


async def _resume(manager: Manager, record: Mapping[str, Any]) -> Resumed:
    server, tool = str(record.get("server", "")), str(record.get("tool", ""))
    name = next(
        (t.name for t in manager.tools() if t.server == server and t.original_name == tool),
        plain_name(server, tool),
    )
    client = manager.clients.get(server)
    if client is None or not client.connected:
        return Resumed(record, name, None, f"server '{server}' is not connected (kept for later)")
    note = (
        f"[codebot: this call became task {record.get('task_id')} on server '{server}' in an "
        "earlier run, which ended before it did; the task was picked up again and finished]\n"
    )
    try:
        result = await client.resume_task(dict(record))
    except MCPError as exc:
        problem = f"server '{server}' answered: {client.redact(exc.message)}"
        return Resumed(record, name, ToolResult(note + problem, is_error=True), problem)
    except ValidationError as exc:
        problem = describe_invalid_result(exc, server)
        return Resumed(record, name, ToolResult(note + problem, is_error=True), problem)
    except (ConnectionError, OSError, TimeoutError) as exc:
        return Resumed(record, name, None, f"server '{server}': {client.redact(str(exc))}")
    done = to_tool_result(result)
    return Resumed(record, name, ToolResult(note + done.text, done.is_error, done.data))
