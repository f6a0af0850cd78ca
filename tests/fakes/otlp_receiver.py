"""A loopback OTLP receiver for tests and benchmarks: what an OpenTelemetry collector gets.

OTLP over HTTP/protobuf on ``127.0.0.1:<free port>`` (stdlib ``ThreadingHTTPServer`` in a daemon
thread): ``POST /v1/traces`` and ``POST /v1/metrics`` are decoded with the official protobuf
definitions (``opentelemetry-proto``: ``ExportTraceServiceRequest``,
``ExportMetricsServiceRequest``) and answered as a collector answers. :class:`GrpcReceiver`
is the same over gRPC (``TraceService``/``MetricsService``). Every raw body is kept too, so a
test can say that a text appears nowhere in what was exported.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

KINDS = {0: "UNSPECIFIED", 1: "INTERNAL", 2: "SERVER", 3: "CLIENT", 4: "PRODUCER", 5: "CONSUMER"}


def value(v: AnyValue) -> Any:
    """An attribute's value as Python."""
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: value(kv.value) for kv in v.kvlist_value.values}
    return getattr(v, kind) if kind else None


@dataclass
class SpanRecord:
    """One exported span, decoded."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str
    kind: str
    scope: str
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    status: int
    resource: dict[str, Any]


@dataclass
class PointRecord:
    """One data point of an exported metric: a counter's value or a histogram's sum/count."""

    metric: str
    attributes: dict[str, Any]
    value: float
    count: int = 0


@dataclass
class _Store:
    lock: threading.Lock = field(default_factory=threading.Lock)
    spans: list[SpanRecord] = field(default_factory=list[SpanRecord])
    points: list[PointRecord] = field(default_factory=list[PointRecord])
    raw: list[bytes] = field(default_factory=list[bytes])
    headers: list[dict[str, str]] = field(default_factory=list[dict[str, str]])

    def traces(self, body: bytes) -> bytes:
        request = trace_service_pb2.ExportTraceServiceRequest()
        request.ParseFromString(body)
        found: list[SpanRecord] = []
        for rs in request.resource_spans:
            resource = {kv.key: value(kv.value) for kv in rs.resource.attributes}
            for ss in rs.scope_spans:
                for s in ss.spans:
                    found.append(
                        SpanRecord(
                            name=s.name,
                            trace_id=s.trace_id.hex(),
                            span_id=s.span_id.hex(),
                            parent_id=s.parent_span_id.hex(),
                            kind=KINDS.get(s.kind, str(s.kind)),
                            scope=ss.scope.name,
                            attributes={kv.key: value(kv.value) for kv in s.attributes},
                            events=[
                                (e.name, {kv.key: value(kv.value) for kv in e.attributes})
                                for e in s.events
                            ],
                            status=s.status.code,
                            resource=resource,
                        )
                    )
        with self.lock:
            self.spans.extend(found)
            self.raw.append(body)
        return trace_service_pb2.ExportTraceServiceResponse().SerializeToString()

    def metrics(self, body: bytes) -> bytes:
        request = metrics_service_pb2.ExportMetricsServiceRequest()
        request.ParseFromString(body)
        found: list[PointRecord] = []
        for rm in request.resource_metrics:
            for sm in rm.scope_metrics:
                for m in sm.metrics:
                    kind = m.WhichOneof("data")
                    data = getattr(m, kind)
                    for p in data.data_points:
                        attributes = {kv.key: value(kv.value) for kv in p.attributes}
                        if kind == "histogram":
                            found.append(PointRecord(m.name, attributes, p.sum, p.count))
                        else:
                            number = p.as_int if p.WhichOneof("value") == "as_int" else p.as_double
                            found.append(PointRecord(m.name, attributes, number))
        with self.lock:
            self.points.extend(found)
            self.raw.append(body)
        return metrics_service_pb2.ExportMetricsServiceResponse().SerializeToString()


class _Handler(BaseHTTPRequestHandler):
    store: _Store
    refuse: int | None = None
    """Answer every export with this status and a body that echoes ``x-collector-key`` (a
    collector rejecting a key, as some quote it back)."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        with self.store.lock:
            self.store.headers.append({k.lower(): v for k, v in self.headers.items()})
        if self.refuse is not None:
            text = f"invalid key {self.headers.get('x-collector-key')}".encode()
            self.send_response(self.refuse)
            self.send_header("Content-Length", str(len(text)))
            self.end_headers()
            self.wfile.write(text)
            return
        if self.path == "/v1/traces":
            answer = self.store.traces(body)
        elif self.path == "/v1/metrics":
            answer = self.store.metrics(body)
        else:
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


class _Received:
    """What a receiver got so far (both transports)."""

    _store: _Store

    @property
    def spans(self) -> list[SpanRecord]:
        with self._store.lock:
            return list(self._store.spans)

    @property
    def points(self) -> list[PointRecord]:
        with self._store.lock:
            return list(self._store.points)

    @property
    def raw(self) -> bytes:
        """Every body received, joined: to look for text that must not be there."""
        with self._store.lock:
            return b"".join(self._store.raw)

    @property
    def headers(self) -> list[dict[str, str]]:
        with self._store.lock:
            return list(self._store.headers)

    def named(self, prefix: str) -> list[SpanRecord]:
        return [s for s in self.spans if s.name.startswith(prefix)]


class OtlpReceiver(_Received):
    """OTLP/HTTP (protobuf) on loopback; a context manager. ``endpoint`` is the base URL."""

    def __init__(self, *, refuse: int | None = None) -> None:
        self._store = _Store()
        store = self._store

        class Bound(_Handler):
            pass

        Bound.store = store
        Bound.refuse = refuse
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Bound)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def endpoint(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> OtlpReceiver:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


class GrpcReceiver(_Received):
    """OTLP/gRPC on loopback (the official service definitions); a context manager."""

    def __init__(self) -> None:
        from concurrent import futures

        import grpc  # type: ignore[import-untyped]
        from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2_grpc
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

        self._store = _Store()
        store = self._store

        class Traces(trace_service_pb2_grpc.TraceServiceServicer):  # type: ignore[misc]
            def Export(self, request: Any, context: Any) -> Any:
                store.traces(request.SerializeToString())
                return trace_service_pb2.ExportTraceServiceResponse()

        class Metrics(metrics_service_pb2_grpc.MetricsServiceServicer):  # type: ignore[misc]
            def Export(self, request: Any, context: Any) -> Any:
                store.metrics(request.SerializeToString())
                return metrics_service_pb2.ExportMetricsServiceResponse()

        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Traces(), self._server)
        metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(Metrics(), self._server)
        self._port = self._server.add_insecure_port("127.0.0.1:0")

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    def __enter__(self) -> GrpcReceiver:
        self._server.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.stop(0)
