"""What lets the chat be built finished (issue 30 item 4): the agent and its sampler share
one model through a ``ModelRef``, and the parent of a subagent is the agent running the call
(then handed down), so nothing needs a reference to a part made later."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.core.agent.loop import Agent, running_agent
from codebot_mcp.core.agent.permissions import PermissionGate
from codebot_mcp.core.agent.sampling import ModelRef, Sampler
from codebot_mcp.core.agent.session import Session
from codebot_mcp.core.model.client import ChatModel
from codebot_mcp.core.subagents.delegation import GENERAL, Subagents, load_agents
from codebot_mcp.core.subagents.tasktool import TaskTool
from codebot_mcp.core.tools.base import Capability, Origin, Permission, ToolInfo, ToolResult
from codebot_mcp.core.tools.builtin import builtin_tools
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI

pytestmark = pytest.mark.anyio


async def test_the_agent_and_its_sampler_answer_with_one_model(
    model: ChatModel, tmp_path: Path
) -> None:
    models = ModelRef(model)
    sampler = Sampler(models)
    agent = Agent(Session([], cwd=tmp_path), models, PermissionGate(), sampler=sampler)
    assert sampler.model() is agent.model is model
    other = ChatModel(model.client, model.config.with_model("other-model"))
    agent.model = other  # /model, or a custom command's `model:` while it runs
    assert sampler.model() is other  # the servers' sampling follows it
    assert models.model is other


@dataclass
class Probe:
    """A tool that notes which agent runs it; ``inner`` runs a second agent inside the call
    (as ``task`` runs a subagent)."""

    name: str
    inner: Agent | None = None
    seen: list[Agent | None] = field(default_factory=list[Agent | None])
    description: str = "Notes the running agent."

    def schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": {}}

    @property
    def info(self) -> ToolInfo:
        return ToolInfo(Origin.BUILTIN, Permission(Capability.READ, "probe"))

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        self.seen.append(running_agent())
        if self.inner is not None:
            await self.inner.run("go on")
        return ToolResult("noted")


async def test_a_call_runs_under_the_agent_running_it(
    fake: FakeOpenAI, model: ChatModel, tmp_path: Path
) -> None:
    deep = Probe("deep")
    child = Agent(Session([deep], cwd=tmp_path), model, PermissionGate(assume_yes=True))
    outer = Probe("outer", inner=child)
    parent = Agent(Session([outer], cwd=tmp_path), model, PermissionGate(assume_yes=True))
    fake.queue(
        fo.tool_calls(("outer", {})),  # the parent calls `outer`, which runs the child
        fo.tool_calls(("deep", {})),  # the child calls `deep`
        fo.text("child done"),
        fo.text("parent done"),
    )
    assert running_agent() is None
    result = await parent.run("start")
    assert result.text == "parent done"
    assert outer.seen == [parent]
    assert deep.seen == [child]  # inside the child's run, the child
    assert running_agent() is None  # nothing is left behind after the run


async def test_a_subagents_own_task_keeps_the_chats_agent_as_parent(
    model: ChatModel, tmp_path: Path
) -> None:
    parent = Agent(Session(builtin_tools(tmp_path), cwd=tmp_path), model, PermissionGate())
    catalog = load_agents(None, include_project=False, claude=False)
    top = Subagents(catalog, cwd=tmp_path, project_root=None, max_depth=3)
    assert top.parent is None  # the top one asks who runs its call
    tools = top.tools_for(catalog.specs[GENERAL], parent)
    (task,) = [t for t in tools if isinstance(t, TaskTool)]
    below = task.runner
    assert isinstance(below, Subagents)
    assert below.parent is parent and below.depth == 1 and below.runs is top.runs
