"""Issue 13's measurements: tool search request size, a 200-turn compaction session, own time.

All three run in this process: the real session, agent and ``openai`` client against the
loopback model (target 9), or against the session alone (targets 8 and 10), so what is
measured is codebot's own work.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import anyio

from codebot_mcp.core.agent.context import ContextBudget
from codebot_mcp.core.agent.loop import Agent
from codebot_mcp.core.agent.permissions import PermissionGate
from codebot_mcp.core.agent.session import Session
from codebot_mcp.core.model.client import ChatModel, create_client
from codebot_mcp.core.model.config import ModelConfig
from codebot_mcp.core.model.stream import Reply, ToolCall, Usage
from codebot_mcp.core.model.tokens import estimate
from codebot_mcp.core.tools.base import Capability, Origin, Permission, Tool, ToolInfo, ToolResult
from codebot_mcp.core.tools.builtin import builtin_tools
from tests.bench.harness import Row
from tests.fakes import openai_turns as fo
from tests.fakes.openai_handler import count_tokens
from tests.fakes.openai_server import FakeOpenAI

Log = Callable[[str], None]
SERVERS = 5
TOOLS_PER_SERVER = 100


class CatalogTool:
    """An MCP-shaped tool with a realistic schema (a description and four parameters)."""

    def __init__(self, server: str, index: int) -> None:
        self.server = server
        self.original_name = (
            f"{('get', 'list', 'create', 'update', 'delete')[index % 5]}_item_{index}"
        )
        self.name = f"mcp__{server}__{self.original_name}"
        self.description = (
            f"{self.original_name.replace('_', ' ').capitalize()} in the {server} service. "
            "Returns the matching records as JSON; fails when the caller lacks access. "
            "Use the filter to narrow the result and the page token to continue a listing."
        )

    def schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "The record's identifier."},
                "filter": {"type": "string", "description": "A filter expression, e.g. 'a=1'."},
                "page_size": {"type": "integer", "minimum": 1, "maximum": 100},
                "page_token": {"type": "string", "description": "From the previous page."},
            },
            "required": ["id"],
        }

    @property
    def info(self) -> ToolInfo:
        permission = Permission(Capability.READ, "bench")
        return ToolInfo(
            Origin.MCP, permission, server=self.server, original_name=self.original_name
        )

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        return ToolResult(json.dumps({"tool": self.name, "arguments": dict(arguments)}))


class CatalogSource:
    def __init__(self, tools: list[Tool]) -> None:
        self._tools = tools
        self.dirty = True

    async def refresh_if_dirty(self) -> list[Tool] | None:
        if not self.dirty:
            return None
        self.dirty = False
        return list(self._tools)

    def tools(self) -> list[Tool]:
        return list(self._tools)

    def instructions(self) -> str:
        return ""


def _directory(ws: Any, name: str) -> Path:
    """A fresh directory in the run's workspace (removed with it)."""
    directory = Path(ws.root) / name
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def catalog() -> list[Tool]:
    return [CatalogTool(f"srv{s}", i) for s in range(SERVERS) for i in range(TOOLS_PER_SERVER)]


async def _session(tool_search: bool, root: Path) -> Session:
    session = Session(builtin_tools(root), CatalogSource(catalog()), cwd=root)
    session.set_tool_search(tool_search)
    await session.before_prompt()
    return session


def request_tokens(session: Session) -> int:
    """Tokens of the tools plus the system prompt (estimated, the same way for both)."""
    return estimate(session.tool_schemas()) + estimate(session.system_prompt)


def target_8(ws: Any, n: int, log: Log) -> list[Row]:
    root = _directory(ws, "tool-search")
    on = anyio.run(_session, True, root)
    off = anyio.run(_session, False, root)
    a, b = request_tokens(on), request_tokens(off)
    log(f"target 8: tool search on {a} tokens, off {b} tokens")
    return [
        Row(
            "8",
            "request size, 500 MCP tools on 5 servers: tool search on vs off",
            "tokens",
            float(a),
            float(b),
            limit=0.15,
            note=f"tools + system prompt, estimated at 4 characters a token; "
            f"{len(on.tool_schemas())} vs {len(off.tool_schemas())} tool schemas",
        )
    ]


# -- 9: a scripted 200-turn session against the loopback model, in a small window -------------

WINDOW = 16_000
TURNS = 200


def _responder(big: str) -> Callable[[dict[str, Any]], fo.Turn]:
    def respond(body: dict[str, Any]) -> fo.Turn:
        messages = body["messages"]
        if messages[0]["content"].startswith("You are compacting"):
            return fo.text(
                "Summary: the user asked a series of questions about notes.txt; "
                "each was answered by reading it.",
                chunks=1,
            )
        if messages[-1]["role"] == "user":
            return fo.tool_calls(("read", {"path": "notes.txt"}))
        return fo.text(f"Answer {len(messages)}: the notes say what they say.", chunks=2)

    return respond


