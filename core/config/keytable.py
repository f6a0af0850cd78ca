"""The settings models' fields as the run time checks them: generated, do not edit.

Written by ``python -m codebot_mcp.core.config.tablegen > core/config/keytable.py`` (``make
docs``) from the sections' pydantic models (:mod:`.tablegen`), so that reading settings imports
no pydantic; ``tests/core/test_config_sections.py`` fails when it is older than the models. It
imports nothing of codebot: the registry of sections (:mod:`.sections`) reads it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["FIELDS", "KEYS", "SERVER_FIELDS", "Spec"]


class Spec(NamedTuple):
    """One field of a settings model as the run time checks it: generated from the model's
    JSON Schema into :mod:`.keytable` (a value is JSON as a file holds it: never mutate one).
    A named tuple, not a dataclass: it is built on every run, and costs a twentieth."""

    name: str
    """The field's JSON name (its alias)."""
    types: tuple[str, ...]
    """The JSON types it takes (``"string"``, ``"integer"``, ``"number"``, ``"boolean"``,
    ``"array"``, ``"object"``, ``"null"``), in the model's order."""
    default: Any = None
    """Its default as JSON (None: none, or required)."""
    enum: tuple[Any, ...] = ()
    """The only values it takes of its non-object types, when the model lists them."""
    minimum: float | None = None
    exclusive_minimum: float | None = None
    exclusive_maximum: float | None = None
    min_length: int | None = None
    keys: tuple[str, ...] | None = None
    """An object's own keys, as its model declares them (None: not an object of fixed keys)."""
    example: Any = None
    """A value to show in a hint (an object section's, and its fields' where they give one)."""
    transports: tuple[str, ...] = ()
    """For a field of a server entry: the transports whose entry declares it."""


KEYS: dict[str, Spec] = {
    "mcp_servers": Spec(name="mcp_servers", types=("object",), default={}),
    "mcpServers": Spec(name="mcpServers", types=("object",), default={}),
    "roots": Spec(name="roots", types=("array",), default=[]),
    "warm_idle_timeout": Spec(
        name="warm_idle_timeout",
        types=("number",),
        default=600.0,
        exclusive_minimum=0,
        exclusive_maximum=1000000000.0,
    ),
    "registry_url": Spec(
        name="registry_url",
        types=("string", "array"),
        default="https://registry.modelcontextprotocol.io",
    ),
    "model": Spec(name="model", types=("string", "null")),
    "base_url": Spec(name="base_url", types=("string", "null")),
    "api_key_env": Spec(name="api_key_env", types=("string", "null")),
    "api": Spec(name="api", types=("string", "null"), enum=("chat_completions", "responses")),
    "reasoning_effort": Spec(
        name="reasoning_effort",
        types=("string", "null"),
        enum=("low", "medium", "high"),
    ),
    "max_tokens": Spec(name="max_tokens", types=("integer",), default=8192, minimum=1),
    "model_retries": Spec(name="model_retries", types=("integer",), minimum=0),
    "context_window": Spec(name="context_window", types=("integer",), minimum=1),
    "model_aliases": Spec(name="model_aliases", types=("object",), default={}),
    "images": Spec(
        name="images",
        types=("object",),
        default={"max_bytes": 5242880, "max_per_request": 10, "max_request_bytes": 20971520},
        keys=("max_bytes", "max_per_request", "max_request_bytes"),
        example={"max_bytes": 2000000, "max_per_request": 4},
    ),
    "max_turns": Spec(name="max_turns", types=("integer",), default=50, minimum=1),
    "tool_result_max_tokens": Spec(
        name="tool_result_max_tokens",
        types=("integer",),
        default=25000,
        minimum=1,
    ),
    "tool_search": Spec(
        name="tool_search",
        types=("string", "boolean"),
        default="auto",
        enum=("auto",),
    ),
    "usage_line_after": Spec(
        name="usage_line_after",
        types=("integer",),
        default=100000,
        minimum=0,
    ),
    "subagent_depth": Spec(name="subagent_depth", types=("integer",), default=1, minimum=0),
    "permissions": Spec(
        name="permissions",
        types=("object",),
        default={"allow": [], "ask": [], "deny": []},
        keys=("allow", "ask", "deny"),
        example={"allow": ["mcp__docs__*"], "deny": ["bash"]},
    ),
    "$schema": Spec(name="$schema", types=("string",)),
    "checkpoints": Spec(
        name="checkpoints",
        types=("object",),
        default={"enabled": True, "max_files": 50000, "max_size_mb": 500},
        keys=("enabled", "max_files", "max_size_mb"),
        example={"enabled": True, "max_files": 20000, "max_size_mb": 200},
    ),
    "hooks": Spec(name="hooks", types=("object",), default={}),
    "sandbox": Spec(
        name="sandbox",
        types=("object",),
        default={"network": False, "writable": [], "deny_read": []},
        keys=("mode", "network", "writable", "deny_read"),
        example={"mode": "read-only", "network": ["pypi.org"]},
    ),
    "claude_files": Spec(name="claude_files", types=("boolean",), default=True),
    "allowed_mcp_servers": Spec(name="allowed_mcp_servers", types=("array",)),
    "denied_mcp_servers": Spec(name="denied_mcp_servers", types=("array",), default=[]),
    "require_mcp_lock": Spec(name="require_mcp_lock", types=("boolean",), default=False),
    "locked": Spec(name="locked", types=("array",), default=[]),
    "telemetry": Spec(
        name="telemetry",
        types=("object",),
        default={
            "enabled": False,
            "headers": {},
            "log_content": False,
            "traces": True,
            "metrics": True,
        },
        keys=(
            "enabled",
            "endpoint",
            "protocol",
            "headers",
            "log_content",
            "service_name",
            "traces",
            "metrics",
        ),
        example={"enabled": True, "endpoint": "http://127.0.0.1:4318"},
    ),
}
"""Every top-level key, in the docs' order."""

