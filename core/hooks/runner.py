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

Every hook of an event that matches (its matcher, and for a tool call its ``if``) runs, in
parallel (identical commands once), through :func:`core.proc.oneshot.run_once`: as the user
(an entry's ``sandbox`` confines it), the minimal child environment (plus
``CLAUDE_PROJECT_DIR``/``CODEBOT_PROJECT_DIR``), its own process group, its ``timeout``, and
nothing it started left behind; an ``async`` one runs in the session's task group and what it
says waits for the next prompt. Tool names and fields are Claude Code's
(:mod:`core.config.hookcontract`). A hook's ``allow`` never passes a ``deny`` rule (the gate
decides last: :meth:`PermissionGate.check`).

A hook that runs as the user and names a project script (``sh "$CLAUDE_PROJECT_DIR"/hooks/
log.sh``) runs confined for the rest of the session once that script changes (a confined
``bash`` may have rewritten it; trust has not seen the change): :meth:`Hooks.guarded`.

Size: one idea, running the session's hooks in Claude Code's contract: choosing them, their
input, running them (as the user or confined), and merging what they answered.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from codebot_mcp.core.agent.permissions import (
    Verdict,
)
from codebot_mcp.core.config import hookcontract
from codebot_mcp.core.config.hooks import PROJECT_DIR_VARIABLES, TOOL_EVENTS, HookCommand
from codebot_mcp.core.config.runfiles import signature
from codebot_mcp.core.errors import CodebotError
from codebot_mcp.core.hooks.hooksection import matches
from codebot_mcp.core.proc.lookup import child_environment
from codebot_mcp.core.proc.oneshot import Finished, run_once
from codebot_mcp.core.tools.base import Tool, ToolResult

if TYPE_CHECKING:
    from codebot_mcp.core.model.stream import ToolCall

