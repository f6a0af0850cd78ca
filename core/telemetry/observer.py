"""One run as spans and metrics, from the agent's own events (``core.agent.events``).

:func:`observe_run` wraps an ``Agent.run``: the run's span ``invoke_agent codebot`` (child of
the session's), and :class:`TelemetryEvents`, which sees every event before the view it wraps
(the terminal's, stream-json's, ACP's). Each model request is a ``chat {model}`` span with the
GenAI attributes (provider, request and response model, token usage, finish reasons) and its
trace context in the request's headers (``core.model.client.TRACE_HEADERS``); each tool call an
``execute_tool {tool}`` span that is the current context while the tool runs, so the MCP SDK's
span of the request is its child and the server receives that trace in ``params._meta``.

Prompts, answers, tool arguments and results are exported only with ``telemetry.log_content``
(as the conventions' opt-in attributes), each scrubbed of every secret codebot knows and
capped. Nothing here may fail a run: each handler is a boundary.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import Token
from typing import TYPE_CHECKING, Any, Protocol

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from codebot_mcp.core.agent.events import AgentEvents, Outcome
from codebot_mcp.core.model.client import TRACE_HEADERS
from codebot_mcp.core.telemetry.genai import Instruments, content, provider

if TYPE_CHECKING:
    from codebot_mcp.core.agent.context import Compaction
    from codebot_mcp.core.agent.permissions import Decision
    from codebot_mcp.core.model.client import Retry
    from codebot_mcp.core.model.stream import Reply, ToolCall
    from codebot_mcp.core.tools.base import Tool, ToolResult

logger = logging.getLogger(__name__)


class Telemetry(Protocol):
    """What a run's observer uses of ``core.telemetry.otel.Telemetry``."""

    tracer: trace.Tracer
    instruments: Instruments
    log_content: bool
    conversation_id: str | None
    session_context: otel_context.Context | None

    def inject(self, span: trace.Span) -> dict[str, str]: ...


@contextmanager
def observe_run(
    telemetry: Telemetry, agent: Any, prompt: str, events: AgentEvents
) -> Iterator[AgentEvents]:
    """Around one ``Agent.run`` (``core.agent.events.RunObserver``)."""
    config = agent.model.config
    name, where = provider(config.base_url)
    base: dict[str, Any] = {
        "gen_ai.provider.name": name,
        "gen_ai.request.model": config.model,
        **where,
    }
    if telemetry.conversation_id:
        base["gen_ai.conversation.id"] = telemetry.conversation_id
    attributes = {
        **base,
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "codebot",
    }
    if telemetry.log_content:
        attributes["gen_ai.input.messages"] = content(
            [{"role": "user", "parts": [{"type": "text", "content": prompt}]}]
        )
    inside = trace.get_current_span().get_span_context().is_valid  # a subagent: the task call
    span = telemetry.tracer.start_span(
        "invoke_agent codebot",
        context=None if inside else telemetry.session_context,
        kind=SpanKind.INTERNAL,
        attributes=attributes,
    )
    observed = TelemetryEvents(telemetry, events, span, base)
    try:
        yield observed
    except BaseException as exc:
        span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
        span.set_attribute("error.type", type(exc).__name__)
        raise
    finally:
        observed.end_open()
        result = agent.last
        if result is not None:
            try:
                _run_result(telemetry, span, result)
            except Exception:  # boundary: telemetry never fails a run
                logger.debug("telemetry: the run's attributes failed", exc_info=True)
        span.end()


def _run_result(telemetry: Telemetry, span: trace.Span, result: Any) -> None:
    span.set_attributes(
        {
            "codebot.run.outcome": str(result.outcome),
            "codebot.run.turns": result.turns,
            "gen_ai.usage.input_tokens": result.usage.prompt_tokens,
            "gen_ai.usage.output_tokens": result.usage.completion_tokens,
        }
    )
    if result.error is not None:
        span.set_status(Status(StatusCode.ERROR, type(result.error).__name__))
        span.set_attribute("error.type", type(result.error).__name__)
    if telemetry.log_content and result.outcome is Outcome.ANSWER:
        span.set_attribute(
            "gen_ai.output.messages",
            content(
                [
                    {
                        "role": "assistant",
                        "parts": [{"type": "text", "content": result.text}],
                        "finish_reason": result.finish_reason or "stop",
                    }
                ]
            ),
        )


class _Open:
    """A tool call's span while it runs."""

    __slots__ = ("began", "span", "token")

    def __init__(self, span: trace.Span, token: object, began: float) -> None:
        self.span, self.token, self.began = span, token, began


_MINE = frozenset(
    {
        "model_started",
        "model_finished",
        "model_retrying",
        "tool_started",
        "tool_finished",
        "tool_approved",
        "tool_denied",
        "tool_rejected",
        "compacted",
    }
)