FIELDS: dict[str, Spec] = {
    "images.max_bytes": Spec(
        name="images.max_bytes",
        types=("integer",),
        default=5242880,
        minimum=1,
    ),
    "images.max_per_request": Spec(
        name="images.max_per_request",
        types=("integer",),
        default=10,
        minimum=0,
    ),
    "images.max_request_bytes": Spec(
        name="images.max_request_bytes",
        types=("integer",),
        default=20971520,
        minimum=1,
    ),
    "permissions.allow": Spec(name="permissions.allow", types=("array",), default=[]),
    "permissions.ask": Spec(name="permissions.ask", types=("array",), default=[]),
    "permissions.deny": Spec(name="permissions.deny", types=("array",), default=[]),
    "checkpoints.enabled": Spec(name="checkpoints.enabled", types=("boolean",), default=True),
    "checkpoints.max_files": Spec(
        name="checkpoints.max_files",
        types=("integer",),
        default=50000,
        minimum=1,
    ),
    "checkpoints.max_size_mb": Spec(
        name="checkpoints.max_size_mb",
        types=("integer",),
        default=500,
        minimum=1,
    ),
    "sandbox.mode": Spec(
        name="sandbox.mode",
        types=("string",),
        enum=("read-only", "workspace-write", "off"),
    ),
    "sandbox.network": Spec(name="sandbox.network", types=("boolean", "array"), default=False),
    "sandbox.writable": Spec(name="sandbox.writable", types=("array",), default=[]),
    "sandbox.deny_read": Spec(name="sandbox.deny_read", types=("array",), default=[]),
    "telemetry.enabled": Spec(name="telemetry.enabled", types=("boolean",), default=False),
    "telemetry.endpoint": Spec(
        name="telemetry.endpoint",
        types=("string",),
        min_length=1,
        example="http://127.0.0.1:4318",
    ),
    "telemetry.protocol": Spec(
        name="telemetry.protocol",
        types=("string",),
        enum=("http/protobuf", "grpc"),
    ),
    "telemetry.headers": Spec(
        name="telemetry.headers",
        types=("object",),
        default={},
        example={"x-api-key": "${OTEL_API_KEY}"},
    ),
    "telemetry.log_content": Spec(name="telemetry.log_content", types=("boolean",), default=False),
    "telemetry.service_name": Spec(
        name="telemetry.service_name",
        types=("string",),
        min_length=1,
        example="codebot",
    ),
    "telemetry.traces": Spec(name="telemetry.traces", types=("boolean",), default=True),
    "telemetry.metrics": Spec(name="telemetry.metrics", types=("boolean",), default=True),
}
"""The fields of the object-valued keys, by path (``images.max_bytes``)."""

SERVER_FIELDS: dict[str, Spec] = {
    "timeout": Spec(
        name="timeout",
        types=("number",),
        default=30.0,
        exclusive_minimum=0,
        transports=("stdio", "http"),
    ),
    "tool_timeout": Spec(
        name="tool_timeout",
        types=("number",),
        exclusive_minimum=0,
        transports=("stdio", "http"),
    ),
    "enabled": Spec(name="enabled", types=("boolean",), default=True, transports=("stdio", "http")),
    "include_tools": Spec(name="include_tools", types=("array",), transports=("stdio", "http")),
    "exclude_tools": Spec(
        name="exclude_tools",
        types=("array",),
        default=[],
        transports=("stdio", "http"),
    ),
    "protocol": Spec(
        name="protocol",
        types=("string",),
        default="auto",
        enum=("auto", "legacy", "2026-07-28"),
        transports=("stdio", "http"),
    ),
    "description": Spec(name="description", types=("string",), transports=("stdio", "http")),
    "log_level": Spec(
        name="log_level",
        types=("string",),
        enum=("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"),
        transports=("stdio", "http"),
    ),
    "provenance": Spec(name="provenance", types=("object",), transports=("stdio", "http")),
    "type": Spec(
        name="type",
        types=("string",),
        enum=("stdio", "http", "streamable-http", "streamableHttp", "streamable_http"),
        transports=("stdio", "http"),
    ),
    "command": Spec(name="command", types=("string",), min_length=1, transports=("stdio",)),
    "args": Spec(name="args", types=("array",), default=[], transports=("stdio",)),
    "env": Spec(name="env", types=("object",), default={}, transports=("stdio",)),
    "cwd": Spec(name="cwd", types=("string",), min_length=1, transports=("stdio",)),
    "sandbox": Spec(
        name="sandbox",
        types=("string", "object"),
        enum=("read-only", "workspace-write", "off"),
        keys=("mode", "network", "writable", "deny_read"),
        transports=("stdio",),
    ),
    "url": Spec(name="url", types=("string",), transports=("http",)),
    "headers": Spec(name="headers", types=("object",), default={}, transports=("http",)),
    "oauth": Spec(
        name="oauth",
        types=("boolean", "object"),
        enum=(False,),
        keys=(
            "client_id",
            "client_secret",
            "client_metadata_url",
            "scopes",
            "callback_port",
            "grant",
            "private_key",
            "signing_algorithm",
            "issuer",
            "token_endpoint_auth_method",
            "assertion",
            "assertion_file",
            "idp_token_endpoint",
            "idp_issuer",
            "idp_client_id",
            "id_token",
            "id_token_file",
            "id_token_command",
            "dpop",
        ),
        transports=("http",),
    ),
}
"""The fields of an MCP server entry (stdio's, then http's own)."""
