"""The ``telemetry`` setting, owned by the feature: OpenTelemetry export of traces and metrics,
its model, parsing and defaults.

``{"telemetry": {"enabled": true, "endpoint": "http://127.0.0.1:4318"}}`` turns it on; it is
off by default. What it exports and how the ``OTEL_*`` variables combine with it is
:mod:`.exportconfig`'s business (and ``docs/telemetry.md``); this module only reads the
object, and imports nothing of OpenTelemetry (settings loading registers it on every run). A
project file's value is trust-gated (the key table, ``core.config.keys``): it decides where
data goes. The loaded value is held in ``Settings.sections``; :func:`of` reads it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from codebot_mcp.core.config.sections import NOT_SET, Section, register, row
from codebot_mcp.core.errors import SettingsError
from codebot_mcp.core.jsonutil import json_type

if TYPE_CHECKING:
    from pydantic import BaseModel

    from codebot_mcp.core.config.settings import Settings

__all__ = ["PROTOCOLS", "TelemetrySettings", "of", "parse_telemetry"]

PROTOCOLS = ("http/protobuf", "grpc")
"""OTLP's transports codebot exports over (``http/json`` is not offered by the SDK's exporters)."""
_EXAMPLE = '"telemetry": {"enabled": true, "endpoint": "http://127.0.0.1:4318"}'


@dataclass(frozen=True, slots=True)
class TelemetrySettings:
    """``telemetry``: where and what codebot exports over OTLP (off by default). None in a
    field means "not set here": the ``OTEL_*`` variables, then the OTLP default, apply."""

    enabled: bool = False
    endpoint: str | None = None
    """The OTLP base URL (``http://host:4318`` for HTTP, ``http://host:4317`` for gRPC)."""
    protocol: str | None = None
    """``http/protobuf`` or ``grpc``."""
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    """Sent with every export (an API key of the backend); ``${VAR}`` is expanded."""
    log_content: bool = False
    """Export prompts, answers, tool arguments and results (secrets masked)."""
    service_name: str | None = None
    traces: bool = True
    metrics: bool = True


def of(settings: Settings) -> TelemetrySettings:
    """The ``telemetry`` of loaded settings (off where none were loaded)."""
    return settings.section("telemetry", TelemetrySettings)


def parse_telemetry(path: Path, key: str, value: Any) -> TelemetrySettings:
    """The ``telemetry`` object of ``path`` (unknown keys warn through its row's ``keys``).

    Raises:
        SettingsError: the object or one of its values has the wrong type.
    """
    if not isinstance(value, dict):
        raise SettingsError(
            f"'{key}' in {path} must be an object, found {json_type(value)}",
            hint=f"Write it as {_EXAMPLE}.",
        )
    data: dict[str, Any] = dict(value)
    out: dict[str, Any] = {}
    for name in ("enabled", "log_content", "traces", "metrics"):
        if name in data:
            if not isinstance(data[name], bool):
                raise SettingsError(
                    f"'{key}.{name}' in {path} must be true or false, "
                    f"found {json.dumps(data[name])}",
                    hint=f"Write it as {_EXAMPLE}.",
                )
            out[name] = data[name]
    for name in ("endpoint", "service_name"):
        if data.get(name) is not None:
            if not isinstance(data[name], str) or not data[name].strip():
                raise SettingsError(
                    f"'{key}.{name}' in {path} must be a non-empty string, "
                    f"found {json.dumps(data[name])}",
                    hint=f"Write it as {_EXAMPLE}.",
                )
            out[name] = data[name].strip()
    if (protocol := data.get("protocol")) is not None:
        if protocol not in PROTOCOLS:
            raise SettingsError(
                f'\'{key}.protocol\' in {path} must be "http/protobuf" or "grpc", '
                f"found {json.dumps(protocol)}",
                hint='Write it as "protocol": "http/protobuf" (port 4318) or "grpc" (port 4317).',
            )
        out["protocol"] = protocol
    if (headers := data.get("headers")) is not None:
        if not isinstance(headers, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
        ):
            raise SettingsError(
                f"'{key}.headers' in {path} must be an object of strings",
                hint='Write it as "headers": {"x-api-key": "${OTEL_API_KEY}"}.',
            )
        out["headers"] = dict(headers)
    return TelemetrySettings(**out)


@cache
def section_model() -> type[BaseModel]:
    """The ``telemetry`` section as a pydantic model (built on demand: see :mod:`.sections`)."""
    from pydantic import BaseModel, ConfigDict, Field

    class Telemetry(BaseModel):
        model_config = ConfigDict(extra="forbid")
        enabled: bool = False
        endpoint: str = Field(default=NOT_SET, min_length=1)
        protocol: Literal["http/protobuf", "grpc"] = NOT_SET
        headers: dict[str, str] = Field(default_factory=dict[str, str])
        log_content: bool = False
        service_name: str = Field(default=NOT_SET, min_length=1)
        traces: bool = True
        metrics: bool = True

    class TelemetrySection(BaseModel):
        model_config = ConfigDict(extra="forbid")
        telemetry: Telemetry = Field(
            default=Telemetry(),
            description="OpenTelemetry export (off by default): enabled, endpoint, protocol "
            "(http/protobuf or grpc), headers, log_content, service_name, traces, metrics "
            "(docs/telemetry.md).",
            examples=[{"enabled": True, "endpoint": "http://127.0.0.1:4318"}],
        )

    return TelemetrySection


register(
    Section(
        "telemetry",
        (row("telemetry", parse_telemetry, hints=True),),  # off by default
        section_model,
        order=100,
    )
)