BLOCK_EXIT = 2
MAX_CONTEXT_CHARS = 10_000
"""Of what hooks add to the transcript per event, this much is kept."""
KNOWN_ANSWER_FIELDS = frozenset(
    {"continue", "stopReason", "suppressOutput", "systemMessage", "decision", "reason"}
    | {"hookSpecificOutput"}
)
KNOWN_SPECIFIC_FIELDS = frozenset(
    {"hookEventName", "additionalContext", "permissionDecision", "permissionDecisionReason"}
    | {"updatedInput"}
)


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
    updated_input: dict[str, Any] | None = None
    """``PreToolUse``'s ``updatedInput`` (Claude Code's field names), the last one given."""

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

    def __init__(
        self,
        commands: Sequence[HookCommand],
        *,
        cwd: Path,
        project_dir: Path,
        session_id: str = "",
        transcript_path: str = "",
        mode_of: Callable[[], str] = lambda: "default",
        spawn: dict[str, Any] | None = None,
        confine: Callable[[str], tuple[dict[str, Any], dict[str, str]]] | None = None,
        background: Callable[[], anyio.abc.TaskGroup | None] = lambda: None,
    ) -> None:
        self.commands = tuple(commands)
        self.cwd = cwd
        self.project_dir = project_dir
        self.session_id = session_id
        self.transcript_path = transcript_path
        self.mode_of = mode_of
        """``permission_mode`` in the input: default, plan, bypassPermissions (``--yes``)."""
        self.pending: list[str] = []
        """Context from ``SessionStart``, for the next prompt."""
        self.runs: list[HookRun] = []
        self.subagent = False
        """In a subagent only tool hooks and ``SubagentStop`` fire (no prompts, no ``Stop``)."""
        self.agent_fields: dict[str, str] = {}
        """A subagent's ``agent_id``, ``agent_type``, ``agent_transcript_path``."""
        self.spawn = spawn if spawn is not None else {}
        """More options for starting hook processes (never a confinement: see ``confine``)."""
        self.confine = confine
        """Spawn options and environment that confine a hook whose entry says ``"sandbox":
        MODE`` (raises :class:`CodebotError` where it cannot); None: this session cannot
        confine (such a hook then does not run, with a warning)."""
        self.background = background
        """Where ``async`` hooks run (the session's task group while it is open); None: they
        run inline, their decisions ignored as Claude Code ignores an async hook's."""
        self.later = Outcome()
        """What finished ``async`` hooks said (context, messages), for the next prompt."""
        self.warned: set[str] = set()
        """Answer fields already warned about (one warning each)."""
        self.scripts = _scripts(self.commands, project_dir)
        """The project files each hook that runs as you names, with their signatures at the
        session's start: one changed since (a confined ``bash`` may have rewritten it) makes
        the hook run confined for the rest of the session (:meth:`guarded`)."""

    def for_subagent(self) -> Hooks:
        """The same hooks, for a subagent's calls."""
        child = Hooks(
            self.commands,
            cwd=self.cwd,
            project_dir=self.project_dir,
            session_id=self.session_id,
            transcript_path=self.transcript_path,
            mode_of=self.mode_of,
            spawn=self.spawn,
            confine=self.confine,
            background=self.background,
        )
        child.subagent, child.runs = True, self.runs
        child.later, child.warned, child.scripts = self.later, self.warned, self.scripts
        return child

    def guarded(self, hooks: Sequence[HookCommand], outcome: Outcome) -> list[HookCommand]:
        """``hooks``, each that runs as you but whose project script changed since the session
        started run confined instead (``workspace-write``), said once per hook in
        ``outcome``: the change may be a confined tool's, and trust has not seen it."""
        out: list[HookCommand] = []
        for hook in hooks:
            files = self.scripts.get(hook)
            changed = [p for p, sig in signature(files or ()).items() if files and files[p] != sig]
            if changed:
                hook = replace(hook, sandbox="workspace-write")
                key = f"confined:{hook.command}"
                if key not in self.warned:
                    self.warned.add(key)
                    names = ", ".join(_relative(p, self.project_dir) for p in changed)
                    outcome.warnings.append(
                        f"{_describe(hook)} runs confined for the rest of this session: {names} "
                        "changed since it started (review it, then `codebot trust`, to run it "
                        "as you again)"
                    )
            out.append(hook)
        return out

    def selected(
        self,
        event: str,
        names: Sequence[str] = (),
        call: tuple[str, Mapping[str, Any]] | None = None,
    ) -> list[HookCommand]:
        """The hooks of ``event`` whose matcher matches one of ``names`` (identical commands
        once; events without a subject ignore matchers) and, for a tool ``call`` (codebot's
        tool name and the arguments), whose ``if`` covers it. A hook with an ``if`` never
        runs on other events (Claude Code's rule)."""
        out: list[HookCommand] = []
        seen: set[str] = set()
        for hook in self.commands:
            if hook.event != event or hook.command in seen:
                continue
            if names and not matches(hook.matcher, names):
                continue
            if hook.condition and (event not in TOOL_EVENTS or call is None):
                continue
            if hook.condition and call is not None:
                tool, arguments = call
                if not hookcontract.condition_matches(hook.condition, tool, arguments, self.cwd):
                    continue
            seen.add(hook.command)
            out.append(hook)
        return out

    async def fire(
        self,
        event: str,
        fields: Mapping[str, Any],
        names: Sequence[str] = (),
        call: tuple[str, Mapping[str, Any]] | None = None,
    ) -> Outcome:
        """Run the matching hooks of ``event`` with ``fields`` added to the common input;
        ``async`` ones start beside the agent and decide nothing."""
        outcome = Outcome()
        selected = self.guarded(self.selected(event, names, call), outcome)
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
        waited = [h for h in selected if not h.background]
        inline: list[Callable[[], Coroutine[Any, Any, None]]] = []
        for hook in selected:
            if not hook.background:
                continue
            run = self._async_runner(hook, data)
            if (group := self.background()) is not None:
                group.start_soon(run)
            else:  # no session to run beside (a one-off call): now, deciding nothing
                inline.append(run)
        finished: list[Finished | OSError | CodebotError | None] = [None] * len(waited)

        async def one(index: int, hook: HookCommand) -> None:
            finished[index] = await self._run(hook, data)

        async with anyio.create_task_group() as tg:
            for index, hook in enumerate(waited):
                tg.start_soon(one, index, hook)
        for hook, done in zip(waited, finished, strict=True):
            assert done is not None
            _merge(outcome, hook, done)
            self._warn_fields(outcome, hook, done)
            if isinstance(done, Finished):
                self.runs.append(HookRun(hook, done.code, done.timed_out, done.seconds))
        for run in inline:
            await run()
        return outcome

    async def _run(self, hook: HookCommand, data: bytes) -> Finished | OSError | CodebotError:
        """Run one hook: as the user, or confined when its entry asks for a sandbox."""
        spawn, env = dict(self.spawn), self._environment()
        env.update(hook.env)  # a plugin's CLAUDE_PLUGIN_ROOT and CLAUDE_PLUGIN_DATA
        try:
            if hook.sandbox is not None:
                if self.confine is None:
                    return CodebotError(
                        f'it asks for "sandbox": "{hook.sandbox}" and this session cannot '
                        "confine commands; it did not run"
                    )
                options, extra = self.confine(hook.sandbox)
                spawn.update(options)
                env.update(extra)
            return await run_once(
                _shell(hook.command),
                stdin=data,
                env=env,
                cwd=self.cwd,
                limit=hook.timeout,
                **spawn,
            )
        except (OSError, CodebotError) as exc:  # e.g. a sandbox that cannot start
            return exc

    def _async_runner(
        self, hook: HookCommand, data: bytes
    ) -> Callable[[], Coroutine[Any, Any, None]]:
        """An ``async`` hook's run: when it ends, its context and messages wait in
        :attr:`later` for the next prompt."""

        async def run() -> None:
            try:
                done = await self._run(hook, data)
            except Exception as exc:  # boundary: a background hook never ends the chat
                done = CodebotError(f"it failed: {exc!r}")
            outcome = Outcome()
            _merge(outcome, hook, done)
            self._warn_fields(outcome, hook, done)
            if isinstance(done, Finished):
                self.runs.append(HookRun(hook, done.code, done.timed_out, done.seconds))
            self.later.context += outcome.context
            self.later.warnings += outcome.warnings

        return run

    def _warn_fields(
        self, outcome: Outcome, hook: HookCommand, done: Finished | OSError | CodebotError
    ) -> None:
        """One warning per answer field codebot does not honour (never silence)."""
        answer = _json(done.stdout) if isinstance(done, Finished) and done.code == 0 else None
        if answer is None:
            return
        specific = answer.get("hookSpecificOutput")
        names = [k for k in answer if k not in KNOWN_ANSWER_FIELDS]
        if isinstance(specific, dict):
            names += [f"hookSpecificOutput.{k}" for k in specific if k not in KNOWN_SPECIFIC_FIELDS]
        if hook.background:
            names += [k for k in ("decision", "continue") if k in answer]
        for name in names:
            if name in self.warned:
                continue
            self.warned.add(name)
            where = " in an async hook" if name in ("decision", "continue") else ""
            outcome.warnings.append(
                f"{_describe(hook)} answered '{name}', which codebot does not support{where}; "
                "ignored"
            )

    def _environment(self) -> dict[str, str]:
        project = str(self.project_dir)
        return child_environment(dict.fromkeys(PROJECT_DIR_VARIABLES, project))

    # -- the events ---------------------------------------------------------------------

    async def pre_tool_use(
        self, call: ToolCall, tool: Tool, arguments: Mapping[str, Any]
    ) -> Outcome:
        """``PreToolUse``: before the gate decides about a call."""
        fields = {
            "tool_name": hookcontract.claude_name(tool.name),
            "tool_input": self._tool_input(tool, arguments),
            "tool_use_id": call.id,
        }
        return await self.fire(
            "PreToolUse", fields, _names(call.name, tool), (tool.name, arguments)
        )

    async def post_tool_use(
        self,
        call: ToolCall,
        tool: Tool,
        arguments: Mapping[str, Any],
        result: ToolResult,
        seconds: float = 0.0,
    ) -> Outcome:
        """``PostToolUse`` after a call that succeeded, ``PostToolUseFailure`` after one
        that failed."""
        fields: dict[str, Any] = {
            "tool_name": hookcontract.claude_name(tool.name),
            "tool_input": self._tool_input(tool, arguments),
            "tool_use_id": call.id,
            "duration_ms": int(seconds * 1000),
        }
        event = "PostToolUseFailure" if result.is_error else "PostToolUse"
        if result.is_error:
            fields.update(error=result.text, is_interrupt=False)
        else:
            fields["tool_response"] = hookcontract.claude_response(
                tool.name, arguments, (result.text, result.is_error, result.data), self.cwd
            )
        return await self.fire(event, fields, _names(call.name, tool), (tool.name, arguments))

    def _tool_input(self, tool: Tool, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The call's arguments in Claude Code's field names (``file_path``, absolute)."""
        return hookcontract.claude_input(tool.name, arguments, self.cwd)


def _names(tool_name: str, tool: Tool) -> tuple[str, ...]:
    """What a matcher is tested against: the name the model sees, codebot's tool name and
    Claude Code's name for it (``bash``, ``Bash``)."""
    names = [tool_name, tool.name, hookcontract.claude_name(tool.name)]
    names += [old for old, mine in hookcontract.OLD_NAMES.items() if mine == tool.name]
    return tuple(dict.fromkeys(names))


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
        last = stderr.splitlines()[-1].strip() if stderr else "no message"
        warning = f"{_describe(hook)} failed with exit code {done.code}: {last}"
        if hook.sandbox is not None and _refused(stderr):
            warning += (
                f' (the sandbox refused it: this hook runs with "sandbox": "{hook.sandbox}"; '
                "remove that key from its entry to run it as you)"
            )
        outcome.warnings.append(warning)
        return
    answer = _json(done.stdout)
    if answer is None:
        if hook.event in ("UserPromptSubmit", "SessionStart") and done.stdout.strip():
            outcome.context.append(done.stdout.strip())
        return
    _decide(outcome, hook, answer)


def _refused(stderr: str) -> bool:
    """Whether a confined hook's stderr shows the sandbox refusing a write or the network."""
    from codebot_mcp.core.sandbox.confinement import FILE_REFUSALS, NETWORK_REFUSALS

    return any(sign in stderr for sign in (*FILE_REFUSALS, *NETWORK_REFUSALS))


def _json(stdout: str) -> dict[str, Any] | None:
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


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
    extra = specific.get("additionalContext")
    if isinstance(extra, str) and extra.strip():
        outcome.context.append(extra.strip())
    if hook.event != "PreToolUse":
        return
    updated = specific.get("updatedInput")
    if isinstance(updated, dict):
        outcome.updated_input = dict(updated)
    verdict = {"allow": Verdict.ALLOW, "deny": Verdict.DENY, "ask": Verdict.ASK}.get(
        str(specific.get("permissionDecision")),
    )  # "defer": the usual rules decide, as when no hook spoke
    if verdict is not None:
        why = specific.get("permissionDecisionReason")
        _permission(outcome, verdict, str(why or ""))


_RANK = {Verdict.ALLOW: 0, Verdict.ASK: 1, Verdict.DENY: 2}


def _permission(outcome: Outcome, verdict: Verdict, reason: str) -> None:
    if outcome.decision is None or _RANK[verdict] > _RANK[outcome.decision]:
        outcome.decision = verdict
    if reason:
        outcome.decision_reasons.append(reason)


def _scripts(
    commands: Sequence[HookCommand], project_dir: Path
) -> dict[HookCommand, dict[Path, tuple[int, int, int, int] | None]]:
    """For each hook that runs as you, the project files its command names (codebot's own
    folder left out) and their signatures now."""
    from codebot_mcp.core.config import paths
    from codebot_mcp.core.config.hooks import script_files

    mine = Path(os.path.realpath(paths.codebot_home()))
    out: dict[HookCommand, dict[Path, tuple[int, int, int, int] | None]] = {}
    for hook in commands:
        if hook.sandbox is not None or hook in out:
            continue
        try:
            files = [
                p for p in script_files(hook.command, project_dir) if not p.is_relative_to(mine)
            ]
        except OSError:
            continue
        if files:
            out[hook] = signature(files)
    return out


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(Path(os.path.realpath(root))).as_posix()
    except ValueError:
        return str(path)
