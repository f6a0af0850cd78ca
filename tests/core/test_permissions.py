from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.core.agent.permissions import (
    Answer,
    ApprovalRequest,
    PermissionGate,
    RuleSource,
    Verdict,
)
from codebot_mcp.core.config.settings import PermissionRules
from codebot_mcp.core.tools.base import (
    Capability,
    Origin,
    Permission,
    Reach,
    ToolInfo,
    ToolResult,
)
from codebot_mcp.core.tools.boundary import Boundary

pytestmark = pytest.mark.anyio


@dataclass
class FakeTool:
    name: str
    capability: Capability = Capability.UNKNOWN
    description: str = ""

    def schema(self) -> dict[str, Any]:
        return {"type": "object"}

    @property
    def info(self) -> ToolInfo:
        reason = f"classified {self.capability.value} for the test"
        return ToolInfo(Origin.BUILTIN, Permission(self.capability, reason))

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        return ToolResult("ok")


READ = FakeTool("mcp__docs__search", Capability.READ)
WRITE = FakeTool("write", Capability.WRITE)
BASH = FakeTool("bash", Capability.EXECUTE)


@pytest.mark.parametrize(
    ("capability", "verdict"),
    [
        (Capability.READ, Verdict.ALLOW),
        (Capability.WRITE, Verdict.ASK),
        (Capability.NETWORK, Verdict.ASK),
        (Capability.EXECUTE, Verdict.ASK),
        (Capability.UNKNOWN, Verdict.ASK),
    ],
)
def test_capability_decides_without_rules(capability: Capability, verdict: Verdict) -> None:
    decision = PermissionGate().evaluate(FakeTool("t", capability))
    assert decision.verdict is verdict
    assert "classified" in decision.reason


def test_rules_deny_wins_then_ask_then_allow() -> None:
    rules = PermissionRules(allow=["mcp__*", "bash"], ask=["mcp__docs__*"], deny=["ba*"])
    gate = PermissionGate(rules, allow=["bash"])
    assert gate.evaluate(BASH).verdict is Verdict.DENY
    assert "'ba*'" in gate.evaluate(BASH).reason
    assert gate.evaluate(READ).verdict is Verdict.ASK  # ask rule beats the read capability
    assert gate.evaluate(FakeTool("mcp__git__push", Capability.WRITE)).verdict is Verdict.ALLOW


async def test_non_interactive_ask_is_denied_with_how_to_allow() -> None:
    decision = await PermissionGate().check(WRITE, {})
    assert decision.verdict is Verdict.DENY
    assert "--yes" in decision.reason and "--allow 'write'" in decision.reason


async def test_yes_and_allow_patterns() -> None:
    assert (await PermissionGate(assume_yes=True).check(WRITE, {})).allowed
    gate = PermissionGate(allow=["wr*"])
    assert (await gate.check(WRITE, {})).allowed
    assert not (await gate.check(BASH, {})).allowed
    denied = PermissionGate(PermissionRules(deny=["write"]), assume_yes=True)
    assert not (await denied.check(WRITE, {})).allowed


async def test_approver_once_always_no() -> None:
    answers = [Answer.ONCE, Answer.ALWAYS, Answer.NO]
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> Answer:
        asked.append(request)
        return answers.pop(0)

    gate = PermissionGate(approver=approver)
    assert (await gate.check(WRITE, {"path": "x"})).allowed
    assert (await gate.check(WRITE, {"path": "y"})).allowed  # "always"
    assert (await gate.check(WRITE, {"path": "z"})).reason == "approved for this session"
    no = await gate.check(BASH, {"command": "rm -rf /"})
    assert not no.allowed and no.reason == "the user denied it"
    assert [r.tool for r in asked] == ["write", "write", "bash"]
    assert asked[0].arguments == {"path": "x"}
    assert asked[0].permission.capability is Capability.WRITE
    assert asked[0].reason.startswith("write:")


