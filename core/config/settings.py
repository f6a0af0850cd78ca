"""Settings: load, merge, expand and validate ``settings.json`` files.

Two files are read: the global ``$CODEBOT_HOME/settings.json`` and the project's
``.codebot/settings.json`` (the nearest one from the working directory upward). Server
entries merge by name: a project entry replaces the global entry of the same name entirely.

A file that cannot be read or parsed is a :class:`SettingsError` (exit 3). A bad *server
entry* fails only that server: it is kept as a :class:`ServerConfig` whose ``error`` says
what is wrong, so the others still start and ``mcp list``/``doctor`` can show it.

Size: one idea, reading the settings: discovery (where the project's files are, and where
the search stops), the merge of the two files with what waits for trust (the features' keys
through their rows, held in ``Settings.sections``), and the parsers of the keys the table in
:mod:`.keys` hands to this module (``registry_url``, ``permissions``).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from codebot_mcp.core.config import claudefiles, combining, keys, paths
from codebot_mcp.core.config.discovery import (
    project_sources,
)
from codebot_mcp.core.config.hooks import parse_both
from codebot_mcp.core.config.keys import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_MAX_TURNS,
    DEFAULT_REGISTRY_URL,
    DEFAULT_SUBAGENT_DEPTH,
    DEFAULT_TOOL_RESULT_MAX_TOKENS,
    DEFAULT_USAGE_LINE_AFTER,
    DEFAULT_WARM_IDLE_TIMEOUT,
    SettingWarning,
    unknown_keys,
)
from codebot_mcp.core.config.servers import EntryWarning, ServerConfig, parse_server
from codebot_mcp.core.errors import SettingsError
from codebot_mcp.core.jsonutil import is_str_list, json_type

PYTHON_VARIABLE = "CODEBOT_PYTHON"
"""``${CODEBOT_PYTHON}`` is the interpreter codebot runs on (unless set): a Python server that
needs codebot's own packages (``mcp``) runs wherever codebot is installed (a venv, pipx, uv)."""
__all__ = [
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MAX_TURNS",
    "DEFAULT_REGISTRY_URL",
    "DEFAULT_SUBAGENT_DEPTH",
    "DEFAULT_TOOL_RESULT_MAX_TOKENS",
    "DEFAULT_USAGE_LINE_AFTER",
    "DEFAULT_WARM_IDLE_TIMEOUT",
    "PermissionRules",
    "Settings",
    "load_unfiltered",
    "project_sources",
    "read_json",
    "value_of",
    "with_values",
]
T = TypeVar("T")
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")


