"""One MCP server entry: ``ServerConfig``, and validating an entry as written.

The entry's fields are read by their model (``core.config.mcpsection.server_model``) as the
generated table holds it (``core.config.keytable.SERVER_FIELDS``): a plain field is checked by
its JSON type and values (:func:`_field`), the others by small named readers (``command`` or
``url``, ``cwd``, ``oauth``, ``sandbox``...); :data:`_STEPS` says the order.

A bad entry never raises: it becomes a ``ServerConfig`` whose ``error`` says what is wrong,
naming the file, the server and the key, so the other servers still start and ``mcp list`` and
``doctor`` can show it.

Size: one entry's whole grammar, both transports, with its messages and their "did you mean"
hints; each reader is small and named, and a reader apart from its message would be read twice.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from codebot_mcp.core.config.keytable import SERVER_FIELDS, Spec
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


def _values(name: str) -> tuple[Any, ...]:
    """A field's values, as its model lists them (none while the table is written again)."""
    spec = SERVER_FIELDS.get(name)
    return () if spec is None else spec.enum


PROTOCOLS: tuple[str, ...] = _values("protocol")
_SERVER_KEYS: tuple[str, ...] = tuple(SERVER_FIELDS)
"""The keys of an entry, stdio's and http's (unknown ones warn, with a "did you mean")."""
LOG_LEVELS: tuple[str, ...] = _values("log_level")
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