async def test_the_approver_learns_which_rule_asks() -> None:
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> Answer:
        asked.append(request)
        return Answer.NO

    rules = PermissionRules(ask=("mcp__gh__*",), deny=("mcp__gh__delete*",))
    gate = PermissionGate(rules, approver=approver)
    await gate.check(FakeTool("mcp__gh__issue", Capability.READ), {})
    await gate.check(FakeTool("write", Capability.WRITE), {})
    denied = await gate.check(FakeTool("mcp__gh__delete_repo", Capability.WRITE), {})
    assert [r.rule for r in asked] == ["permissions.ask 'mcp__gh__*'", None]
    assert asked[0].permission.reason == "classified read for the test"
    assert denied.rule == "permissions.deny 'mcp__gh__delete*'" and len(asked) == 2


def _served(digest: str = "sha256:" + "a" * 64) -> Any:
    from codebot_mcp.core.skills.skillcatalog import Skill
    from codebot_mcp.core.tools.sources import SkillEntry, SkillFile

    uri = "skill://pdf/SKILL.md"
    entry = SkillEntry(
        "docs", uri, {"name": "pdf", "description": "d"}, (SkillFile(uri, digest, 1),)
    )
    return Skill("docs:pdf", "pdf", "d", entry=entry)


async def test_code_while_acting_on_a_served_skill_asks_whatever_the_rules_say() -> None:
    from codebot_mcp.core.skills.skillcatalog import SkillActivity

    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> Answer:
        asked.append(request)
        return Answer.ALWAYS

    gate = PermissionGate(PermissionRules(allow=["bash"]), approver=approver, allow=["bash"])
    gate.skills = SkillActivity()
    assert (await gate.check(BASH, {})).allowed and not asked  # no skill: the rule allows
    gate.skills.load(_served())
    assert gate.evaluate(READ).verdict is Verdict.ALLOW  # reading is not running code
    assert gate.evaluate(WRITE).verdict is Verdict.ASK  # unchanged: write asks anyway
    decision = gate.evaluate(BASH)
    assert decision.verdict is Verdict.ASK and decision.skills == ("docs:pdf",)
    assert "acting on skill 'docs:pdf' served by an MCP server" in decision.reason
    assert (await gate.check(BASH, {})).reason == "approved by the user for the skill, this session"
    assert "bash" not in gate.always  # "always" approved the skill, not bash everywhere
    assert (await gate.check(BASH, {})).allowed and len(asked) == 1
    gate.skills.load(_served("sha256:" + "b" * 64))  # the skill changed on the server
    assert gate.evaluate(BASH).verdict is Verdict.ASK
    denied = await PermissionGate(PermissionRules(deny=["bash"])).check(BASH, {})
    assert denied.verdict is Verdict.DENY  # deny still wins


async def test_non_interactive_code_under_a_served_skill_needs_yes() -> None:
    from codebot_mcp.core.skills.skillcatalog import SkillActivity

    gate = PermissionGate(PermissionRules(allow=["bash"]), allow=["bash"])
    gate.skills = SkillActivity()
    gate.skills.load(_served())
    decision = await gate.check(BASH, {})
    assert decision.verdict is Verdict.DENY and decision.reason.endswith("rerun with --yes")
    yes = PermissionGate(assume_yes=True)
    yes.skills = gate.skills
    assert (await yes.check(BASH, {})).allowed


@dataclass
class PathTool:
    """A tool double whose record's ``reach`` is the real boundary's (as the file tools')."""

    name: str
    root: Path
    capability: Capability = Capability.READ
    description: str = ""

    def schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": {"path": {"type": "string"}}}

    def _reach(self, arguments: Mapping[str, Any]) -> Reach | None:
        path = arguments.get("path")
        return Boundary(self.root).reach(path) if isinstance(path, str) else None

    @property
    def info(self) -> ToolInfo:
        permission = Permission(self.capability, "reads a path for the test")
        return ToolInfo(Origin.BUILTIN, permission, reach=self._reach)

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        return ToolResult("ok")


