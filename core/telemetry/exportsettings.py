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

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from codebot_mcp.core.config.fieldcheck import check_section, values
from codebot_mcp.core.config.sections import NOT_SET, Section, register, row

if TYPE_CHECKING:
    from pydantic import BaseModel

    from codebot_mcp.core.config.settings import Settings

__all__ = ["PROTOCOLS", "TelemetrySettings", "of", "parse_telemetry"]

PROTOCOLS: tuple[str, ...] = values("telemetry.protocol")
"""OTLP's transports codebot exports over (``http/json`` is not offered by the SDK's exporters),
as its model lists them (none while the field table is written again)."""
_HINTS = {"protocol": 'Write it as "protocol": "http/protobuf" (port 4318) or "grpc" (port 4317).'}
"""Where a field's example is not enough."""


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
    """The ``telemetry`` object of ``path``, checked by its model's fields (unknown keys warn
    through its row's ``keys``; ``null`` but for a switch reads as left out).

    Raises:
        SettingsError: the object or one of its values has the wrong type.
    """
    return TelemetrySettings(**check_section(path, key, value, nulls=True, hints=_HINTS))


@cache
def section_model() -> type[BaseModel]:
    """The ``telemetry`` section as a pydantic model (built on demand: see :mod:`.sections`)."""
    from pydantic import BaseModel, ConfigDict, Field

    defaults = TelemetrySettings()  # the switches' defaults are the value's

    class Telemetry(BaseModel):
        model_config = ConfigDict(extra="forbid")
        enabled: bool = defaults.enabled
        endpoint: str = Field(default=NOT_SET, min_length=1, examples=["http://127.0.0.1:4318"])
        protocol: Literal["http/protobuf", "grpc"] = NOT_SET
        headers: dict[str, str] = Field(
            default_factory=dict[str, str], examples=[{"x-api-key": "${OTEL_API_KEY}"}]
        )
        log_content: bool = defaults.log_content
        service_name: str = Field(default=NOT_SET, min_length=1, examples=["codebot"])
        traces: bool = defaults.traces
        metrics: bool = defaults.metrics

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
