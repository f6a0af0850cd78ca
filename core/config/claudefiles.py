"""Claude Code's settings files, read where Claude Code reads them, below codebot's own.

Read, in this order, after ``~/.codebot/settings.json`` and ``.codebot/settings.json``:

- ``~/.claude/settings.json`` (``$CLAUDE_CONFIG_DIR`` moves ``~/.claude``, as it does for
  Claude Code): yours, trusted like ``~/.codebot``;
- the project's ``.claude/settings.json`` and ``.claude/settings.local.json`` (in the project
  root, :func:`.discovery.project_root`): they pass the trust gate like the project's own file.

What codebot understands takes effect; codebot's files and the managed settings win:

- ``hooks``: Claude Code's format is codebot's (:mod:`.hooks`); a handler identical to one an
  earlier file configures runs once (as in Claude Code). ``disableAllHooks: true`` turns off
  the hooks of these files (codebot's own still run: they are above).
- ``permissions.allow`` / ``ask`` / ``deny``: Claude Code's rules translated to codebot's
  (:func:`translate_rule`: ``Bash(git commit:*)`` → ``bash(git commit:*)``, ``Edit`` →
  ``edit`` and ``write``, ``Read(./secrets/**)`` → ``read``/``glob``/``grep`` with that
  pattern, ``mcp__server__tool`` and ``mcp__server`` as they are); deny wins over ask, ask
  over allow, whichever file says it. ``permissions.additionalDirectories`` adds ``roots``.
- ``sandbox.network.allowedDomains``: the hosts a confined command reaches through codebot's
  proxy (``sandbox.network`` as a list: Claude Code's patterns are codebot's, ``*.x.org``
  any subdomain of ``x.org``), when codebot's own files set no ``sandbox.network`` (theirs
  wins, ``false`` included); the lists of the files add up. The rest of Claude Code's
  ``sandbox`` (``enabled``, ``filesystem``, ``excludedCommands``...) is named as not used:
  codebot's sandbox is its own (``sandbox.mode``).
- ``disabledMcpjsonServers``: those ``.mcp.json`` servers are off (an entry of the same name
  in codebot's own files is codebot's, and stays on). ``enabledMcpjsonServers`` and
  ``enableAllProjectMcpServers`` are read and change nothing: codebot's trust gate is what
  approves a project's servers.

Every other key is named once per file and run as "not used by codebot" (a
:class:`.keys.SettingWarning`), except the cosmetic ones in :data:`HARMLESS`. A file that
cannot be read, or a section with the wrong shape, is a warning too: these are Claude Code's
files, and a mistake in one does not stop codebot.

Trust: a project file's ``hooks``, ``disableAllHooks``, ``permissions.allow``,
``additionalDirectories`` and ``sandbox.network.allowedDomains`` wait for trust (they are
gated settings, in the trust digest, so a change asks again); its ``deny`` and ``ask`` rules
and ``disabledMcpjsonServers`` apply at once (they only make codebot more careful).
``"claude_files": false`` (:mod:`.keys`) turns the whole layer off: these files, the
``.claude`` and ``~/.claude`` agents, commands and skills, and ``~/.claude/CLAUDE.md``
(its model: :func:`section_model`).

Size: one idea, Claude Code's settings files read as a layer below codebot's: what each of
their keys means here, with the warnings and the trust each needs, and the switch that turns
the layer off; split, the translation would lose the one place that lists what is read.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from codebot_mcp.core.config import discovery
from codebot_mcp.core.config.hookcontract import RULE
from codebot_mcp.core.config.hooks import HookCommand, parse_hooks
from codebot_mcp.core.config.keys import SettingWarning, check
from codebot_mcp.core.config.sandboxing import PatternError, normalize_pattern
from codebot_mcp.core.config.sections import Section, register, row
from codebot_mcp.core.errors import SettingsError

if TYPE_CHECKING:
    from pydantic import BaseModel

CONFIG_ENV = "CLAUDE_CONFIG_DIR"
"""Moves ``~/.claude`` (Claude Code reads the same variable)."""
SETTINGS_FILES = ("settings.json", "settings.local.json")
"""The project's files, in the order read (the local one is Claude Code's higher level)."""
USER_NOTES = "CLAUDE.md"
"""``~/.claude/CLAUDE.md``: your notes for every project, beside ``~/.codebot/AGENTS.md``."""
UNDERSTOOD = (
    "hooks",
    "permissions",
    "sandbox",
    "disableAllHooks",
    "enabledMcpjsonServers",
    "disabledMcpjsonServers",
    "enableAllProjectMcpServers",
)
"""Top-level keys codebot reads from these files."""
PERMISSION_KEYS = ("allow", "ask", "deny", "additionalDirectories")
HARMLESS = (
    "$schema",
    "cleanupPeriodDays",
    "feedbackSurveyState",
    "spinnerTipsEnabled",
    "spinnerVerbs",
    "theme",
    "autoUpdates",
    "autoUpdatesChannel",
    "preferredNotifChannel",
    "includeCoAuthoredBy",
)
"""Keys not worth a warning: they change only how Claude Code itself looks or updates."""
OTHER_READERS: tuple[str, ...] = ()
"""Keys another part of codebot reads from these files (not warned about here)."""
TOOLS: Mapping[str, tuple[str, ...]] = {
    "Bash": ("bash",),
    "Read": ("read", "glob", "grep"),
    "Edit": ("edit", "write"),
    "MultiEdit": ("edit",),
    "Write": ("write",),
    "Glob": ("glob",),
    "LS": ("glob",),
    "Grep": ("grep",),
    "Agent": ("task",),
    "Task": ("task",),
    "Skill": ("skill",),
    "TodoWrite": ("todo_write",),
}
"""A Claude Code tool in a permission rule → codebot's tools it covers (Claude Code's
``Edit`` rules cover every tool that edits files, its ``Read`` rules the tools that read)."""
PATTERN_TOOLS = ("bash", "read", "glob", "grep", "edit", "write", "task")
"""codebot's tools whose calls a ``Tool(pattern)`` rule can tell apart (command, path, agent)."""