@dataclass(frozen=True, slots=True)
class PermissionRules:
    """Glob patterns over model-visible tool names. Deny wins over ask, ask over allow."""

    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    origins: Mapping[str, str] = field(default_factory=dict[str, str], compare=False)
    """Rules read from Claude Code's files: codebot's rule → ``Bash(rm:*) in
    .claude/settings.json`` (shown with a decision; :mod:`core.config.claudefiles`)."""


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything read from the settings files, merged."""

    servers: Mapping[str, ServerConfig] = field(default_factory=dict[str, ServerConfig])
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    api: str | None = None
    """The model API's wire format, "chat_completions" or "responses"; None: chosen by
    endpoint and model (``core.model.config.default_api``)."""
    reasoning_effort: str | None = None
    """"low", "medium" or "high" for a reasoning model; None: the model's default."""
    max_turns: int = DEFAULT_MAX_TURNS
    tool_result_max_tokens: int = DEFAULT_TOOL_RESULT_MAX_TOKENS
    max_tokens: int = DEFAULT_MAX_TOKENS
    """Output cap per model turn, sent as ``max_tokens``."""
    model_retries: int | None = None
    """Retries of a failed model request; None: 2 for remote APIs, 0 for loopback ones."""
    context_window: int | None = None
    """The model's context window in tokens; None: from the table of known models, or 128k."""
    tool_search: str | bool = "auto"
    """Defer MCP tool schemas behind ``search_tools``: "auto" (past 10% of the window)."""
    usage_line_after: int = DEFAULT_USAGE_LINE_AFTER
    """Print a usage line after each REPL answer once the session passed this many tokens."""
    warm_idle_timeout: float = DEFAULT_WARM_IDLE_TIMEOUT
    """Seconds the warm holder of ``codebot mcp warm`` waits for a request before it exits."""
    registry_url: tuple[str, ...] = (DEFAULT_REGISTRY_URL,)
    """The MCP Registries ``mcp search``/``mcp install`` use, in order (``registry_url``: one
    URL or a list). A project's value needs trust: it decides what ``install`` writes."""
    permissions: PermissionRules = field(default_factory=PermissionRules)
    roots: tuple[Path, ...] = ()
    """Directories offered to servers (``roots/list``) besides the project root."""
    subagent_depth: int = DEFAULT_SUBAGENT_DEPTH
    """How deep ``task`` may nest (0: no ``task`` tool). A project file's needs trust (a
    deeper nesting multiplies what runs)."""
    model_aliases: Mapping[str, str] = field(default_factory=dict[str, str])
    """``model_aliases``: the model for a Claude model name or alias an agent or command file
    names (``core.config.modelnames``); a name not listed means the session's model."""
    project_extensions: bool = True
    """Read agents, commands and skills from the project's ``.codebot/`` and ``.claude/``
    folders (False while the project is not trusted; ``core.config.definitions``)."""
    claude_files: bool = True
    """``claude_files``: read Claude Code's ``.claude`` and ``~/.claude`` files too
    (:mod:`core.config.claudefiles`)."""
    claude_sources: tuple[Path, ...] = ()
    """Claude Code's settings files that were read (``~/.claude/settings.json``,
    ``.claude/settings.json``, ``.claude/settings.local.json``), below codebot's own."""
    sections: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """The values of the keys the feature packages own, by key (``checkpoints``, ``telemetry``,
    ``images``), parsed and merged through their rows (``core.config.sections``), or combined
    by the feature's combiner (``sandbox``; ``hooks``, from the entries read here:
    ``core.config.combining``); each feature reads its own with its accessor
    (``core.checkpoints.checkpointing.of``, ``core.sandbox.sandboxsettings.of``,
    ``core.hooks.hooksection.of``). A project file's hooks run only once the project is
    trusted (they run commands)."""
    cwd: Path = field(default_factory=Path.cwd)
    """The working directory codebot runs in."""
    project_root: Path | None = None
    """The directory holding ``.codebot/settings.json``, if one was found."""
    global_file: Path | None = None
    project_file: Path | None = None
    project_gated: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """Project settings that take effect only once the project is trusted, as written: every
    key the project file sets except those the key table marks free (``core.config.keys``)."""
    untrusted_fallback: Mapping[str, Any] = field(default_factory=dict[str, Any], repr=False)
    """The values of the gated settings without the project's (see ``core.trust``)."""
    project_sources: tuple[Path, ...] = ()
    """The project files that define servers: ``.codebot/settings.json`` and ``.mcp.json``."""
    shadowed: Mapping[str, ServerConfig] = field(default_factory=dict[str, ServerConfig])
    """Global entries a project entry of the same name replaced: they apply again while the
    project is not trusted (an untrusted entry must not hide yours)."""
    warnings: tuple[SettingWarning, ...] = ()
    """Problems that do not stop anything, each naming its file and key: unknown top-level
    and ``permissions`` keys (with a "did you mean"). Entry warnings live on each server."""
    policy_removed: Mapping[str, str] = field(default_factory=dict[str, str])
    """Servers the managed settings removed, with the reason (``core.config.managed``)."""
    managed_file: Path | None = None
    """The managed settings file in force, if any."""
    managed_locked: frozenset[str] = frozenset()
    """Keys the managed file sets or locks (``base_url``, ``permissions.allow``...)."""
    require_mcp_lock: bool = False
    """The managed file requires every server to be pinned in ``.codebot/mcp-lock.json``."""

    def section(self, name: str, kind: type[T]) -> T:
        """A feature's section by its key (its ``of(settings)`` asks this): the loaded value,
        or ``kind()``, its defaults, where none was loaded (a bare ``Settings()``)."""
        value = self.sections.get(name)
        return value if isinstance(value, kind) else kind()


