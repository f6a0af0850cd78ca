"""The agent loop: ask the model, run the tools it calls, feed the results back, repeat.

One :meth:`Agent.run` per user prompt. Every model turn sees the session's current tools
(``before_prompt`` runs first). Tool calls of one turn are approved one after another (so the
user is never asked two questions at once) and run in order: reads together, a call that may
change something alone, after the reads before it (:meth:`Agent._run_calls`); results go
back in call order. Any tool failure (unknown name, invalid JSON, denial, an exception, a huge
result) becomes a tool result the model can read; only model API errors and the turn limit
raise.

Cancellation (Ctrl-C) is ordinary structured cancellation: the running request and tool calls
are cancelled, and the history keeps only complete turns, so the next request is valid.

Size: one loop and the steps of one turn (ask, compact to fit, approve, run, account); hooks,
checkpoints and the trust watch each add a call or two at the points they need, through the
kernel's protocols (:mod:`core.agent.protocols`): the loop imports no feature. The execution
policy ("reads together, changes alone") is the next thing to leave, as a strategy object.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import anyio

from codebot_mcp.core.agent.context import Compaction, ContextBudget, output_cap
from codebot_mcp.core.agent.events import (
    AgentEvents,
    Outcome,
    RepeatedCallError,
    RunObserver,
    RunResult,
    ToolRecord,
)
from codebot_mcp.core.agent.permissions import PermissionGate, denial_text
from codebot_mcp.core.agent.sampling import ModelRef, Sampler
from codebot_mcp.core.agent.session import Message, Session
from codebot_mcp.core.agent.toolcalls import (
    fitted_images,
    images_message,
    parse_arguments,
    tool_message,
    truncate,
)
from codebot_mcp.core.errors import CodebotError, ModelError, TurnLimitError
from codebot_mcp.core.media import imagelimits
from codebot_mcp.core.media import images as image_parts
from codebot_mcp.core.media.imagelimits import ImageLimits
from codebot_mcp.core.media.images import Image
from codebot_mcp.core.model.client import ChatModel, ContextOverflowError, StreamDroppedError
from codebot_mcp.core.model.stream import Reply, ToolCall, Usage
from codebot_mcp.core.model.tokens import known_window, window_for
from codebot_mcp.core.secrets.redact import SECRETS, scrub
from codebot_mcp.core.tools.base import Capability, Tool, ToolResult

__all__ = [
    "Agent",
    "AgentEvents",
    "Outcome",
    "RepeatedCallError",
    "RunResult",
    "ToolRecord",
    "running_agent",
    "truncate",
]

if TYPE_CHECKING:
    from codebot_mcp.core.agent.protocols import TurnCheckpoints, TurnHooks
    from codebot_mcp.core.config.settings import Settings
    from codebot_mcp.core.config.trustwatch import TurnWatch

REPEAT_WARN_AT = 3
"""The third identical call (same tool, same arguments) in one prompt is not run: the model
is told its result will not change."""
REPEAT_STOP_AT = 4
"""The fourth ends the run (exit 6)."""


OVERFLOW_RETRIES = 3
"""A ``context_length_exceeded`` compacts (more strictly each time) and retries this often."""
OVERFLOW_NOTHING_TO_COMPACT = (
    "There was nothing older to compact: the current prompt, the system prompt and the tool "
    "schemas alone pass the window. Shorten the prompt (or the file it pulls in), trim MCP "
    "tools ('include_tools', or \"tool_search\": true), or use a model with a larger window."
)
OVERFLOW_AFTER_COMPACTING = (
    "codebot compacted the conversation and retried, and it was still too long. Start "
    "a new conversation (/clear), trim MCP tools ('include_tools', or \"tool_search\": true), "
    "or set 'context_window' in settings.json to the server's real window."
)


_RUNNING: ContextVar[Agent | None] = ContextVar("codebot_running_agent", default=None)


def running_agent() -> Agent | None:
    """The agent whose prompt runs the current call (a subagent's, inside its run), None
    outside a run: ``task`` starts its subagents under it."""
    return _RUNNING.get()


class Agent:
    """Runs prompts against a session.

    Args:
        session: Tools, history and the system prompt.
        model: The model client, or the chat's :class:`ModelRef` (its sampler reads it too).
        gate: Decides which calls may run.
        max_turns: Model turns per prompt before :class:`TurnLimitError`.
        tool_result_max_tokens: Results longer than this (estimated) are cut.
        budget: The context window policy; one for the model's known window by default.
        settings: The settings' limits to follow (:meth:`configure`); None: the defaults.
        sampler: Answers the servers' sampling requests; counted with each turn's usage.
        checkpoints: Snapshots before each prompt's first change (None: off).
        hooks: The user's hooks (None: none configured).
        watch: The files that need trust (a prompt that changed one says so).
        observer: Sees every run and its events (telemetry; None: nothing).
    """

    def __init__(
        self,
        session: Session,
        model: ChatModel | ModelRef,
        gate: PermissionGate,
        *,
        max_turns: int = 50,
        tool_result_max_tokens: int = 25_000,
        budget: ContextBudget | None = None,
        settings: Settings | None = None,
        sampler: Sampler | None = None,
        checkpoints: TurnCheckpoints | None = None,
        hooks: TurnHooks | None = None,
        watch: TurnWatch | None = None,
        observer: RunObserver | None = None,
    ) -> None:
        self.session = session
        self._model = model if isinstance(model, ModelRef) else ModelRef(model)
        self.gate = gate
        self.max_turns = max_turns
        self.tool_result_max_tokens = tool_result_max_tokens
        self.sampler = sampler
        """Servers' sampling: capped per turn, counted with the turn's usage."""
        self.context_window: int | None = None
        """``context_window`` from settings (None: the table, or the default)."""
        self.budget = budget or ContextBudget(
            window_for(self.model.config.model, None), reserve=self.model.config.max_tokens
        )
        self.usage = Usage()
        """Usage over the whole session (every run, summaries included)."""
        self.last: RunResult | None = None
        """The latest run, also when it failed."""
        self.checkpoints = checkpoints
        """Snapshots before each prompt's first change, for rewinding (``core.checkpoints``;
        None: off)."""
        self.hooks = hooks
        """The user's hooks at the loop's points (``core.hooks``); None: none configured."""
        self.watch = watch
        """Files that need trust: a prompt that changed one says so at its end."""
        self.observer = observer
        """Sees every run and its events (``core.telemetry`` when it is on); None: nothing."""
        self._warned_model: str | None = None
        self.image_limits = ImageLimits()
        """``images`` from settings: each image's size, and how many one request carries."""
        self.window_known = False
        """The window comes from settings, the endpoint, the table or a server's error (not
        the default guess): the default output cap is then sized from it."""
        if settings is not None:
            self.configure(settings)

    @property
    def model(self) -> ChatModel:
        """The model of this agent's turns (in a :class:`ModelRef` its sampler reads too)."""
        model = self._model.model
        if model is None:
            raise ModelError("no model is configured")
        return model

    @model.setter
    def model(self, model: ChatModel) -> None:
        self._model.model = model

    def configure(self, settings: Settings) -> None:
        """Follow the settings' limits (on start and after ``/mcp reload``)."""
        self.max_turns = settings.max_turns
        self.tool_result_max_tokens = settings.tool_result_max_tokens
        self.context_window = settings.context_window
        self.image_limits = imagelimits.of(settings)
        self.follow_model()

    def follow_model(self) -> None:
        """Size the window for the current model (after a model change, too)."""
        config = self.model.config
        window = window_for(config.model, self.context_window, config.window)
        self.window_known = bool(self.context_window or config.window or known_window(config.model))
        self.budget.window = window
        self.budget.reserve = min(self.output_cap(), window // 4)
        self.session.set_context_window(window)

    def output_cap(self) -> int:
        """``max_tokens`` for a request: the setting, or the default sized to a known window."""
        config = self.model.config
        if config.max_tokens_given or not self.window_known:
            return config.max_tokens
        return output_cap(config.max_tokens, self.budget.window)

    async def run(
        self, prompt: str, events: AgentEvents | None = None, images: tuple[Image, ...] = ()
    ) -> RunResult:
        """Answer one user prompt (with the images attached to it), calling tools as the
        model asks.

        The result is also kept in :attr:`last` while the run goes, so a caller that catches
        an error still sees the calls that ran. With :attr:`checkpoints`, the prompt is a
        turn that can be rewound (``core.checkpoints.turns``).

        Raises:
            ModelError: the model API failed (after compaction and retries).
            TurnLimitError: ``max_turns`` model turns ended without a final answer, or the
                model kept repeating one call.
            HookBlockedError: a hook blocked the prompt, or stopped the run.
        """
        events = events or AgentEvents()
        token = _RUNNING.set(self)
        try:
            if self.observer is None:
                return await self._prompt(prompt, events, images)
            with self.observer.observe(self, prompt, events) as observed:
                return await self._prompt(prompt, observed, images)
        finally:
            _RUNNING.reset(token)

    async def _prompt(
        self, prompt: str, events: AgentEvents, images: tuple[Image, ...]
    ) -> RunResult:
        if self.hooks is not None:
            prompt = await self.hooks.submit(prompt, events)
        checkpoints = self.checkpoints
        try:
            if checkpoints is None:
                return await self._run(prompt, events, images)
            if problem := await checkpoints.begin(prompt):
                events.warning(problem)
            try:
                return await self._run(prompt, events, images)
            finally:
                self._jobs_turn_ended()  # before the snapshot: it sees what jobs did by now
                checkpoints.end()
        finally:
            if checkpoints is None:
                self._jobs_turn_ended()
            if self.watch is not None and self.last is not None and (changed := self.watch.end()):
                self.last.trust_changes = changed
                events.warning(self.watch.message(changed))

    def _jobs_turn_ended(self) -> None:
        """Background jobs still running: what a confined one created of the sandbox's
        watched names leaves the project now (``core.jobs.jobtable``)."""
        if self.session.jobs is not None:
            self.session.jobs.turn_ended()

    async def _run(self, prompt: str, events: AgentEvents, images: tuple[Image, ...]) -> RunResult:
        history = self.session.history
        start = len(history)
        history.append(image_parts.user_message(prompt, images))
        result = self.last = RunResult()
        seen: Counter[tuple[str, str]] = Counter()
        stop_hook_active = False
        if self.sampler is not None:
            self.sampler.begin_turn(result.usage)
        try:
            for turn in range(1, self.max_turns + 1):
                result.turns = turn
                if await self.session.before_prompt():
                    events.tools_changed()
                start = self._current_turn(start)
                events.model_started(turn)
                reply = await self._ask(start, events, result)
                events.model_finished(reply)
                if summary := reply.reasoning_summary:
                    result.reasoning.append(summary)
                result.finish_reason = reply.finish_reason
                if not reply.tool_calls:
                    history.append(reply.message())
                    hooks = self.hooks
                    if hooks and await hooks.keep_going(history, stop_hook_active, events):
                        stop_hook_active = True
                        continue
                    result.text = reply.text
                    result.outcome = Outcome.ANSWER if reply.text.strip() else Outcome.EMPTY
                    self.session.checkpoint()
                    return result
                await self._before_changes(reply.tool_calls, events)
                records = await self._run_calls(reply.tool_calls, events, seen)
                result.tool_calls.extend(records)
                # Appended only once complete: a cancel above leaves no dangling tool_calls.
                history.append(reply.message())
                history.extend(tool_message(r.call, r.result) for r in records)
                if any(r.result.images for r in records):  # Chat Completions: in a user turn
                    history.append(images_message(records))
                self.session.checkpoint()
                self._stop_if_looping(seen)
        except StreamDroppedError as exc:
            if exc.partial:  # keep what arrived: the user saw it, the model should too
                history.append({"role": "assistant", "content": exc.partial})
                result.text = exc.partial
            self._failed(result, exc, history, start)
            raise
        except CodebotError as exc:
            self._failed(result, exc, history, start)
            raise
        except BaseException:
            if len(history) == start + 1:  # nothing completed: the prompt never happened
                del history[start:]
            self.session.checkpoint()
            raise
        error = TurnLimitError(
            f"the agent stopped after {self.max_turns} model turns without a final answer",
            hint="Raise 'max_turns' in settings.json, or split the task into smaller prompts.",
        )
        self._failed(result, error, history, start)
        raise error

    async def _before_changes(self, calls: list[ToolCall], events: AgentEvents) -> None:
        """The watch's snapshot, and a checkpoint before the first call that may change files."""
        if self.watch is not None:
            self.watch.begin()
        if self.checkpoints is not None:
            problem = await self.checkpoints.before_calls(calls, self.session.find_tool)
            if problem:
                events.warning(problem)

    def _current_turn(self, start: int) -> int:
        """Where the current prompt starts (compaction may have moved it)."""
        history = self.session.history
        for index in range(min(start, len(history) - 1), -1, -1):
            message = history[index]
            if message.get("role") == "user" and image_parts.TOOL_IMAGES_KEY not in message:
                return index
        return 0

    def _failed(
        self, result: RunResult, exc: CodebotError, history: list[Message], start: int
    ) -> None:
        result.outcome = Outcome.ERROR
        result.error = exc
        if len(history) == start + 1 and not result.text:
            del history[start:]
        self.session.checkpoint()

    async def _ask(self, start: int, events: AgentEvents, result: RunResult) -> Reply:
        """One model request, compacted first when needed, and again after each overflow
        (up to :data:`OVERFLOW_RETRIES` times). A request still estimated above the window
        is never sent."""
        session = self.session
        compacted = await self._fit(start, events, result)
        for attempt in range(OVERFLOW_RETRIES + 1):
            messages, tools = session.messages(), session.tool_schemas()
            messages = image_parts.limit_request(messages, self.image_limits)
            sent = self.budget.cost(messages, tools)
            try:
                if sent > self.budget.ceiling:
                    raise ContextOverflowError(
                        f"the request would be about {sent:,} tokens, more than the context "
                        f"window of {self.budget.ceiling:,} tokens (estimated; it was not sent)"
                    )
                reply = await self.model.complete(
                    messages,
                    tools,
                    events.text,
                    on_retry=events.model_retrying,
                    max_tokens=self.output_cap(),
                    on_progress=events.model_progress,
                    on_reasoning=events.reasoning,
                )
            except ContextOverflowError as exc:
                exc.hint = OVERFLOW_AFTER_COMPACTING if compacted else OVERFLOW_NOTHING_TO_COMPACT
                if attempt == OVERFLOW_RETRIES:
                    raise
                if sent <= self.budget.ceiling:  # the server counted more than the estimate
                    self.budget.learn_overflow(sent, exc.window)
                    self.window_known = self.window_known or bool(exc.window)
                    session.set_context_window(self.budget.window)  # "auto" tool search follows
                if not await self._fit(start, events, result, force=True):
                    raise
                compacted = True
                continue
            self._account(reply, messages, tools, result, events)
            return reply
        raise AssertionError("unreachable")  # pragma: no cover

    async def _fit(
        self, start: int, events: AgentEvents, result: RunResult, *, force: bool = False
    ) -> bool:
        session = self.session
        hooks = self.hooks
        if hooks and hooks.listens("PreCompact", ("auto",)):
            over = self.budget.cost(session.messages(), session.tool_schemas()) > self.budget.limit
            if force or over:
                await hooks.before_compact("auto", None, events)
        done = await self.budget.fit(
            session.history,
            start,
            lambda: (session.messages(), session.tool_schemas()),
            self.model,
            force=force,
        )
        if done is None:
            return False
        session.rewrote_history()
        result.compactions.append(done)
        events.compacted(done)
        if hooks is not None:
            await hooks.post_compact("auto", done.summary, events)
        return True

    async def compact(
        self, focus: str | None = None, events: AgentEvents | None = None
    ) -> Compaction | None:
        """``/compact``: summarise the whole conversation now (cut old tool results first).

        Raises:
            ModelError: the summary request failed.
            HookBlockedError: a ``PreCompact`` hook blocked it.
        """
        session = self.session
        hooks = self.hooks
        if hooks is not None:
            await hooks.before_compact("manual", focus, events or AgentEvents())
        done = await self.budget.fit(
            session.history,
            len(session.history),
            lambda: (session.messages(), session.tool_schemas()),
            self.model,
            force=True,
            focus=focus,
        )
        if done is not None:
            session.rewrote_history()
            session.checkpoint()
            if hooks is not None:
                await hooks.post_compact("manual", done.summary, events or AgentEvents())
        return done

    def _account(
        self,
        reply: Reply,
        messages: list[Message],
        tools: list[dict[str, Any]],
        result: RunResult,
        events: AgentEvents,
    ) -> None:
        result.usage.add(reply.usage)
        self.usage.add(reply.usage)
        result.last_usage = reply.usage
        if reply.usage is not None:
            self.budget.observe(messages, tools, reply.usage.prompt_tokens)
        asked = self.model.config.model
        if (
            reply.model
            and not _same_model(asked, reply.model)
            and reply.model != self._warned_model
        ):
            self._warned_model = reply.model
            events.notice(
                f"asked for model '{asked}', but the server answered as '{reply.model}' "
                "(check --model, CODEBOT_MODEL or 'model' in settings.json)"
            )

    def _stop_if_looping(self, seen: Counter[tuple[str, str]]) -> None:
        worst = max(seen.values(), default=0)
        if worst >= REPEAT_STOP_AT:
            (name, _), _count = seen.most_common(1)[0]
            raise RepeatedCallError(
                f"the model called '{name}' with the same arguments {worst} times in one "
                "prompt, even after being told the result will not change; stopped",
                hint="Rephrase the prompt or give the model what it is missing; a smaller "
                "model may need a more specific request.",
            )

    async def _run_calls(
        self, calls: list[ToolCall], events: AgentEvents, seen: Counter[tuple[str, str]]
    ) -> list[ToolRecord]:
        """Run one turn's calls in order: reads together, a change alone.

        Calls with read capability are approved as they come and run concurrently. A call
        that may change something (any other capability: ``edit``, ``write``, ``bash``, an
        MCP tool not classified read) waits for the reads before it, is then approved (its
        diff computed against the files as they are now) and runs alone, before anything
        after it starts. Two edits of one file therefore both apply, the second on the first.
        """
        records: list[ToolRecord | None] = [None] * len(calls)
        reads: list[tuple[int, Tool, dict[str, Any]]] = []

        async def execute(index: int, tool: Tool, arguments: dict[str, Any]) -> None:
            records[index] = await self._execute(calls[index], tool, arguments, events)

        async def run_reads() -> None:
            async with anyio.create_task_group() as group:
                for index, tool, arguments in reads:
                    group.start_soon(execute, index, tool, arguments)
            reads.clear()

        for index, call in enumerate(calls):
            problem = self._problem(call, seen)
            if isinstance(problem, str):
                rejected = ToolResult(problem, is_error=True)
                events.tool_rejected(call, rejected)
                records[index] = ToolRecord(call, rejected, rejected=True)
                continue
            tool, arguments = problem
            read = tool.info.permission.capability is Capability.READ
            if not read:
                await run_reads()  # a change runs after the reads before it, and alone
            hook = None
            if self.hooks is not None:
                hook = await self.hooks.before_call(call, tool, arguments, events)
            if hook is not None and hook.updated is not None:  # a hook's updatedInput
                arguments = hook.updated
            decision = await self.gate.check(tool, arguments, hook)
            if not decision.allowed:
                events.tool_denied(call, decision)
                denied = ToolResult(denial_text(call.name, decision), is_error=True)
                records[index] = ToolRecord(call, denied, denied=True, reason=decision.reason)
                continue
            events.tool_approved(call, decision)
            if read:
                reads.append((index, tool, arguments))
            else:
                await execute(index, tool, arguments)
        await run_reads()
        return [r for r in records if r is not None]

    async def _execute(
        self, call: ToolCall, tool: Tool, arguments: dict[str, Any], events: AgentEvents
    ) -> ToolRecord:
        """Run one approved call; any failure becomes an error result the model reads."""
        events.tool_started(call, tool)
        began = time.monotonic()
        try:
            result = await tool.execute(arguments)
        except CodebotError as exc:  # e.g. a dead MCP transport: the model must know
            result = ToolResult(f"'{call.name}' is unavailable: {exc.message}", is_error=True)
        except Exception as exc:  # boundary: a buggy tool must not end the conversation
            result = ToolResult(f"'{call.name}' crashed: {exc!r}", is_error=True)
        # A tool may echo a secret (a server its own Authorization header, a shell a key):
        # every known secret goes before the model, the transcript or the terminal sees it;
        # an MCP result was scrubbed once already, where it entered (``scrubbed``).
        clean = result.scrubbed
        result = ToolResult(
            truncate(result.text if clean else SECRETS(result.text), self.tool_result_max_tokens),
            result.is_error,
            result.data if clean else scrub(result.data),
            result.images,
        )
        if result.images:  # each under images.max_bytes (downscaled, or a note instead)
            result = await fitted_images(result, self.image_limits.max_bytes)
        seconds = time.monotonic() - began
        if self.hooks is not None:
            result = await self.hooks.after_call(call, tool, arguments, result, events, seconds)
        events.tool_finished(call, result, seconds)
        return ToolRecord(call, result, seconds=seconds)

    def _problem(
        self, call: ToolCall, seen: Counter[tuple[str, str]]
    ) -> str | tuple[Tool, dict[str, Any]]:
        """Why a call cannot run (text for the model), or its tool and parsed arguments."""
        tool = self.session.find_tool(call.name)
        if tool is None:
            return self._unknown(call)
        arguments = parse_arguments(call)
        if isinstance(arguments, str):
            return f"{arguments}. Call '{call.name}' again with a JSON object of arguments."
        key = (call.name, json.dumps(arguments, sort_keys=True))
        seen[key] += 1
        if seen[key] >= REPEAT_WARN_AT:
            return (
                f"codebot did not run this call: '{call.name}' was already called "
                f"{seen[key] - 1} times in this prompt with exactly these arguments, and its "
                "result will not change. Do not repeat it; use the results you have, try "
                "something different, or answer the user."
            )
        return tool, arguments

    def _unknown(self, call: ToolCall) -> str:
        deferred = self.session.deferred_names()
        if call.name in deferred:
            return (
                f"'{call.name}' is not loaded yet. Call search_tools with its name first; "
                "it can be called from the next turn on."
            )
        names = ", ".join(t.name for t in self.session.active_tools) or "none"
        return f"there is no tool named '{call.name}'. Available tools: {names}."


def _same_model(asked: str, served: str) -> bool:
    """Servers name dated snapshots (``gpt-4o`` → ``gpt-4o-2024-08-06``) or add a vendor."""
    a, s = asked.lower(), served.lower()
    return (
        a == s or s.startswith(a) or a.startswith(s) or s.endswith("/" + a) or a.endswith("/" + s)
    )
