"""Tool search ranking and byte-stability; saved sessions on disk; the context budget."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codebot_mcp.core.agent import history as sessions
from codebot_mcp.core.agent.context import ContextBudget, breakdown
from codebot_mcp.core.agent.session import Session
from codebot_mcp.core.model.tokens import known_window, window_for
from codebot_mcp.core.tools.builtin import builtin_tools
from codebot_mcp.core.tools.toolsearch import ToolIndex, tokens
from tests.core.fakes import ListSource, ScriptedTool

pytestmark = pytest.mark.anyio


def mcp(server: str, name: str, description: str) -> ScriptedTool:
    return ScriptedTool(f"mcp__{server}__{name}", description=description, server=server)


CATALOG = [
    mcp("gh", "create_issue", "Create a new issue in a GitHub repository."),
    mcp("gh", "list_pull_requests", "List pull requests of a repository."),
    mcp("db", "run_query", "Run a read-only SQL query against the database."),
    mcp("db", "list_tables", "List the tables of the database."),
    mcp("fs", "read_file", "Read a file from the sandbox."),
]


def test_tokens_split_names() -> None:
    assert tokens("mcp__gh__createIssue-now") == ["mcp", "gh", "create", "issue", "now"]


def test_bm25_ranks_names_and_descriptions() -> None:
    index = ToolIndex(CATALOG)
    assert index.search("sql query", 2)[0].name == "mcp__db__run_query"
    assert index.search("pull requests", 1)[0].name == "mcp__gh__list_pull_requests"
    assert [t.name for t in index.search("list_tables, create_issue", 5)] == [
        "mcp__gh__create_issue",
        "mcp__db__list_tables",
    ]
    assert index.search("kubernetes", 5) == []


async def test_loaded_tools_keep_load_order_and_requests_stay_byte_stable(
    tmp_path: Path,
) -> None:
    source = ListSource(list(CATALOG))
    session = Session(builtin_tools(tmp_path), source, cwd=tmp_path)
    session.set_tool_search(True)
    await session.before_prompt()
    assert session.search_on and len(session.deferred_names()) == 5
    catalog = session.system_prompt.split("# Deferred MCP tools")[1]
    assert catalog.index("- db: list_tables, run_query") < catalog.index("- fs: read_file")
    search = session.find_tool("search_tools")
    assert search is not None
    result = await search.execute({"query": "read_file"})
    assert "mcp__fs__read_file" in result.text
    assert session.find_tool("mcp__fs__read_file") is None  # from the next turn on
    assert await session.before_prompt() is True
    await search.execute({"query": "create_issue"})
    await session.before_prompt()
    names = [s["function"]["name"] for s in session.tool_schemas()]
    assert names[-3:] == ["search_tools", "mcp__fs__read_file", "mcp__gh__create_issue"]
    snapshot = (json.dumps(session.tool_schemas()), session.system_prompt)
    assert "read_file" not in session.system_prompt.split("# Deferred")[1]  # loaded: not listed
    source.publish(list(reversed(CATALOG)))  # the same tools, listed in another order
    assert await session.before_prompt() is True
    assert (json.dumps(session.tool_schemas()), session.system_prompt) == snapshot


def test_session_log_replays_resets_and_skips_a_torn_line(tmp_path: Path) -> None:
    session = Session([], None, cwd=tmp_path)
    log = sessions.SessionLog(tmp_path, scrub=lambda t: t.replace("hunter2", "***"))
    session.recorder = log
    session.history.append({"role": "user", "content": "pw hunter2"})
    session.checkpoint()
    session.history.append({"role": "assistant", "content": "ok"})
    session.checkpoint()
    session.history[:] = [{"role": "user", "content": "summary"}]
    session.rewrote_history()
    session.checkpoint()
    session.history.append({"role": "assistant", "content": "after"})
    session.checkpoint()
    with log.path.open("a") as fh:
        fh.write('{"type": "message", "mess')  # a crash mid-write
    assert sessions.replay(log.path) == [
        {"role": "user", "content": "summary"},
        {"role": "assistant", "content": "after"},
    ]
    assert "hunter2" not in log.path.read_text()
    (saved,) = sessions.list_sessions(tmp_path)
    assert saved.id == log.id and saved.title == "summary" and saved.messages == 2
    assert sessions.find(tmp_path, log.id[:8]).id == log.id


def test_replay_drops_a_turn_cut_before_its_tool_results(tmp_path: Path) -> None:
    session = Session([], None, cwd=tmp_path)
    session.recorder = log = sessions.SessionLog(tmp_path)
    session.history += [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "1"}]},
    ]
    session.checkpoint()
    assert sessions.replay(log.path) == [{"role": "user", "content": "go"}]


def test_windows_and_breakdown() -> None:
    assert known_window("gpt-4o-mini") == 128_000 and known_window("openai/gpt-4.1") == 1_047_576
    assert window_for("unknown-model", None) == 128_000
    assert window_for("gpt-4o", 32_000) == 32_000
    rows = breakdown({"identity": "x" * 400}, [{"a": 1}], {"gh": [{"b": "y" * 800}]}, [], 10_000)
    assert [r.label for r in rows][:2] == ["MCP tools: gh", "system: identity"]
    assert rows[-1].label == "free" and rows[-1].tokens == 10_000 - sum(r.tokens for r in rows[:-1])


def test_budget_calibrates_with_counted_usage() -> None:
    budget = ContextBudget(10_000)
    messages = [{"role": "user", "content": "x" * 4000}]
    estimate = budget.cost(messages, [])
    budget.observe(messages, [], estimate * 2)  # the server counts twice as many
    more = [*messages, {"role": "assistant", "content": "y" * 400}]
    assert budget.cost(more, []) >= estimate * 2 + 100


def test_instructions_lose_lines_naming_hidden_tools() -> None:
    from codebot_mcp.core.tools.sources import without_hidden_tools

    text = "Use search first.\nCall delete_all only when asked.\nThe delete_all_logs tool is gone."
    out = without_hidden_tools(text, ["delete_all"])
    assert out.splitlines()[:2] == ["Use search first.", "The delete_all_logs tool is gone."]
    assert "1 line(s)" in out
    assert without_hidden_tools(text, []) == text
