"""Hooks: the user's commands around tool calls, prompts and the session, in Claude Code's
contract, so that hook scripts written for it work unchanged.

A hook gets one JSON object on stdin (``session_id``, ``transcript_path``, ``cwd``,
``hook_event_name``, ``permission_mode`` and the event's own fields), and answers with its
exit code and output:

- exit 0: go on. For ``UserPromptSubmit`` and ``SessionStart`` its stdout goes into the
  transcript (with the prompt the model sees next). A JSON object on stdout may decide:
  ``{"decision": "block", "reason": ...}``, ``hookSpecificOutput.permissionDecision``
  (``allow``, ``deny``, ``ask``: ``PreToolUse``), ``hookSpecificOutput.additionalContext``,
  ``systemMessage`` (shown to the user), ``{"continue": false, "stopReason": ...}`` (ends the
  run);
- exit 2: block. stderr goes to the model for ``PreToolUse`` (the call does not run),
  ``PostToolUse`` (after the fact) and ``Stop`` (the agent goes on), to the user otherwise
  (``UserPromptSubmit``: the prompt is dropped; ``/compact``: not compacted);
- any other exit code, a timeout, a hook that cannot start: a visible warning, and the run
  goes on.

Every hook of an event that matches runs, in parallel (identical commands once), through
:func:`core.proc.oneshot.run_once`: the minimal child environment (plus
``CLAUDE_PROJECT_DIR``/``CODEBOT_PROJECT_DIR``), its own process group, its ``timeout``, and
nothing it started left behind. A hook's ``allow`` never passes a ``deny`` rule (the gate
decides last: :meth:`PermissionGate.check`).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from codebot_mcp.core.agent.permissions import (
    Answer,
    ApprovalRequest,
    Approver,
    HookDecision,
    Verdict,
)
from codebot_mcp.core.config.definitions import CLAUDE_TOOL_NAMES
from codebot_mcp.core.config.hooks import PROJECT_DIR_VARIABLES, HookCommand, matches
from codebot_mcp.core.errors import CodebotError
from codebot_mcp.core.proc.lookup import child_environment
from codebot_mcp.core.proc.oneshot import Finished, run_once
from codebot_mcp.core.tools.base import Tool, ToolResult

if TYPE_CHECKING:
    from codebot_mcp.core.agent.events import AgentEvents
    from codebot_mcp.core.agent.session import Message
    from codebot_mcp.core.model.stream import ToolCall

BLOCK_EXIT = 2
MAX_CONTEXT_CHARS = 10_000
"""Of what hooks add to the transcript per event, this much is kept."""
_ALIASES = {v: k for k, v in reversed(CLAUDE_TOOL_NAMES.items())}
"""``bash`` → ``Bash``: a matcher written for Claude Code matches codebot's tool."""


class HookBlockedError(CodebotError):
    """A hook blocked a prompt or ``/compact``, or stopped the run (``"continue": false``)."""


@dataclass(slots=True)
class Outcome:
    """What an event's hooks decided, merged (every field empty: nothing to do)."""

    blocked: bool = False
    reasons: list[str] = field(default_factory=list[str])
    """Why it is blocked (exit 2's stderr, or ``reason``)."""
    decision: Verdict | None = None
    """``PreToolUse``'s ``permissionDecision`` (deny wins over ask, ask over allow)."""
    decision_reasons: list[str] = field(default_factory=list[str])
    context: list[str] = field(default_factory=list[str])
    """Text for the transcript (stdout, ``additionalContext``)."""
    warnings: list[str] = field(default_factory=list[str])
    """For the user: failed hooks, timeouts, ``systemMessage``."""
    halt: str | None = None
    """``"continue": false``: the run ends, with this for the user."""

    @property
    def reason(self) -> str:
        """The reasons, one per line."""
        return "\n".join(r for r in self.reasons if r)


@dataclass(frozen=True, slots=True)
class HookRun:
    """One hook that ran in this session (``/hooks`` shows the latest)."""

    hook: HookCommand
    code: int | None
    timed_out: bool
    seconds: float


