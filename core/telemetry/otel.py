"""The OpenTelemetry SDK, set up once per process: providers, OTLP exporters, instruments.

Imported only when telemetry is on (:func:`core.telemetry.start`). The tracer provider is
made the global one, so the MCP SDK's own client span of each request (scope
``mcp-python-sdk``) is exported too, and the SDK puts that span's W3C trace context into the
request's ``params._meta`` (SEP-414) with the global propagator. :class:`McpSpans` adds what
codebot knows about the request to that span (server, transport, tool: :mod:`.scope`) and
names it as the MCP conventions do (``tools/call echo``).

Exports run in the SDK's background threads; :meth:`Telemetry.close` flushes within
``EXPORT_TIMEOUT`` in all. An export that fails is one warning at the end, never an error.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricExporter, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.trace import SpanKind

from codebot_mcp.core.agent.events import AgentEvents
from codebot_mcp.core.secrets.redact import SECRETS
from codebot_mcp.core.telemetry.exportconfig import Export
from codebot_mcp.core.telemetry.genai import Instruments
from codebot_mcp.core.telemetry.scope import MCP_SCOPE

MCP_SCOPE_NAME = "mcp-python-sdk"
"""The instrumentation scope of the MCP SDK's own spans (``mcp.shared._otel``)."""
TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304)
"""``gen_ai.client.token.usage``'s buckets, as the GenAI conventions advise."""
DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48)
"""``gen_ai.client.operation.duration``'s and ``mcp.client.operation.duration``'s (seconds)."""
EXPORTER_LOGGERS = ("opentelemetry.exporter", "opentelemetry.sdk")

_SHARED: Telemetry | None = None
_LOCK = threading.Lock()


def shared(export: Export, warn: Callable[[str], None]) -> Telemetry:
    """The process's telemetry, made on first use (the global tracer provider can be set
    once per process; a second session in the process shares it)."""
    global _SHARED
    with _LOCK:
        if _SHARED is None:
            _SHARED = Telemetry(export, warn)
        return _SHARED


