"""Managed settings: the policy an administrator sets, read first, winning over every layer.

The file is ``/etc/codebot/managed-settings.json`` on Linux,
``/Library/Application Support/codebot/managed-settings.json`` on macOS and
``%ProgramData%\\codebot\\managed-settings.json`` on Windows; ``CODEBOT_MANAGED_SETTINGS``
names another (tests, or a fleet that keeps it elsewhere). No file: no policy. A file that is
there but cannot be read, is not JSON, or holds a key or value codebot does not know is a
:class:`SettingsError` naming it (exit 3): a policy is never silently ignored.

What it may set (``docs/managed-settings.md``):

- ``allowed_mcp_servers`` / ``denied_mcp_servers``: lists of entries, each exactly one of
  ``{"name": "github"}``, ``{"command": ["npx", "-y", "pkg"]}`` (the stdio command and its
  arguments, exactly) or ``{"url": "https://*.corp.example/*"}`` (``*`` matches any run of
  characters; scheme and host compare without case). Denied wins over allowed; an allowlist
  present (even empty) admits only what it matches: a stdio server must match a ``command``
  entry when the list has any, else a ``name`` entry; an HTTP server a ``url`` entry when the
  list has any, else a ``name`` entry (Claude Code's ``allowedMcpServers`` rules).
- ``require_mcp_lock``: every server must be pinned in ``.codebot/mcp-lock.json``
  (``mcpbridge.tools.tool_pins`` holds back one that is not).
- ``locked``: keys (``"base_url"``, ``"permissions.allow"``, ``"sandbox.network"``...) the
  user's and the project's files may not set: they keep the managed value, or the default.
- any key of the settings table except the server tables, ``hooks`` and ``checkpoints``:
  the value wins over the user's and the project's and is locked with it. ``permissions`` is
  the one exception: the managed rules come first and the files' rules still add to them
  (a managed ``deny`` wins anyway), unless ``locked`` names ``permissions`` or one list.

:func:`server_verdict` is the one question every path asks about a server (settings, ``mcp
add``/``install``/``import``); :func:`enforce` applies the whole policy to settings
(``core.config.effective`` calls it after trust, so no path that runs anything skips it).

Size: one idea, the managed file: its policy as data, how it is read and checked, how it is
applied, and the model of the keys only it may set (:func:`section_model`); splitting them
would put the policy's keys and their checks in two places.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codebot_mcp.core.config import keys
from codebot_mcp.core.config.fieldcheck import fields
from codebot_mcp.core.config.sandboxing import SANDBOX_KEYS
from codebot_mcp.core.config.sections import NOT_SET, Section, register, row
from codebot_mcp.core.errors import SettingsError
from codebot_mcp.core.jsonutil import is_str_list, json_type

if TYPE_CHECKING:
    from pydantic import BaseModel

    from codebot_mcp.core.config.servers import ServerConfig
    from codebot_mcp.core.config.settings import Settings

__all__ = [
    "MANAGED_ENV",
    "ManagedPolicy",
    "PolicyError",
    "ServerRule",
    "enforce",
    "load",
    "managed_path",
    "require_allowed",
    "server_verdict",
]

MANAGED_ENV = "CODEBOT_MANAGED_SETTINGS"
MANAGED_FILE = "managed-settings.json"
SERVER_LISTS = ("allowed_mcp_servers", "denied_mcp_servers")
MANAGED_ONLY = (*SERVER_LISTS, "require_mcp_lock", "locked")
"""Keys only the managed file may set (in a user or project file they warn and do nothing)."""
NOT_MANAGED = ("mcp_servers", "mcpServers", "hooks", "checkpoints")
"""Settings keys the managed file cannot set (yet): it filters servers, it does not add them."""
RULE_KINDS: tuple[str, ...] = fields("allowed_mcp_servers[]")
"""How a server rule names servers (``name``, ``command``, ``url``), as its models declare."""


def managed_path() -> Path:
    """Where the managed settings file is: ``$CODEBOT_MANAGED_SETTINGS``, else the system's
    configuration directory."""
    env = os.environ.get(MANAGED_ENV)
    if env:
        return Path(env).expanduser()
    if sys.platform == "darwin":
        return Path("/Library/Application Support/codebot") / MANAGED_FILE
    if sys.platform == "win32":
        base = os.environ.get("ProgramData", r"C:\ProgramData")
        return Path(base) / "codebot" / MANAGED_FILE
    return Path("/etc/codebot") / MANAGED_FILE


@dataclass(frozen=True, slots=True)
class ServerRule:
    """One entry of ``allowed_mcp_servers`` or ``denied_mcp_servers``."""

    kind: str
    """``name``, ``command`` or ``url``."""
    value: str | tuple[str, ...]
    _pattern: re.Pattern[str] | None = field(default=None, compare=False, repr=False)

    def matches(self, config: ServerConfig) -> bool:
        """True when the server entry is the one this rule names."""
        if self.kind == "name":
            return config.name == self.value
        if self.kind == "command":
            if config.type != "stdio" or config.command is None:
                return False
            return (config.command, *config.args) == self.value
        if config.type != "http" or not config.url or self._pattern is None:
            return False
        return self._pattern.fullmatch(_normal_url(config.url)) is not None

    def describe(self) -> str:
        """The entry as the file writes it (``{"name": "x"}``)."""
        value = list(self.value) if isinstance(self.value, tuple) else self.value
        return json.dumps({self.kind: value}, ensure_ascii=False)


def _normal_url(url: str) -> str:
    """Scheme and host in lower case (they compare without case); the rest as written."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    host, slash, path = rest.partition("/")
    return f"{scheme.lower()}://{host.lower()}{slash}{path}"