Scope = Literal["user", "project"]


def user_dir() -> Path:
    """``$CLAUDE_CONFIG_DIR`` or ``~/.claude``."""
    env = os.environ.get(CONFIG_ENV)
    return Path(env).expanduser() if env else Path.home() / discovery.CLAUDE_DIR


def user_settings() -> Path:
    """``~/.claude/settings.json``."""
    return user_dir() / SETTINGS_FILES[0]


def label(path: Path, root: Path | None = None) -> str:
    """How a file is named to the user: ``~/.claude/settings.json`` (or the real path when
    ``$CLAUDE_CONFIG_DIR`` moves it), ``.claude/settings.local.json``, ``~/.codebot/...``."""
    mine = user_dir()
    if path.is_relative_to(mine) and mine == Path.home() / discovery.CLAUDE_DIR:
        return "~/.claude/" + path.relative_to(mine).as_posix()
    if root is not None and path.is_relative_to(root):
        return path.relative_to(root).as_posix()
    home = Path.home()
    if path.is_relative_to(home) and not path.is_relative_to(mine):
        return "~/" + path.relative_to(home).as_posix()
    return str(path)


def origin(path: Path, root: Path | None = None) -> str:
    """A file as ``/hooks`` and ``/agents`` name it: Claude Code's by :func:`label`
    (``~/.claude/settings.json``, ``.claude/settings.local.json``, ``.claude/agents/x.md``),
    codebot's by its path."""
    claude = path.parent.name == discovery.CLAUDE_DIR or path.is_relative_to(user_dir())
    if root is not None and path.is_relative_to(root / discovery.CLAUDE_DIR):
        claude = True
    return label(path, root) if claude else str(path)


def translate_rule(rule: str) -> tuple[tuple[str, ...], str | None]:
    """codebot's rules for one of Claude Code's permission rules, or ``()`` and why none.

    ``Bash`` → ``bash``; ``Bash(git commit:*)`` → ``bash(git commit:*)`` (the pattern kept in
    Claude Code's syntax, which :func:`core.agent.permissions.rule_matches` reads);
    ``Edit(src/**)`` → ``edit(src/**)`` and ``write(src/**)``; ``mcp__server__tool``,
    ``mcp__server__*`` and ``mcp__server`` as they are (codebot's syntax is the same).
    """
    found = RULE.match(rule)
    if found is None:
        return (), "not a permission rule like Bash(git commit:*)"
    name, pattern = found.group(1), found.group(2)
    if pattern is not None and pattern.strip() in ("", "*"):
        pattern = None
    if name.startswith("mcp__"):
        if pattern is not None:
            return (), "codebot's MCP rules take no (...) pattern"
        return (name,), None
    tools = TOOLS.get(name)
    if tools is None:
        return (), f"codebot has no {name} tool"
    if pattern is None:
        return tools, None
    if tools[0] not in PATTERN_TOOLS:
        return (), f"codebot cannot narrow {name} by a pattern"
    return tuple(f"{t}({pattern.strip()})" for t in tools), None


