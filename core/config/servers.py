"""One MCP server entry: ``ServerConfig``, and validating an entry as written.

A bad entry never raises: it becomes a ``ServerConfig`` whose ``error`` says what is wrong,
naming the file, the server and the key, so the other servers still start and ``mcp list`` and
``doctor`` can show it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from codebot_mcp.core.config.oauth import OAuthSettings, OAuthSettingsError, parse_oauth
from codebot_mcp.core.config.provenance import (
    PROVENANCE_KEY,
    Provenance,
    ProvenanceError,
    parse_provenance,
)
from codebot_mcp.core.config.sandboxing import (
    EntrySandboxError,
    ServerSandbox,
    parse_server_sandbox,
)
from codebot_mcp.core.envexpand import UndefinedVariableError, expand, is_expanded
from codebot_mcp.core.errors import SettingsError, UsageError
from codebot_mcp.core.jsonutil import is_str_list, json_type
from codebot_mcp.core.secrets.redact import printable

SERVER_NAME_RE = re.compile(r"^[A-Za-z0-9_-]+$")
DEFAULT_HANDSHAKE_TIMEOUT = 30.0
"""Seconds the handshake may take; a Python server with heavy imports needs several."""
MILLISECONDS_SUSPECT = 1000
"""A timeout over this many seconds was most likely meant in milliseconds (Gemini's unit)."""
Transport = Literal["stdio", "http"]
Protocol = Literal["auto", "legacy", "2026-07-28"]
PROTOCOLS: tuple[str, ...] = ("auto", "legacy", "2026-07-28")

_SERVER_KEYS = (
    "type",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "timeout",
    "tool_timeout",
    "enabled",
    "include_tools",
    "exclude_tools",
    "protocol",
    "description",
    "log_level",
    "oauth",
    PROVENANCE_KEY,
    "sandbox",
)
LOG_LEVELS: tuple[str, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
"""MCP's (syslog's) levels, for ``log_level``."""


WarningKind = Literal["unknown_key", "milliseconds", "translated", "provenance"]
"""``unknown_key``: a key codebot ignores; ``milliseconds``: a timeout over 1000 s;
``translated``: another client's field read in codebot's terms (``.mcp.json``);
``provenance``: a ``provenance`` codebot cannot read (the entry runs; updates go unchecked)."""


@dataclass(frozen=True, slots=True)
class EntryWarning:
    """Something in a server entry that is ignored or doubtful, kept as data for its readers."""

    key: str
    """The entry's key it is about."""
    message: str
    hint: str
    """How to fix it, without the place (the reader names the file and server)."""
    kind: WarningKind = "unknown_key"
    """What it is about, for the doctor check that reports it."""
    did_you_mean: str | None = None
    """For an unknown key: the known key it is closest to."""

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """One MCP server entry, validated and with variables expanded.

    When ``error`` is set the entry is unusable and the other fields may be partial.
    """

    name: str
    source: Path
    """The settings file that defined this entry."""
    overrides: Path | None = None
    """The global file whose entry of the same name this project entry replaced."""
    type: Transport = "stdio"
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict[str, str])
    cwd: Path | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    timeout: float = DEFAULT_HANDSHAKE_TIMEOUT
    """Handshake timeout in seconds."""
    tool_timeout: float | None = None
    """Per-call timeout in seconds; None waits as long as the call takes."""
    enabled: bool = True
    include_tools: tuple[str, ...] | None = None
    exclude_tools: tuple[str, ...] = ()
    protocol: Protocol = "auto"
    log_level: str | None = None
    """Sent as ``logging/setLevel`` (or the 2026-07-28 request meta); None sends nothing."""
    oauth: OAuthSettings = field(default_factory=OAuthSettings)
    """How to authorize to an http server (``"oauth": false`` disables it)."""
    provenance: Provenance | None = None
    """Where ``codebot mcp install`` got the entry (registry, name, version); None otherwise."""
    sandbox: ServerSandbox | None = None
    """A stdio server started confined (``"sandbox": "workspace-write"``); None: as is."""
    error: str | None = None
    """Why this entry cannot be used (stage "config"), or None."""
    hint: str | None = None
    warnings: tuple[EntryWarning, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict[str, Any], repr=False, compare=False)
    """The entry as written, before expansion (for the trust hash and doctor)."""


def require_usable(config: ServerConfig) -> None:
    """Raise when a server named explicitly (``mcp call``) cannot be started.

    Raises:
        SettingsError: the entry is invalid.
        UsageError: the entry is disabled.
    """
    if not config.enabled:
        raise UsageError(
            f"server '{config.name}' is disabled ('enabled': false in {config.source})",
            hint=f"Run `codebot mcp enable {config.name}` (or remove 'enabled': false) to use it.",
        )
    if config.error is not None:
        raise SettingsError(config.error, hint=config.hint)


class _EntryError(Exception):
    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def parse_server(
    name: str, entry: Any, source: Path, environ: Mapping[str, str], base_dir: Path
) -> ServerConfig:
    """Validate one server entry; problems go into ``ServerConfig.error``, never raise."""
    raw: Mapping[str, Any] = entry if isinstance(entry, dict) else {}
    try:
        return _parse_server(name, entry, source, environ, base_dir)
    except _EntryError as exc:
        return ServerConfig(
            name=name,
            source=source,
            error=f"server '{printable(name, one_line=True)}' in {source}: {exc.message}",
            hint=exc.hint,
            raw=raw,
            enabled=raw.get("enabled", True) is not False,
            type=raw_transport(raw),
            provenance=_provenance_of(raw),
        )


def _provenance_of(raw: Mapping[str, Any]) -> Provenance | None:
    """The provenance of an entry that cannot run (doctor still checks it for updates)."""
    try:
        return parse_provenance(raw[PROVENANCE_KEY]) if PROVENANCE_KEY in raw else None
    except ProvenanceError:
        return None


def raw_transport(raw: Mapping[str, Any]) -> Transport:
    """The transport an entry means, as far as it can be told without validating it."""
    kind = raw.get("type")
    if isinstance(kind, str):
        return "http" if "http" in kind.lower() or kind.lower() == "sse" else "stdio"
    return "http" if "url" in raw and "command" not in raw else "stdio"


def _parse_server(  # noqa: C901 - a flat list of field checks reads best in one place
    name: str, entry: Any, source: Path, environ: Mapping[str, str], base_dir: Path
) -> ServerConfig:
    if not SERVER_NAME_RE.fullmatch(name) or "__" in name:
        raise _EntryError(
            "the name must use only letters, digits, '-' and '_', and must not contain '__'",
            hint="Rename the entry, e.g. 'my-server' (the name becomes part of tool names).",
        )
    if not isinstance(entry, dict):
        raise _EntryError(
            f"the entry must be an object, found {json_type(entry)}",
            hint='Write it as {"command": "...", "args": [...]} or {"type": "http", "url": "..."}.',
        )
    data: dict[str, Any] = entry
    _refuse_nul(data)
    warnings = [_unknown_key_warning(k) for k in data if k not in _SERVER_KEYS]

    kind = data.get("type")
    if kind is None:
        kind = "http" if "url" in data and "command" not in data else "stdio"
    if kind in ("streamable-http", "streamableHttp", "streamable_http"):
        kind = "http"
    if kind not in ("stdio", "http"):
        sse = isinstance(kind, str) and kind.lower() == "sse"
        raise _EntryError(
            f"unknown type {json.dumps(kind)} (key 'type')"
            + (": codebot speaks Streamable HTTP, not the older SSE transport" if sse else ""),
            hint='Write "type": "http"; most servers serve Streamable HTTP at /mcp beside /sse.'
            if sse
            else 'Use "stdio" (a local command) or "http" (a Streamable HTTP URL).',
        )
    transport: Transport = "http" if kind == "http" else "stdio"
    has_command, has_url = "command" in data, "url" in data
    if has_command and has_url:
        raise _EntryError(
            "has both 'command' and 'url'",
            hint="Keep 'command' for a local stdio server or 'url' for an HTTP server.",
        )
    if transport == "stdio" and not has_command:
        raise _EntryError(
            "missing 'command' (a stdio server needs the program to run)",
            hint='Add "command": "npx" (and "args"), or set "type": "http" with a "url".',
        )
    if transport == "http" and not has_url:
        raise _EntryError(
            "missing 'url' (an http server needs its endpoint)",
            hint='Add "url": "https://host/mcp".',
        )

    def text(key: str) -> str | None:
        value = data.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            raise _EntryError(f"'{key}' must be a non-empty string, found {json_type(value)}")
        return _expand(value, key, environ)

    def str_list(key: str) -> tuple[str, ...] | None:
        value = data.get(key)
        if value is None:
            return None
        if not is_str_list(value):
            raise _EntryError(
                f"'{key}' must be a list of strings, found {json_type(value)}",
                hint=f'Write it as "{key}": ["a", "b"].',
            )
        return tuple(value)

    def str_map(key: str) -> dict[str, str]:
        value = data.get(key, {})
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise _EntryError(
                f"'{key}' must be an object of string values, found {json_type(value)}",
                hint=f'Write it as "{key}": {{"NAME": "value"}} (numbers must be quoted).',
            )
        items: dict[str, str] = value
        return {k: _expand(v, f"{key}.{k}", environ) for k, v in items.items()}

    def seconds(key: str, default: float | None) -> float | None:
        value = data.get(key, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise _EntryError(
                f"'{key}' must be a positive number of seconds, found {json.dumps(value)}",
                hint=f'Write it as "{key}": 30.',
            )
        if value > MILLISECONDS_SUSPECT:
            warnings.append(
                EntryWarning(
                    key,
                    f"'{key}' is {value:g} seconds ({value / 3600:.1f} hours): seconds, not "
                    f"milliseconds? (other clients count milliseconds; write {value / 1000:g} "
                    "for that)",
                    f"codebot's timeouts are in seconds: fix '{key}'",
                    "milliseconds",
                )
            )
        return float(value)

    enabled = data.get("enabled", True)
    if not isinstance(enabled, bool):
        raise _EntryError(f"'enabled' must be true or false, found {json.dumps(enabled)}")
    protocol = data.get("protocol", "auto")
    if protocol not in PROTOCOLS:
        raise _EntryError(
            f"unknown protocol {json.dumps(protocol)} (key 'protocol')",
            hint='Use "auto" (default), "legacy" (initialize handshake) or "2026-07-28".',
        )
    log_level = data.get("log_level")
    if log_level is not None and log_level not in LOG_LEVELS:
        raise _EntryError(
            f"unknown log_level {json.dumps(log_level)} (key 'log_level')",
            hint=f"Use one of {', '.join(LOG_LEVELS)}.",
        )
    cwd_text = text("cwd")
    cwd = base_dir if cwd_text is None else (base_dir / Path(cwd_text).expanduser())
    url = text("url")
    if url is not None and not re.match(r"^https?://[^/\s]+", url):
        written = str(
            data["url"]
        )  # as the user wrote it: never the expansion (values may be secret)
        raise _EntryError(
            f"'url' must be an http:// or https:// URL, found {json.dumps(_strip_query(written))}",
            hint='Write it as "url": "https://host/mcp" (or "${VAR:-https://host}/mcp").',
        )
    args = str_list("args") or ()
    oauth = OAuthSettings(enabled=False) if transport == "stdio" else OAuthSettings()
    if "oauth" in data:
        if transport != "http":
            raise _EntryError(
                "'oauth' is only for http servers",
                hint="Remove 'oauth' from this stdio entry (pass credentials in 'env').",
            )
        try:
            oauth, oauth_warnings = parse_oauth(data["oauth"], lambda v, k: _expand(v, k, environ))
        except OAuthSettingsError as exc:
            raise _EntryError(exc.message, hint=exc.hint) from None
        warnings.extend(
            EntryWarning(
                f"oauth.{k}", f"unknown key 'oauth.{k}' is ignored", "Rename or remove the key"
            )
            for k in oauth_warnings
        )
    provenance = None
    if PROVENANCE_KEY in data:
        try:
            provenance = parse_provenance(data[PROVENANCE_KEY])
        except ProvenanceError as exc:  # the entry still runs; only update checks need it
            warnings.append(
                EntryWarning(
                    PROVENANCE_KEY,
                    f"{exc.message}: it is ignored (doctor cannot check for updates)",
                    exc.hint,
                    "provenance",
                )
            )
    sandbox = _sandbox(data, transport, source, base_dir)
    return ServerConfig(
        name=name,
        source=source,
        type=transport,
        command=text("command"),
        args=tuple(_expand(a, f"args[{i}]", environ) for i, a in enumerate(args)),
        env=str_map("env"),
        cwd=cwd,
        url=url,
        headers=str_map("headers"),
        timeout=seconds("timeout", DEFAULT_HANDSHAKE_TIMEOUT) or DEFAULT_HANDSHAKE_TIMEOUT,
        tool_timeout=seconds("tool_timeout", None),
        enabled=enabled,
        include_tools=str_list("include_tools"),
        exclude_tools=str_list("exclude_tools") or (),
        protocol=protocol,
        log_level=log_level,
        oauth=oauth,
        provenance=provenance,
        sandbox=sandbox,
        warnings=tuple(warnings),
        raw=data,
    )


def _sandbox(
    data: Mapping[str, Any], transport: Transport, source: Path, base_dir: Path
) -> ServerSandbox | None:
    if "sandbox" not in data:
        return None
    if transport != "stdio":
        raise _EntryError(
            "'sandbox' is only for stdio servers (an http server runs elsewhere)",
            hint="Remove 'sandbox' from this http entry.",
        )
    try:
        return parse_server_sandbox(data["sandbox"], source, base_dir)
    except EntrySandboxError as exc:
        raise _EntryError(exc.message, hint=exc.hint) from None


def _refuse_nul(data: Mapping[str, Any]) -> None:
    """A NUL cannot pass to a program or a header; say where it is instead of crashing."""
    for key in ("command", "cwd", "url"):
        if isinstance(data.get(key), str) and "\0" in data[key]:
            raise _EntryError(f"'{key}' contains a NUL character", hint=f"Remove it from '{key}'.")
    args: Any = data.get("args")
    if is_str_list(args):
        for i, arg in enumerate(args):
            if "\0" in arg:
                raise _EntryError(f"'args[{i}]' contains a NUL character", hint="Remove it.")
    for section in ("env", "headers"):
        values = data.get(section)
        if isinstance(values, dict):
            for k, v in values.items():
                if "\0" in str(k) or (isinstance(v, str) and "\0" in v):
                    raise _EntryError(
                        f"'{section}.{k}' contains a NUL character", hint="Remove it."
                    )


def _expand(value: str, key: str, environ: Mapping[str, str]) -> str:
    # The trust review and doctor show the variables of core.envexpand.EXPANDED_STRINGS: a
    # string expanded anywhere else would be invisible to both.
    assert is_expanded(key), f"'{key}' is expanded but not in envexpand.EXPANDED_STRINGS"
    try:
        return expand(value, environ)
    except UndefinedVariableError as exc:
        raise _EntryError(
            f"variable ${{{exc.name}}} in '{key}' is not set",
            hint=f"Export {exc.name}, or write ${{{exc.name}:-default}} to give a default "
            "(write $${ for a literal '${').",
        ) from None


def _unknown_key_warning(key: str) -> EntryWarning:
    import difflib  # only for a misspelt key: not on the warm path

    close = difflib.get_close_matches(key, _SERVER_KEYS, n=1)
    suggestion = f" (did you mean '{close[0]}'?)" if close else ""
    return EntryWarning(
        key,
        f"unknown key '{key}' is ignored{suggestion}",
        "Rename or remove the key",
        did_you_mean=close[0] if close else None,
    )


def _strip_query(url: str) -> str:
    return url.split("?", 1)[0]