async def test_a_record_whose_reach_leads_outside_asks_whatever_the_capability(
    tmp_path: Path,
) -> None:
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> Answer:
        asked.append(request)
        return Answer.ALWAYS

    root = tmp_path / "project"
    root.mkdir()
    tool = PathTool("peek", root)
    gate = PermissionGate(PermissionRules(allow=["peek"]), approver=approver)
    inside = await gate.check(tool, {"path": "notes.txt"})
    assert inside.allowed and not asked  # inside the root: the rule (and the read) allow
    outside = await gate.check(tool, {"path": "../elsewhere.txt"})
    assert outside.allowed and len(asked) == 1  # the allow rule did not skip the question
    request = asked[0]
    assert request.outside == "the path leads outside the project root"
    assert request.reason == f"the path leads outside the project root: {request.detail}"
    assert str(tmp_path / "elsewhere.txt") in (request.detail or "")
    assert outside.reason == "approved by the user"  # "always" never covers outside the root
    assert "peek" not in gate.always
    await gate.check(tool, {"path": "../elsewhere.txt"})
    assert len(asked) == 2  # asked again
    nobody = await PermissionGate(PermissionRules(allow=["peek"])).check(tool, {"path": "/"})
    assert nobody.verdict is Verdict.DENY
    assert "the path leads outside the project root" in nobody.reason
    named = await PermissionGate(allow=["peek"]).check(tool, {"path": "/"})
    assert named.allowed and named.source is RuleSource.FLAG  # --allow names the tool
    denied = await PermissionGate(PermissionRules(deny=["peek"]), approver=approver).check(
        tool, {"path": "/"}
    )
    assert denied.verdict is Verdict.DENY and len(asked) == 2  # deny wins, nobody asked


def test_decisions_carry_their_rule_source_and_warning() -> None:
    rules = PermissionRules(allow=["glob"], ask=["mcp__*"], deny=["bash"])
    gate = PermissionGate(rules, allow=["write"])
    cases = {
        "bash": (Verdict.DENY, RuleSource.DENY),
        "mcp__docs__search": (Verdict.ASK, RuleSource.ASK),
        "glob": (Verdict.ALLOW, RuleSource.ALLOW),
        "write": (Verdict.ALLOW, RuleSource.FLAG),
        "other": (Verdict.ALLOW, None),
    }
    for name, (verdict, source) in cases.items():
        decision = gate.evaluate(FakeTool(name, Capability.READ))
        assert (decision.verdict, decision.source, decision.warned) == (verdict, source, False)
        if source is not None:
            assert decision.rule == source.name_rule(decision.rule.split(" '")[1][:-1])
    assert gate.evaluate(FakeTool("glob")).rule == "permissions.allow 'glob'"
    assert gate.evaluate(FakeTool("write")).rule == "--allow 'write'"


async def test_a_warning_is_a_flag_a_hook_cannot_lift() -> None:
    from codebot_mcp.core.agent.permissions import HookDecision

    @dataclass
    class Pinned(FakeTool):
        @property
        def info(self) -> ToolInfo:
            permission = Permission(self.capability, "pinned for the test")
            return ToolInfo(
                Origin.MCP,
                permission,
                server="docs",
                original_name="search",
                fingerprint=lambda: "now",
            )

    tool = Pinned("mcp__docs__search", Capability.WRITE)
    gate = PermissionGate(assume_yes=False)
    gate.pinned = {("docs", "search"): "then"}
    decision = gate.evaluate(tool)
    assert decision.verdict is Verdict.ASK and decision.warned and decision.source is None
    allow = HookDecision(Verdict.ALLOW, "the hook allows")
    hooked = await gate.check(tool, {}, allow)
    assert hooked.verdict is Verdict.DENY  # still asks (nobody to answer): the hook did not lift it
    assert "changed since .codebot/mcp-lock.json pinned them" in hooked.reason
    gate.pinned = {("docs", "search"): "now"}
    lifted = await gate.check(tool, {}, allow)
    assert lifted.allowed and lifted.reason == "the hook allows"  # the capability's ask: lifted
