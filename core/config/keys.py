"""The one table of settings keys: what each top-level key is, how it is checked, its
default, whether an untrusted project may set it, and its JSON Schema.

Everything that reads keys reads them from :data:`KEYS`: parsing (:func:`parse_scalars`),
the unknown-key warning (:func:`unknown_keys`), the defaults (:func:`default`, used by
``Settings``), trust gating (:func:`gated_keys`) and ``docs/settings.schema.json``
(:func:`json_schema`; ``python -m codebot_mcp.core.config.keys`` prints it, and a test checks
the checked-in copy is current).

**Trust.** A key of a project file is ``"gated"`` unless its row says otherwise: it applies
only once the project is trusted. The default is deliberate: a key added later cannot forget
to be gated. A row may say ``"free"`` only when the key can make codebot *more* careful or
does nothing at all (``$schema``, ``permissions.ask``, ``permissions.deny``).

Size: one idea, the key table: a row per key with its parser and schema, and the functions
every reader of keys shares; splitting it would give each key two homes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, is_dataclass
from pathlib import Path
from typing import Any, Literal

from codebot_mcp.core.config.imagelimits import SCHEMA as IMAGES_SCHEMA
from codebot_mcp.core.config.imagelimits import ImageLimits, parse_images
from codebot_mcp.core.config.oauth import BROWSERLESS_SCHEMA
from codebot_mcp.core.config.telemetry import PROTOCOLS as TELEMETRY_PROTOCOLS
from codebot_mcp.core.config.telemetry import TELEMETRY_KEYS, TelemetrySettings, parse_telemetry
from codebot_mcp.core.errors import SettingsError
from codebot_mcp.core.jsonutil import json_type

Trust = Literal["gated", "free", "own"]
"""``gated``: a project file's value applies only once the project is trusted; ``free``: it
applies at once (it can only make codebot more careful, or does nothing); ``own``: the key's
module decides, value by value (``sandbox``: tightening applies at once, widening is gated;
``checkpoints`` and ``hooks``: gated as written, with their own merge)."""


def _text(path: Path, key: str, value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise SettingsError(
            f"'{key}' in {path} must be a string, found {json_type(value)}",
            hint=f'Write it as "{key}": "...".',
        )
    return value or None


def _integer(minimum: int) -> Callable[[Path, str, Any], int]:
    def parse(path: Path, key: str, value: Any) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            kind = "a positive integer" if minimum >= 1 else "an integer >= 0"
            raise SettingsError(
                f"'{key}' in {path} must be {kind}, found {json.dumps(value)}",
                hint=f'Write it as "{key}": {max(minimum, 50)}.',
            )
        return value

    return parse


def _tool_search(path: Path, key: str, value: Any) -> str | bool:
    if value != "auto" and not isinstance(value, bool):
        raise SettingsError(
            f"'{key}' in {path} must be \"auto\", true or false, found {json.dumps(value)}",
            hint=f'Write it as "{key}": "auto" (the default), true or false.',
        )
    return value  # type: ignore[no-any-return]


def _seconds(path: Path, key: str, value: Any) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0 < value < 1e9:
        raise SettingsError(
            f"'{key}' in {path} must be a positive number of seconds, found {json.dumps(value)}",
            hint=f'Write it as "{key}": 600.',
        )
    return float(value)


def _roots(path: Path, key: str, value: Any) -> tuple[Path, ...]:
    """Relative to the project root (a project file) or to the home directory (global)."""
    if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):  # pyright: ignore[reportUnknownVariableType]
        raise SettingsError(
            f"'{key}' in {path} must be a list of directory paths, found {json_type(value)}",
            hint=f'Write it as "{key}": ["~/src/shared", "../docs"].',
        )
    base = path.parent.parent if path.parent.name == ".codebot" else Path.home()
    return tuple((base / Path(r).expanduser()).resolve() for r in value)  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]


MODEL_APIS = ("chat_completions", "responses")
"""The two wire formats of the model API (``api``; ``--api`` on ``chat``)."""
REASONING_EFFORTS = ("low", "medium", "high")
"""The values of ``reasoning_effort`` (``--effort`` on ``chat``)."""


def _choice(values: tuple[str, ...]) -> Callable[[Path, str, Any], str | None]:
    def parse(path: Path, key: str, value: Any) -> str | None:
        if value is not None and value not in values:
            shown = ", ".join(f'"{v}"' for v in values)
            raise SettingsError(
                f"'{key}' in {path} must be one of {shown}, found {json.dumps(value)}",
                hint=f'Write it as "{key}": "{values[-1]}", or leave it out for the default.',
            )
        return value  # type: ignore[no-any-return]

    return parse


def _aliases(path: Path, key: str, value: Any) -> Mapping[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and k and v
        for k, v in value.items()  # pyright: ignore[reportUnknownVariableType]
    ):
        raise SettingsError(
            f"'{key}' in {path} must be an object of model names, found {json.dumps(value)}",
            hint=f'Write it as "{key}": {{"sonnet": "gpt-4o", "haiku": "gpt-4o-mini"}}.',
        )
    return dict(value)  # pyright: ignore[reportUnknownArgumentType]


def _bool(path: Path, key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise SettingsError(
            f"'{key}' in {path} must be true or false, found {json.dumps(value)}",
            hint=f'Write it as "{key}": false, or leave it out for the default.',
        )
    return value


def _ignored(path: Path, key: str, value: Any) -> Any:
    return value


@dataclass(frozen=True, slots=True)
class Key:
    """One top-level settings key."""

    name: str
    help: str
    schema: Mapping[str, Any]
    """Its JSON Schema (for ``docs/settings.schema.json``)."""
    default: Any = None
    parse: Callable[[Path, str, Any], Any] | None = None
    """Checks a value (raising ``SettingsError`` naming file and key) and returns it as
    ``Settings`` holds it; None for keys parsed elsewhere (servers, permissions)."""
    trust: Trust = "gated"
    """Whether a project file's value waits for trust; see the module docstring."""
    field: str | None = None
    """The ``Settings`` attribute it fills (its name by default when ``parse`` is set)."""
    example: Any = None
    """A valid value other than the default (the schema's example; tests set it)."""
    managed_only: bool = False
    """Only the managed settings file may set it (``core.config.managed``); in a user or
    project file it warns and does nothing."""

    @property
    def attribute(self) -> str | None:
        return self.field or (self.name if self.parse is not None else None)


