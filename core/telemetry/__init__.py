"""OpenTelemetry export: traces and metrics of sessions, runs, model requests, tool calls and
MCP requests, over OTLP (HTTP/protobuf or gRPC), with the W3C trace context carried into each
MCP request's ``params._meta`` and into the model request's headers.

Off by default (setting ``telemetry``, ``docs/telemetry.md``; its section, model, parsing and
defaults: :mod:`.exportsettings`, read by settings loading on every run). This module,
:mod:`.exportsettings`, :mod:`.exportconfig` (what to export) and :mod:`.scope` (what an MCP request
is about) import nothing of OpenTelemetry: :func:`start` imports the SDK (:mod:`.otel`) only when
the settings turn telemetry on, so ``codebot --help`` and a run without telemetry never load it. One
run becomes spans and metrics in :mod:`.observer`, under the GenAI conventions of :mod:`.genai`. The
SDK and its exporters are the optional extra ``codebot-mcp[otel]``; without them, turning telemetry
on warns once and the run goes on.

A feature over the kernel: the loop sees it as its ``RunObserver`` (``core.agent.events``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from codebot_mcp.core.telemetry.exportsettings import TelemetrySettings

if TYPE_CHECKING:
    from codebot_mcp.core.telemetry.otel import Telemetry

__all__ = ["start"]

EXTRA = "codebot-mcp[otel]"


def start(
    settings: TelemetrySettings,
    warn: Callable[[str], None],
    environ: Mapping[str, str] | None = None,
) -> Telemetry | None:
    """The process's telemetry when ``settings`` (and ``OTEL_SDK_DISABLED``) turn it on, else
    None. Never raises: a problem (the SDK not installed, a bad ``OTEL_*`` value) is one
    warning and the run goes on without telemetry.
    """
    from codebot_mcp.core.errors import SettingsError
    from codebot_mcp.core.telemetry.exportconfig import resolve

    try:
        export = resolve(settings, os.environ if environ is None else environ)
    except SettingsError as exc:
        warn(f"telemetry is off: {exc.message}" + (f" {exc.hint}" if exc.hint else ""))
        return None
    if export is None:
        return None
    from codebot_mcp.core.secrets.redact import SECRETS

    SECRETS.add(export.headers.values())  # a collector's key is never printed
    try:
        from codebot_mcp.core.telemetry.otel import shared
    except ImportError as exc:
        warn(
            f"telemetry is on in settings but OpenTelemetry's SDK is not installed ({exc.name}); "
            f"install it with: pip install '{EXTRA}'"
        )
        return None
    return shared(export, warn)