class TelemetryEvents(AgentEvents):
    """The run's events seen by telemetry first, then passed on to ``inner`` unchanged. Every
    other method of ``inner`` (events added later included) is ``inner``'s own."""

    def __init__(
        self,
        telemetry: Telemetry,
        inner: AgentEvents,
        run: trace.Span,
        base: dict[str, Any],
    ) -> None:
        self._telemetry = telemetry
        self._inner = inner
        self._run = run
        self._run_context = trace.set_span_in_context(run)
        self._base = base
        self._model: trace.Span | None = None
        self._model_began = 0.0
        self._headers: Token[Any] | None = None
        self._tools: dict[str, _Open] = {}
        for name in dir(type(inner)):
            if not name.startswith("_") and name not in _MINE:
                if callable(getattr(type(inner), name, None)):
                    setattr(self, name, getattr(inner, name))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    # the model request

    def model_started(self, turn: int) -> None:
        try:
            self._start_model(turn)
        except Exception:  # boundary: telemetry never fails a run
            logger.debug("telemetry: model_started failed", exc_info=True)
        self._inner.model_started(turn)

    def _start_model(self, turn: int) -> None:
        self._end_model(None)
        model = self._base["gen_ai.request.model"]
        attributes = {
            **self._base,
            "gen_ai.operation.name": "chat",
            "gen_ai.request.stream": True,
            "codebot.turn": turn,
        }
        self._model = self._telemetry.tracer.start_span(
            f"chat {model}", context=self._run_context, kind=SpanKind.CLIENT, attributes=attributes
        )
        self._model_began = time.perf_counter()
        self._headers = TRACE_HEADERS.set(self._telemetry.inject(self._model))

    def model_retrying(self, retry: Retry) -> None:
        try:
            if self._model is not None:
                self._model.add_event(
                    "codebot.model.retry",
                    {"codebot.retry.attempt": retry.attempt, "codebot.retry.delay": retry.delay},
                )
        except Exception:  # boundary: telemetry never fails a run
            logger.debug("telemetry: model_retrying failed", exc_info=True)
        self._inner.model_retrying(retry)

    def model_finished(self, reply: Reply) -> None:
        try:
            self._end_model(reply)
        except Exception:  # boundary: telemetry never fails a run
            logger.debug("telemetry: model_finished failed", exc_info=True)
        self._inner.model_finished(reply)

    def _end_model(self, reply: Reply | None) -> None:
        span, self._model = self._model, None
        if self._headers is not None:
            try:
                TRACE_HEADERS.reset(self._headers)
            except ValueError:  # set in another context: clear it here
                TRACE_HEADERS.set(None)
            self._headers = None
        if span is None:
            return
        seconds = time.perf_counter() - self._model_began
        instruments = self._telemetry.instruments
        metric = {
            k: v
            for k, v in self._base.items()
            if k in ("gen_ai.provider.name", "gen_ai.request.model", "server.address")
        }
        metric["gen_ai.operation.name"] = "chat"
        if reply is None:  # the request failed or was cancelled
            span.set_status(Status(StatusCode.ERROR, "no reply"))
            span.set_attribute("error.type", "no_reply")
            metric["error.type"] = "no_reply"
        else:
            if reply.model:
                span.set_attribute("gen_ai.response.model", reply.model)
                metric["gen_ai.response.model"] = reply.model
            if reply.finish_reason:
                span.set_attribute("gen_ai.response.finish_reasons", [reply.finish_reason])
            usage = reply.usage
            if usage is not None:
                span.set_attributes(
                    {
                        "gen_ai.usage.input_tokens": usage.prompt_tokens,
                        "gen_ai.usage.output_tokens": usage.completion_tokens,
                        "gen_ai.usage.cache_read.input_tokens": usage.cached_tokens,
                        "gen_ai.usage.reasoning.output_tokens": usage.reasoning_tokens,
                    }
                )
                if instruments.tokens is not None:
                    instruments.tokens.record(
                        usage.prompt_tokens, {**metric, "gen_ai.token.type": "input"}
                    )
                    instruments.tokens.record(
                        usage.completion_tokens, {**metric, "gen_ai.token.type": "output"}
                    )
            if self._telemetry.log_content:
                parts: list[dict[str, Any]] = []
                if reply.text:
                    parts.append({"type": "text", "content": reply.text})
                parts += [
                    {
                        "type": "tool_call",
                        "id": call.id,
                        "name": call.name,
                        "arguments": call.arguments,
                    }
                    for call in reply.tool_calls
                ]
                span.set_attribute(
                    "gen_ai.output.messages",
                    content(
                        [
                            {
                                "role": "assistant",
                                "parts": parts,
                                "finish_reason": reply.finish_reason or "stop",
                            }
                        ]
                    ),
                )
        if instruments.duration is not None:
            instruments.duration.record(seconds, metric)
        span.end()

    # tool calls

    def tool_approved(self, call: ToolCall, decision: Decision) -> None:
        self._decided(call, "approved", decision)
        self._inner.tool_approved(call, decision)

    def tool_denied(self, call: ToolCall, decision: Decision) -> None:
        self._decided(call, "denied", decision)
        try:
            self._run.add_event(
                "codebot.tool.denied",
                {
                    "gen_ai.tool.name": call.name,
                    "gen_ai.tool.call.id": call.id,
                    "codebot.decision.by": str(decision.by),
                },
            )
            self._count(call.name, "denied")
        except Exception:  # boundary: telemetry never fails a run
            logger.debug("telemetry: tool_denied failed", exc_info=True)
        self._inner.tool_denied(call, decision)

    def _decided(self, call: ToolCall, verdict: str, decision: Decision) -> None:
        try:
            counter = self._telemetry.instruments.decisions
            if counter is not None:
                counter.add(
                    1,
                    {
                        "gen_ai.tool.name": call.name,
                        "codebot.decision": verdict,
                        "codebot.decision.by": str(decision.by),
                    },
                )
        except Exception:  # boundary: telemetry never fails a run
            logger.debug("telemetry: a decision failed", exc_info=True)

    def tool_rejected(self, call: ToolCall, result: ToolResult) -> None:
        try:
            self._run.add_event(
                "codebot.tool.rejected",
                {"gen_ai.tool.name": call.name, "gen_ai.tool.call.id": call.id},
            )
            self._count(call.name, "rejected")
        except Exception:  # boundary: telemetry never fails a run
            logger.debug("telemetry: tool_rejected failed", exc_info=True)
        self._inner.tool_rejected(call, result)

    def tool_started(self, call: ToolCall, tool: Tool) -> None:
        try:
            self._start_tool(call, tool)
        except Exception:  # boundary: telemetry never fails a run
            logger.debug("telemetry: tool_started failed", exc_info=True)
        self._inner.tool_started(call, tool)

    def _start_tool(self, call: ToolCall, tool: Tool) -> None:
        server = tool.info.server
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.id,
            "gen_ai.tool.type": "extension" if server is not None else "function",
        }
        if description := tool.description:
            attributes["gen_ai.tool.description"] = description[:500]
        if isinstance(server, str):
            attributes["codebot.mcp.server.name"] = server
        if self._telemetry.log_content:
            attributes["gen_ai.tool.call.arguments"] = content(call.arguments)
        span = self._telemetry.tracer.start_span(
            f"execute_tool {call.name}",
            context=self._run_context,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
        )
        token = otel_context.attach(trace.set_span_in_context(span))
        self._tools[call.id] = _Open(span, token, time.perf_counter())

    def tool_finished(self, call: ToolCall, result: ToolResult, seconds: float) -> None:
        try:
            self._end_tool(call.id, call.name, result)
        except Exception:  # boundary: telemetry never fails a run
            logger.debug("telemetry: tool_finished failed", exc_info=True)
        self._inner.tool_finished(call, result, seconds)

    def _end_tool(self, call_id: str, name: str, result: ToolResult | None) -> None:
        opened = self._tools.pop(call_id, None)
        if opened is None:
            return
        _detach(opened.token)
        span = opened.span
        outcome = "ok" if result is not None and not result.is_error else "error"
        span.set_attribute("codebot.tool.outcome", outcome)
        if outcome == "error":
            span.set_status(Status(StatusCode.ERROR, "tool_error"))
            span.set_attribute("error.type", "tool_error" if result is not None else "cancelled")
        if result is not None and self._telemetry.log_content:
            span.set_attribute("gen_ai.tool.call.result", content(result.text))
        instruments = self._telemetry.instruments
        if instruments.duration is not None:
            attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
            if outcome == "error":
                attributes["error.type"] = "tool_error"
            instruments.duration.record(time.perf_counter() - opened.began, attributes)
        self._count(name, outcome)
        span.end()

    def _count(self, name: str, outcome: str) -> None:
        counter = self._telemetry.instruments.tool_calls
        if counter is not None:
            counter.add(1, {"gen_ai.tool.name": name, "codebot.tool.outcome": outcome})

    def compacted(self, compaction: Compaction) -> None:
        try:
            self._run.add_event("codebot.compacted")
        except Exception:  # boundary: telemetry never fails a run
            logger.debug("telemetry: compacted failed", exc_info=True)
        self._inner.compacted(compaction)

    def end_open(self) -> None:
        """End what a failed or cancelled run left open (its model request, its calls)."""
        try:
            self._end_model(None)
            for call_id in list(self._tools):
                self._end_tool(call_id, "", None)
        except Exception:  # boundary: telemetry never fails a run
            logger.debug("telemetry: ending the run's spans failed", exc_info=True)


def _detach(token: object) -> None:
    """Detach a tool's context; one attached in another task (a cancelled read) is left to
    its task, which ends with it (the API logs that to ``opentelemetry.context``, which
    :mod:`.otel` keeps quiet)."""
    otel_context.detach(token)  # type: ignore[arg-type]