def _mcp_json_servers(
    path: Path, environ: Mapping[str, str], base_dir: Path
) -> dict[str, ServerConfig]:
    """``.mcp.json`` entries, translated from Claude Code's format and validated."""
    from codebot_mcp.core.config.translate import CLAUDE_CODE, Source, claude_entry

    source = Source(CLAUDE_CODE, path, "project")
    table = _server_entries(path, read_json(path))
    out: dict[str, ServerConfig] = {}
    for name, raw in table.items():
        item = claude_entry(name, raw, source)
        config = parse_server(
            name, item.entry if not item.skipped else raw, path, environ, base_dir
        )
        if item.notes:
            notes = tuple(
                EntryWarning("", note, "Adjust the entry in .mcp.json", "translated")
                for note in item.notes
            )
            config = replace(config, warnings=(*config.warnings, *notes))
        out[name] = config
    return out


def load_unfiltered(
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
    *,
    claude_files: bool | None = None,
) -> Settings:
    """Every setting as the files write them, **before trust**: an untrusted project's
    servers, endpoint, key variable and limits included.

    Do not run anything with these: :func:`core.config.effective.load` returns the settings
    every command uses (trust applied). This is for code that shows the user what trust holds
    back (``codebot trust``, ``mcp get``, doctor's report) or edits the files.

    Args:
        cwd: The working directory (``--cwd``); defaults to the process's.
        environ: Variables for ``${VAR}`` expansion; defaults to ``os.environ``.
        claude_files: The managed settings' ``claude_files``, which wins over the files'
            (``core.config.effective``); None: the files decide.

    Raises:
        SettingsError: a file exists but cannot be read, is not valid JSON, or its top level
            has the wrong shape.
    """
    cwd = (cwd or Path.cwd()).resolve()
    environ = os.environ if environ is None else environ
    if PYTHON_VARIABLE not in environ:
        environ = {**environ, PYTHON_VARIABLE: sys.executable}
    global_path = paths.global_settings_path()
    project_path, mcp_json, project_root = project_sources(cwd)
    global_data = read_json(global_path) if global_path.exists() else {}
    project_data = read_json(project_path) if project_path else {}
    base_dir = project_root or cwd

    servers: dict[str, ServerConfig] = {}
    shadowed: dict[str, ServerConfig] = {}
    for path, data in ((global_path, global_data), (project_path, project_data)):
        if path is None:
            continue
        for name, entry in _server_entries(path, data).items():
            config = parse_server(name, entry, path, environ, base_dir)
            if name in servers:
                previous = servers[name]
                if previous.source != mcp_json:
                    shadowed[name] = previous
                config = replace(
                    config, overrides=shadowed[name].source if name in shadowed else None
                )
            servers[name] = config
        if path == global_path and mcp_json is not None:
            # A repository's .mcp.json (Claude Code's project file) sits below the project's
            # .codebot/settings.json: read first among the project's, so codebot's file wins.
            for name, config in _mcp_json_servers(mcp_json, environ, base_dir).items():
                if name in servers:
                    shadowed[name] = servers[name]
                    config = replace(config, overrides=servers[name].source)
                servers[name] = config

    global_scalars = _scalar_settings(global_path, global_data)
    project_scalars = _scalar_settings(project_path, project_data) if project_path else {}
    project_parts = _merge_parts(global_scalars, project_scalars)
    global_rules = _permissions(global_path, global_data)
    project_rules = _permissions(project_path, project_data) if project_path else PermissionRules()
    warnings = [
        w
        for path, data in ((global_path, global_data), (project_path, project_data))
        if path is not None
        for w in unknown_keys(path, data)
    ]
    global_hooks, project_hooks = parse_both(global_path, global_data, project_path, project_data)
    warnings += global_hooks[1] + project_hooks[1]
    # Installed plugins (`codebot plugin install`): accepted when installed, so yours, below
    # your own entries (a name you define wins).
    from codebot_mcp.core.config.plugins.load import load as load_plugins

    plugins = load_plugins(project_root, environ, base_dir)
    for name, config in plugins.servers.items():
        servers.setdefault(name, config)
    warnings += plugins.warnings
    claude = _claude_layer(cwd, project_root, global_scalars, project_scalars, claude_files)
    layer = claude.layer
    both: tuple[claudefiles.Scope, ...] = ("user", "project") if claude.on else ()
    mine: tuple[claudefiles.Scope, ...] = ("user", "project") if claude.mine_on else ()
    # the hooks' value is their feature's (core.config.combining), from the entries read here
    hook_sources = combining.HookSources(
        global_hooks[0] + plugins.hooks, project_hooks[0], layer.hooks(both), layer.hooks(mine[:1])
    )
    entries = {c.name: c.combine(hook_sources) for c in combining.entry_combiners()}
    gated = _gated(project_data, project_scalars, project_rules)
    # hooks run commands: the project's section as written is fingerprinted
    gated.update((n, project_data[n]) for n, c in entries.items() if c.gated)
    gated.update(project_parts)
    if "roots" in project_scalars:
        project_scalars["roots"] = global_scalars.get("roots", ()) + project_scalars["roots"]
    warnings += claude.layer.warnings
    gated.update(claude.layer.gated() if claude.on else {})
    if claude.on:
        _disable(servers, claude.layer.disabled_servers, mcp_json)
    trusted_rules = layer.rules(both, keys.PERMISSION_KEYS)
    # untrusted: your own allow rules, and every deny and ask (they only make codebot careful)
    untrusted_rules = layer.rules(mine[:1], ("allow",))
    untrusted_rules.update(
        (k, v) for k, v in layer.rules(mine, ("ask", "deny")).items() if k != "allow"
    )
    scalars = {**global_scalars, **project_scalars}
    roots = scalars.get("roots", ()) + layer.roots(both)
    untrusted_roots = global_scalars.get("roots", ()) + layer.roots(mine[:1])
    project_claude = tuple(f.path for f in layer.of("project")) if claude.on else ()
    # the keys a feature combines itself (sandbox), with what Claude Code's files add to them
    combined = _combined(
        (global_path, global_data),
        (project_path, project_data),
        combining.ClaudeParts(layer.deny_read(both), layer.domains(both)),
        combining.ClaudeParts(layer.deny_read(mine), layer.domains(mine[:1])),
    )
    gated.update((n, project_data[n]) for n, c in combined.items() if c.gated)
    fallback = _fallback(global_scalars, scalars)
    fallback["sections"] = {
        **fallback["sections"],
        **{n: c.untrusted for n, c in combined.items()},
        **{n: c.untrusted for n, c in entries.items()},
    }
    return Settings(
        servers=dict(sorted(servers.items())),
        permissions=PermissionRules(
            allow=global_rules.allow + project_rules.allow + trusted_rules["allow"],
            ask=global_rules.ask + project_rules.ask + trusted_rules["ask"],
            deny=global_rules.deny + project_rules.deny + trusted_rules["deny"],
            origins=layer.origins,
        ),
        cwd=cwd,
        project_root=project_root,
        global_file=global_path if global_path.exists() else None,
        project_file=project_path or mcp_json,
        project_sources=tuple(p for p in (project_path, mcp_json) if p is not None)
        + project_claude,
        project_gated=gated,
        untrusted_fallback={
            **fallback,
            "project_extensions": False,
            "roots": untrusted_roots,
            "permissions": replace(
                global_rules,
                allow=global_rules.allow + untrusted_rules["allow"],
                ask=global_rules.ask + project_rules.ask + untrusted_rules["ask"],
                deny=global_rules.deny + project_rules.deny + untrusted_rules["deny"],
                origins=layer.origins,
            ),
            "claude_files": claude.mine_on,
            "claude_sources": tuple(f.path for f in layer.files) if claude.mine_on else (),
        },
        warnings=tuple(warnings),
        shadowed=shadowed,
        claude_sources=tuple(f.path for f in layer.files) if claude.on else (),
        sections={
            **_sections(scalars),
            **{n: c.value for n, c in combined.items()},
            **{n: c.value for n, c in entries.items()},
        },
        **{**_typed(scalars), "roots": roots, "claude_files": claude.on},
    )


