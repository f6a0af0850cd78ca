from __future__ import annotations

import json
from pathlib import Path

import pytest

from codebot_mcp.core.agent import prompt
from codebot_mcp.core.agent.session import Session
from codebot_mcp.core.tools.base import Capability, Tool
from codebot_mcp.core.tools.builtin import builtin_tools
from tests.core.fakes import ListSource, ScriptedTool

pytestmark = pytest.mark.anyio

BUILTINS = ["read", "edit", "write", "glob", "grep", "bash"]


def mcp(server: str, tool: str, capability: Capability = Capability.READ) -> ScriptedTool:
    return ScriptedTool(f"mcp__{server}__{tool}", capability, description=f"{tool} of {server}")


def names(tools: list[Tool]) -> list[str]:
    return [t.name for t in tools]


def test_project_notes_read_agents_md_and_codebot_md(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("agents")
    assert "## AGENTS.md\nagents" in prompt.instructions_block(tmp_path)
    (tmp_path / "CODEBOT.md").write_text("use tabs")
    block = prompt.instructions_block(tmp_path)
    assert block.index("## AGENTS.md\nagents") < block.index("## CODEBOT.md\nuse tabs")


def test_project_notes_found_in_project_root(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("root rules")
    (tmp_path / "sub").mkdir()
    assert "root rules" in prompt.instructions_block(tmp_path / "sub", tmp_path)


def test_dynamic_block_sorted_by_server_then_tool() -> None:
    tools: list[Tool] = [mcp("zeta", "b"), mcp("alpha", "y"), mcp("alpha", "x")]
    block = prompt.dynamic_block(tools, "## alpha\nbe nice", plan_mode=False)
    assert block.index("## alpha") < block.index("## zeta")
    assert block.index("mcp__alpha__x: x of alpha") < block.index("mcp__alpha__y")
    assert block.endswith("# MCP server instructions\n\n## alpha\nbe nice")
    assert prompt.dynamic_block([], "", plan_mode=False) == ""


def test_server_attribute_beats_the_name() -> None:
    tool = ScriptedTool("mcp__my-srv__t", server="my__srv")
    assert prompt.server_of(tool) == "my__srv"
    assert prompt.server_of(ScriptedTool("mcp__a-b__c__d")) == "a-b"


async def test_before_prompt_replaces_mcp_layer_and_rebuilds_prompt(tmp_path: Path) -> None:
    source = ListSource([mcp("docs", "search")], instructions="## docs\nSearch first.")
    session = Session(builtin_tools(tmp_path), source, cwd=tmp_path)
    assert names(session.active_tools) == BUILTINS
    assert "# MCP tools" not in session.system_prompt
    assert await session.before_prompt() is True
    assert names(session.all_tools) == [*BUILTINS, "mcp__docs__search"]
    assert session.find_tool("mcp__docs__search") is not None
    assert "## docs\n- mcp__docs__search" in session.system_prompt
    assert "Search first." in session.system_prompt
    assert await session.before_prompt() is False  # clean: nothing changes
    source.publish([mcp("docs", "fetch")])
    assert await session.before_prompt() is True
    assert names(session.all_tools) == [*BUILTINS, "mcp__docs__fetch"]
    assert session.find_tool("mcp__docs__search") is None


async def test_unchanged_tool_set_is_byte_identical(tmp_path: Path) -> None:
    tools: list[Tool] = [mcp("a", "x"), mcp("b", "y")]
    source = ListSource(tools, instructions="## a\nhi")
    session = Session(builtin_tools(tmp_path), source, cwd=tmp_path)
    await session.before_prompt()
    first = (json.dumps(session.tool_schemas()), session.system_prompt)
    source.publish(list(tools))  # list_changed with the same tools
    assert await session.before_prompt() is True
    assert (json.dumps(session.tool_schemas()), session.system_prompt) == first
    other = Session(builtin_tools(tmp_path), ListSource(tools, "## a\nhi"), cwd=tmp_path)
    await other.before_prompt()
    assert (json.dumps(other.tool_schemas()), other.system_prompt) == first


async def test_plan_mode_keeps_read_tools_and_survives_refresh(tmp_path: Path) -> None:
    source = ListSource([mcp("a", "get"), mcp("a", "put", Capability.WRITE)])
    session = Session(builtin_tools(tmp_path), source, cwd=tmp_path, plan_mode=True)
    await session.before_prompt()
    read_only = ["read", "glob", "grep"]
    assert names(session.active_tools) == [*read_only, "mcp__a__get"]
    assert "Plan mode is on" in session.system_prompt
    assert [s["function"]["name"] for s in session.tool_schemas()] == [*read_only, "mcp__a__get"]
    source.publish([mcp("a", "get"), mcp("a", "list"), mcp("a", "rm", Capability.EXECUTE)])
    await session.before_prompt()
    assert names(session.active_tools) == [*read_only, "mcp__a__get", "mcp__a__list"]
    session.set_plan_mode(False)
    assert "Plan mode" not in session.system_prompt
    assert len(session.active_tools) == 9


def test_messages_and_clear(tmp_path: Path) -> None:
    session = Session([], None, cwd=tmp_path)
    session.history.append({"role": "user", "content": "hi"})
    assert [m["role"] for m in session.messages()] == ["system", "user"]
    assert session.messages()[0]["content"].startswith("You are codebot")
    session.clear()
    assert session.messages()[1:] == []
