"""The GenAI conventions' side of telemetry: the metrics' instruments, an endpoint's
``gen_ai.provider.name``, and content as ``log_content`` exports it (secrets masked, capped).
Nothing of OpenTelemetry is imported here: the instruments come from the meter given.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from codebot_mcp.core.secrets.redact import SECRETS
from codebot_mcp.core.telemetry.exportconfig import CONTENT_CAP

PROVIDERS = (
    ("openai.azure.com", "azure.ai.openai"),
    ("api.openai.com", "openai"),
    ("anthropic.com", "anthropic"),
    ("googleapis.com", "gcp.gemini"),
    ("deepseek.com", "deepseek"),
    ("groq.com", "groq"),
    ("mistral.ai", "mistral_ai"),
    ("x.ai", "x_ai"),
    ("amazonaws.com", "aws.bedrock"),
)
"""``gen_ai.provider.name`` by the endpoint's host; any other OpenAI-compatible endpoint is
``openai`` (the API it speaks) with its ``server.address``."""


class Instruments:
    """The metrics: tokens, durations, tool calls by outcome, approvals and denials. Without
    a meter (metrics off) every instrument is None and nothing is recorded."""

    def __init__(self, meter: Any, durations: Sequence[float], tokens: Sequence[float]) -> None:
        self.tokens = self.duration = self.tool_calls = self.decisions = None
        self.mcp_duration: Any = None
        if meter is None:
            return
        self.tokens = meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Tokens used by each model request, by model and direction.",
            explicit_bucket_boundaries_advisory=list(tokens),
        )
        self.duration = meter.create_histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="Duration of each model request (chat) and tool call (execute_tool).",
            explicit_bucket_boundaries_advisory=list(durations),
        )
        self.tool_calls = meter.create_counter(
            "codebot.tool.calls",
            unit="{call}",
            description="Tool calls by tool and outcome (ok, error, denied, rejected).",
        )
        self.decisions = meter.create_counter(
            "codebot.tool.decisions",
            unit="{decision}",
            description="Approvals and denials of tool calls, by tool and what decided.",
        )
        self.mcp_duration = meter.create_histogram(
            "mcp.client.operation.duration",
            unit="s",
            description="Duration of each MCP request, by method.",
            explicit_bucket_boundaries_advisory=list(durations),
        )


def provider(base_url: str | None) -> tuple[str, dict[str, Any]]:
    """``gen_ai.provider.name`` and ``server.address``/``server.port`` of an endpoint."""
    url = urlsplit(base_url or "https://api.openai.com/v1")
    host = url.hostname or ""
    name = next((p for suffix, p in PROVIDERS if host.endswith(suffix)), "openai")
    where: dict[str, Any] = {"server.address": host} if host else {}
    try:
        where["server.port"] = url.port or (443 if url.scheme == "https" else 80)
    except ValueError:
        pass
    return name, where


def content(value: Any) -> str:
    """Text to export with ``log_content``: JSON for structures, secrets masked, capped."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = SECRETS(text)
    return text if len(text) <= CONTENT_CAP else text[:CONTENT_CAP] + "...[truncated]"
