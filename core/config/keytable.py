"""The settings models' fields as the run time checks them: generated, do not edit.

Written by ``python -m codebot_mcp.core.config.tablegen > core/config/keytable.py`` (``make
docs``) from the sections' pydantic models (:mod:`.tablegen`), so that reading settings imports
no pydantic; ``tests/core/test_config_sections.py`` fails when it is older than the models. It
imports nothing of codebot: the registry of sections (:mod:`.sections`) reads it.

Size: data, one row per field of every settings model (a row on one line where it fits).
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
    "mcp_servers": Spec("mcp_servers", ("object",), default={}),
    "mcpServers": Spec("mcpServers", ("object",), default={}),
    "roots": Spec("roots", ("array",), default=[]),
    "warm_idle_timeout": Spec(
        "warm_idle_timeout",
        ("number",),
        default=600.0,
        exclusive_minimum=0,
        exclusive_maximum=1000000000.0,
    ),
    "registry_url": Spec(
        "registry_url",
        ("string", "array"),
        default="https://registry.modelcontextprotocol.io",
    ),
    "model": Spec("model", ("string", "null")),
    "base_url": Spec("base_url", ("string", "null")),
    "api_key_env": Spec("api_key_env", ("string", "null")),
    "api": Spec("api", ("string", "null"), enum=("chat_completions", "responses")),
    "reasoning_effort": Spec(
        "reasoning_effort",
        ("string", "null"),
        enum=("low", "medium", "high"),
    ),
    "max_tokens": Spec("max_tokens", ("integer",), default=8192, minimum=1),
    "model_retries": Spec("model_retries", ("integer",), minimum=0),
    "context_window": Spec("context_window", ("integer",), minimum=1),
    "model_aliases": Spec("model_aliases", ("object",), default={}),
    "images": Spec(
        "images",
        ("object",),
        default={"max_bytes": 5242880, "max_per_request": 10, "max_request_bytes": 20971520},
        keys=("max_bytes", "max_per_request", "max_request_bytes"),
        example={"max_bytes": 2000000, "max_per_request": 4},
    ),
    "max_turns": Spec("max_turns", ("integer",), default=50, minimum=1),
    "tool_result_max_tokens": Spec(
        "tool_result_max_tokens",
        ("integer",),
        default=25000,
        minimum=1,
    ),
    "tool_search": Spec("tool_search", ("string", "boolean"), default="auto", enum=("auto",)),
    "usage_line_after": Spec("usage_line_after", ("integer",), default=100000, minimum=0),
    "subagent_depth": Spec("subagent_depth", ("integer",), default=1, minimum=0),
    "permissions": Spec(
        "permissions",
        ("object",),
        default={"allow": [], "ask": [], "deny": []},
        keys=("allow", "ask", "deny"),
        example={"allow": ["mcp__docs__*"], "deny": ["bash"]},
    ),
    "$schema": Spec("$schema", ("string",)),
    "checkpoints": Spec(
        "checkpoints",
        ("object",),
        default={"enabled": True, "max_files": 50000, "max_size_mb": 500},
        keys=("enabled", "max_files", "max_size_mb"),
        example={"enabled": True, "max_files": 20000, "max_size_mb": 200},
    ),
    "hooks": Spec("hooks", ("object",), default={}),
    "sandbox": Spec(
        "sandbox",
        ("object",),
        default={"network": False, "writable": [], "deny_read": []},
        keys=("mode", "network", "writable", "deny_read"),
        example={"mode": "read-only", "network": ["pypi.org"]},
    ),
    "claude_files": Spec("claude_files", ("boolean",), default=True),
    "allowed_mcp_servers": Spec("allowed_mcp_servers", ("array",)),
    "denied_mcp_servers": Spec("denied_mcp_servers", ("array",), default=[]),
    "require_mcp_lock": Spec("require_mcp_lock", ("boolean",), default=False),
    "locked": Spec("locked", ("array",), default=[]),
    "telemetry": Spec(
        "telemetry",
        ("object",),
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
    "mcp_servers.*.timeout": Spec(
        "mcp_servers.*.timeout",
        ("number",),
        default=30.0,
        exclusive_minimum=0,
    ),
    "mcp_servers.*.tool_timeout": Spec(
        "mcp_servers.*.tool_timeout",
        ("number",),
        exclusive_minimum=0,
    ),
    "mcp_servers.*.enabled": Spec("mcp_servers.*.enabled", ("boolean",), default=True),
    "mcp_servers.*.include_tools": Spec("mcp_servers.*.include_tools", ("array",)),
    "mcp_servers.*.exclude_tools": Spec("mcp_servers.*.exclude_tools", ("array",), default=[]),
    "mcp_servers.*.protocol": Spec(
        "mcp_servers.*.protocol",
        ("string",),
        default="auto",
        enum=("auto", "legacy", "2026-07-28"),
    ),
    "mcp_servers.*.description": Spec("mcp_servers.*.description", ("string",)),
    "mcp_servers.*.log_level": Spec(
        "mcp_servers.*.log_level",
        ("string",),
        enum=("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"),
    ),
    "mcp_servers.*.provenance": Spec("mcp_servers.*.provenance", ("object",)),
    "mcp_servers.*.type": Spec(
        "mcp_servers.*.type",
        ("string",),
        default="http",
        enum=("http", "streamable-http", "streamableHttp", "streamable_http"),
    ),
    "mcp_servers.*.command": Spec("mcp_servers.*.command", ("string",), min_length=1),
    "mcp_servers.*.args": Spec("mcp_servers.*.args", ("array",), default=[]),
    "mcp_servers.*.env": Spec("mcp_servers.*.env", ("object",), default={}),
    "mcp_servers.*.cwd": Spec("mcp_servers.*.cwd", ("string",), min_length=1),
    "mcp_servers.*.sandbox": Spec(
        "mcp_servers.*.sandbox",
        ("string", "object"),
        enum=("read-only", "workspace-write", "off"),
        keys=("mode", "network", "writable", "deny_read"),
    ),
    "mcp_servers.*.sandbox.mode": Spec(
        "mcp_servers.*.sandbox.mode",
        ("string",),
        enum=("read-only", "workspace-write", "off"),
    ),
    "mcp_servers.*.sandbox.network": Spec(
        "mcp_servers.*.sandbox.network",
        ("boolean", "array"),
        default=False,
    ),
    "mcp_servers.*.sandbox.writable": Spec(
        "mcp_servers.*.sandbox.writable",
        ("array",),
        default=[],
    ),
    "mcp_servers.*.sandbox.deny_read": Spec(
        "mcp_servers.*.sandbox.deny_read",
        ("array",),
        default=[],
    ),
    "mcp_servers.*.url": Spec("mcp_servers.*.url", ("string",)),
    "mcp_servers.*.headers": Spec("mcp_servers.*.headers", ("object",), default={}),
    "mcp_servers.*.oauth": Spec(
        "mcp_servers.*.oauth",
        ("boolean", "object"),
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
    ),
    "mcp_servers.*.oauth.client_id": Spec("mcp_servers.*.oauth.client_id", ("string",)),
    "mcp_servers.*.oauth.client_secret": Spec("mcp_servers.*.oauth.client_secret", ("string",)),
    "mcp_servers.*.oauth.client_metadata_url": Spec(
        "mcp_servers.*.oauth.client_metadata_url",
        ("string",),
    ),
    "mcp_servers.*.oauth.scopes": Spec("mcp_servers.*.oauth.scopes", ("array",)),
    "mcp_servers.*.oauth.callback_port": Spec(
        "mcp_servers.*.oauth.callback_port",
        ("integer",),
        minimum=1,
    ),
    "mcp_servers.*.oauth.grant": Spec(
        "mcp_servers.*.oauth.grant",
        ("string",),
        default="authorization_code",
        enum=("authorization_code", "client_credentials", "jwt_bearer", "identity_assertion"),
    ),
    "mcp_servers.*.oauth.private_key": Spec("mcp_servers.*.oauth.private_key", ("string",)),
    "mcp_servers.*.oauth.signing_algorithm": Spec(
        "mcp_servers.*.oauth.signing_algorithm",
        ("string",),
        default="ES256",
    ),
    "mcp_servers.*.oauth.issuer": Spec("mcp_servers.*.oauth.issuer", ("string",)),
    "mcp_servers.*.oauth.token_endpoint_auth_method": Spec(
        "mcp_servers.*.oauth.token_endpoint_auth_method",
        ("string",),
        enum=("client_secret_basic", "client_secret_post", "none"),
    ),
    "mcp_servers.*.oauth.assertion": Spec("mcp_servers.*.oauth.assertion", ("string",)),
    "mcp_servers.*.oauth.assertion_file": Spec(
        "mcp_servers.*.oauth.assertion_file",
        ("string",),
        min_length=1,
    ),
    "mcp_servers.*.oauth.idp_token_endpoint": Spec(
        "mcp_servers.*.oauth.idp_token_endpoint",
        ("string",),
    ),
    "mcp_servers.*.oauth.idp_issuer": Spec("mcp_servers.*.oauth.idp_issuer", ("string",)),
    "mcp_servers.*.oauth.idp_client_id": Spec(
        "mcp_servers.*.oauth.idp_client_id",
        ("string",),
        min_length=1,
    ),
    "mcp_servers.*.oauth.id_token": Spec("mcp_servers.*.oauth.id_token", ("string",)),
    "mcp_servers.*.oauth.id_token_file": Spec(
        "mcp_servers.*.oauth.id_token_file",
        ("string",),
        min_length=1,
    ),
    "mcp_servers.*.oauth.id_token_command": Spec(
        "mcp_servers.*.oauth.id_token_command",
        ("string", "array"),
        min_length=1,
    ),
    "mcp_servers.*.oauth.dpop": Spec("mcp_servers.*.oauth.dpop", ("boolean",)),
    "mcpServers.*.timeout": Spec(
        "mcpServers.*.timeout",
        ("number",),
        default=30.0,
        exclusive_minimum=0,
    ),
    "mcpServers.*.tool_timeout": Spec(
        "mcpServers.*.tool_timeout",
        ("number",),
        exclusive_minimum=0,
    ),
    "mcpServers.*.enabled": Spec("mcpServers.*.enabled", ("boolean",), default=True),
    "mcpServers.*.include_tools": Spec("mcpServers.*.include_tools", ("array",)),
    "mcpServers.*.exclude_tools": Spec("mcpServers.*.exclude_tools", ("array",), default=[]),
    "mcpServers.*.protocol": Spec(
        "mcpServers.*.protocol",
        ("string",),
        default="auto",
        enum=("auto", "legacy", "2026-07-28"),
    ),
    "mcpServers.*.description": Spec("mcpServers.*.description", ("string",)),
    "mcpServers.*.log_level": Spec(
        "mcpServers.*.log_level",
        ("string",),
        enum=("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"),
    ),
    "mcpServers.*.provenance": Spec("mcpServers.*.provenance", ("object",)),
    "mcpServers.*.type": Spec(
        "mcpServers.*.type",
        ("string",),
        default="http",
        enum=("http", "streamable-http", "streamableHttp", "streamable_http"),
    ),
    "mcpServers.*.command": Spec("mcpServers.*.command", ("string",), min_length=1),
    "mcpServers.*.args": Spec("mcpServers.*.args", ("array",), default=[]),
    "mcpServers.*.env": Spec("mcpServers.*.env", ("object",), default={}),
    "mcpServers.*.cwd": Spec("mcpServers.*.cwd", ("string",), min_length=1),
    "mcpServers.*.sandbox": Spec(
        "mcpServers.*.sandbox",
        ("string", "object"),
        enum=("read-only", "workspace-write", "off"),
        keys=("mode", "network", "writable", "deny_read"),
    ),
    "mcpServers.*.sandbox.mode": Spec(
        "mcpServers.*.sandbox.mode",
        ("string",),
        enum=("read-only", "workspace-write", "off"),
    ),
    "mcpServers.*.sandbox.network": Spec(
        "mcpServers.*.sandbox.network",
        ("boolean", "array"),
        default=False,
    ),
    "mcpServers.*.sandbox.writable": Spec("mcpServers.*.sandbox.writable", ("array",), default=[]),
    "mcpServers.*.sandbox.deny_read": Spec(
        "mcpServers.*.sandbox.deny_read",
        ("array",),
        default=[],
    ),
    "mcpServers.*.url": Spec("mcpServers.*.url", ("string",)),
    "mcpServers.*.headers": Spec("mcpServers.*.headers", ("object",), default={}),
    "mcpServers.*.oauth": Spec(
        "mcpServers.*.oauth",
        ("boolean", "object"),
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
    ),
    "mcpServers.*.oauth.client_id": Spec("mcpServers.*.oauth.client_id", ("string",)),
    "mcpServers.*.oauth.client_secret": Spec("mcpServers.*.oauth.client_secret", ("string",)),
    "mcpServers.*.oauth.client_metadata_url": Spec(
        "mcpServers.*.oauth.client_metadata_url",
        ("string",),
    ),
    "mcpServers.*.oauth.scopes": Spec("mcpServers.*.oauth.scopes", ("array",)),
    "mcpServers.*.oauth.callback_port": Spec(
        "mcpServers.*.oauth.callback_port",
        ("integer",),
        minimum=1,
    ),
    "mcpServers.*.oauth.grant": Spec(
        "mcpServers.*.oauth.grant",
        ("string",),
        default="authorization_code",
        enum=("authorization_code", "client_credentials", "jwt_bearer", "identity_assertion"),
    ),
    "mcpServers.*.oauth.private_key": Spec("mcpServers.*.oauth.private_key", ("string",)),
    "mcpServers.*.oauth.signing_algorithm": Spec(
        "mcpServers.*.oauth.signing_algorithm",
        ("string",),
        default="ES256",
    ),
    "mcpServers.*.oauth.issuer": Spec("mcpServers.*.oauth.issuer", ("string",)),
    "mcpServers.*.oauth.token_endpoint_auth_method": Spec(
        "mcpServers.*.oauth.token_endpoint_auth_method",
        ("string",),
        enum=("client_secret_basic", "client_secret_post", "none"),
    ),
    "mcpServers.*.oauth.assertion": Spec("mcpServers.*.oauth.assertion", ("string",)),
    "mcpServers.*.oauth.assertion_file": Spec(
        "mcpServers.*.oauth.assertion_file",
        ("string",),
        min_length=1,
    ),
    "mcpServers.*.oauth.idp_token_endpoint": Spec(
        "mcpServers.*.oauth.idp_token_endpoint",
        ("string",),
    ),
    "mcpServers.*.oauth.idp_issuer": Spec("mcpServers.*.oauth.idp_issuer", ("string",)),
    "mcpServers.*.oauth.idp_client_id": Spec(
        "mcpServers.*.oauth.idp_client_id",
        ("string",),
        min_length=1,
    ),
    "mcpServers.*.oauth.id_token": Spec("mcpServers.*.oauth.id_token", ("string",)),
    "mcpServers.*.oauth.id_token_file": Spec(
        "mcpServers.*.oauth.id_token_file",
        ("string",),
        min_length=1,
    ),
    "mcpServers.*.oauth.id_token_command": Spec(
        "mcpServers.*.oauth.id_token_command",
        ("string", "array"),
        min_length=1,
    ),
    "mcpServers.*.oauth.dpop": Spec("mcpServers.*.oauth.dpop", ("boolean",)),
    "images.max_bytes": Spec("images.max_bytes", ("integer",), default=5242880, minimum=1),
    "images.max_per_request": Spec("images.max_per_request", ("integer",), default=10, minimum=0),
    "images.max_request_bytes": Spec(
        "images.max_request_bytes",
        ("integer",),
        default=20971520,
        minimum=1,
    ),
    "permissions.allow": Spec("permissions.allow", ("array",), default=[]),
    "permissions.ask": Spec("permissions.ask", ("array",), default=[]),
    "permissions.deny": Spec("permissions.deny", ("array",), default=[]),
    "checkpoints.enabled": Spec("checkpoints.enabled", ("boolean",), default=True),
    "checkpoints.max_files": Spec("checkpoints.max_files", ("integer",), default=50000, minimum=1),
    "checkpoints.max_size_mb": Spec(
        "checkpoints.max_size_mb",
        ("integer",),
        default=500,
        minimum=1,
    ),
    "hooks.*[].matcher": Spec("hooks.*[].matcher", ("string", "null"), default=""),
    "hooks.*[].hooks": Spec("hooks.*[].hooks", ("array",)),
    "hooks.*[].hooks[].type": Spec("hooks.*[].hooks[].type", ("string",), default="command"),
    "hooks.*[].hooks[].command": Spec(
        "hooks.*[].hooks[].command",
        ("string",),
        min_length=1,
        example="./check.sh",
    ),
    "hooks.*[].hooks[].timeout": Spec(
        "hooks.*[].hooks[].timeout",
        ("number",),
        default=60.0,
        exclusive_minimum=0,
    ),
    "hooks.*[].hooks[].if": Spec(
        "hooks.*[].hooks[].if",
        ("string",),
        default="",
        example="Bash(git commit:*)",
    ),
    "hooks.*[].hooks[].async": Spec("hooks.*[].hooks[].async", ("boolean",), default=False),
    "hooks.*[].hooks[].sandbox": Spec(
        "hooks.*[].hooks[].sandbox",
        ("string",),
        enum=("workspace-write", "read-only"),
    ),
    "hooks.*[].hooks[].shell": Spec("hooks.*[].hooks[].shell", ("string",), default="bash"),
    "sandbox.mode": Spec("sandbox.mode", ("string",), enum=("read-only", "workspace-write", "off")),
    "sandbox.network": Spec("sandbox.network", ("boolean", "array"), default=False),
    "sandbox.writable": Spec("sandbox.writable", ("array",), default=[]),
    "sandbox.deny_read": Spec("sandbox.deny_read", ("array",), default=[]),
    "allowed_mcp_servers[].name": Spec("allowed_mcp_servers[].name", ("string",), min_length=1),
    "allowed_mcp_servers[].command": Spec("allowed_mcp_servers[].command", ("array",)),
    "allowed_mcp_servers[].url": Spec("allowed_mcp_servers[].url", ("string",)),
    "denied_mcp_servers[].name": Spec("denied_mcp_servers[].name", ("string",), min_length=1),
    "denied_mcp_servers[].command": Spec("denied_mcp_servers[].command", ("array",)),
    "denied_mcp_servers[].url": Spec("denied_mcp_servers[].url", ("string",)),
    "telemetry.enabled": Spec("telemetry.enabled", ("boolean",), default=False),
    "telemetry.endpoint": Spec(
        "telemetry.endpoint",
        ("string",),
        min_length=1,
        example="http://127.0.0.1:4318",
    ),
    "telemetry.protocol": Spec("telemetry.protocol", ("string",), enum=("http/protobuf", "grpc")),
    "telemetry.headers": Spec(
        "telemetry.headers",
        ("object",),
        default={},
        example={"x-api-key": "${OTEL_API_KEY}"},
    ),
    "telemetry.log_content": Spec("telemetry.log_content", ("boolean",), default=False),
    "telemetry.service_name": Spec(
        "telemetry.service_name",
        ("string",),
        min_length=1,
        example="codebot",
    ),
    "telemetry.traces": Spec("telemetry.traces", ("boolean",), default=True),
    "telemetry.metrics": Spec("telemetry.metrics", ("boolean",), default=True),
}
"""The fields of the models inside the keys, by path (``images.max_bytes``,
``hooks.*[].hooks[].timeout``)."""

SERVER_FIELDS: dict[str, Spec] = {
    "timeout": Spec(
        "timeout",
        ("number",),
        default=30.0,
        exclusive_minimum=0,
        transports=("stdio", "http"),
    ),
    "tool_timeout": Spec(
        "tool_timeout",
        ("number",),
        exclusive_minimum=0,
        transports=("stdio", "http"),
    ),
    "enabled": Spec("enabled", ("boolean",), default=True, transports=("stdio", "http")),
    "include_tools": Spec("include_tools", ("array",), transports=("stdio", "http")),
    "exclude_tools": Spec("exclude_tools", ("array",), default=[], transports=("stdio", "http")),
    "protocol": Spec(
        "protocol",
        ("string",),
        default="auto",
        enum=("auto", "legacy", "2026-07-28"),
        transports=("stdio", "http"),
    ),
    "description": Spec("description", ("string",), transports=("stdio", "http")),
    "log_level": Spec(
        "log_level",
        ("string",),
        enum=("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"),
        transports=("stdio", "http"),
    ),
    "provenance": Spec("provenance", ("object",), transports=("stdio", "http")),
    "type": Spec(
        "type",
        ("string",),
        enum=("stdio", "http", "streamable-http", "streamableHttp", "streamable_http"),
        transports=("stdio", "http"),
    ),
    "command": Spec("command", ("string",), min_length=1, transports=("stdio",)),
    "args": Spec("args", ("array",), default=[], transports=("stdio",)),
    "env": Spec("env", ("object",), default={}, transports=("stdio",)),
    "cwd": Spec("cwd", ("string",), min_length=1, transports=("stdio",)),
    "sandbox": Spec(
        "sandbox",
        ("string", "object"),
        enum=("read-only", "workspace-write", "off"),
        keys=("mode", "network", "writable", "deny_read"),
        transports=("stdio",),
    ),
    "url": Spec("url", ("string",), transports=("http",)),
    "headers": Spec("headers", ("object",), default={}, transports=("http",)),
    "oauth": Spec(
        "oauth",
        ("boolean", "object"),
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
