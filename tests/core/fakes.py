"""Small in-process tools and a tool source for core tests (real classes, no mocks)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio

from codebot_mcp.core.tools.base import (
    MCP_PREFIX,
    Capability,
    Origin,
    Permission,
    Tool,
    ToolInfo,
    ToolResult,
)


@dataclass
class ScriptedTool:
    """A tool that records its calls and answers with a fixed text (optionally after a delay)."""

    name: str
    capability: Capability = Capability.READ
    reply: str = "ok"
    description: str = "A scripted test tool.\nSecond line."
    delay: float = 0.0
    is_error: bool = False
    server: str | None = None
    calls: list[Mapping[str, Any]] = field(default_factory=list[Mapping[str, Any]])
    started: anyio.Event = field(default_factory=anyio.Event)
    finished: int = 0
    """How many calls ran to the end (a cancelled one does not)."""

    def schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": {"q": {"type": "string"}}}

    @property
    def info(self) -> ToolInfo:
        mcp = self.server is not None or self.name.startswith(MCP_PREFIX)
        origin = Origin.MCP if mcp else Origin.BUILTIN
        return ToolInfo(origin, Permission(self.capability, "scripted"), server=self.server)

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        self.calls.append(arguments)
        self.started.set()
        await anyio.sleep(self.delay)
        self.finished += 1
        return ToolResult(self.reply, is_error=self.is_error)


class ListSource:
    """A ToolSource whose tool set the test changes with :meth:`publish`."""

    def __init__(self, tools: list[Tool] | None = None, instructions: str = "") -> None:
        self._tools = list(tools or [])
        self._instructions = instructions
        self.dirty = bool(tools)
        self.refreshes = 0

    def publish(self, tools: list[Tool], instructions: str | None = None) -> None:
        self._tools = list(tools)
        if instructions is not None:
            self._instructions = instructions
        self.dirty = True

    async def refresh_if_dirty(self) -> list[Tool] | None:
        self.refreshes += 1
        if not self.dirty:
            return None
        self.dirty = False
        return list(self._tools)

    def tools(self) -> list[Tool]:
        return list(self._tools)

    def instructions(self) -> str:
        return self._instructions


class Meeting:
    """Tools that meet: none returns before ``count`` calls have started (serial execution
    never gets past the first), and the ``first`` tool's calls finish before the others."""

    def __init__(self, count: int, first: str) -> None:
        self.count = count
        self.first = first
        self.arrived = 0
        self.all_in = anyio.Event()
        self.first_done = anyio.Event()


@dataclass
class MeetingTool(ScriptedTool):
    """A :class:`ScriptedTool` that waits at a :class:`Meeting` instead of sleeping."""

    meeting: Meeting | None = None

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        meeting = self.meeting
        assert meeting is not None
        self.calls.append(arguments)
        self.started.set()
        meeting.arrived += 1
        if meeting.arrived == meeting.count:
            meeting.all_in.set()
        await meeting.all_in.wait()
        if self.name == meeting.first:
            meeting.first_done.set()
        else:
            await meeting.first_done.wait()
        return ToolResult(self.reply, is_error=self.is_error)