def _url_pattern(pattern: str) -> re.Pattern[str]:
    normal = _normal_url(pattern)
    return re.compile(".*".join(re.escape(part) for part in normal.split("*")), re.DOTALL)


@dataclass(frozen=True, slots=True)
class ManagedPolicy:
    """What the managed settings file says (empty when there is none)."""

    file: Path | None = None
    allowed: tuple[ServerRule, ...] | None = None
    """None: no allowlist (every server not denied is allowed)."""
    denied: tuple[ServerRule, ...] = ()
    require_lock: bool = False
    locked: frozenset[str] = frozenset()
    """Every key the user's and the project's files may not set (those the file sets, and
    those ``locked`` names), as ``base_url`` or ``permissions.allow`` / ``sandbox.mode``."""
    values: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """The ``Settings`` attributes the file sets, parsed (``registry_url``, ``model``...)."""
    permissions: Mapping[str, tuple[str, ...]] = field(default_factory=dict[str, tuple[str, ...]])
    """``permissions`` lists the file sets."""
    parts: Mapping[str, Mapping[str, Any]] = field(default_factory=dict[str, Mapping[str, Any]])
    """The keys a feature combines itself (``sandbox``, ``core.config.combining``), by name:
    the parts the file sets, parsed."""

    @property
    def active(self) -> bool:
        """True when a managed file was found."""
        return self.file is not None


def _parse_rules(path: Path, key: str, value: Any) -> tuple[ServerRule, ...]:
    hint = (
        f'Write it as "{key}": [{{"name": "github"}}, {{"command": ["npx", "-y", "pkg"]}}, '
        '{"url": "https://*.corp.example/*"}].'
    )
    if not isinstance(value, list):
        raise SettingsError(
            f"'{key}' in {path} must be a list of server entries, found {json_type(value)}",
            hint=hint,
        )
    rules: list[ServerRule] = []
    for index, item in enumerate(value):
        where = f"'{key}[{index}]' in {path}"
        if not isinstance(item, dict) or len(item) != 1 or next(iter(item)) not in RULE_KINDS:
            raise SettingsError(
                f"{where} must be an object with exactly one of 'name', 'command' or 'url'",
                hint=hint,
            )
        kind, raw = next(iter(item.items()))
        if kind == "command":
            if not is_str_list(raw) or not raw:
                raise SettingsError(
                    f"{where}: 'command' must be a non-empty list of strings (the command "
                    "and its arguments, matched exactly)",
                    hint=hint,
                )
            rules.append(ServerRule("command", tuple(raw)))
            continue
        if not isinstance(raw, str) or not raw:
            raise SettingsError(f"{where}: '{kind}' must be a non-empty string", hint=hint)
        if kind == "url":
            if not re.match(r"^(https?|\*)://", raw, re.IGNORECASE):
                raise SettingsError(
                    f"{where}: 'url' must start with https://, http:// or *://", hint=hint
                )
            rules.append(ServerRule("url", raw, _url_pattern(raw)))
        else:
            rules.append(ServerRule("name", raw))
    return tuple(rules)