async def _long_session(root: Path) -> dict[str, Any]:
    big = "".join(f"line {i}: {'notes ' * 12}\n" for i in range(120))  # ~9 kB per read
    (root / "notes.txt").write_text(big)
    with FakeOpenAI(respond=_responder(big), window=WINDOW) as server:
        config = ModelConfig("fake-model", server.base_url, "sk-bench", None)
        model = ChatModel(create_client(config), config)
        session = Session(builtin_tools(root), cwd=root)
        agent = Agent(session, model, PermissionGate(), budget=ContextBudget(WINDOW, reserve=1000))
        session.set_context_window(WINDOW)
        failures: list[str] = []
        began = time.perf_counter()
        for turn in range(TURNS):
            try:
                await agent.run(f"Question {turn}: what do the notes say now?")
            except Exception as exc:  # the measurement reports, it does not stop
                failures.append(f"turn {turn}: {type(exc).__name__}: {exc}")
                break
        seconds = time.perf_counter() - began
        largest = max(count_tokens(r.body) for r in server.requests)
        await model.aclose()
        return {
            "requests": len(server.requests),
            "rejected": server.rejected,
            "summaries": agent.budget.summary_requests,
            "compactions": agent.budget.compactions,
            "largest": largest,
            "failures": failures,
            "seconds": seconds,
        }


def target_9(ws: Any, n: int, log: Log) -> list[Row]:
    root = _directory(ws, "compaction")
    done = anyio.run(_long_session, root)
    log(f"target 9: {done}")
    failed = "; ".join(done["failures"])[:200]
    if done["rejected"]:
        failed = failed or f"{done['rejected']} request(s) were rejected as too long"
    return [
        Row(
            "9",
            f"{TURNS}-turn session in a {WINDOW:,}-token window: largest request",
            "tokens",
            float(done["largest"]),
            limit=float(WINDOW),
            absolute=True,
            failed=failed,
            note=f"{done['requests']} requests, {done['summaries']} of them summaries, "
            f"{done['compactions']} compactions, {done['rejected']} rejected as too long, "
            f"{done['seconds']:.1f} s (the loopback server counts 3.5 characters a token)",
        ),
        Row("9", "requests spent on summaries", "requests", float(done["summaries"])),
    ]


# -- 10: codebot's own time per turn with 500 deferred tools ------------------------------------


class InstantModel(ChatModel):
    """Answers at once, so only codebot's own work is timed: one tool call, then text."""

    def __init__(self) -> None:
        config = ModelConfig("bench-model", "http://127.0.0.1:9/v1", "sk-bench", None)
        super().__init__(None, config)  # type: ignore[arg-type]
        self.calls = 0

    async def complete(
        self, messages: Any, tools: Any = (), on_text: Any = None, **_: Any
    ) -> Reply:
        self.calls += 1
        usage = Usage(1000, 20, reported=1)
        if messages[-1]["role"] == "user":
            call = ToolCall(f"c{self.calls}", "mcp__srv0__get_item_0", '{"id": "x"}')
            return Reply("", [call], "tool_calls", usage, "bench-model")
        return Reply("done", [], "stop", usage, "bench-model")


async def _own_time(root: Path, prompts: int) -> list[float]:
    from codebot_mcp.core.agent.history import SessionLog

    session = await _session(True, root)
    session.search.load([t for t in session.search.deferred if t.name == "mcp__srv0__get_item_0"])
    await session.before_prompt()
    model = InstantModel()
    agent = Agent(session, model, PermissionGate())
    session.recorder = SessionLog(root)
    per_turn: list[float] = []
    for i in range(prompts):
        began = time.perf_counter()
        result = await agent.run(f"prompt {i}")
        per_turn.append((time.perf_counter() - began) * 1000 / result.turns)
    return per_turn


def _markdown_stream() -> tuple[float, int]:
    """Feed an 84 kB answer (a 2,000-line code block) in 6-character deltas, as the REPL does
    on a terminal; returns (milliseconds per delta, deltas)."""
    import io

    from rich.console import Console

    from codebot_mcp.cli.repl.markdown import MarkdownStream

    code = "".join(f"x_{i} = compute({i}, 'value')  # comment\n" for i in range(2000))
    text = f"Intro.\n\n```python\n{code}```\n\nDone.\n"
    console = Console(file=io.StringIO(), force_terminal=True, width=100, color_system="256")
    stream = MarkdownStream(console)
    deltas = [text[i : i + 6] for i in range(0, len(text), 6)]
    began = time.perf_counter()
    for delta in deltas:
        stream.feed(delta)
    stream.close()
    return (time.perf_counter() - began) * 1000 / len(deltas), len(deltas)


def target_10(ws: Any, n: int, log: Log) -> list[Row]:
    root = _directory(ws, "own-time")
    home = os.environ.get("CODEBOT_HOME")
    os.environ["CODEBOT_HOME"] = str(ws.home)  # the saved sessions go to the workspace
    try:
        samples = anyio.run(_own_time, root, 40 * max(1, n // 5))
    finally:
        if home is None:
            os.environ.pop("CODEBOT_HOME", None)
        else:
            os.environ["CODEBOT_HOME"] = home
    value = statistics.median(samples)
    per_delta, deltas = _markdown_stream()
    return [
        Row(
            "10",
            "own time per model turn, 500 deferred tools (tool search on)",
            "ms",
            value,
            limit=10.0,
            absolute=True,
            codebot_samples=samples,
            note="prompt → tool call → answer against an instant model; includes the gate, "
            "the tool, the context estimate and saving the session (p90 "
            f"{sorted(samples)[int(len(samples) * 0.9)]:.2f} ms)",
        ),
        Row(
            "10",
            "REPL Markdown: an 84 kB answer with a 2,000-line code block, per 6-character delta",
            "ms",
            per_delta,
            limit=1.0,
            absolute=True,
            note=f"{deltas} deltas through MarkdownStream to a 256-colour console, the final "
            "highlighting of the code block included (streaming stays smooth: linear in the text)",
        ),
    ]