@cache
def _fields() -> frozenset[str]:
    return frozenset(f.name for f in fields(Settings))


def _typed(values: Mapping[str, Any]) -> dict[str, Any]:
    """The values ``Settings`` holds as its own fields (the kernel's keys)."""
    return {k: v for k, v in values.items() if k in _fields()}


def _sections(values: Mapping[str, Any]) -> dict[str, Any]:
    """``Settings.sections``: every key a feature owns (a row whose attribute is not a field
    of ``Settings``), its value from ``values`` or its row's default."""
    return {
        key.attribute: values.get(key.attribute, key.default)
        for key in keys.KEYS
        if key.attribute is not None and key.attribute not in _fields()
    }


def with_values(settings: Settings, values: Mapping[str, Any]) -> Settings:
    """``settings`` with keys' values by attribute (a field, or a feature's in ``sections``)."""
    owned = {k: v for k, v in values.items() if k not in _fields()}
    if not owned:
        return replace(settings, **values)
    return replace(settings, **_typed(values), sections={**settings.sections, **owned})


def value_of(settings: Settings, attribute: str) -> Any:
    """A key's value by its attribute: a field of ``settings``, or a feature's section."""
    if attribute in _fields():
        return getattr(settings, attribute)
    default = next((k.default for k in keys.KEYS if k.attribute == attribute), None)
    return settings.sections.get(attribute, default)