_STR = {"type": ["string", "null"]}
_POSITIVE = {"type": "integer", "minimum": 1}

DEFAULT_MAX_TURNS = 50
DEFAULT_TOOL_RESULT_MAX_TOKENS = 25_000
DEFAULT_MAX_TOKENS = 8192
"""Output tokens per model turn (``max_tokens``): a long file fits, a runaway does not."""
DEFAULT_USAGE_LINE_AFTER = 100_000
"""Session tokens after which the REPL prints a usage line after each answer."""
DEFAULT_WARM_IDLE_TIMEOUT = 600.0
"""Seconds a warm holder (``codebot mcp warm``) stays up without a request."""
DEFAULT_SUBAGENT_DEPTH = 1
"""How deep ``task`` may nest: 1 lets the main agent start subagents, and them none."""
DEFAULT_REGISTRY_URL = "https://registry.modelcontextprotocol.io"
"""The official MCP Registry, where ``mcp search`` and ``mcp install`` look by default."""

KEYS: tuple[Key, ...] = (
    Key(
        "mcp_servers",
        "MCP servers by name (each entry: command/args/env/cwd or type http with url/headers).",
        {"type": "object", "additionalProperties": {"$ref": "#/$defs/server"}},
    ),
    Key(
        "mcpServers",
        "The same as mcp_servers (the name other clients use); a file holds one of the two.",
        {"type": "object", "additionalProperties": {"$ref": "#/$defs/server"}},
    ),
    Key("model", "The model name sent to the API.", _STR, None, _text, example="gpt-4o"),
    Key(
        "base_url",
        "The OpenAI-compatible endpoint (where the API key is sent).",
        {"type": ["string", "null"], "pattern": "^https?://"},
        None,
        _text,
        example="http://localhost:11434/v1",
    ),
    Key(
        "api_key_env",
        "The environment variable holding the API key.",
        {"type": ["string", "null"], "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
        None,
        _text,
        example="MY_API_KEY",
    ),
    Key(
        "api",
        'The wire format of the model API: "chat_completions" or "responses" (default: '
        "responses for a reasoning model at api.openai.com, else chat_completions).",
        {"enum": [*MODEL_APIS, None]},
        None,
        _choice(MODEL_APIS),
        example="responses",
    ),
    Key(
        "reasoning_effort",
        'How hard a reasoning model thinks: "low", "medium" or "high" (default: the model\'s own).',
        {"enum": [*REASONING_EFFORTS, None]},
        None,
        _choice(REASONING_EFFORTS),
        example="high",
    ),
    Key(
        "max_turns",
        "Model turns per prompt before the agent stops (exit 6).",
        _POSITIVE,
        DEFAULT_MAX_TURNS,
        _integer(1),
        example=20,
    ),
    Key(
        "tool_result_max_tokens",
        "A tool result longer than this is cut before the model sees it.",
        _POSITIVE,
        DEFAULT_TOOL_RESULT_MAX_TOKENS,
        _integer(1),
        example=10_000,
    ),
    Key(
        "max_tokens",
        "Output tokens per model turn (sent as max_tokens).",
        _POSITIVE,
        DEFAULT_MAX_TOKENS,
        _integer(1),
        example=4096,
    ),
    Key(
        "model_retries",
        "Retries of a failed model request (default: 2 for remote APIs, 0 for loopback).",
        {"type": "integer", "minimum": 0},
        None,
        _integer(0),
        example=0,
    ),
    Key(
        "images",
        "Images sent to the model: max_bytes per image (larger ones are downscaled with "
        "Pillow, or refused), max_per_request and max_request_bytes per request (older "
        "images beyond them go as a text placeholder).",
        IMAGES_SCHEMA,
        ImageLimits(),  # each field's default is in the schema
        parse_images,
        example={"max_bytes": 2_000_000, "max_per_request": 4},
    ),
    Key(
        "context_window",
        "The model's context window in tokens (default: from the known models, or 128k).",
        _POSITIVE,
        None,
        _integer(1),
        example=32_768,
    ),
    Key(
        "tool_search",
        'Defer MCP tool schemas behind search_tools: "auto", true or false.',
        {"enum": ["auto", True, False]},
        "auto",
        _tool_search,
        example=False,
    ),
    Key(
        "usage_line_after",
        "Session tokens after which the REPL prints a usage line after each answer.",
        {"type": "integer", "minimum": 0},
        DEFAULT_USAGE_LINE_AFTER,
        _integer(0),
        example=50_000,
    ),
    Key(
        "roots",
        "Directories offered to servers (roots/list) besides the project root.",
        {"type": "array", "items": {"type": "string"}},
        (),
        _roots,
        example=["~/src/shared"],
    ),
    Key(
        "warm_idle_timeout",
        "Seconds the warm holder (mcp warm) waits for a request before it exits.",
        {"type": "number", "exclusiveMinimum": 0},
        DEFAULT_WARM_IDLE_TIMEOUT,
        _seconds,
        example=120,
    ),
    Key(
        "subagent_depth",
        "How deep the task tool may nest subagents (0: no task tool).",
        {"type": "integer", "minimum": 0},
        DEFAULT_SUBAGENT_DEPTH,
        _integer(0),
        example=0,
    ),
    Key(
        "model_aliases",
        "Models for the Claude model names and aliases in agent and command files "
        '("sonnet", "claude-opus-4-1"...); a name not listed means your model.',
        {"type": "object", "additionalProperties": {"type": "string", "minLength": 1}},
        {},
        _aliases,
        example={"sonnet": "gpt-4o", "haiku": "gpt-4o-mini"},
    ),
    Key(
        "registry_url",
        "The MCP Registry (or a list) mcp search and mcp install use.",
        {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
        (DEFAULT_REGISTRY_URL,),
        field="registry_url",
        example="https://registry.example.com",
    ),
    Key(
        "checkpoints",
        "Snapshots before the agent changes files, for codebot rewind: enabled, max_files, "
        "max_size_mb.",
        {
            "type": "object",
            "properties": {
                "enabled": {"type": "boolean"},
                "max_files": {"type": "integer", "minimum": 1},
                "max_size_mb": {"type": "number", "exclusiveMinimum": 0},
            },
            "additionalProperties": False,
        },
        trust="own",
    ),
    Key(
        "hooks",
        "Commands run around tool calls and prompts (Claude Code's hooks format).",
        {"type": "object"},
        trust="own",
    ),
    Key(
        "sandbox",
        "How bash runs confined: mode, network (true, false, or a list of host patterns "
        "reached through codebot's proxy), writable, deny_read. A project file may "
        "tighten it (deny_read only adds paths); widening it needs trust.",
        {
            "type": "object",
            "properties": {
                "mode": {"type": "string"},
                "network": {
                    "anyOf": [
                        {"type": "boolean"},
                        {"type": "array", "items": {"type": "string", "minLength": 1}},
                    ]
                },
                "writable": {"type": "array", "items": {"type": "string"}},
                "deny_read": {"type": "array", "items": {"type": "string", "minLength": 1}},
            },
            "additionalProperties": False,
        },
        trust="own",
    ),
    Key(
        "permissions",
        "Tool-name patterns: allow (runs without asking; needs trust in a project file), "
        "ask, deny (deny wins over ask, ask over allow).",
        {
            "type": "object",
            "properties": {
                k: {"type": "array", "items": {"type": "string"}} for k in ("allow", "ask", "deny")
            },
            "additionalProperties": False,
        },
    ),
    Key(
        "claude_files",
        "Read Claude Code's files too: .claude/settings.json, .claude/settings.local.json, "
        "~/.claude/settings.json, the .claude and ~/.claude agents, commands and skills, "
        "~/.claude/CLAUDE.md (false: none of them).",
        {"type": "boolean"},
        True,
        _bool,
        example=False,
    ),
    Key(
        "allowed_mcp_servers",
        "Managed settings only: the servers that may run, by name, command or URL pattern "
        '(entries {"name": ...}, {"command": [...]}, {"url": "https://*.corp.example/*"}).',
        {"type": "array", "items": {"$ref": "#/$defs/server_rule"}},
        trust="free",
        managed_only=True,
    ),
    Key(
        "denied_mcp_servers",
        "Managed settings only: servers that never run (entries as in allowed_mcp_servers; "
        "denied wins over allowed).",
        {"type": "array", "items": {"$ref": "#/$defs/server_rule"}},
        trust="free",
        managed_only=True,
    ),
    Key(
        "require_mcp_lock",
        "Managed settings only: every server must be pinned in .codebot/mcp-lock.json "
        "(one that is not is held back).",
        {"type": "boolean"},
        trust="free",
        managed_only=True,
    ),
    Key(
        "locked",
        "Managed settings only: keys the user's and the project's files may not set "
        '(e.g. "base_url", "permissions.allow", "sandbox.network").',
        {"type": "array", "items": {"type": "string"}},
        trust="free",
        managed_only=True,
    ),
    Key(
        "telemetry",
        "OpenTelemetry export (off by default): enabled, endpoint, protocol (http/protobuf or "
        "grpc), headers, log_content, service_name, traces, metrics (docs/telemetry.md).",
        {
            "type": "object",
            "properties": {
                "enabled": {"type": "boolean"},
                "endpoint": {"type": "string", "minLength": 1},
                "protocol": {"enum": list(TELEMETRY_PROTOCOLS)},
                "headers": {"type": "object", "additionalProperties": {"type": "string"}},
                "log_content": {"type": "boolean"},
                "service_name": {"type": "string", "minLength": 1},
                "traces": {"type": "boolean"},
                "metrics": {"type": "boolean"},
            },
            "additionalProperties": False,
        },
        TelemetrySettings(),  # off
        parse_telemetry,
        example={"enabled": True, "endpoint": "http://127.0.0.1:4318"},
    ),
    Key(
        "$schema",
        "The JSON Schema of this file, for editors.",
        {"type": "string"},
        trust="free",
    ),
)
"""Every top-level key, in the order the docs list them."""

PERMISSION_TRUST: Mapping[str, Trust] = {"allow": "gated", "ask": "free", "deny": "free"}
"""``permissions`` is a section: ``allow`` lets tools run unasked (gated); ``ask`` and
``deny`` only make codebot more careful (free)."""
PERMISSION_KEYS: tuple[str, ...] = tuple(PERMISSION_TRUST)
SANDBOX_KEYS: tuple[str, ...] = ("mode", "network", "writable", "deny_read")
"""``sandbox`` (a project file may tighten it; widening it needs trust: ``core.config.trust``)."""
CHECKPOINT_KEYS: tuple[str, ...] = ("enabled", "max_files", "max_size_mb")
SECTION_KEYS: dict[str, tuple[str, ...]] = {
    "permissions": PERMISSION_KEYS,
    "sandbox": SANDBOX_KEYS,
    "checkpoints": CHECKPOINT_KEYS,
    "telemetry": TELEMETRY_KEYS,
}
"""Objects whose own keys are checked too."""
TOP_LEVEL_KEYS: tuple[str, ...] = tuple(k.name for k in KEYS)
"""Every key a settings file may hold at the top level; others warn (typos hide settings)."""
BY_NAME: Mapping[str, Key] = {k.name: k for k in KEYS}
SERVER_KEYS = ("mcp_servers", "mcpServers")


def default(name: str) -> Any:
    """The default of a key (what applies when no file sets it)."""
    return BY_NAME[name].default


def parse_scalars(path: Path, data: Mapping[str, Any]) -> dict[str, Any]:
    """Every key of ``data`` with a parser, checked, as ``Settings`` attributes.

    Raises:
        SettingsError: a value has the wrong type or range (naming the file and key).
    """
    out: dict[str, Any] = {}
    for key in KEYS:
        if key.parse is not None and key.attribute is not None and key.name in data:
            out[key.attribute] = key.parse(path, key.name, data[key.name])
    return out


def gated_keys(data: Mapping[str, Any]) -> list[str]:
    """The keys of a project file that wait for trust, in table order (``permissions`` is
    reported per section: ``permissions.allow``). Server tables are trusted per server, by
    ``core.config.trust``, and are not listed here."""
    out = [
        k.name
        for k in KEYS
        if k.name in data and k.trust == "gated" and k.name not in (*SERVER_KEYS, "permissions")
    ]
    section = data.get("permissions")
    if isinstance(section, dict):
        out += [
            f"permissions.{name}"
            for name, trust in PERMISSION_TRUST.items()
            if trust == "gated" and section.get(name)  # pyright: ignore[reportUnknownMemberType]
        ]
    return out


@dataclass(frozen=True, slots=True)
class SettingWarning:
    """A top-level (or section) key codebot does not know, kept as data."""

    file: Path
    key: str
    """As written, with its section: ``permisions``, ``permissions.dney`` or
    ``checkpoints.max_size``."""
    message: str

    def __str__(self) -> str:
        return self.message


def unknown_keys(path: Path, data: Mapping[str, Any]) -> list[SettingWarning]:
    """A warning for each top-level or ``permissions`` key codebot does not know."""

    def one(key: str, known: tuple[str, ...], where: str) -> SettingWarning:
        import difflib  # only for a key codebot does not know: not on the warm path

        close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
        suggestion = f" (did you mean '{where}{close[0]}'?)" if close else ""
        message = f"unknown setting '{where}{key}' in {path} is ignored{suggestion}"
        return SettingWarning(path, where + key, message)

    out = [one(k, TOP_LEVEL_KEYS, "") for k in data if k not in TOP_LEVEL_KEYS]
    out += [
        SettingWarning(
            path,
            k,
            f"'{k}' in {path} is ignored: only the managed settings file may set it "
            "(docs/managed-settings.md)",
        )
        for k in data
        if k in BY_NAME and BY_NAME[k].managed_only
    ]
    for name, known in SECTION_KEYS.items():
        section = data.get(name)
        if isinstance(section, dict):
            out += [
                one(str(k), known, f"{name}.")  # pyright: ignore[reportUnknownArgumentType]
                for k in section  # pyright: ignore[reportUnknownVariableType]
                if k not in known
            ]
    return out


_SERVER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "type": {"enum": ["stdio", "http", "streamable-http", "streamableHttp", "streamable_http"]},
        "command": {"type": "string", "minLength": 1},
        "args": {"type": "array", "items": {"type": "string"}},
        "env": {"type": "object", "additionalProperties": {"type": "string"}},
        "cwd": {"type": "string", "minLength": 1},
        "url": {"type": "string", "pattern": "^(https?://|\\$\\{)"},
        "headers": {"type": "object", "additionalProperties": {"type": "string"}},
        "timeout": {"type": "number", "exclusiveMinimum": 0},
        "tool_timeout": {"type": "number", "exclusiveMinimum": 0},
        "enabled": {"type": "boolean"},
        "include_tools": {"type": "array", "items": {"type": "string"}},
        "exclude_tools": {"type": "array", "items": {"type": "string"}},
        "protocol": {"enum": ["auto", "legacy", "2026-07-28"]},
        "description": {"type": "string"},
        "log_level": {
            "enum": [
                "debug",
                "info",
                "notice",
                "warning",
                "error",
                "critical",
                "alert",
                "emergency",
            ]
        },
        "oauth": {
            "oneOf": [
                {"const": False},
                {
                    "type": "object",
                    "properties": {
                        "client_id": {"type": "string"},
                        "client_secret": {
                            "type": "string",
                            "pattern": "\\$\\{",
                            "description": "A ${VAR} reference: never a secret in clear.",
                        },
                        "client_metadata_url": {"type": "string", "pattern": "^https://"},
                        "scopes": {"type": "array", "items": {"type": "string"}},
                        "callback_port": {"type": "integer", "minimum": 1, "maximum": 65535},
                        "grant": {"enum": ["authorization_code", "client_credentials"]},
                        "private_key": {"type": "string", "pattern": "\\$\\{"},
                        "signing_algorithm": {"type": "string"},
                        "issuer": {"type": "string", "pattern": "^https?://"},
                        "token_endpoint_auth_method": {
                            "enum": ["client_secret_basic", "client_secret_post", "none"]
                        },
                        **BROWSERLESS_SCHEMA,  # the grants without a browser, DPoP (issue 34)
                    },
                    "additionalProperties": False,
                },
            ]
        },
    },
    "additionalProperties": False,
}


