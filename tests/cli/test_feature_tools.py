"""The features' tools reach a chat's session only through the kernel's registry
(``core.tools.featuretools``): a feature registered there is offered to the model, in its
place, over the objects the composition root made; and no module but the features' own list
(``core/toollist.py``) names a feature's tool module."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import grimp
import pytest

from codebot_mcp.cli.app import run
from codebot_mcp.core.jobs.jobtable import JobTable
from codebot_mcp.core.tools import featuretools
from codebot_mcp.core.tools.base import Capability, Origin, Permission, Tool, ToolInfo, ToolResult
from codebot_mcp.core.tools.featuretools import Place, ToolContext
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import write_settings


class ProbeTool:
    """A tool of a feature the kernel never heard of."""

    name = "probe"
    description = "A probe."

    def __init__(self, made: ToolContext) -> None:
        self.made = made

    def schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": {}}

    @property
    def info(self) -> ToolInfo:
        return ToolInfo(Origin.BUILTIN, Permission(Capability.READ, "a probe"))

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        return ToolResult("probed")


@pytest.fixture
def probe() -> Iterator[list[ToolContext]]:
    """Registers the probe feature after the session's own tools; the contexts it was given."""
    given: list[ToolContext] = []

    def factory(made: ToolContext) -> list[Tool]:
        given.append(made)
        return [ProbeTool(made)]

    featuretools.feature_tools(ToolContext(Path()), Place.AFTER_SESSION)  # the features loaded
    featuretools.register_tools("probe", factory, place=Place.AFTER_SESSION)
    try:
        yield given
    finally:
        del featuretools._REGISTRY["probe"]


def test_a_registered_feature_s_tools_reach_the_chat_in_their_place(
    tmp_path: Path, fake: FakeOpenAI, probe: list[ToolContext], capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(tmp_path, {"base_url": fake.base_url})
    fake.queue(fo.tool_calls(("probe", {})), fo.text("done"))
    assert run(["--cwd", str(tmp_path), "chat", "-p", "x"]) == 0, capsys.readouterr()
    names = [t["function"]["name"] for t in fake.bodies[0]["tools"]]
    # after the session's own and the jobs' (registered first), before anything else
    assert names[names.index("todo_write") :] == ["todo_write", "bash_output", "bash_kill", "probe"]
    assert any(m.get("content") == "probed" for m in fake.bodies[1]["messages"])
    (made,) = probe  # one session, one context: the objects the composition root made
    assert made.cwd == tmp_path and isinstance(made.get(JobTable), JobTable)


def test_only_the_features_list_names_a_feature_s_tool_module() -> None:
    graph = grimp.build_graph(
        "codebot_mcp.core", "codebot_mcp.mcpbridge", "codebot_mcp.cli", cache_dir=None
    )
    assert graph.find_modules_that_directly_import("codebot_mcp.core.jobs.jobtools") == {
        "codebot_mcp.core.toollist"
    }
    assert graph.find_modules_that_directly_import("codebot_mcp.core.skills.skilltool") == {
        "codebot_mcp.core.toollist"
    }
    assert graph.find_modules_that_directly_import("codebot_mcp.core.subagents.tasktool") == {
        "codebot_mcp.core.subagents.delegation"  # the feature's own module registers ``task``
    }