def _merge_parts(global_scalars: dict[str, Any], project_scalars: dict[str, Any]) -> dict[str, str]:
    """The keys merged part by part (a row's ``merge``: ``checkpoints``): your file's parts
    over the defaults, the project's over yours. Returns what the trust review shows of them
    (the parts the project sets, as JSON), or nothing."""
    shown: dict[str, str] = {}
    for key in keys.KEYS:
        name = key.attribute
        if key.merge is None or name is None:
            continue
        global_scalars[name] = key.merge(None, global_scalars.get(name))
        if name in project_scalars:
            parts = project_scalars[name]
            project_scalars[name] = key.merge(global_scalars[name], parts)
            shown[key.name] = json.dumps(parts, sort_keys=True)
    return shown


def _disable(servers: dict[str, ServerConfig], names: Iterable[str], mcp_json: Path | None) -> None:
    """``disabledMcpjsonServers``: those ``.mcp.json`` entries are off (an entry of the same
    name in codebot's own files replaced the ``.mcp.json`` one, and stays on)."""
    for name in names:
        if name in servers and mcp_json is not None and servers[name].source == mcp_json:
            servers[name] = replace(servers[name], enabled=False)


@dataclass(frozen=True, slots=True)
class _Claude:
    layer: claudefiles.ClaudeLayer
    on: bool
    """``claude_files`` with the project's value (trusted)."""
    mine_on: bool
    """``claude_files`` of your settings (the project's value waits for trust)."""


def _claude_layer(
    cwd: Path,
    project_root: Path | None,
    global_scalars: Mapping[str, Any],
    project_scalars: Mapping[str, Any],
    forced: bool | None,
) -> _Claude:
    """Claude Code's settings files (:mod:`.claudefiles`), unless ``claude_files`` is off."""
    mine_on, on = claudefiles.switch(
        global_scalars.get("claude_files", True), project_scalars.get("claude_files"), forced
    )
    if not (on or mine_on):
        return _Claude(claudefiles.ClaudeLayer(), on, mine_on)
    from codebot_mcp.core.config import discovery

    layer = claudefiles.read(discovery.project_root(cwd, project_root))
    if not on:  # the project turns it off: only your files are read, for the fallback
        mine = layer.of("user")
        kept = {f.path for f in mine} | {claudefiles.user_settings()}
        layer = claudefiles.ClaudeLayer(mine, tuple(w for w in layer.warnings if w.file in kept))
    return _Claude(layer, on, mine_on)