_SERVER_RULE_SCHEMA: dict[str, Any] = {
    "description": "One server: by name, by exact command and arguments, or by URL pattern.",
    "oneOf": [
        {
            "type": "object",
            "properties": {"name": {"type": "string", "minLength": 1}},
            "required": ["name"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {
                "command": {"type": "array", "items": {"type": "string"}, "minItems": 1}
            },
            "required": ["command"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {"url": {"type": "string", "pattern": "^(https?|\\*)://"}},
            "required": ["url"],
            "additionalProperties": False,
        },
    ],
}


def json_schema() -> dict[str, Any]:
    """The JSON Schema of ``settings.json``, from :data:`KEYS` (each key's help and whether a
    project file needs trust for it)."""
    properties: dict[str, Any] = {}
    for key in KEYS:
        note = " Needs trust in a project file." if key.trust == "gated" else ""
        entry = {**key.schema, "description": key.help + note}
        if key.default not in (None, ()) and not is_dataclass(key.default):  # a section's
            entry["default"] = key.default  # fields say their own defaults
        if key.example is not None:
            entry["examples"] = [key.example]
        properties[key.name] = entry
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://codebot.invalid/settings.schema.json",
        "title": "codebot settings.json",
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
        "$defs": {"server": _SERVER_SCHEMA, "server_rule": _SERVER_RULE_SCHEMA},
    }


def schema_text() -> str:
    """:func:`json_schema` as the checked-in file holds it."""
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(schema_text())
