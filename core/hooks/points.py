"""Where the agent loop, subagents, ``mcp serve`` and the chat call into the hooks: one
function per hook point (``submit``, ``before_call``, ``after_call``, ``keep_going``,
``before_compact``, ``post_compact``, ``session_start``, ``subagent_start``,
``session_end``, ``notifying``), each turning what :class:`core.hooks.runner.Hooks` ran into
what the caller does next (a blocked prompt, a gate decision, notes for the model).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anyio

from codebot_mcp.core.agent.permissions import (
    Answer,
    ApprovalRequest,
    Approver,
    HookDecision,
    Verdict,
)
from codebot_mcp.core.config import hookcontract
from codebot_mcp.core.hooks.runner import MAX_CONTEXT_CHARS, HookBlockedError, Hooks, Outcome
from codebot_mcp.core.tools.base import Tool, ToolResult

if TYPE_CHECKING:
    from codebot_mcp.core.agent.events import AgentEvents
    from codebot_mcp.core.agent.session import Message
    from codebot_mcp.core.model.stream import ToolCall


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
    later, hooks.later = hooks.later, Outcome()
    _notify(events, later)
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
    if later.context:
        parts.append(_context("async", later.context))
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
    """``PreToolUse``: what the hooks say about a call, for the gate (with the arguments a
    hook's ``updatedInput`` gave, in codebot's names).

    Raises:
        HookBlockedError: a hook stopped the run.
    """
    if hooks is None:
        return None
    outcome = await hooks.pre_tool_use(call, tool, arguments)
    _notify(events, outcome)
    _halt(outcome)
    updated = None
    if outcome.updated_input is not None:
        updated = hookcontract.codebot_input(tool.name, outcome.updated_input)
    if outcome.blocked:
        return HookDecision(Verdict.DENY, f"blocked by a PreToolUse hook: {outcome.reason}")
    if outcome.decision is None:
        return None if updated is None else HookDecision(None, "", updated)
    why = "; ".join(outcome.decision_reasons)
    text = {Verdict.ALLOW: "allowed", Verdict.ASK: "asks", Verdict.DENY: "denied"}[outcome.decision]
    reason = f"a PreToolUse hook {text}" + (f": {why}" if why else "")
    return HookDecision(outcome.decision, reason, updated)


async def after_call(
    hooks: Hooks | None,
    call: ToolCall,
    tool: Tool,
    arguments: Mapping[str, Any],
    result: ToolResult,
    events: AgentEvents,
    seconds: float = 0.0,
) -> ToolResult:
    """``PostToolUse`` (or ``PostToolUseFailure`` after a failed call): the result, with
    what the hooks tell the model added (a block's reason, ``additionalContext``)."""
    if hooks is None:
        return result
    outcome = await hooks.post_tool_use(call, tool, arguments, result, seconds)
    _notify(events, outcome)
    notes = []
    event = "PostToolUseFailure" if result.is_error else "PostToolUse"
    if outcome.blocked:
        notes.append(f"[a {event} hook objected: {outcome.reason}]")
    if outcome.context:
        notes.append(_context(event, outcome.context))
    if not notes:
        return result
    return ToolResult(
        "\n\n".join([result.text, *notes]), result.is_error, result.data, result.images
    )


async def keep_going(
    hooks: Hooks | None, history: list[Message], active: bool, events: AgentEvents
) -> bool:
    """``Stop`` (``SubagentStop`` in a subagent): True when a hook blocked the stop; its
    reason is then the next user message (``stop_hook_active`` tells a hook it already did
    so once in this run)."""
    if hooks is None:
        return False
    fields: dict[str, Any] = {
        "stop_hook_active": active,
        "last_assistant_message": _last_answer(history),
    }
    event = "Stop"
    names: tuple[str, ...] = ()
    if hooks.subagent:
        event = "SubagentStop"
        fields.update(hooks.agent_fields)
        names = (str(hooks.agent_fields.get("agent_type", "")),)
    outcome = await hooks.fire(event, fields, names)
    _notify(events, outcome)
    _halt(outcome)
    if not outcome.blocked:
        return False
    events.notice(f"a {event} hook asked the agent to go on: {outcome.reason}")
    history.append({"role": "user", "content": f"Stop hook feedback:\n{outcome.reason}"})
    return True


def _last_answer(history: Sequence[Message]) -> str:
    for message in reversed(history):
        if message.get("role") == "assistant":
            content = message.get("content")
            return content if isinstance(content, str) else ""
    return ""


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


async def subagent_start(hooks: Hooks | None, events: AgentEvents) -> str:
    """``SubagentStart`` (``hooks``: the subagent's, its ``agent_fields`` set): the context
    its hooks add to the subagent's prompt ("" for none)."""
    if hooks is None:
        return ""
    names = (hooks.agent_fields.get("agent_type", ""),)
    outcome = await hooks.fire("SubagentStart", dict(hooks.agent_fields), names)
    _notify(events, outcome)
    return _context("SubagentStart", outcome.context) if outcome.context else ""


async def post_compact(
    hooks: Hooks | None, trigger: str, summary: str, events: AgentEvents
) -> None:
    """``PostCompact``: after the conversation was compacted (its summary in the input)."""
    if hooks is None:
        return
    fields = {"trigger": trigger, "compact_summary": summary}
    outcome = await hooks.fire("PostCompact", fields, (trigger,))
    _notify(events, outcome)


SESSION_END_SECONDS = 1.5
"""``SessionEnd`` hooks get this long at most (Claude Code's budget): codebot is exiting."""


async def session_end(hooks: Hooks | None, reason: str) -> list[str]:
    """``SessionEnd`` (``reason``: clear, resume, prompt_input_exit, other); it never blocks.
    Returns the warnings for the user."""
    if hooks is None or not hooks.selected("SessionEnd", (reason,)):
        return []
    with anyio.CancelScope(shield=True), anyio.move_on_after(SESSION_END_SECONDS * 2):
        outcome = await hooks.fire("SessionEnd", {"reason": reason}, (reason,))
        return list(outcome.warnings)
    return [f"SessionEnd hooks did not finish within {SESSION_END_SECONDS * 2:g}s; stopped"]


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