def _combined(
    mine: tuple[Path, Mapping[str, Any]],
    project: tuple[Path | None, Mapping[str, Any]],
    claude: combining.ClaudeParts,
    claude_mine: combining.ClaudeParts,
) -> dict[str, combining.Combined]:
    """The keys a feature combines itself (``core.config.combining``), by name: your file's
    value and the project's, each parsed, and what Claude Code's files add (``claude``; while
    the project is not trusted, ``claude_mine``)."""
    (path, data), (project_path, project_data) = mine, project
    out: dict[str, combining.Combined] = {}
    for combiner in combining.combiners():
        name = combiner.name
        yours, theirs = combiner.parse(path, data.get(name, {})), None
        if project_path is not None and name in project_data:
            theirs = combiner.parse(project_path, project_data[name])
        out[name] = combiner.combine(yours, theirs, claude, claude_mine)
    return out


def _gated(
    data: Mapping[str, Any],
    scalars: Mapping[str, Any],
    rules: PermissionRules,
) -> dict[str, Any]:
    """What the project file sets that needs trust, as written (the trust digest covers it).

    Every key of the project file waits for trust unless the key table says it cannot widen
    anything (:mod:`core.config.keys`): a key added later is gated by default. Keys whose
    module decides (``sandbox``, ``hooks``: their combiners; a row's ``merge``:
    ``checkpoints``) are added by the caller.
    """
    gated: dict[str, Any] = {}
    for name in keys.gated_keys(data):
        if name == "permissions.allow":
            gated[name] = list(rules.allow)
        elif name == "roots":
            gated[name] = [str(p) for p in scalars.get("roots", ())]
        elif name == "registry_url":
            gated[name] = list(scalars.get("registry_url", ()))
        else:
            gated[name] = data[name]
    return gated


def _fallback(global_scalars: Mapping[str, Any], scalars: Mapping[str, Any]) -> dict[str, Any]:
    """The values the gated keys (and those merged part by part) have while the project is
    not trusted: the global file's, else the table's defaults; the features' in ``sections``
    (the others there keep their value in ``scalars``)."""
    out: dict[str, Any] = {
        key.attribute: global_scalars.get(key.attribute, key.default)
        for key in keys.KEYS
        if key.attribute is not None and (key.trust == "gated" or key.merge is not None)
    }
    return {**_typed(out), "sections": _sections({**scalars, **out})}