class Hooks:
    """The session's hooks and what they need to know about it.

    Args:
        commands: The configured hooks (trust already applied).
        cwd: Where hooks run, and ``cwd`` in their input.
        project_dir: ``$CLAUDE_PROJECT_DIR``.
    """

    def __init__(self, commands: Sequence[HookCommand], *, cwd: Path, project_dir: Path) -> None:
        self.commands = tuple(commands)
        self.cwd = cwd
        self.project_dir = project_dir
        self.session_id = ""
        self.transcript_path = ""
        self.mode_of: Callable[[], str] = lambda: "default"
        """``permission_mode`` in the input: default, plan, bypassPermissions (``--yes``)."""
        self.pending: list[str] = []
        """Context from ``SessionStart``, for the next prompt."""
        self.runs: list[HookRun] = []
        self.subagent = False
        """In a subagent only tool hooks fire (no prompts, no ``Stop``)."""
        self.spawn: dict[str, Any] = {}
        """More options for starting hook processes (the sandbox's confinement, when on); a
        callable value is called at each start (the confinement, fresh for each hook)."""

    def for_subagent(self) -> Hooks:
        """The same hooks, for a subagent's calls."""
        child = Hooks(self.commands, cwd=self.cwd, project_dir=self.project_dir)
        child.session_id, child.transcript_path = self.session_id, self.transcript_path
        child.mode_of, child.subagent, child.runs = self.mode_of, True, self.runs
        child.spawn = self.spawn
        return child

    def selected(self, event: str, names: Sequence[str] = ()) -> list[HookCommand]:
        """The hooks of ``event`` whose matcher matches one of ``names`` (identical commands
        once; events without a subject ignore matchers)."""
        out: list[HookCommand] = []
        seen: set[str] = set()
        for hook in self.commands:
            if hook.event != event or hook.command in seen:
                continue
            if names and not matches(hook.matcher, names):
                continue
            seen.add(hook.command)
            out.append(hook)
        return out

    async def fire(
        self, event: str, fields: Mapping[str, Any], names: Sequence[str] = ()
    ) -> Outcome:
        """Run the matching hooks of ``event`` with ``fields`` added to the common input."""
        selected = self.selected(event, names)
        outcome = Outcome()
        if not selected:
            return outcome
        payload = {
            "session_id": self.session_id,
            "transcript_path": self.transcript_path,
            "cwd": str(self.cwd),
            "permission_mode": self.mode_of(),
            "hook_event_name": event,
            **fields,
        }
        data = json.dumps(payload, ensure_ascii=False, default=str).encode()
        finished: list[Finished | OSError | CodebotError | None] = [None] * len(selected)

        async def one(index: int, hook: HookCommand) -> None:
            try:
                finished[index] = await run_once(
                    _shell(hook.command),
                    stdin=data,
                    env=self._environment(),
                    cwd=self.cwd,
                    limit=hook.timeout,
                    **{k: v() if callable(v) else v for k, v in self.spawn.items()},
                )
            except (OSError, CodebotError) as exc:  # e.g. a sandbox that cannot start
                finished[index] = exc

        async with anyio.create_task_group() as tg:
            for index, hook in enumerate(selected):
                tg.start_soon(one, index, hook)
        for hook, done in zip(selected, finished, strict=True):
            assert done is not None
            _merge(outcome, hook, done)
            if isinstance(done, Finished):
                self.runs.append(HookRun(hook, done.code, done.timed_out, done.seconds))
        return outcome

    def _environment(self) -> dict[str, str]:
        project = str(self.project_dir)
        return child_environment(dict.fromkeys(PROJECT_DIR_VARIABLES, project))

    # -- the events ---------------------------------------------------------------------

    async def pre_tool_use(
        self, call: ToolCall, tool: Tool, arguments: Mapping[str, Any]
    ) -> Outcome:
        """``PreToolUse``: before the gate decides about a call."""
        fields = {
            "tool_name": call.name,
            "tool_input": self._tool_input(tool, arguments),
            "tool_use_id": call.id,
        }
        return await self.fire("PreToolUse", fields, _names(call.name))

    async def post_tool_use(
        self, call: ToolCall, tool: Tool, arguments: Mapping[str, Any], result: ToolResult
    ) -> Outcome:
        """``PostToolUse``: after a call succeeded."""
        fields = {
            "tool_name": call.name,
            "tool_input": self._tool_input(tool, arguments),
            "tool_use_id": call.id,
            "tool_response": {"content": result.text, "is_error": result.is_error, **result.data},
        }
        return await self.fire("PostToolUse", fields, _names(call.name))

    def _tool_input(self, tool: Tool, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The call's arguments; a built-in file tool's also as ``file_path`` (absolute), the
        field scripts written for Claude Code read."""
        out = dict(arguments)
        path = out.get("path")
        if tool.name in ("read", "edit", "write") and isinstance(path, str) and path:
            out.setdefault("file_path", os.path.abspath(self.cwd / Path(path).expanduser()))
        return out


def _names(tool_name: str) -> tuple[str, ...]:
    alias = _ALIASES.get(tool_name)
    return (tool_name, alias) if alias else (tool_name,)


def _shell(command: str) -> list[str]:
    """Hooks are shell command lines (Claude Code runs them with bash)."""
    bash = shutil.which("bash")
    return [bash, "-c", command] if bash else ["/bin/sh", "-c", command]


def _describe(hook: HookCommand) -> str:
    command = " ".join(hook.command.split())
    command = command if len(command) <= 60 else command[:59] + "…"
    return f"{hook.event} hook '{command}' ({hook.source})"


def _merge(outcome: Outcome, hook: HookCommand, done: Finished | OSError | CodebotError) -> None:
    """Fold one hook's result into ``outcome``."""
    if isinstance(done, OSError | CodebotError):
        why = done.strerror if isinstance(done, OSError) and done.strerror else str(done)
        outcome.warnings.append(f"{_describe(hook)} could not start: {why}")
        return
    if done.timed_out:
        outcome.warnings.append(
            f"{_describe(hook)} timed out after {hook.timeout:g}s and was stopped"
        )
        return
    stderr = done.stderr.strip()
    if done.code == BLOCK_EXIT:
        outcome.blocked = True
        outcome.reasons.append(stderr or f"blocked by {_describe(hook)}")
        return
    if done.code != 0:
        first = stderr.splitlines()[0] if stderr else "no message"
        outcome.warnings.append(f"{_describe(hook)} failed with exit code {done.code}: {first}")
        return
    answer = _json(done.stdout)
    if answer is None:
        if hook.event in ("UserPromptSubmit", "SessionStart") and done.stdout.strip():
            outcome.context.append(done.stdout.strip())
        return
    _decide(outcome, hook, answer)


def _json(stdout: str) -> dict[str, Any] | None:
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None  # pyright: ignore[reportUnknownVariableType]


def _decide(outcome: Outcome, hook: HookCommand, answer: Mapping[str, Any]) -> None:
    """A hook's JSON answer (Claude Code's fields)."""
    if answer.get("continue") is False:
        outcome.halt = str(answer.get("stopReason") or f"stopped by {_describe(hook)}")
    message = answer.get("systemMessage")
    if isinstance(message, str) and message.strip():
        outcome.warnings.append(message.strip())
    decision = answer.get("decision")
    reason = str(answer.get("reason") or "")
    if decision == "block":
        outcome.blocked = True
        outcome.reasons.append(reason or f"blocked by {_describe(hook)}")
    elif decision == "approve" and hook.event == "PreToolUse":  # Claude Code's older field
        _permission(outcome, Verdict.ALLOW, reason)
    specific = answer.get("hookSpecificOutput")
    if not isinstance(specific, dict):
        return
    extra = specific.get("additionalContext")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if isinstance(extra, str) and extra.strip():
        outcome.context.append(extra.strip())
    if hook.event != "PreToolUse":
        return
    verdict = {"allow": Verdict.ALLOW, "deny": Verdict.DENY, "ask": Verdict.ASK}.get(
        str(specific.get("permissionDecision")),  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
    )
    if verdict is not None:
        why = specific.get("permissionDecisionReason")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        _permission(outcome, verdict, str(why or ""))


_RANK = {Verdict.ALLOW: 0, Verdict.ASK: 1, Verdict.DENY: 2}


def _permission(outcome: Outcome, verdict: Verdict, reason: str) -> None:
    if outcome.decision is None or _RANK[verdict] > _RANK[outcome.decision]:
        outcome.decision = verdict
    if reason:
        outcome.decision_reasons.append(reason)


# -- where the agent loop calls in ------------------------------------------------------------


def _notify(events: AgentEvents, outcome: Outcome) -> None:
    for warning in outcome.warnings:
        events.notice(warning)


def _halt(outcome: Outcome) -> None:
    if outcome.halt is not None:
        raise HookBlockedError(
            f"a hook stopped the run: {outcome.halt}",
            hint="`/hooks` lists the configured hooks and where each comes from.",
        )


def _context(event: str, texts: Sequence[str]) -> str:
    text = "\n\n".join(t for t in texts if t)
    if len(text) > MAX_CONTEXT_CHARS:
        text = text[:MAX_CONTEXT_CHARS] + "\n[... cut]"
    return f'<hook-context event="{event}">\n{text}\n</hook-context>'


async def submit(hooks: Hooks | None, prompt: str, events: AgentEvents) -> str:
    """``UserPromptSubmit``, and context ``SessionStart`` left: the prompt as the model will
    see it.

    Raises:
        HookBlockedError: a hook blocked the prompt (it is not sent), or stopped the run.
    """
    if hooks is None or hooks.subagent:
        return prompt
    outcome = await hooks.fire("UserPromptSubmit", {"prompt": prompt})
    _notify(events, outcome)
    _halt(outcome)
    if outcome.blocked:
        raise HookBlockedError(
            f"a UserPromptSubmit hook blocked the prompt: {outcome.reason}",
            hint="The prompt was not sent. `/hooks` lists the configured hooks.",
        )
    parts = [prompt]
    if hooks.pending:
        parts.append(_context("SessionStart", hooks.pending))
        hooks.pending = []
    if outcome.context:
        parts.append(_context("UserPromptSubmit", outcome.context))
    return "\n\n".join(parts)


async def before_call(
    hooks: Hooks | None,
    call: ToolCall,
    tool: Tool,
    arguments: Mapping[str, Any],
    events: AgentEvents,
) -> HookDecision | None:
    """``PreToolUse``: what the hooks say about a call, for the gate.

    Raises:
        HookBlockedError: a hook stopped the run.
    """
    if hooks is None:
        return None
    outcome = await hooks.pre_tool_use(call, tool, arguments)
    _notify(events, outcome)
    _halt(outcome)
    if outcome.blocked:
        return HookDecision(Verdict.DENY, f"blocked by a PreToolUse hook: {outcome.reason}")
    if outcome.decision is None:
        return None
    why = "; ".join(outcome.decision_reasons)
    text = {Verdict.ALLOW: "allowed", Verdict.ASK: "asks", Verdict.DENY: "denied"}[outcome.decision]
    return HookDecision(outcome.decision, f"a PreToolUse hook {text}" + (f": {why}" if why else ""))


async def after_call(
    hooks: Hooks | None,
    call: ToolCall,
    tool: Tool,
    arguments: Mapping[str, Any],
    result: ToolResult,
    events: AgentEvents,
) -> ToolResult:
    """``PostToolUse`` after a call that succeeded: the result, with what the hooks tell the
    model added (a block's reason, ``additionalContext``)."""
    if hooks is None or result.is_error:
        return result
    outcome = await hooks.post_tool_use(call, tool, arguments, result)
    _notify(events, outcome)
    notes = []
    if outcome.blocked:
        notes.append(f"[a PostToolUse hook objected: {outcome.reason}]")
    if outcome.context:
        notes.append(_context("PostToolUse", outcome.context))
    if not notes:
        return result
    return ToolResult("\n\n".join([result.text, *notes]), result.is_error, result.data)


async def keep_going(
    hooks: Hooks | None, history: list[Message], active: bool, events: AgentEvents
) -> bool:
    """``Stop``: True when a hook blocked the stop; its reason is then the next user message
    (``stop_hook_active`` tells a hook it already did so once in this run)."""
    if hooks is None or hooks.subagent:
        return False
    outcome = await hooks.fire("Stop", {"stop_hook_active": active})
    _notify(events, outcome)
    _halt(outcome)
    if not outcome.blocked:
        return False
    events.notice(f"a Stop hook asked the agent to go on: {outcome.reason}")
    history.append({"role": "user", "content": f"Stop hook feedback:\n{outcome.reason}"})
    return True


async def before_compact(
    hooks: Hooks | None, trigger: str, instructions: str | None, events: AgentEvents
) -> None:
    """``PreCompact``. A block stops a manual ``/compact``; an automatic compaction (the
    request would not fit otherwise) goes on, with the reason shown.

    Raises:
        HookBlockedError: a hook blocked ``/compact``.
    """
    if hooks is None:
        return
    fields = {"trigger": trigger, "custom_instructions": instructions or ""}
    outcome = await hooks.fire("PreCompact", fields, (trigger,))
    _notify(events, outcome)
    if outcome.blocked and trigger == "manual":
        raise HookBlockedError(
            f"a PreCompact hook blocked /compact: {outcome.reason}",
            hint="`/hooks` lists the configured hooks.",
        )
    if outcome.blocked:
        events.notice(f"a PreCompact hook objected (compacting anyway): {outcome.reason}")


async def session_start(hooks: Hooks | None, source: str) -> list[str]:
    """``SessionStart`` (``source``: startup, resume, clear): its context waits for the next
    prompt. Returns the warnings for the user."""
    if hooks is None:
        return []
    outcome = await hooks.fire("SessionStart", {"source": source}, (source,))
    hooks.pending = list(outcome.context)
    warnings = list(outcome.warnings)
    if outcome.blocked:
        warnings.append(f"a SessionStart hook: {outcome.reason}")
    return warnings


def notifying(hooks_of: Callable[[], Hooks | None], approver: Approver, warn: Any) -> Approver:
    """``approver`` that fires ``Notification`` (``permission_prompt``) before it asks, with
    the hooks ``hooks_of()`` returns then; ``warn`` shows the hooks' warnings."""

    async def ask(request: ApprovalRequest) -> Answer:
        hooks = hooks_of()
        if hooks is None:
            return await approver(request)
        fields = {
            "message": f"codebot needs your permission to use {request.tool}",
            "notification_type": "permission_prompt",
        }
        outcome = await hooks.fire("Notification", fields, ("permission_prompt",))
        for warning in outcome.warnings:
            warn(warning)
        if outcome.blocked:
            warn(f"a Notification hook: {outcome.reason}")
        return await approver(request)

    return ask
