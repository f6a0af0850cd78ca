"""The approval gate: may this tool call run? Every decision carries its reason.

Order: a ``deny`` rule wins; then "always" approvals of this session and ``--allow`` patterns;
then ``ask`` and ``allow`` rules; then the tool's capability (read → allow, anything else →
ask). "Ask" goes to the approver callback the REPL supplies; without one (``-p``, stdin not a
terminal) it becomes allow with ``--yes`` and deny otherwise.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from fnmatch import fnmatchcase
from typing import Any

from core.settings import PermissionRules
from core.tools import Capability, Permission, Tool


class Verdict(StrEnum):
    """What the gate says about one call."""

    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


class Answer(StrEnum):
    """The user's answer to an approval question."""

    ONCE = "once"
    ALWAYS = "always"
    NO = "no"


@dataclass(frozen=True, slots=True)
class Decision:
    """A verdict and why; ``reason`` is shown to the user and, on denial, to the model."""

    verdict: Verdict
    reason: str
    rule: str | None = None
    """The settings rule or ``--allow`` pattern that decided, as ``"<list> '<pattern>'"``
    (e.g. ``"permissions.ask 'mcp__github__*'"``); None when the capability decided."""

    @property
    def allowed(self) -> bool:
        """True when the call may run."""
        return self.verdict is Verdict.ALLOW


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """What the approver is shown."""

    tool: str
    arguments: Mapping[str, Any]
    permission: Permission
    reason: str
    """Why the gate asks (a rule, or the capability)."""
    rule: str | None = None
    """The rule that asks (``"permissions.ask '<pattern>'"``), or None: no rule matched and
    the capability is not read."""
    preview: str | None = None
    """What the call would change, when the tool can tell (a unified diff for edit/write)."""


Approver = Callable[[ApprovalRequest], Awaitable[Answer]]


def _match(name: str, patterns: Iterable[str]) -> str | None:
    return next((p for p in patterns if fnmatchcase(name, p)), None)


class PermissionGate:
    """Decides allow / ask / deny for a tool call, asking the approver when needed.

    Args:
        rules: ``permissions`` from settings.
        approver: Asks the user; None when nobody can answer (non-interactive).
        assume_yes: ``--yes``: every "ask" becomes allow (deny rules still win).
        allow: ``--allow`` patterns: matching tools are allowed without asking.
    """

    def __init__(
        self,
        rules: PermissionRules | None = None,
        *,
        approver: Approver | None = None,
        assume_yes: bool = False,
        allow: Iterable[str] = (),
    ) -> None:
        self.rules = rules or PermissionRules()
        self.approver = approver
        self.assume_yes = assume_yes
        self.allow_patterns = tuple(allow)
        self.always: set[str] = set()
        """Tools the user approved "always" in this session."""

    def evaluate(self, tool: Tool) -> Decision:
        """The static decision, before anybody is asked."""
        name = tool.name
        if pattern := _match(name, self.rules.deny):
            rule = f"permissions.deny '{pattern}'"
            return Decision(Verdict.DENY, f"denied by the settings rule '{pattern}'", rule)
        if name in self.always:
            return Decision(Verdict.ALLOW, "approved for this session")
        if pattern := _match(name, self.allow_patterns):
            rule = f"--allow '{pattern}'"
            return Decision(Verdict.ALLOW, f"allowed by --allow '{pattern}'", rule)
        if pattern := _match(name, self.rules.ask):
            rule = f"permissions.ask '{pattern}'"
            return Decision(Verdict.ASK, f"the settings rule '{pattern}' asks first", rule)
        if pattern := _match(name, self.rules.allow):
            rule = f"permissions.allow '{pattern}'"
            return Decision(Verdict.ALLOW, f"allowed by the settings rule '{pattern}'", rule)
        permission = tool.permission()
        if permission.capability is Capability.READ:
            return Decision(Verdict.ALLOW, f"read-only: {permission.reason}")
        return Decision(Verdict.ASK, f"{permission.capability.value}: {permission.reason}")

    async def check(self, tool: Tool, arguments: Mapping[str, Any]) -> Decision:
        """The final decision for one call: allow or deny (asking when the rules say so)."""
        decision = self.evaluate(tool)
        if decision.verdict is not Verdict.ASK:
            return decision
        if self.assume_yes:
            return Decision(Verdict.ALLOW, f"allowed by --yes ({decision.reason})")
        if self.approver is None:
            return Decision(
                Verdict.DENY,
                f"needs approval and nobody can answer in non-interactive mode "
                f"({decision.reason}); rerun with --yes or --allow '{tool.name}'",
            )
        request = ApprovalRequest(
            tool.name,
            arguments,
            tool.permission(),
            decision.reason,
            decision.rule,
            preview_of(tool, arguments),
        )
        answer = await self.approver(request)
        if answer is Answer.ALWAYS:
            self.always.add(tool.name)
            return Decision(Verdict.ALLOW, "approved by the user for this session")
        if answer is Answer.ONCE:
            return Decision(Verdict.ALLOW, "approved by the user")
        return Decision(Verdict.DENY, "the user denied it")


def preview_of(tool: Tool, arguments: Mapping[str, Any]) -> str | None:
    """The tool's own preview of a call (``preview(arguments)``), if it has one."""
    preview = getattr(tool, "preview", None)
    if not callable(preview):
        return None
    try:
        result = preview(arguments)
    except Exception:  # boundary: a preview is a courtesy; the question is asked anyway
        return None
    return result if isinstance(result, str) else None


def denial_text(tool_name: str, decision: Decision) -> str:
    """The tool result the model gets for a denied call."""
    return (
        f"Permission denied: the call to '{tool_name}' did not run ({decision.reason}). "
        "Do not retry the same call; continue without it or ask the user how to proceed."
    )
