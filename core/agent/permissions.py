"""The approval gate: may this tool call run? Every decision carries its reason.

Order: a ``deny`` rule wins; then "always" approvals of this session and ``--allow`` patterns;
then ``ask`` and ``allow`` rules; then the tool's capability (read → allow, anything else →
ask), except that a call that runs in the sandbox (``bash``, :mod:`core.sandbox.confinement`) is
allowed: the sandbox, not the user, bounds what it can do. "Ask" goes to the approver
callback the REPL supplies; without one (``-p``, stdin not a terminal) it becomes allow with
``--yes`` and deny otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import anyio

from codebot_mcp.core.agent.approvals import SkillApprovals
from codebot_mcp.core.config.settings import PermissionRules
from codebot_mcp.core.tools.base import MCP_PREFIX, Capability, Permission, Reach, Tool


class Verdict(StrEnum):
    """What the gate says about one call."""

    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


class DecidedBy(StrEnum):
    """Who or what made a decision (``by`` in stream-json's ``permission`` event)."""

    RULE = "rule"
    """A settings rule (``permissions.*``) or an ``--allow`` pattern."""
    USER = "user"
    """The user's answer to the question (now, or "always" earlier in this session)."""
    MODE = "mode"
    """The run's mode: ``--yes``, or nobody to ask (non-interactive: denied)."""
    CAPABILITY = "capability"
    """The tool's capability: a read, or a command that runs in the sandbox."""
    HOOK = "hook"
    """A ``PreToolUse`` hook."""


class RuleSource(StrEnum):
    """The list a deciding rule comes from; its value is how the rule is named to the user."""

    DENY = "permissions.deny"
    ASK = "permissions.ask"
    ALLOW = "permissions.allow"
    FLAG = "--allow"
    """An ``--allow`` pattern of the command line."""

    def name_rule(self, pattern: str) -> str:
        """``"permissions.ask 'mcp__github__*'"``: the rule as :attr:`Decision.rule` shows it."""
        return f"{self.value} '{pattern}'"


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
    skills: tuple[str, ...] = ()
    """Served skills the model is acting on whose code the user has not approved: the call
    asks because of them (an "always" answer approves them, not the tool)."""
    by: DecidedBy = DecidedBy.CAPABILITY
    """What decided: a rule, the user, the run's mode, the capability, a hook."""
    source: RuleSource | None = None
    """The list :attr:`rule` comes from; None when no rule decided."""
    warned: bool = False
    """The reason is a warning (a tool changed since its pin or its "always", or a served
    skill is being acted on): a hook's allow or a command's allowed-tools never lift it."""

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
    detail: str | None = None
    """What the call really touches, when it differs from what it says: the resolved path of
    a file tool reaching outside the project root."""
    preview: str | None = None
    """What the call would change, when the tool can tell (a unified diff for edit/write)."""
    sandbox: str | None = None
    """Which sandbox the call would run under, in words (``bash``); None for other tools."""
    warned: bool = False
    """The gate asks with a warning (:attr:`Decision.warned`); ``reason`` says it."""
    outside: str | None = None
    """Why the call's path asks, in short (it leads outside the project root, or into a
    path hidden from the sandbox); None when the path does not decide."""


Approver = Callable[[ApprovalRequest], Awaitable[Answer]]


@dataclass(frozen=True, slots=True)
class HookDecision:
    """What ``PreToolUse`` hooks said about a call (``core.hooks.runner``)."""

    verdict: Verdict | None
    """None: no verdict (the usual rules decide), only ``updated``."""
    reason: str
    updated: dict[str, Any] | None = None
    """The arguments a hook's ``updatedInput`` put in place of the model's."""


def rule_matches(
    pattern: str,
    tool: Tool,
    arguments: Mapping[str, Any] | None = None,
    cwd: Path | None = None,
    *,
    every: bool = False,
) -> bool:
    """Whether a permission rule (or ``--allow`` pattern) covers ``tool``.

    A rule ``mcp__<server>__<tool>`` is split at its first ``__`` after the prefix (server
    names cannot hold ``__``) and matches on the pair: the server glob against the tool's
    server, the tool glob against the tool's own name. So ``mcp__x__*`` covers every tool of
    server ``x`` and none of server ``x_``. ``mcp__<server-glob>`` alone covers every tool of
    the matching servers. ``tool(pattern)`` (``bash(git commit:*)``, ``read(./secrets/**)``:
    Claude Code's rule syntax with codebot's tool names, :mod:`core.config.claudefiles`)
    covers the calls whose command or path matches, only when the ``arguments`` are known;
    ``every`` is how an allow rule reads it (every subcommand must match). Any other rule is
    a glob over the model-visible name.
    """
    if _ARGUMENT_RULE.match(pattern) and not pattern.startswith(MCP_PREFIX):
        if arguments is None:
            return False
        from codebot_mcp.core.config.hookcontract import condition_matches

        name = pattern[: pattern.index("(")].strip()
        if not fnmatchcase(tool.name, name):
            return False
        rule = tool.name + pattern[pattern.index("(") :]
        return condition_matches(rule, tool.name, arguments, cwd or Path.cwd(), every=every)
    info = tool.info
    server = info.server
    if pattern.startswith(MCP_PREFIX) and server is not None:
        server_glob, sep, tool_glob = pattern[len(MCP_PREFIX) :].partition("__")
        original = info.original_name or tool.name
        return fnmatchcase(server, server_glob) and fnmatchcase(original, tool_glob if sep else "*")
    return fnmatchcase(tool.name, pattern)  # a tool that names no server: by its name


_ARGUMENT_RULE = re.compile(r"^[A-Za-z0-9_*.-]+\(.*\)$", re.DOTALL)


def _match(
    tool: Tool,
    patterns: Iterable[str],
    arguments: Mapping[str, Any] | None = None,
    cwd: Path | None = None,
    *,
    every: bool = False,
) -> str | None:
    return next((p for p in patterns if rule_matches(p, tool, arguments, cwd, every=every)), None)


class PermissionGate:
    """Decides allow / ask / deny for a tool call, asking the approver when needed.

    Args:
        rules: ``permissions`` from settings.
        approver: Asks the user; None when nobody can answer (non-interactive).
        assume_yes: ``--yes``: every "ask" becomes allow (deny rules still win).
        allow: ``--allow`` patterns: matching tools are allowed without asking.
        pinned: The project's lock (``.codebot/mcp-lock.json``), see :attr:`pinned`.
        cwd: Where relative paths of rules start, see :attr:`cwd`.
        skills: The skills the model loaded, see :attr:`skills`.
    """

    def __init__(
        self,
        rules: PermissionRules | None = None,
        *,
        approver: Approver | None = None,
        assume_yes: bool = False,
        allow: Iterable[str] = (),
        pinned: Mapping[tuple[str, str], str] | None = None,
        cwd: Path | None = None,
        skills: SkillApprovals | None = None,
    ) -> None:
        self.rules = rules or PermissionRules()
        self.approver = approver
        self.assume_yes = assume_yes
        self.allow_patterns = tuple(allow)
        self.always: dict[str, str | None] = {}
        """Tools the user approved "always" in this session, with the tool's fingerprint then
        (a tool that changes after its "always" is asked about again)."""
        self._asking = anyio.Lock()
        self.pinned: Mapping[tuple[str, str], str] = pinned or {}
        """(server, tool) → fingerprint from ``.codebot/mcp-lock.json``; a tool that no longer
        matches its pin is asked about, whatever the rules say (deny still wins)."""
        self.cwd = cwd
        """Where relative paths of ``read(./x)``-style rules start (None: the process's)."""
        self.accept_edits = False
        """The ``acceptEdits`` mode (ACP's session modes): the built-in file tools' edits
        inside the project root are allowed without asking; rules, pins and the boundary
        still decide first."""
        self.skills = skills
        """The skills the model loaded: while it acts on one served over MCP, a tool that
        executes code asks, whatever the rules and earlier "always" answers say."""

    def evaluate(self, tool: Tool, arguments: Mapping[str, Any] | None = None) -> Decision:
        """The static decision, before anybody is asked (``arguments``: the call's, which tell
        whether it runs in the sandbox)."""
        name = tool.name
        cwd = self.cwd
        if pattern := _match(tool, self.rules.deny, arguments, cwd):
            source = RuleSource.DENY
            return Decision(
                Verdict.DENY,
                f"denied by the settings rule '{pattern}'{self._origin(pattern)}",
                source.name_rule(pattern),
                by=DecidedBy.RULE,
                source=source,
            )
        if served := self._served_skills(tool):
            names = ", ".join(f"'{h}'" for h in served)
            return Decision(
                Verdict.ASK,
                f"WARNING: the model is acting on skill {names} served by an MCP server; code "
                "it asks for runs only with your approval ([a]lways: for that skill's current "
                "content, this session)",
                skills=served,
                warned=True,
            )
        if changed := self._changed(tool):
            return Decision(Verdict.ASK, changed, warned=True)
        if name in self.always:
            return Decision(Verdict.ALLOW, "approved for this session", by=DecidedBy.USER)
        if pattern := _match(tool, self.allow_patterns):
            source = RuleSource.FLAG
            return Decision(
                Verdict.ALLOW,
                f"allowed by --allow '{pattern}'",
                source.name_rule(pattern),
                by=DecidedBy.RULE,
                source=source,
            )
        if pattern := _match(tool, self.rules.ask, arguments, cwd):
            source = RuleSource.ASK
            return Decision(
                Verdict.ASK,
                f"the settings rule '{pattern}'{self._origin(pattern)} asks first",
                source.name_rule(pattern),
                by=DecidedBy.RULE,
                source=source,
            )
        if pattern := _match(tool, self.rules.allow, arguments, cwd, every=True):
            source = RuleSource.ALLOW
            return Decision(
                Verdict.ALLOW,
                f"allowed by the settings rule '{pattern}'{self._origin(pattern)}",
                source.name_rule(pattern),
                by=DecidedBy.RULE,
                source=source,
            )
        permission = tool.info.permission
        if permission.capability is Capability.READ:
            return Decision(Verdict.ALLOW, f"read-only: {permission.reason}")
        if self.accept_edits and edits_files(tool):
            return Decision(
                Verdict.ALLOW, "accepted: the session is in the acceptEdits mode", by=DecidedBy.MODE
            )
        if mode := sandboxed(tool, arguments):
            return Decision(Verdict.ALLOW, f"sandboxed: runs in the {mode} sandbox")
        return Decision(Verdict.ASK, f"{permission.capability.value}: {permission.reason}")

    def _origin(self, pattern: str) -> str:
        """`` (Bash(rm:*) in .claude/settings.json)`` for a rule read from Claude Code's
        files; empty for codebot's own."""
        origin = self.rules.origins.get(pattern)
        return f" ({origin})" if origin else ""

    def _served_skills(self, tool: Tool) -> tuple[str, ...]:
        """The unapproved served skills being acted on, when ``tool`` executes code."""
        if self.skills is None or tool.info.permission.capability is not Capability.EXECUTE:
            return ()
        return tuple(s.handle for s in self.skills.unapproved())

    def _changed(self, tool: Tool) -> str | None:
        """Why a tool must be asked about again: it changed since its pin or its "always"."""
        fingerprint = _fingerprint(tool)
        if fingerprint is None:
            return None
        info = tool.info
        key = (info.server or "", info.original_name or tool.name)
        pinned = self.pinned.get(key)
        if pinned is not None and pinned != fingerprint:
            return (
                "WARNING: the tool's description, schema or annotations changed since "
                ".codebot/mcp-lock.json pinned them (review it; `codebot mcp lock` accepts it)"
            )
        if tool.name in self.always and self.always[tool.name] != fingerprint:
            del self.always[tool.name]
            return "WARNING: the tool changed since you approved it for this session"
        return None

    async def check(
        self, tool: Tool, arguments: Mapping[str, Any], hook: HookDecision | None = None
    ) -> Decision:
        """The final decision for one call: allow or deny (asking when the rules say so).

        A file tool whose path leads outside the project root asks whatever its capability,
        an "always" approval or an allow rule says; ``--allow`` and ``--yes`` still allow it.
        A ``PreToolUse`` hook's ``hook`` decision: deny denies; ask asks; allow skips the
        question the capability would ask, never a deny or ask rule, a changed tool, or a
        path outside the root.
        """
        decision = self.evaluate(tool, arguments)
        if hook is not None:
            decision = _with_hook(decision, hook)
        reach = reach_of(tool, arguments)
        outside = reach is not None and reach.asks  # outside the root, or hidden (secrets)
        named = decision.source is RuleSource.FLAG
        if reach is not None and outside and decision.verdict is not Verdict.DENY and not named:
            decision = Decision(Verdict.ASK, reach.why())
        if decision.verdict is not Verdict.ASK:
            return decision
        if self.assume_yes:
            return Decision(
                Verdict.ALLOW, f"allowed by --yes ({decision.reason})", by=DecidedBy.MODE
            )
        if self.approver is None:
            rerun = "--yes" if decision.skills else f"--yes or --allow '{tool.name}'"
            return Decision(
                Verdict.DENY,
                f"needs approval and nobody can answer in non-interactive mode "
                f"({decision.reason}); rerun with {rerun}",
                by=DecidedBy.MODE,
            )
        detail = reach.describe() if reach is not None else None
        request = ApprovalRequest(
            tool.name,
            arguments,
            tool.info.permission,
            decision.reason,
            decision.rule,
            detail,
            preview_of(tool, arguments),
            sandbox_note(tool, arguments),
            warned=decision.warned,
            outside=reach.asks_because() if reach is not None and outside else None,
        )
        async with self._asking:  # subagents ask concurrently: one question at a time
            if decision.skills and not self._served_skills(tool):
                return Decision(
                    Verdict.ALLOW,
                    "approved by the user for the skill, this session",
                    by=DecidedBy.USER,
                )
            if (
                not outside
                and not decision.skills
                and tool.name in self.always
                and self._changed(tool) is None
            ):
                return Decision(Verdict.ALLOW, "approved for this session", by=DecidedBy.USER)
            answer = await self.approver(request)
        if answer is Answer.ALWAYS and decision.skills and self.skills is not None:
            self.skills.approve(s for s in self.skills.unapproved() if s.handle in decision.skills)
            return Decision(
                Verdict.ALLOW, "approved by the user for the skill, this session", by=DecidedBy.USER
            )
        if answer is Answer.ALWAYS and not outside:
            self.always[tool.name] = _fingerprint(tool)
            return Decision(
                Verdict.ALLOW, "approved by the user for this session", by=DecidedBy.USER
            )
        if answer in (Answer.ONCE, Answer.ALWAYS):  # "always" never covers outside the root
            return Decision(Verdict.ALLOW, "approved by the user", by=DecidedBy.USER)
        return Decision(Verdict.DENY, "the user denied it", by=DecidedBy.USER)


def edits_files(tool: Tool) -> bool:
    """Whether ``tool`` is a built-in file tool that changes files (``edit``, ``write``)."""
    from codebot_mcp.core.tools.builtin._files import FileTool

    return isinstance(tool, FileTool) and tool.info.permission.capability is Capability.WRITE


def _with_hook(decision: Decision, hook: HookDecision) -> Decision:
    if hook.verdict is None:
        return decision
    if decision.verdict is Verdict.DENY or hook.verdict is Verdict.DENY:
        if decision.verdict is Verdict.DENY:
            return decision
        return Decision(Verdict.DENY, hook.reason, by=DecidedBy.HOOK)
    if hook.verdict is Verdict.ASK:
        return Decision(Verdict.ASK, hook.reason, skills=decision.skills, by=DecidedBy.HOOK)
    if decision.verdict is Verdict.ASK and (decision.source is RuleSource.ASK or decision.warned):
        return decision
    return Decision(
        Verdict.ALLOW, hook.reason, decision.rule, by=DecidedBy.HOOK, source=decision.source
    )


def _fingerprint(tool: Tool) -> str | None:
    fingerprint = tool.info.fingerprint
    return fingerprint() if fingerprint is not None else None


def reach_of(tool: Tool, arguments: Mapping[str, Any]) -> Reach | None:
    """Where a file tool's call leads (its ``reach``), or None: the tool names no path."""
    reach = tool.info.reach
    return reach(arguments) if reach is not None else None


def sandboxed(tool: Tool, arguments: Mapping[str, Any] | None) -> str | None:
    """The sandbox mode a call runs under when the tool confines it, else None."""
    sandbox = tool.info.sandbox
    if arguments is None or sandbox is None:
        return None
    return sandbox.mode(arguments) or None


def sandbox_note(tool: Tool, arguments: Mapping[str, Any]) -> str | None:
    """Which sandbox a call runs under, in words, for the approval (None: not a tool that runs
    commands)."""
    sandbox = tool.info.sandbox
    return sandbox.note(arguments) if sandbox is not None else None


def preview_of(tool: Tool, arguments: Mapping[str, Any]) -> str | None:
    """The tool's own preview of a call, if it has one."""
    preview = tool.info.preview
    if preview is None:
        return None
    try:
        return preview(arguments)
    except Exception:  # boundary: a preview is a courtesy; the question is asked anyway
        return None


def denial_text(tool_name: str, decision: Decision) -> str:
    """The tool result the model gets for a denied call."""
    return (
        f"Permission denied: the call to '{tool_name}' did not run ({decision.reason}). "
        "Do not retry the same call; continue without it or ask the user how to proceed."
    )
