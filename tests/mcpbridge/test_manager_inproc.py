"""The fast tier: the Manager's state changes against SDK servers served in this process.

Each server here is a real low-level SDK ``Server`` reached through the SDK's in-memory
transport (``Manager(in_process=...)``): the same handshake, listing, calls and change
notifications as a subprocess, without the process. The real-process tests beside this
file (``test_manager.py``, ``test_faults.py``) stay: they cover launching, pipes and exits.
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest
from mcp.server import Server, ServerRequestContext
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)

from codebot_mcp.mcpbridge.connection.manager import Manager
from tests.helpers import server_config, tool_named

pytestmark = pytest.mark.anyio

EMPTY: dict[str, Any] = {"type": "object", "properties": {}}


class Toolbox:
    """A server whose tools a test changes; ``lists`` counts the ``tools/list`` requests."""

    def __init__(self, name: str, *tools: str, instructions: str | None = None) -> None:
        self.tools = {t: Tool(name=t, description=f"{t} tool", input_schema=EMPTY) for t in tools}
        self.lists = 0
        self.server: Server[Any] = Server(
            name,
            version="1.0",
            instructions=instructions,
            on_list_tools=self._list,
            on_call_tool=self._call,
        )

    async def _list(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        self.lists += 1
        return ListToolsResult(tools=list(self.tools.values()))

    async def _call(
        self, ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        if params.name == "fail":
            return CallToolResult(content=[TextContent(text="it broke")], is_error=True)
        if params.name == "grow":
            name = str((params.arguments or {}).get("name"))
            self.tools[name] = Tool(name=name, description="grown", input_schema=EMPTY)
            await ctx.session.send_tool_list_changed()
            return CallToolResult(content=[TextContent(text=f"added {name}")])
        return CallToolResult(content=[TextContent(text=f"{params.name} ran")])


def config(name: str, **extra: Any) -> Any:
    # The command is never run: the manager serves the matching in-process server instead.
    return server_config(name, {"command": "in-process", "protocol": "legacy", **extra})


async def test_start_lists_sorted_tools_and_instructions() -> None:
    b, a = Toolbox("b", "zeta", "alpha", instructions="Use b."), Toolbox("a", "one")
    with anyio.fail_after(10):
        async with Manager(
            {"b": config("b"), "a": config("a")}, in_process={"b": b.server, "a": a.server}
        ) as manager:
            await manager.start_all()
            assert manager.failures == {}
            names = [t.name for t in manager.tools()]
            assert names == ["mcp__a__one", "mcp__b__alpha", "mcp__b__zeta"]
            assert manager.instructions() == "## b\nUse b."
            assert [(s.name, s.status, s.tool_count) for s in manager.status()] == [
                ("a", "connected", 1),
                ("b", "connected", 2),
            ]


async def test_the_first_refresh_reports_the_start_and_a_clean_one_does_no_io() -> None:
    box = Toolbox("s", "echo")
    with anyio.fail_after(10):
        async with Manager({"s": config("s")}, in_process={"s": box.server}) as manager:
            await manager.start_all()
            listed = box.lists
            first = await manager.refresh_if_dirty()
            assert first is not None and [t.name for t in first] == ["mcp__s__echo"]
            for _ in range(100):
                assert await manager.refresh_if_dirty() is None
            assert box.lists == listed  # clean: no tools/list went out


async def test_list_changed_marks_dirty_and_one_refresh_relists_once() -> None:
    box = Toolbox("s", "grow")
    with anyio.fail_after(10):
        async with Manager({"s": config("s")}, in_process={"s": box.server}) as manager:
            await manager.start_all()
            await manager.refresh_if_dirty()
            grow = tool_named(manager, "mcp__s__grow")
            assert grow is not None
            before = box.lists
            assert (await grow.execute({"name": "fresh"})).text == "added fresh"
            client = manager.clients["s"]
            with anyio.fail_after(5):
                while not client.tools_stale:  # the notification only marks state
                    await anyio.lowlevel.checkpoint()
            assert box.lists == before
            refreshed = await manager.refresh_if_dirty()
            assert refreshed is not None
            assert [t.name for t in refreshed] == ["mcp__s__fresh", "mcp__s__grow"]
            assert box.lists == before + 1
            assert await manager.refresh_if_dirty() is None


async def test_a_tool_error_is_a_result_and_filters_apply() -> None:
    box = Toolbox("s", "fail", "keep", "skip")
    with anyio.fail_after(10):
        async with Manager(
            {"s": config("s", exclude_tools=["skip"])}, in_process={"s": box.server}
        ) as manager:
            await manager.start_all()
            assert [t.original_name for t in manager.tools()] == ["fail", "keep"]
            fail = tool_named(manager, "mcp__s__fail")
            assert fail is not None
            result = await fail.execute({})
            assert (result.text, result.is_error) == ("it broke", True)
            assert manager.clients["s"].connected


async def test_reconfigure_keeps_unchanged_replaces_changed_and_drops_removed() -> None:
    keep, change, drop = Toolbox("keep", "k"), Toolbox("change", "c"), Toolbox("drop", "d")
    servers = {"keep": config("keep"), "change": config("change"), "drop": config("drop")}
    in_process = {"keep": keep.server, "change": change.server, "drop": drop.server}
    with anyio.fail_after(10):
        async with Manager(servers, in_process=in_process) as manager:
            await manager.start_all()
            kept, changed = manager.clients["keep"], manager.clients["change"]
            await manager.reconfigure(
                {"keep": config("keep"), "change": config("change", tool_timeout=5)}
            )
            assert manager.clients["keep"] is kept  # same connection
            assert manager.clients["change"] is not changed and not changed.connected
            assert "drop" not in manager.clients
            assert {s.name for s in manager.status()} == {"keep", "change"}
            refreshed = await manager.refresh_if_dirty()
            assert refreshed is not None
            assert [t.name for t in refreshed] == ["mcp__change__c", "mcp__keep__k"]


async def test_invalid_and_disabled_entries_are_states_not_errors() -> None:
    box = Toolbox("ok", "t")
    servers = {
        "ok": config("ok"),
        "off": config("off", enabled=False),
        "bad": server_config("bad", {"url": "ftp://nope"}),
    }
    with anyio.fail_after(10):
        async with Manager(servers, in_process={"ok": box.server}) as manager:
            await manager.start_all()
            states = {s.name: s.status for s in manager.status()}
            assert states == {"ok": "connected", "off": "disabled", "bad": "failed"}
            assert manager.failures["bad"].stage == "config"
            assert [t.server for t in manager.tools()] == ["ok"]


async def test_every_mcp_tool_carries_its_record() -> None:
    from codebot_mcp.core.tools.base import Capability, Origin, ToolInfo
    from codebot_mcp.mcpbridge.tools.tool_pins import tool_hash

    box = Toolbox("s", "read_notes", "delete_note")
    with anyio.fail_after(10):
        async with Manager({"s": config("s")}, in_process={"s": box.server}) as manager:
            await manager.start_all()
            infos = {t.name: (t, t.info) for t in manager.tools()}
            assert sorted(infos) == ["mcp__s__delete_note", "mcp__s__read_notes"]
            for tool, info in infos.values():
                assert isinstance(info, ToolInfo) and info.origin is Origin.MCP
                assert (info.server, info.original_name) == ("s", tool.tool.name)
                assert info.fingerprint is not None and info.fingerprint() == tool_hash(tool.tool)
                assert (info.reach, info.sandbox, info.preview) == (None, None, None)
                assert tool.info is info  # classified once
            read = infos["mcp__s__read_notes"][1].permission
            delete = infos["mcp__s__delete_note"][1].permission
            assert (read.capability, delete.capability) == (Capability.READ, Capability.WRITE)