class _Failures(logging.Handler):
    """Keeps the exporters' log records (a refused connection, a 404) instead of printing
    them: the run shows one warning at its end (:meth:`Telemetry.close`)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.last: str | None = None
        self.failed = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.failed += 1
        if self.last is not None:  # the first says why (a refused connection), not the retries
            return
        try:
            self.last = record.getMessage()
        except Exception:  # boundary: a log record that cannot format is no reason to fail
            self.last = str(record.msg)


def _exporters(export: Export) -> tuple[SpanExporter | None, MetricExporter | None]:
    headers = dict(export.headers)
    timeout = export.timeout
    if export.protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (
            OTLPMetricExporter as GrpcMetrics,
        )
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
            OTLPSpanExporter as GrpcSpans,
        )

        def insecure(url: str) -> bool:
            return url.startswith("http://")

        spans = metrics = None
        if export.traces:
            spans = GrpcSpans(
                endpoint=export.traces,
                insecure=insecure(export.traces),
                headers=headers,
                timeout=timeout,
            )
        if export.metrics:
            metrics = GrpcMetrics(
                endpoint=export.metrics,
                insecure=insecure(export.metrics),
                headers=headers,
                timeout=timeout,
            )
        return spans, metrics
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return (
        OTLPSpanExporter(endpoint=export.traces, headers=headers, timeout=timeout)
        if export.traces
        else None,
        OTLPMetricExporter(endpoint=export.metrics, headers=headers, timeout=timeout)
        if export.metrics
        else None,
    )


class McpSpans(SpanProcessor):
    """Completes the MCP SDK's client span of each request from :data:`.scope.MCP_SCOPE`:
    the server's name and transport, ``gen_ai.tool.name`` and ``gen_ai.operation.name`` for
    a tool call, and the conventions' name ``{mcp.method.name} {target}``. Records
    ``mcp.client.operation.duration`` as each ends."""

    def __init__(self, duration: Any) -> None:
        self._duration = duration

    def on_start(self, span: Span, parent_context: otel_context.Context | None = None) -> None:
        scope = span.instrumentation_scope
        if scope is None or scope.name != MCP_SCOPE_NAME or span.kind is not SpanKind.CLIENT:
            return
        known = MCP_SCOPE.get()
        method = (span.attributes or {}).get("mcp.method.name")
        if known:
            span.set_attributes(dict(known))
        tool = known.get("gen_ai.tool.name") if known and method == "tools/call" else None
        if tool:
            span.set_attribute("gen_ai.operation.name", "execute_tool")
            span.update_name(f"{method} {tool}")
        elif isinstance(method, str):
            span.update_name(method)

    def on_end(self, span: ReadableSpan) -> None:
        scope = span.instrumentation_scope
        if self._duration is None or scope is None or scope.name != MCP_SCOPE_NAME:
            return
        if span.start_time is None or span.end_time is None:
            return
        attributes = span.attributes or {}
        keep = {
            k: attributes[k]
            for k in ("mcp.method.name", "error.type", "network.transport", "gen_ai.tool.name")
            if k in attributes
        }
        self._duration.record((span.end_time - span.start_time) / 1e9, keep)


class Telemetry:
    """The process's providers and instruments; one session span per chat
    (:meth:`begin_session` .. :meth:`close`); :meth:`observe` wraps each ``Agent.run``."""

    def __init__(self, export: Export, warn: Callable[[str], None]) -> None:
        self.export = export
        self.warn = warn
        self.log_content = export.log_content
        self._failures = _Failures()
        for name in EXPORTER_LOGGERS:
            logger = logging.getLogger(name)
            logger.addHandler(self._failures)
            logger.propagate = False
        quiet = logging.getLogger("opentelemetry.context")  # a detach in another task
        quiet.addHandler(logging.NullHandler())
        quiet.propagate = False
        resource = Resource.create(
            {"service.name": export.service_name, "service.version": _version()}
        )
        span_exporter, metric_exporter = _exporters(export)
        self.meters: MeterProvider | None = None
        if metric_exporter is not None:
            reader = PeriodicExportingMetricReader(
                metric_exporter,
                export_interval_millis=60_000,
                export_timeout_millis=export.timeout * 1000,
            )
            self.meters = MeterProvider(
                resource=resource, metric_readers=[reader], shutdown_on_exit=False
            )
        meter = self.meters.get_meter("codebot") if self.meters is not None else None
        self.instruments = Instruments(meter, DURATION_BUCKETS, TOKEN_BUCKETS)
        self.tracer_provider = TracerProvider(resource=resource, shutdown_on_exit=False)
        if span_exporter is not None:
            self.tracer_provider.add_span_processor(
                BatchSpanProcessor(
                    span_exporter,
                    export_timeout_millis=int(export.timeout * 1000),
                )
            )
        self.tracer_provider.add_span_processor(McpSpans(self.instruments.mcp_duration))
        trace.set_tracer_provider(self.tracer_provider)
        self.tracer = self.tracer_provider.get_tracer("codebot", _version())
        self.session: trace.Span | None = None
        self.session_context: otel_context.Context | None = None
        self._session_token: object | None = None
        self.conversation_id: str | None = None
        self._closed = False

    def begin_session(self, conversation_id: str | None = None) -> None:
        """Start the session's span and make it the current context (the MCP servers'
        handshakes and every run of the chat are in its trace)."""
        if self.session is not None:
            return
        self.conversation_id = conversation_id
        attributes: dict[str, Any] = {"gen_ai.agent.name": "codebot"}
        if conversation_id:
            attributes["gen_ai.conversation.id"] = conversation_id
        self.session = self.tracer.start_span("session codebot", attributes=attributes)
        self.session_context = trace.set_span_in_context(self.session)
        self._session_token = otel_context.attach(self.session_context)

    def name_conversation(self, conversation_id: str) -> None:
        """The saved session's id, once known (``gen_ai.conversation.id``)."""
        self.conversation_id = conversation_id
        if self.session is not None:
            self.session.set_attribute("gen_ai.conversation.id", conversation_id)

    def observe(
        self, agent: Any, prompt: str, events: AgentEvents
    ) -> AbstractContextManager[AgentEvents]:
        """Around one ``Agent.run``: its span (``invoke_agent codebot``) and the events tee."""
        from codebot_mcp.core.telemetry.observer import observe_run

        return observe_run(self, agent, prompt, events)

    def inject(self, span: trace.Span) -> dict[str, str]:
        """The W3C trace context (``traceparent``, ``tracestate``) naming ``span``."""
        carrier: dict[str, str] = {}
        propagate.inject(carrier, context=trace.set_span_in_context(span))
        return carrier

    @contextmanager
    def current(self, span: trace.Span) -> Iterator[None]:
        token = otel_context.attach(trace.set_span_in_context(span))
        try:
            yield
        finally:
            otel_context.detach(token)

    def close(self) -> None:
        """End the session's span and flush everything, within ``export.timeout`` seconds in
        all; a failed export is one warning. Later sessions of the process export on."""
        self.end_session()
        self.flush()

    def end_session(self) -> None:
        """End the session's span (in the task that began it: its context is detached)."""
        if self.session is not None:
            self.session.end()
            self.session = None
        if self._session_token is not None:
            try:
                otel_context.detach(self._session_token)  # type: ignore[arg-type]
            except Exception:  # boundary: a context detached in another task is no failure
                pass
            self._session_token = None

    def flush(self) -> None:
        """Export what is pending, within ``export.timeout`` (plus half a second) in all; a
        failed or late export is one warning, never an error."""
        began = time.monotonic()
        flusher = threading.Thread(target=self._flush, name="codebot-otel-flush", daemon=True)
        flusher.start()
        flusher.join(self.export.timeout + 0.5)
        late = flusher.is_alive()
        if late or self._failures.failed:
            why = self._failures.last or "no answer"
            if late:
                why = f"no answer within {time.monotonic() - began:.1f} s"
            self.warn(
                SECRETS(
                    f"telemetry: could not export to {self.export.where}: {_short(why)} The "
                    "run is not affected; check telemetry.endpoint in settings.json (or "
                    "OTEL_EXPORTER_OTLP_ENDPOINT) and that the collector listens."
                )
            )
            self._failures.failed, self._failures.last = 0, None

    def _flush(self) -> None:
        millis = int(self.export.timeout * 1000)
        self.tracer_provider.force_flush(millis)
        if self.meters is not None:
            self.meters.force_flush(millis)


def _short(text: str) -> str:
    text = " ".join(text.split()).rstrip(".")
    return text + "." if len(text) <= 300 else text[:297] + "..."


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("codebot-mcp")
    except PackageNotFoundError:
        return "0"