@dataclass(frozen=True, slots=True)
class ClaudeFile:
    """One of Claude Code's settings files, read: the parts codebot understands."""

    path: Path
    scope: Scope
    label: str
    data: Mapping[str, Any]
    hooks: tuple[HookCommand, ...] = ()
    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    origins: Mapping[str, str] = field(default_factory=dict[str, str])
    """codebot's rule → ``Bash(rm:*) in .claude/settings.json``."""
    roots: tuple[Path, ...] = ()
    disabled_servers: tuple[str, ...] = ()
    no_hooks: bool = False
    """``disableAllHooks: true``."""
    deny_read: tuple[Path, ...] = ()
    """The paths of ``Read(...)`` deny rules, hidden from ``bash`` too (the sandbox's
    ``deny_read``), as Claude Code's sandbox does with them."""
    domains: tuple[str, ...] = ()
    """``sandbox.network.allowedDomains``, as codebot's host patterns (normalized)."""


@dataclass(frozen=True, slots=True)
class ClaudeLayer:
    """What Claude Code's settings files say, per file, and the warnings about them."""

    files: tuple[ClaudeFile, ...] = ()
    warnings: tuple[SettingWarning, ...] = ()

    def of(self, scope: Scope) -> tuple[ClaudeFile, ...]:
        """The user's files or the project's."""
        return tuple(f for f in self.files if f.scope == scope)

    def hooks(self, scopes: Iterable[Scope]) -> tuple[HookCommand, ...]:
        """The hooks of the files of ``scopes`` (none when one of them disables them all: a
        project's ``disableAllHooks`` counts only once it is trusted, like its hooks)."""
        wanted = set(scopes)
        files = [f for f in self.files if f.scope in wanted]
        if any(f.no_hooks for f in files):
            return ()
        return tuple(h for f in files for h in f.hooks)

    def rules(self, scopes: Iterable[Scope], lists: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """``allow``/``ask``/``deny`` of the files of ``scopes``, only the ``lists`` named."""
        wanted, named = set(scopes), set(lists)
        out: dict[str, tuple[str, ...]] = {"allow": (), "ask": (), "deny": ()}
        for file in self.files:
            if file.scope in wanted:
                for name in named:
                    out[name] += getattr(file, name)
        return out

    @property
    def origins(self) -> dict[str, str]:
        """Every translated rule → where it was written."""
        out: dict[str, str] = {}
        for file in self.files:
            for rule, origin in file.origins.items():
                out.setdefault(rule, origin)
        return out

    def roots(self, scopes: Iterable[Scope]) -> tuple[Path, ...]:
        """``additionalDirectories`` of the files of ``scopes``."""
        wanted = set(scopes)
        return tuple(r for f in self.files if f.scope in wanted for r in f.roots)

    def deny_read(self, scopes: Iterable[Scope]) -> tuple[Path, ...]:
        """The paths of ``Read(...)`` deny rules of the files of ``scopes``."""
        wanted = set(scopes)
        return tuple(p for f in self.files if f.scope in wanted for p in f.deny_read)

    def domains(self, scopes: Iterable[Scope]) -> tuple[str, ...]:
        """``sandbox.network.allowedDomains`` of the files of ``scopes``, merged."""
        wanted = set(scopes)
        return tuple(dict.fromkeys(d for f in self.files if f.scope in wanted for d in f.domains))

    @property
    def disabled_servers(self) -> frozenset[str]:
        """``disabledMcpjsonServers`` of every file."""
        return frozenset(n for f in self.files for n in f.disabled_servers)

    def gated(self) -> dict[str, Any]:
        """What the project's files set that needs trust, as written, by
        ``<key> (<file>)``: hooks, allow rules, additional directories."""
        out: dict[str, Any] = {}
        for file in self.of("project"):
            if file.hooks:
                out[f"hooks ({file.label})"] = file.data["hooks"]
            if file.no_hooks:  # it would turn your ~/.claude hooks off
                out[f"disableAllHooks ({file.label})"] = True
            if file.domains:  # more hosts a confined command reaches
                out[f"sandbox.network.allowedDomains ({file.label})"] = list(file.domains)
            section = file.data.get("permissions")
            if isinstance(section, dict):
                for key in ("allow", "additionalDirectories"):
                    value = section.get(key)
                    if value:
                        out[f"permissions.{key} ({file.label})"] = value
        return out


def paths_of(root: Path | None) -> list[tuple[Path, Scope]]:
    """The files that exist: ``~/.claude/settings.json``, then the project's two."""
    out: list[tuple[Path, Scope]] = []
    mine = user_settings()
    if mine.is_file():
        out.append((mine, "user"))
    if root is not None:
        moved = CONFIG_ENV in os.environ  # ~/.claude itself is never a project's .claude
        for name in SETTINGS_FILES:
            path = root / discovery.CLAUDE_DIR / name
            if path.is_file() and not (moved and path.resolve() == mine.resolve()):
                out.append((path, "project"))
    return out


def read(root: Path | None) -> ClaudeLayer:
    """Claude Code's settings files for the project at ``root`` (None: only yours), read.
    Nothing raises: what cannot be read is a warning naming the file."""
    files: list[ClaudeFile] = []
    warnings: list[SettingWarning] = []
    for path, scope in paths_of(root):
        shown = label(path, root)
        data = _read_json(path)
        if isinstance(data, str):
            message = f"cannot read {shown}: {data}; codebot ignores this Claude Code file"
            warnings.append(SettingWarning(path, "", message))
            continue
        file, said = _parse(path, scope, shown, data, root)
        files.append(file)
        warnings += said
    return ClaudeLayer(tuple(files), tuple(warnings))


MAX_BYTES = 4 * 1024 * 1024
"""A settings file larger than this is not read."""


def _read_json(path: Path) -> dict[str, Any] | str:
    """The file's JSON object ({} when empty), or why it cannot be read."""
    try:
        if path.stat().st_size > MAX_BYTES:
            return f"it is larger than {MAX_BYTES} bytes"
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except RecursionError:
        return "it is nested too deeply"
    except json.JSONDecodeError as exc:
        return f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
    if not isinstance(data, dict):
        return "it is not a JSON object"
    return data


def _parse(
    path: Path, scope: Scope, shown: str, data: Mapping[str, Any], root: Path | None
) -> tuple[ClaudeFile, list[SettingWarning]]:
    warnings: list[SettingWarning] = []
    unused: list[str] = [
        k for k in data if k not in UNDERSTOOD and k not in HARMLESS and k not in OTHER_READERS
    ]
    try:
        hooks, said = parse_hooks(path, data)
        warnings += said
    except SettingsError as exc:
        hooks = ()
        message = f"{exc.message}; the hooks of {shown} are not run ({exc.hint})"
        warnings.append(SettingWarning(path, "hooks", message))
    rules: dict[str, list[str]] = {"allow": [], "ask": [], "deny": []}
    origins: dict[str, str] = {}
    roots: list[Path] = []
    deny_read: list[Path] = []
    section = data.get("permissions", {})
    if not isinstance(section, dict):
        unused.append("permissions (not an object)")
        section = {}
    for key, value in section.items():
        key = str(key)
        if key not in PERMISSION_KEYS:
            unused.append(f"permissions.{key}")
            continue
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            unused.append(f"permissions.{key} (not a list of strings)")
            continue
        items: list[str] = value
        if key == "additionalDirectories":
            base = (root or Path.home()) if scope == "project" else Path.home()
            roots += [(base / Path(v).expanduser()).resolve() for v in items]
            continue
        for rule in items:
            if key == "deny" and (hidden := read_path(rule, scope, root)) is not None:
                deny_read.append(hidden)
            translated, why = translate_rule(rule)
            if not translated:
                unused.append(f"permissions.{key} rule {json.dumps(rule)} ({why})")
            for mine in translated:
                if mine not in rules[key]:
                    rules[key].append(mine)
                origins.setdefault(mine, f"{rule} in {shown}")
    domains = allowed_domains(data.get("sandbox"), unused)
    disabled = data.get("disabledMcpjsonServers", [])
    if not isinstance(disabled, list) or not all(isinstance(v, str) for v in disabled):
        unused.append("disabledMcpjsonServers (not a list of names)")
        disabled = []
    if unused:
        message = (
            f"{shown}: not used by codebot: {', '.join(unused)} (Claude Code's setting; "
            "codebot reads hooks, permissions, sandbox.network.allowedDomains and the .mcp.json "
            "switches there)"
        )
        warnings.append(SettingWarning(path, unused[0], message))
    return (
        ClaudeFile(
            path,
            scope,
            shown,
            data,
            hooks,
            tuple(rules["allow"]),
            tuple(rules["ask"]),
            tuple(rules["deny"]),
            origins,
            tuple(roots),
            tuple(disabled),
            data.get("disableAllHooks") is True,
            tuple(deny_read),
            domains,
        ),
        warnings,
    )


def allowed_domains(section: Any, unused: list[str]) -> tuple[str, ...]:
    """``sandbox.network.allowedDomains`` as codebot's host patterns (Claude Code's match
    the same way: ``*.x.org`` is any subdomain, not ``x.org``); every other key of
    ``sandbox`` and an entry codebot refuses go to ``unused``."""
    if section is None:
        return ()
    if not isinstance(section, dict):
        unused.append("sandbox (not an object)")
        return ()
    out: list[str] = []
    for key, value in section.items():
        if key != "network" or not isinstance(value, dict):
            unused.append(f"sandbox.{key}")
            continue
        for name, entries in value.items():
            if name != "allowedDomains":
                unused.append(f"sandbox.network.{name}")
                continue
            if not isinstance(entries, list):
                unused.append("sandbox.network.allowedDomains (not a list of host names)")
                continue
            for entry in entries:
                try:
                    pattern = normalize_pattern(str(entry))
                except PatternError as exc:
                    unused.append(f"sandbox.network.allowedDomains entry {exc}")
                    continue
                if pattern not in out:
                    out.append(pattern)
    return tuple(out)


_READ_RULE = re.compile(r"^\s*Read\((.+)\)\s*$")


def read_path(rule: str, scope: Scope, root: Path | None) -> Path | None:
    """The file or folder a ``Read(...)`` deny rule names, when it names one: ``Read(./.env)``,
    ``Read(./secrets/**)`` (the folder), ``Read(~/.aws/**)``, ``Read(//etc/shadow)``; None
    for a glob (``Read(**/*.pem)``) or another tool's rule. A project file's relative path
    is from the project root; your file's must start with ``~/`` or ``//``."""
    found = _READ_RULE.match(rule)
    if found is None:
        return None
    pattern = found.group(1).strip()
    for tail in ("/**", "/*", "/"):
        if pattern.endswith(tail) and len(pattern) > len(tail):
            pattern = pattern[: -len(tail)]
            break
    if any(c in pattern for c in "*?[") or pattern in ("", ".", "~", "/"):
        return None
    if pattern.startswith("//"):
        return Path(os.path.normpath(pattern[1:]))
    if pattern.startswith("~/"):
        return Path(os.path.normpath(Path.home() / pattern[2:]))
    if scope == "user" or root is None:
        return None
    return Path(os.path.normpath(root / pattern.lstrip("/")))


def switch(
    global_value: bool, project_value: bool | None, forced: bool | None = None
) -> tuple[bool, bool]:
    """``claude_files`` for your settings alone and with the project's (a trusted project's
    value wins over yours); ``forced``, the managed settings' value, wins over both
    (:func:`core.config.effective.apply` reads the settings again with it)."""
    if forced is not None:
        return forced, forced
    return global_value, global_value if project_value is None else project_value


def unique(hooks: Iterable[HookCommand]) -> tuple[HookCommand, ...]:
    """``hooks`` without a handler identical to an earlier one (same event, matcher,
    command, condition): Claude Code runs such a handler once; the first file's is kept."""
    seen: set[tuple[str, str, str, str]] = set()
    out: list[HookCommand] = []
    for hook in hooks:
        key = (hook.event, hook.matcher, hook.command, hook.condition)
        if key not in seen:
            seen.add(key)
            out.append(hook)
    return tuple(out)


@cache
def section_model() -> type[BaseModel]:
    """The ``claude_files`` switch as a pydantic model (built on demand: see
    :mod:`.sections`)."""
    from pydantic import BaseModel, ConfigDict, Field

    class ClaudeFilesSection(BaseModel):
        model_config = ConfigDict(extra="forbid")
        claude_files: bool = Field(
            default=True,
            description="Read Claude Code's files too: .claude/settings.json, "
            ".claude/settings.local.json, ~/.claude/settings.json, the .claude and ~/.claude "
            "agents, commands and skills, ~/.claude/CLAUDE.md (false: none of them).",
            examples=[False],
        )

    return ClaudeFilesSection


register(Section("claude_files", (row("claude_files", check),), section_model, order=80))