_LOCKABLE_SECTIONS = {
    "permissions": keys.PERMISSION_KEYS,
    "sandbox": SANDBOX_KEYS,  # both as their models declare them
}


def _lockable() -> list[str]:
    out = [k.name for k in keys.KEYS if k.name not in (*NOT_MANAGED, *MANAGED_ONLY, "$schema")]
    for section, names in _LOCKABLE_SECTIONS.items():
        out += [f"{section}.{n}" for n in names]
    return out


def _parse_locked(path: Path, value: Any) -> frozenset[str]:
    known = _lockable()
    if not is_str_list(value):
        raise SettingsError(
            f"'locked' in {path} must be a list of settings keys, found {json_type(value)}",
            hint='Write it as "locked": ["base_url", "permissions.allow", "sandbox"].',
        )
    out: set[str] = set()
    for name in value:
        if name not in known:
            import difflib

            close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
            maybe = f" (did you mean '{close[0]}'?)" if close else ""
            raise SettingsError(
                f"'locked' in {path} names '{name}', which is not a key codebot can lock{maybe}",
                hint=f"Lockable keys: {', '.join(known)}.",
            )
        out.add(name)
        if name in _LOCKABLE_SECTIONS:
            out.update(f"{name}.{n}" for n in _LOCKABLE_SECTIONS[name])
    return frozenset(out)


def parse(path: Path, data: Mapping[str, Any]) -> ManagedPolicy:
    """The policy of one managed file's JSON object.

    Raises:
        SettingsError: a key is unknown or cannot be set here, or a value is wrong (naming
            the file and the key).
    """
    from codebot_mcp.core.config.combining import combiners
    from codebot_mcp.core.config.settings import parse_registry_url

    allowed_keys = (*MANAGED_ONLY, *(k.name for k in keys.KEYS if k.name not in NOT_MANAGED))
    for key in data:
        if key in NOT_MANAGED:
            raise SettingsError(
                f"'{key}' cannot be set in the managed settings file {path}",
                hint="The managed file filters servers (allowed_mcp_servers, "
                "denied_mcp_servers) and locks settings; define servers in settings.json.",
            )
        if key not in allowed_keys:
            import difflib

            close = difflib.get_close_matches(key, allowed_keys, n=1, cutoff=0.6)
            maybe = f" (did you mean '{close[0]}'?)" if close else ""
            raise SettingsError(
                f"unknown key '{key}' in the managed settings file {path}{maybe}",
                hint="A policy must not be half-read: fix or remove the key "
                "(docs/managed-settings.md lists what the file may set).",
            )
    for section, names in _LOCKABLE_SECTIONS.items():
        value = data.get(section)
        if isinstance(value, dict):
            for name in value:
                if name not in names:
                    raise SettingsError(
                        f"unknown key '{section}.{name}' in the managed settings file {path}",
                        hint=f"'{section}' may hold {', '.join(names)}.",
                    )
    require = data.get("require_mcp_lock", False)
    if not isinstance(require, bool):
        raise SettingsError(
            f"'require_mcp_lock' in {path} must be true or false, found {json.dumps(require)}",
            hint='Write it as "require_mcp_lock": true.',
        )
    allowed = (
        _parse_rules(path, "allowed_mcp_servers", data["allowed_mcp_servers"])
        if "allowed_mcp_servers" in data
        else None
    )
    denied = _parse_rules(path, "denied_mcp_servers", data.get("denied_mcp_servers", []))
    locked = set(_parse_locked(path, data.get("locked", [])))
    values = keys.parse_scalars(path, data)
    if "registry_url" in data:
        values["registry_url"] = parse_registry_url(path, data["registry_url"])
    locked.update(
        k.name
        for k in keys.KEYS
        if k.name in data and k.name not in (*_LOCKABLE_SECTIONS, *MANAGED_ONLY, "$schema")
    )
    permissions: dict[str, tuple[str, ...]] = {}
    if "permissions" in data:
        section = data["permissions"]
        if not isinstance(section, dict):
            raise SettingsError(
                f"'permissions' in {path} must be an object with 'allow', 'ask' and 'deny' lists",
                hint='Write it as "permissions": {"deny": ["bash"]}.',
            )
        for name, rules in section.items():
            if not is_str_list(rules):
                raise SettingsError(
                    f"'permissions.{name}' in {path} must be a list of tool-name patterns",
                    hint=f'Write it as "{name}": ["mcp__server__*", "bash"].',
                )
            permissions[str(name)] = tuple(rules)
    parts = {c.name: c.parse(path, data[c.name]) for c in combiners() if c.name in data}
    locked.update(f"{key}.{name}" for key, values in parts.items() for name in values)
    return ManagedPolicy(
        file=path,
        allowed=allowed,
        denied=denied,
        require_lock=require,
        locked=frozenset(locked),
        values=values,
        permissions=permissions,
        parts=parts,
    )