def read_json(path: Path) -> dict[str, Any]:
    """One settings file as a JSON object ({} when empty).

    Raises:
        SettingsError: it cannot be read, is not UTF-8, is not JSON, or not an object.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except IsADirectoryError:
        raise SettingsError(
            f"cannot read settings file {path}: it is a directory",
            hint=f"Replace {path} with a JSON file, or remove it.",
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise SettingsError(
            f"cannot read settings file {path}: {reason}",
            hint=f"Check the permissions of {path} (it must be readable UTF-8 text).",
        ) from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except RecursionError:
        raise SettingsError(
            f"settings file {path} is nested too deeply to read",
            hint="Settings are a few levels deep; remove the deeply nested value.",
        ) from None
    except json.JSONDecodeError as exc:
        raise SettingsError(
            f"invalid JSON in {path} at line {exc.lineno}, column {exc.colno}: {exc.msg}",
            hint="Fix the JSON syntax there (trailing commas and comments are not allowed).",
        ) from None
    if not isinstance(data, dict):
        raise SettingsError(
            f"settings file {path} must contain a JSON object at the top level, "
            f"found {json_type(data)}",
            hint='Wrap the settings in braces, e.g. {"mcp_servers": {}}.',
        )
    return data


def _server_entries(path: Path, data: Mapping[str, Any]) -> dict[str, Any]:
    if "mcp_servers" in data and "mcpServers" in data:
        raise SettingsError(
            f"{path} has both 'mcp_servers' and 'mcpServers'",
            hint="Keep one of them ('mcp_servers' is codebot's name; 'mcpServers' is accepted).",
        )
    key = "mcpServers" if "mcpServers" in data else "mcp_servers"
    entries = data.get(key, {})
    if not isinstance(entries, dict):
        raise SettingsError(
            f"'{key}' in {path} must be an object mapping server names to entries, "
            f"found {json_type(entries)}",
            hint=f'Write it as "{key}": {{"name": {{"command": "..."}}}}.',
        )
    return entries


def _scalar_settings(path: Path, data: Mapping[str, Any]) -> dict[str, Any]:
    """The keys the table parses (``core.config.keys``), and ``registry_url``."""
    out = keys.parse_scalars(path, data)
    if "registry_url" in data:
        out["registry_url"] = parse_registry_url(path, data["registry_url"])
    return out


def parse_registry_url(path: Path, value: Any) -> tuple[str, ...]:
    """``registry_url``: one URL or a list of them, each ``https://`` (``http://`` only on
    loopback: a registry's answers decide what ``mcp install`` runs), without credentials,
    query or fragment; a trailing ``/`` is dropped.

    Raises:
        SettingsError: naming the file and the entry that is wrong.
    """
    from urllib.parse import urlsplit

    from codebot_mcp.core.secrets.redact import redact_url

    hint = 'Write it as "registry_url": "https://registry.example.com" or a list of URLs.'
    urls = [value] if isinstance(value, str) else value
    if not is_str_list(urls) or not urls:
        raise SettingsError(
            f"'registry_url' in {path} must be a URL or a non-empty list of URLs, "
            f"found {json_type(value)}",
            hint=hint,
        )
    out: list[str] = []
    for url in urls:
        try:
            parts = urlsplit(url.strip())
            host = parts.hostname or ""
        except ValueError:
            parts, host = None, ""
        where = f"'registry_url' in {path}: {json.dumps(redact_url(url))}"
        if parts is None or parts.scheme not in ("http", "https") or not host:
            raise SettingsError(f"{where} is not an http(s) URL", hint=hint)
        if parts.scheme == "http" and host not in LOOPBACK_HOSTS:
            raise SettingsError(
                f"{where} uses plain http: a registry's answers decide what `mcp install` "
                "runs, so only https (or http on 127.0.0.1/localhost) is accepted",
                hint="Use the registry's https:// URL.",
            )
        if parts.username or parts.password or parts.query or parts.fragment:
            raise SettingsError(
                f"{where} must not carry credentials, a query or a fragment",
                hint="Give the registry's base URL, e.g. https://registry.example.com.",
            )
        normal = url.strip().rstrip("/")
        if normal not in out:
            out.append(normal)
    return tuple(out)


def _permissions(path: Path, data: Mapping[str, Any]) -> PermissionRules:
    section = data.get("permissions", {})
    if not isinstance(section, dict):
        raise SettingsError(
            f"'permissions' in {path} must be an object with 'allow', 'ask' and 'deny' lists",
            hint='Write it as "permissions": {"allow": ["mcp__docs__*"], "deny": ["bash"]}.',
        )
    lists: dict[str, tuple[str, ...]] = {}
    for key in keys.PERMISSION_KEYS:
        value = section.get(key, [])
        if not is_str_list(value):
            raise SettingsError(
                f"'permissions.{key}' in {path} must be a list of tool-name patterns",
                hint=f'Write it as "{key}": ["mcp__server__*", "bash"].',
            )
        lists[key] = tuple(value)
    return PermissionRules(lists["allow"], lists["ask"], lists["deny"])


def root_dirs(project_root: Path | None, cwd: Path, extra: Iterable[Path] = ()) -> list[Path]:
    """The directories offered to servers as roots: the project root (or the working
    directory), then the ``roots`` setting, resolved and deduplicated."""
    out: list[Path] = []
    for path in (project_root or cwd, *extra):
        resolved = path.resolve()
        if resolved not in out:
            out.append(resolved)
    return out