def _parse_server(
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
    read = _Entry(data, _transport(data), environ, source, base_dir, warnings)
    for key, reader in _STEPS:
        read.values[key] = reader(read, SERVER_FIELDS[key])
    return ServerConfig(  # every field but these is read by a step, under its own name
        name=name,
        source=source,
        type=read.transport,
        warnings=tuple(warnings),
        raw=data,
        **read.values,
    )


@dataclass(slots=True)
class _Entry:
    """One entry while it is read: what every field's reader needs, and what they read."""

    data: Mapping[str, Any]
    transport: Transport
    environ: Mapping[str, str]
    source: Path
    base_dir: Path
    warnings: list[EntryWarning]
    values: dict[str, Any] = field(default_factory=dict[str, Any])

    def expand(self, value: str, key: str) -> str:
        return _expand(value, key, self.environ)


def _transport(data: Mapping[str, Any]) -> Transport:
    """``type`` (other clients' spellings of http read as http; without it, an entry with
    ``url`` and no ``command`` is http), and the one of ``command`` and ``url`` it needs."""
    kind = data.get("type")
    if kind is None:
        kind = "http" if "url" in data and "command" not in data else "stdio"
    if kind not in _values("type"):
        sse = isinstance(kind, str) and kind.lower() == "sse"
        raise _EntryError(
            f"unknown type {json.dumps(kind)} (key 'type')"
            + (": codebot speaks Streamable HTTP, not the older SSE transport" if sse else ""),
            hint='Write "type": "http"; most servers serve Streamable HTTP at /mcp beside /sse.'
            if sse
            else 'Use "stdio" (a local command) or "http" (a Streamable HTTP URL).',
        )
    transport: Transport = "stdio" if kind == "stdio" else "http"
    has_command, has_url = "command" in data, "url" in data
    if has_command and has_url:
        raise _EntryError(
            "has both 'command' and 'url'",
            hint="Keep 'command' for a local stdio server or 'url' for an HTTP server.",
        )
    if transport == "stdio" and not has_command:
        raise _EntryError(
            "missing 'command' (a stdio server needs the program to run)",
            hint=_misspelt(data, ("command", "url") if "type" not in data else ("command",))
            or 'Add "command": "npx" (and "args"), or set "type": "http" with a "url".',
        )
    if transport == "http" and not has_url:
        raise _EntryError(
            "missing 'url' (an http server needs its endpoint)",
            hint=_misspelt(data, ("url",)) or 'Add "url": "https://host/mcp".',
        )
    return transport


def _misspelt(data: Mapping[str, Any], wanted: tuple[str, ...]) -> str | None:
    """A hint when an unknown key of the entry is a misspelling of a missing one
    (``"comand"``, ``"ulr"``), or None."""
    import difflib  # only for a broken entry: not on the warm path

    unknown = {k.lower(): k for k in data if isinstance(k, str) and k not in _SERVER_KEYS}
    for key in wanted:
        close = difflib.get_close_matches(key, list(unknown), n=1)
        if close:
            found = unknown[close[0]]
            return f"Did you mean '{key}'? Rename '{found}' to '{key}'."
    return None


_ENUM_HINTS = {"protocol": 'Use "auto" (default), "legacy" (initialize handshake) or "2026-07-28".'}
"""How to fix a value a field does not take, where the list of its values is not enough."""


def _field(entry: _Entry, spec: Spec) -> Any:
    """A plain field, checked by its JSON type and values in the table, with ``${VAR}``
    expanded in its strings; left out, its default. Returns it as ``ServerConfig`` holds it."""
    key = spec.name
    value: Any = entry.data.get(key)
    if key not in entry.data or (value is None and _null_is_left_out(spec)):
        default = spec.default
        return tuple(default) if isinstance(default, list) else copy.copy(default)
    if spec.enum:
        if value not in spec.enum:
            raise _EntryError(
                f"unknown {key} {json.dumps(value)} (key '{key}')",
                hint=_ENUM_HINTS.get(key, f"Use one of {', '.join(spec.enum)}."),
            )
        return value
    kind = spec.types[0]
    if kind == "boolean":
        if not isinstance(value, bool):
            raise _EntryError(f"'{key}' must be true or false, found {json.dumps(value)}")
        return value
    if kind == "string":
        if not isinstance(value, str) or not value:
            raise _EntryError(f"'{key}' must be a non-empty string, found {json_type(value)}")
        return entry.expand(value, key)
    if kind == "array":
        if not is_str_list(value):
            raise _EntryError(
                f"'{key}' must be a list of strings, found {json_type(value)}",
                hint=f'Write it as "{key}": ["a", "b"].',
            )
        return tuple(value)
    if kind == "number":
        return _seconds(entry, spec, value)
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _EntryError(
            f"'{key}' must be an object of string values, found {json_type(value)}",
            hint=f'Write it as "{key}": {{"NAME": "value"}} (numbers must be quoted).',
        )
    pairs: dict[str, str] = value
    return {k: entry.expand(v, f"{key}.{k}") for k, v in pairs.items()}


def _null_is_left_out(spec: Spec) -> bool:
    """``null`` reads as left out for a string, a list, a number, and a choice without a
    default; an object, a boolean, or a choice with a default refuse it."""
    if spec.enum:
        return spec.default is None
    return spec.types[0] in ("string", "array", "number")


def _seconds(entry: _Entry, spec: Spec, value: Any) -> float:
    """A timeout: a positive number of seconds (one over 1000 warns: milliseconds meant?)."""
    key, least = spec.name, spec.exclusive_minimum or 0
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= least:
        raise _EntryError(
            f"'{key}' must be a positive number of seconds, found {json.dumps(value)}",
            hint=f'Write it as "{key}": 30.',
        )
    if value > MILLISECONDS_SUSPECT:
        entry.warnings.append(
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


def _cwd(entry: _Entry, spec: Spec) -> Path:
    """Relative to the directory of the file that defined the entry."""
    written = _field(entry, spec)
    return entry.base_dir if written is None else (entry.base_dir / Path(written).expanduser())


def _url(entry: _Entry, spec: Spec) -> str | None:
    url: str | None = _field(entry, spec)
    if url is not None and not re.match(r"^https?://[^/\s]+", url):
        written = str(entry.data["url"])  # as the user wrote it: never the expansion (secrets)
        raise _EntryError(
            f"'url' must be an http:// or https:// URL, found {json.dumps(_strip_query(written))}",
            hint='Write it as "url": "https://host/mcp" (or "${VAR:-https://host}/mcp").',
        )
    return url


def _expanded_args(entry: _Entry, spec: Spec) -> tuple[str, ...]:
    """``args`` (checked earlier) with ``${VAR}`` expanded in each."""
    args: tuple[str, ...] = entry.values["args"] or ()
    return tuple(entry.expand(a, f"args[{i}]") for i, a in enumerate(args))


def _oauth(entry: _Entry, spec: Spec) -> OAuthSettings:
    """How to authorize to an http server (on by default; a stdio server has none)."""
    if spec.name not in entry.data:
        return OAuthSettings(enabled=entry.transport in spec.transports)
    if entry.transport not in spec.transports:
        raise _EntryError(
            "'oauth' is only for http servers",
            hint="Remove 'oauth' from this stdio entry (pass credentials in 'env').",
        )
    try:
        oauth, unknown = parse_oauth(entry.data[spec.name], entry.expand)
    except OAuthSettingsError as exc:
        raise _EntryError(exc.message, hint=exc.hint) from None
    entry.warnings.extend(
        EntryWarning(
            f"oauth.{k}", f"unknown key 'oauth.{k}' is ignored", "Rename or remove the key"
        )
        for k in unknown
    )
    return oauth


def _provenance(entry: _Entry, spec: Spec) -> Provenance | None:
    """One codebot cannot read only warns: the entry still runs (update checks need it)."""
    if spec.name not in entry.data:
        return None
    try:
        return parse_provenance(entry.data[spec.name])
    except ProvenanceError as exc:
        entry.warnings.append(
            EntryWarning(
                spec.name,
                f"{exc.message}: it is ignored (doctor cannot check for updates)",
                exc.hint,
                "provenance",
            )
        )
        return None


def _sandbox(entry: _Entry, spec: Spec) -> ServerSandbox | None:
    if spec.name not in entry.data:
        return None
    if entry.transport not in spec.transports:
        raise _EntryError(
            "'sandbox' is only for stdio servers (an http server runs elsewhere)",
            hint="Remove 'sandbox' from this http entry.",
        )
    try:
        return parse_server_sandbox(entry.data[spec.name], entry.source, entry.base_dir)
    except EntrySandboxError as exc:
        raise _EntryError(exc.message, hint=exc.hint) from None


_STEPS: tuple[tuple[str, Callable[[_Entry, Spec], Any]], ...] = (
    ("enabled", _field),
    ("protocol", _field),
    ("log_level", _field),
    ("cwd", _cwd),
    ("url", _url),
    ("args", _field),
    ("oauth", _oauth),
    ("provenance", _provenance),
    ("sandbox", _sandbox),
    ("command", _field),
    ("args", _expanded_args),
    ("env", _field),
    ("headers", _field),
    ("timeout", _field),
    ("tool_timeout", _field),
    ("include_tools", _field),
    ("exclude_tools", _field),
)
"""How each field of an entry is read, in the order its errors are found (an entry with
several reports the first): the table's plain fields by :func:`_field`, the others by their
own reader. ``type`` is read first (:func:`_transport`); ``description`` is not read."""


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