def load(path: Path | None = None) -> ManagedPolicy:
    """The managed policy (an empty one when there is no managed file).

    Raises:
        SettingsError: the file exists but cannot be read or is wrong (naming it).
    """
    from codebot_mcp.core.config.settings import read_json

    path = path or managed_path()
    try:
        if not path.exists():
            return ManagedPolicy()
    except OSError:  # boundary: a path we may not even stat is read below, and fails there
        pass
    try:
        data = read_json(path)
    except SettingsError as exc:
        raise SettingsError(
            f"the managed settings file is broken: {exc.message}",
            hint=f"Ask whoever manages this machine to fix {path}; codebot does not run "
            "without the policy it holds.",
        ) from None
    return parse(path, data)


def server_verdict(policy: ManagedPolicy, config: ServerConfig) -> str | None:
    """Why the policy removes this server, or None when it may run.

    The one question about a server every path asks (settings, ``mcp add``, ``mcp install``,
    ``mcp import``; plugins and ACP when they come).
    """
    if not policy.active:
        return None
    for rule in policy.denied:
        if rule.matches(config):
            return f"denied by denied_mcp_servers entry {rule.describe()} in {policy.file}"
    if policy.allowed is None:
        return None
    kind = "command" if config.type == "stdio" else "url"
    by_kind = [r for r in policy.allowed if r.kind == kind]
    candidates = by_kind or [r for r in policy.allowed if r.kind == "name"]
    if any(r.matches(config) for r in candidates):
        return None
    what = f"its {kind}" if by_kind else "its name"
    return f"not in allowed_mcp_servers of {policy.file} (no entry matches {what})"


class PolicyError(SettingsError):
    """The managed settings do not allow this server (exit 3)."""


def require_allowed(policy: ManagedPolicy, config: ServerConfig) -> None:
    """Refuse to add a server the policy removes (``mcp add``, ``install``, ``import``).

    Raises:
        PolicyError: naming the server, the rule and the managed file.
    """
    reason = server_verdict(policy, config)
    if reason is not None:
        raise PolicyError(
            f"server '{config.name}' is not allowed by the managed settings: {reason}",
            hint=f"{policy.file} is set by whoever manages this machine; ask them to allow "
            "the server, or choose another.",
        )


