"""The features' loop parts reach a chat's agent only through the kernel's registry
(``core.agent.loopparts``): a feature registered for a protocol's slot is what the loop calls,
made over the objects the composition root provided; one feature per slot; and no module but
the features' own list (``core/looplist.py``) names a feature's loop part."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import grimp
import pytest

from codebot_mcp.cli.app import run
from codebot_mcp.core.agent import loopparts
from codebot_mcp.core.agent.events import AgentEvents
from codebot_mcp.core.agent.history import SessionLog
from codebot_mcp.core.agent.loopparts import LoopPartError, PartContext
from codebot_mcp.core.agent.permissions import HookDecision
from codebot_mcp.core.agent.protocols import TurnCheckpoints, TurnHooks
from codebot_mcp.core.model.stream import ToolCall
from codebot_mcp.core.tools.base import Tool, ToolResult
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import write_settings


class ProbeCheckpoints:
    """Checkpoints of a feature the kernel never heard of: it records what the loop called."""

    def __init__(self, calls: list[str]) -> None:
        self.calls = calls

    async def begin(self, prompt: str) -> str | None:
        self.calls.append(f"begin {prompt}")
        return None

    async def before_calls(
        self, calls: Sequence[ToolCall], find_tool: Callable[[str], Tool | None]
    ) -> str | None:
        self.calls.append("before " + ",".join(c.name for c in calls))
        return None

    def end(self) -> None:
        self.calls.append("end")

    async def settle(self) -> str | None:
        self.calls.append("settle")
        return None

    def for_subagent(self) -> ProbeCheckpoints:
        return self


class ProbeHooks:
    """Hooks of a feature the kernel never heard of: each prompt gains a line."""

    async def submit(self, prompt: str, events: AgentEvents) -> str:
        return f"{prompt}\n(probed)"

    async def before_call(
        self, call: ToolCall, tool: Tool, arguments: Mapping[str, Any], events: AgentEvents
    ) -> HookDecision | None:
        return None

    async def after_call(
        self,
        call: ToolCall,
        tool: Tool,
        arguments: Mapping[str, Any],
        result: ToolResult,
        events: AgentEvents,
        seconds: float = 0.0,
    ) -> ToolResult:
        return result

    async def keep_going(self, history: list[Any], active: bool, events: AgentEvents) -> bool:
        return False

    def listens(self, event: str, names: Sequence[str] = ()) -> bool:
        return False

    async def before_compact(
        self, trigger: str, instructions: str | None, events: AgentEvents
    ) -> None:
        return None

    async def post_compact(self, trigger: str, summary: str, events: AgentEvents) -> None:
        return None

    async def subagent_start(self, fields: Mapping[str, str], events: AgentEvents) -> str:
        return ""

    def for_subagent(self) -> ProbeHooks:
        return self


@pytest.fixture
def probes() -> Iterator[tuple[list[PartContext], list[str]]]:
    """The probe feature in both slots, in place of checkpoints and hooks; the contexts it
    was given and what the loop called of its checkpoints."""
    given: list[PartContext] = []
    calls: list[str] = []

    def checkpoints(context: PartContext) -> ProbeCheckpoints:
        given.append(context)
        return (
            context.current
            if isinstance(context.current, ProbeCheckpoints)
            else (ProbeCheckpoints(calls))
        )

    def hooks(context: PartContext) -> ProbeHooks:
        given.append(context)
        return ProbeHooks()

    loopparts.loop_part(object(), PartContext(Path(), Path()))  # the features loaded
    kept = dict(loopparts._REGISTRY)
    del loopparts._REGISTRY[TurnCheckpoints], loopparts._REGISTRY[TurnHooks]
    loopparts.register_loop_part("probe", TurnCheckpoints, checkpoints)
    loopparts.register_loop_part("probe", TurnHooks, hooks)
    try:
        yield given, calls
    finally:
        loopparts._REGISTRY.clear()
        loopparts._REGISTRY.update(kept)


def test_a_registered_feature_s_loop_parts_reach_the_chat(
    tmp_path: Path,
    fake: FakeOpenAI,
    probes: tuple[list[PartContext], list[str]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_settings(tmp_path, {"base_url": fake.base_url})
    fake.queue(fo.tool_calls(("todo_write", {"todos": []})), fo.text("done"))
    assert run(["--cwd", str(tmp_path), "chat", "-p", "x"]) == 0, capsys.readouterr()
    given, calls = probes
    assert fake.bodies[0]["messages"][-1]["content"] == "x\n(probed)"  # the probe's hooks ran
    # the turn as the hooks made it, its change, its end; the chat waits for it as it ends
    assert calls == ["begin x\n(probed)", "before todo_write", "end", "settle"]
    # the objects the composition root made: the settings, and the session's log
    assert all(c.settings.cwd == tmp_path for c in given)
    assert any(isinstance(c.get(SessionLog), SessionLog) for c in given)


def test_one_feature_per_slot() -> None:
    class Slot:
        """A protocol no feature fills."""

    loopparts.register_loop_part("one", Slot, lambda context: "made")
    try:
        loopparts.register_loop_part("one", Slot, lambda context: "again")  # the module re-run
        assert loopparts.loop_part(Slot, PartContext(Path(), Path())) == "again"
        with pytest.raises(LoopPartError, match="by 'one' and 'two'"):
            loopparts.register_loop_part("two", Slot, lambda context: "other")
    finally:
        del loopparts._REGISTRY[Slot]


def test_only_the_features_list_names_a_feature_s_loop_part() -> None:
    graph = grimp.build_graph(
        "codebot_mcp.core", "codebot_mcp.mcpbridge", "codebot_mcp.cli", cache_dir=None
    )
    for part in (
        "codebot_mcp.core.hooks.loophooks",
        "codebot_mcp.core.checkpoints.loopcheckpoints",
    ):
        assert graph.find_modules_that_directly_import(part) == {"codebot_mcp.core.looplist"}
    # nor does the composition root name what the loop calls
    for root in ("codebot_mcp.cli.chat_runtime", "codebot_mcp.cli.chat_parts"):
        assert "codebot_mcp.core.checkpoints.turns" not in graph.find_modules_directly_imported_by(
            root
        )
