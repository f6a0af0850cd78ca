"""Where and what to export: the ``telemetry`` setting over the standard ``OTEL_*`` variables.

A value the setting gives wins; the variables fill what it leaves out; then OTLP's defaults.
Telemetry is on only when ``telemetry.enabled`` is true (an ``OTEL_*`` variable set for
another program never makes codebot export), and ``OTEL_SDK_DISABLED=true`` turns it off
whatever the settings say. Nothing of OpenTelemetry is imported here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote

from codebot_mcp.core.envexpand import UndefinedVariableError, expand
from codebot_mcp.core.errors import SettingsError
from codebot_mcp.core.telemetry.exportsettings import PROTOCOLS, TelemetrySettings

EXPORT_TIMEOUT = 2.0
"""Seconds one export may take, and the flush at exit in all: an unreachable collector
costs a run at most this much (and one warning), never a failure."""
DEFAULT_ENDPOINTS = {"http/protobuf": "http://localhost:4318", "grpc": "http://localhost:4317"}
SIGNAL_PATHS = {"traces": "/v1/traces", "metrics": "/v1/metrics"}
CONTENT_CAP = 16_384
"""Characters of one prompt, answer, argument or result exported with ``log_content``."""


@dataclass(frozen=True, slots=True)
class Export:
    """Telemetry as it runs: each signal's endpoint (None: that signal is off)."""

    protocol: str
    traces: str | None
    metrics: str | None
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    service_name: str = "codebot"
    log_content: bool = False
    timeout: float = EXPORT_TIMEOUT

    @property
    def where(self) -> str:
        """The endpoints, for messages."""
        return ", ".join(sorted({e for e in (self.traces, self.metrics) if e}))


def resolve(settings: TelemetrySettings, environ: Mapping[str, str]) -> Export | None:
    """The export ``settings`` and ``environ`` ask for; None when telemetry is off.

    Raises:
        SettingsError: ``OTEL_EXPORTER_OTLP_PROTOCOL`` names a protocol codebot cannot
            export over, or a header names an unset variable.
    """
    if not settings.enabled or _true(environ.get("OTEL_SDK_DISABLED")):
        return None
    protocol = settings.protocol or _env(environ, "OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf"
    if protocol not in PROTOCOLS:
        raise SettingsError(
            f"OTEL_EXPORTER_OTLP_PROTOCOL is {protocol!r}; codebot exports over "
            '"http/protobuf" or "grpc"',
            hint="Set it to one of those, or set telemetry.protocol in settings.json.",
        )
    endpoints: dict[str, str | None] = {}
    for signal, wanted in (("traces", settings.traces), ("metrics", settings.metrics)):
        exporter = _env(environ, f"OTEL_{signal.upper()}_EXPORTER")
        if not wanted or (exporter is not None and "otlp" not in exporter.split(",")):
            endpoints[signal] = None
            continue
        endpoints[signal] = _endpoint(settings, environ, protocol, signal)
    if endpoints["traces"] is None and endpoints["metrics"] is None:
        return None
    return Export(
        protocol=protocol,
        traces=endpoints["traces"],
        metrics=endpoints["metrics"],
        headers=_headers(settings, environ),
        service_name=settings.service_name or _env(environ, "OTEL_SERVICE_NAME") or "codebot",
        log_content=settings.log_content,
    )


def _endpoint(
    settings: TelemetrySettings, environ: Mapping[str, str], protocol: str, signal: str
) -> str:
    """A signal's endpoint: the setting's base URL, else ``OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT``
    as it is, else ``OTEL_EXPORTER_OTLP_ENDPOINT``, else the protocol's default. Over HTTP a
    base URL gets the signal's path (``/v1/traces``); gRPC takes the base URL."""
    if settings.endpoint is None and (
        own := _env(environ, f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT")
    ):
        return own
    base = settings.endpoint or _env(environ, "OTEL_EXPORTER_OTLP_ENDPOINT")
    base = base or DEFAULT_ENDPOINTS[protocol]
    if protocol == "grpc":
        return base
    return base.rstrip("/") + SIGNAL_PATHS[signal]


def _headers(settings: TelemetrySettings, environ: Mapping[str, str]) -> dict[str, str]:
    """``OTEL_EXPORTER_OTLP_HEADERS`` (``k=v,k2=v2``, URL-encoded values), then the setting's
    headers over them (``${VAR}`` expanded)."""
    out: dict[str, str] = {}
    for item in (_env(environ, "OTEL_EXPORTER_OTLP_HEADERS") or "").split(","):
        name, eq, value = item.partition("=")
        if eq and name.strip():
            out[name.strip().lower()] = unquote(value.strip())
    for name, value in settings.headers.items():
        try:
            out[name.lower()] = expand(value, environ)
        except UndefinedVariableError as exc:
            raise SettingsError(
                f"telemetry.headers.{name} names an unset variable: {exc}",
                hint="Set the variable, or give it a default: ${VAR:-value}.",
            ) from None
    return out


def _env(environ: Mapping[str, str], name: str) -> str | None:
    value = environ.get(name, "").strip()
    return value or None


def _true(value: str | None) -> bool:
    return (value or "").strip().lower() == "true"