def enforce(settings: Settings, policy: ManagedPolicy) -> tuple[Settings, list[str]]:
    """The settings with the policy applied: the servers it removes are left out (and kept,
    with the reason, in ``Settings.policy_removed``), the keys it sets or locks take its value
    or the default. Returns warnings for values of the user's or project's files it overrides.
    """
    if not policy.active:
        return settings, []
    from codebot_mcp.core.config.combining import combiners
    from codebot_mcp.core.config.settings import PermissionRules, value_of, with_values

    removed: dict[str, str] = {}
    kept: dict[str, ServerConfig] = {}
    for name, config in settings.servers.items():
        reason = server_verdict(policy, config)
        if reason is None:
            kept[name] = config
        else:
            removed[name] = reason
    warnings: list[str] = []
    changes: dict[str, Any] = {}
    for key in keys.KEYS:
        attribute = key.attribute
        if attribute is None or key.name not in policy.locked:
            continue
        value = policy.values.get(attribute, key.default)
        if value_of(settings, attribute) not in (value, key.default):
            warnings.append(_overridden(key.name, policy))
        changes[attribute] = value
    rules: dict[str, tuple[str, ...]] = {}
    for name in keys.PERMISSION_KEYS:
        mine = policy.permissions.get(name, ())
        theirs: tuple[str, ...] = getattr(settings.permissions, name)
        if f"permissions.{name}" in policy.locked:
            if theirs:
                warnings.append(_overridden(f"permissions.{name}", policy))
            theirs = ()
        rules[name] = mine + tuple(r for r in theirs if r not in mine)
    for combiner in combiners():  # the parts of a combined key it sets or locks (sandbox)
        changes[combiner.name] = combiner.tighten(
            settings.sections.get(combiner.name),
            policy.parts.get(combiner.name, {}),
            policy.locked,
            lambda key: warnings.append(_overridden(key, policy)),
        )
    enforced = replace(
        with_values(settings, changes),
        servers=kept,
        permissions=PermissionRules(**rules, origins=settings.permissions.origins),
        policy_removed=removed,
        managed_file=policy.file,
        managed_locked=policy.locked,
        require_mcp_lock=policy.require_lock,
    )
    return enforced, warnings


def _overridden(key: str, policy: ManagedPolicy) -> str:
    return (
        f"'{key}' is locked by the managed settings file {policy.file}: the value your or the "
        "project's settings give it is ignored"
    )


@cache
def section_model() -> type[BaseModel]:
    """The keys only the managed file may set, as a pydantic model (built on demand: see
    :mod:`.sections`); :func:`parse` checks them at run time."""
    from typing import Annotated

    from pydantic import BaseModel, ConfigDict, Field

    class ByName(BaseModel):
        model_config = ConfigDict(extra="forbid")
        name: Annotated[str, Field(min_length=1)]

    class ByCommand(BaseModel):
        model_config = ConfigDict(extra="forbid")
        command: Annotated[list[str], Field(min_length=1)]

    class ByUrl(BaseModel):
        model_config = ConfigDict(extra="forbid")
        url: Annotated[str, Field(pattern="^(https?|\\*)://")]

    rule = Annotated[
        ByName | ByCommand | ByUrl,
        Field(
            description="One server: by name, by exact command and arguments, or by URL pattern."
        ),
    ]

    class ManagedSection(BaseModel):
        model_config = ConfigDict(extra="forbid")
        allowed_mcp_servers: list[rule] = Field(
            default=NOT_SET,
            description="Managed settings only: the servers that may run, by name, command or "
            'URL pattern (entries {"name": ...}, {"command": [...]}, '
            '{"url": "https://*.corp.example/*"}).',
            examples=[[{"name": "docs"}, {"url": "https://*.corp.example/*"}]],
        )
        denied_mcp_servers: list[rule] = Field(
            default_factory=list,
            description="Managed settings only: servers that never run (entries as in "
            "allowed_mcp_servers; denied wins over allowed).",
            examples=[[{"command": ["npx", "-y", "bad-server"]}]],
        )
        require_mcp_lock: bool = Field(
            default=False,
            description="Managed settings only: every server must be pinned in "
            ".codebot/mcp-lock.json (one that is not is held back).",
            examples=[True],
        )
        locked: list[str] = Field(
            default_factory=list[str],
            description="Managed settings only: keys the user's and the project's files may not "
            'set (e.g. "base_url", "permissions.allow", "sandbox.network").',
            examples=[["base_url", "permissions.allow"]],
        )

    return ManagedSection


register(
    Section(
        "managed",
        tuple(row(name, trust="free", managed_only=True) for name in MANAGED_ONLY),
        section_model,
        order=90,
    )
)
