"""``codebot import claude``: a Claude Code setup copied into codebot's own files.

For users who want to leave ``.claude/`` behind. What is read (Claude Code's places) and
where it goes:

============================================  ===============================================
project (default)                             ``--scope user``
============================================  ===============================================
``.claude/settings.json``, ``.claude/         ``~/.claude/settings.json`` (``$CLAUDE_CONFIG_DIR``
settings.local.json``: ``hooks``,             honoured): the same → ``~/.codebot/settings.json``
``permissions`` → ``.codebot/settings.json``
``.claude/agents|commands|skills`` →          ``~/.claude/agents|commands|skills`` →
``.codebot/agents|commands|skills``           ``~/.codebot/agents|commands|skills``
``.mcp.json`` → ``mcp_servers``               ``~/.claude.json`` ``mcpServers`` → ``mcp_servers``
``CLAUDE.md``: read where it is (a note)      ``~/.claude/CLAUDE.md`` → ``~/.codebot/AGENTS.md``
============================================  ===============================================

Translations: front matter tool names (``Read, Grep`` → ``read, grep``; ``Bash(git add:*)`` →
``bash(git add:*)``; tools codebot lacks are dropped, named), ``model:`` through
``model_aliases`` (:mod:`..modelnames`), a skill's title-like ``name`` → its folder's name;
commands and agents in subfolders are written flat (Claude Code names them by file name);
hook handlers keep Claude Code's shape (codebot reads it), scripts they run from ``.claude/``
are copied beside the settings and the command points there; a file's ``disableAllHooks:
true`` leaves the hooks out, as they do not run in place; permission rules through
:mod:`.claude_permissions` (the translator that reads ``.claude/`` in place,
:func:`.claudefiles.translate_rule`: ``Bash(git push:*)`` → ``bash(git push:*)``). Nothing is
clobbered: an existing entry or file of the same name that differs is kept and reported as a
clash, unless ``force``. Every write is atomic (temporary file and rename); a second run finds
everything ``same``.

Size: one idea, the import's plan: every kind of item Claude Code has (settings keys, hooks,
permissions, servers, agents, commands, skills, notes) gets its decision and its line in the
report here; front matter is :mod:`.claude_frontmatter`, rules :mod:`.claude_permissions`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from codebot_mcp.core.config import paths
from codebot_mcp.core.config.importers import Imported, ImportFormatError, Source, read_json
from codebot_mcp.core.config.importers.claude_frontmatter import translate_text

Scope = Literal["project", "user"]
ACTIONS = ("copy", "translate", "replace", "same", "kept", "clash", "skip")
"""What the import does with an item: written as it is, written translated, written over a
different one (``--force``), already there, left where codebot reads it, not written because
a different one is there, not imported (why)."""
WRITES = ("copy", "translate", "replace")
MAX_FILE_BYTES = 16 * 1024 * 1024
"""A file of a skill folder larger than this is not copied."""
MAX_FILES_PER_KIND = 2_000
KEY_REASONS = {
    "model": "codebot uses its own `model`; map Claude model names with `model_aliases`",
    "env": "codebot sets no session environment from settings; export the variables instead",
    "enabledPlugins": "plugins are installed with `codebot plugin install`",
    "extraKnownMarketplaces": "marketplaces are added with `codebot plugin marketplace add`",
    "disableAllHooks": "codebot's own settings have no switch for all hooks: the hooks of these "
    "files are not imported",
    "statusLine": "codebot draws its own status line",
    "outputStyle": "codebot has no output styles",
    "apiKeyHelper": "codebot reads its API key from `api_key_env`",
    "enableAllProjectMcpServers": "codebot starts a project's servers once you trust it",
    "enabledMcpjsonServers": "codebot starts a project's servers once you trust it",
    "disabledMcpjsonServers": 'disable a server with "enabled": false in its entry',
}
"""Why a top-level key of Claude Code's settings is not imported (others: not used)."""


@dataclass(slots=True)
class Item:
    """One thing found in the Claude Code setup and what the import does with it."""

    kind: str
    """``server``, ``hook``, ``permission``, ``agent``, ``command``, ``skill``, ``memory``,
    ``file`` (a script a hook runs) or ``setting`` (another settings key)."""
    name: str
    source: Path
    action: str = "copy"
    target: Path | None = None
    notes: list[str] = field(default_factory=list[str])
    """How it was translated."""
    reason: str | None = None
    """Why it is skipped, kept or already there."""

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "source": str(self.source),
            "action": self.action,
            "target": str(self.target) if self.target else None,
            "notes": list(self.notes),
            "reason": self.reason,
        }


@dataclass(slots=True)
class Setup:
    """Everything an import would do, before it does it."""

    scope: Scope
    source_dir: Path
    """``<project>/.claude`` or ``~/.claude``."""
    target_dir: Path
    """``<project>/.codebot`` or ``~/.codebot``."""
    settings_path: Path
    root: Path | None
    """The project root (None for the user scope)."""
    force: bool = False
    items: list[Item] = field(default_factory=list[Item])
    errors: list[str] = field(default_factory=list[str])
    files: dict[Path, tuple[bytes, int | None]] = field(
        default_factory=dict[Path, tuple[bytes, int | None]]
    )
    """What is written: content and mode (None: the default)."""
    document: dict[str, Any] = field(default_factory=dict[str, Any])
    """The settings file as it will be written."""
    original: str = ""
    looked: list[Path] = field(default_factory=list[Path])
    servers: list[Imported] = field(default_factory=list[Imported])
    """Server entries found in settings files (``mcpServers``), decided with the others."""

    def count(self, action: str) -> int:
        return sum(1 for i in self.items if i.action == action)

    @property
    def found(self) -> bool:
        return bool(self.items) or bool(self.errors)

    @property
    def settings_changed(self) -> bool:
        return _dump(self.document) != self.original


def claude_home() -> Path:
    """Claude Code's user folder: ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``
    (:func:`.claudefiles.user_dir`)."""
    from codebot_mcp.core.config import claudefiles

    return claudefiles.user_dir()


def claude_json() -> Path:
    """Claude Code's user state file holding ``mcpServers``: ``~/.claude.json`` (in
    ``$CLAUDE_CONFIG_DIR`` when that is set)."""
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(env).expanduser() / ".claude.json" if env else Path.home() / ".claude.json"


def plan(
    scope: Scope, cwd: Path, *, force: bool = False, aliases: Mapping[str, str] | None = None
) -> Setup:
    """Read the Claude Code setup of ``scope`` and decide every item.

    Raises:
        SettingsError: codebot's own settings file cannot be read.
        UsageError: the project would be your home folder (its ``.claude`` is yours).
    """
    from codebot_mcp.core.config import discovery
    from codebot_mcp.core.config import serveredit as settings_edit

    if scope == "user":
        setup = Setup(
            scope, claude_home(), paths.codebot_home(), paths.global_settings_path(), None, force
        )
    else:
        root = discovery.project_root(cwd) or cwd
        if os.path.realpath(root / paths.PROJECT_DIR) == os.path.realpath(paths.codebot_home()):
            from codebot_mcp.core.errors import UsageError

            raise UsageError(
                f"{root} is your home folder: its .claude/ is your own Claude Code setup, and "
                "its .codebot/ your own codebot settings",
                hint="Run `codebot import claude --user` to import it.",
            )
        target = settings_edit.settings_file("project", root)
        setup = Setup(scope, root / ".claude", target.parent, target, root, force)
    setup.document = settings_edit.read_document(setup.settings_path)
    setup.original = _dump(setup.document)
    aliases = dict(aliases or {})
    _settings(setup)
    _servers(setup, cwd)
    for kind in ("agents", "commands"):
        _definitions(setup, kind, aliases)
    _skills(setup, aliases)
    _memory(setup)
    return setup


def _dump(document: Mapping[str, Any]) -> str:
    return json.dumps(document, sort_keys=True)


# --- settings: hooks, permissions, the rest -------------------------------------------------


def _settings(setup: Setup) -> None:
    from codebot_mcp.core.config import claudefiles

    names = claudefiles.SETTINGS_FILES if setup.scope == "project" else ("settings.json",)
    found: list[tuple[Path, dict[str, Any]]] = []
    for name in names:
        path = setup.source_dir / name
        setup.looked.append(path)
        if not path.is_file():
            continue
        try:
            data = read_json(path)
        except ImportFormatError as exc:
            setup.errors.append(str(exc))
            continue
        if not isinstance(data, dict):
            setup.errors.append(f"{path} does not hold a JSON object")
            continue
        found.append((path, data))
    # as in place (claudefiles.ClaudeLayer.hooks): one file's disableAllHooks stops them all
    off = next((p for p, d in found if d.get("disableAllHooks") is True), None)
    for path, data in found:
        for key, value in data.items():
            if key == "hooks" and off is not None:
                reason = f"disableAllHooks is true in {off}: these hooks do not run today"
                setup.items.append(Item("hook", "hooks", path, "skip", reason=reason))
            elif key == "hooks":
                _hooks(setup, path, value)
            elif key == "permissions":
                _permissions(setup, path, value)
            elif key == "mcpServers" and isinstance(value, dict):
                from codebot_mcp.core.config.importers import claude_code

                source = Source(
                    claude_code.NAME, path, "global" if setup.scope == "user" else "project"
                )
                setup.servers += [
                    claude_code.translate(str(n), e, source) for n, e in value.items()
                ]
            elif key == "sandbox":
                _sandbox(setup, path, value)
            elif key == "$schema" or (key == "disableAllHooks" and value is not True):
                continue  # nothing to carry over
            elif key in claudefiles.HARMLESS:
                reason = "it changes only how Claude Code itself looks or updates"
                setup.items.append(Item("setting", key, path, "skip", reason=reason))
            else:
                reason = KEY_REASONS.get(key, "codebot does not use this key")
                setup.items.append(Item("setting", key, path, "skip", reason=reason))


def _sandbox(setup: Setup, path: Path, section: Any) -> None:
    """``sandbox.network.allowedDomains`` → ``sandbox.network`` (a list of host patterns), read
    as in place (:func:`.claudefiles.allowed_domains`); codebot's own value wins."""
    from codebot_mcp.core.config import claudefiles

    unused: list[str] = []
    domains = claudefiles.allowed_domains(section, unused)
    for name in unused:
        reason = "codebot's sandbox is its own (`sandbox.mode`, `sandbox.writable`, ...)"
        if "allowedDomains" in name:
            reason = "not a host name codebot's sandbox.network takes"
        setup.items.append(Item("setting", name, path, "skip", reason=reason))
    if not domains:
        return
    item = Item("setting", "sandbox.network.allowedDomains", path, target=setup.settings_path)
    setup.items.append(item)
    item.notes.append(f"→ sandbox.network: {', '.join(domains)} (through codebot's proxy)")
    box = setup.document.setdefault("sandbox", {})
    network = box.get("network") if isinstance(box, dict) else True
    if isinstance(network, list) and all(d in network for d in domains):
        item.action, item.reason = "same", f"already in {setup.settings_path}"
    elif network is not None:  # as in place: codebot's own value wins
        item.action = "skip"
        item.reason = f"sandbox.network is already set in {setup.settings_path}: it wins"
    else:
        box["network"] = list(domains)
        item.action = "translate"


def _permissions(setup: Setup, path: Path, section: Any) -> None:
    from codebot_mcp.core.config.importers.claude_permissions import plan_section

    for it in plan_section(setup.document, section, setup.root, setup.settings_path):
        target = setup.settings_path if it.written else None
        setup.items.append(
            Item("permission", it.name, path, it.action, target, it.notes, it.reason)
        )


def _hooks(setup: Setup, path: Path, section: Any) -> None:
    from codebot_mcp.core.config.hooks import EVENTS, KNOWN_FIELDS, UNSUPPORTED_FIELDS

    if not isinstance(section, dict):
        setup.items.append(Item("hook", "hooks", path, "skip", reason="not an object"))
        return
    for event, groups in section.items():
        event = str(event)
        if event not in EVENTS:
            reason = f"codebot does not fire {event} (it fires {', '.join(EVENTS)})"
            setup.items.append(Item("hook", event, path, "skip", reason=reason))
            continue
        for group in groups if isinstance(groups, list) else []:
            if not isinstance(group, dict):
                continue
            matcher = str(group.get("matcher") or "")
            handlers: Any = group.get("hooks")
            for handler in handlers if isinstance(handlers, list) else []:
                raw: dict[str, Any] = dict(handler) if isinstance(handler, dict) else {}
                label = f"{event} {matcher or '*'}: {raw.get('command') or raw.get('type')}"
                item = Item("hook", label, path)
                setup.items.append(item)
                kind = raw.get("type", "command")
                if kind != "command" or not isinstance(raw.get("command"), str):
                    item.action = "skip"
                    item.reason = f'codebot runs only "command" hooks (this one is {kind!r})'
                    continue
                if raw.get("shell") == "powershell":
                    item.action, item.reason = "skip", "codebot runs hook commands with bash"
                    continue
                out: dict[str, Any] = {}
                for key, value in raw.items():
                    if key in KNOWN_FIELDS:
                        out[key] = value
                    elif key == "args" and isinstance(value, list):
                        import shlex

                        words = [out.get("command", raw["command"]), *map(str, value)]
                        out["command"] = " ".join(shlex.quote(w) for w in words)
                        item.notes.append("exec form 'args' joined into the command line")
                    else:
                        why = UNSUPPORTED_FIELDS.get(key, "codebot does not use it")
                        item.notes.append(f"'{key}' dropped: {why}")
                out["command"] = _hook_scripts(setup, str(out["command"]), item)
                _merge_hook(setup, event, matcher, out, item)


_RELATIVE = r"([\w.@+-]+(?:/[\w.@+-]+)*)"
"""A path below the Claude folder, as a hook command names it."""


def _hook_scripts(setup: Setup, command: str, item: Item) -> str:
    """Scripts the command runs from the Claude folder, copied to the same place in
    codebot's folder, and the command pointed there. Project: ``.claude/…`` (after
    ``"$CLAUDE_PROJECT_DIR"/``, ``./`` or nothing); user: ``~/.claude/…``, ``$HOME/.claude/…``
    or the folder's path (``$CLAUDE_CONFIG_DIR``)."""
    home = Path.home()
    if setup.scope == "project":
        pattern = re.compile(r"(?<![\w.])(\.claude/)" + _RELATIVE)
    else:
        starts = [r"~/\.claude/", r"\$HOME/\.claude/", r"\$\{HOME\}/\.claude/"]
        starts += [re.escape(f"{home}/.claude/"), re.escape(f"{setup.source_dir}/")]
        pattern = re.compile("(" + "|".join(starts) + ")" + _RELATIVE)

    def point(found: re.Match[str]) -> str:
        start, relative = found.group(1), found.group(2)
        before = found.string[: found.start()]
        if setup.scope == "project" and before.endswith(("~/", "$HOME/", "${HOME}/")):
            return found.group(0)  # the user's own ~/.claude, not the project's
        source = setup.source_dir / relative
        if not source.is_file() or source.is_symlink():
            return found.group(0)
        target = setup.target_dir / relative
        data = _read_bytes(source)
        if data is None:
            return found.group(0)
        script = Item("file", relative, source, target=target)
        setup.items.append(script)
        _place(setup, script, target, data, source.stat().st_mode & 0o777, data)
        if script.action in ("clash", "skip"):
            item.notes.append(f"still runs {relative} from {setup.source_dir} ({script.action})")
            return found.group(0)
        note = f"runs {relative} from {target.parent} (copied)"
        if note not in item.notes:
            item.notes.append(note)
        if setup.scope == "project":
            return f".codebot/{relative}"
        if start.endswith(".claude/") and setup.target_dir == home / ".codebot":
            return start[: -len(".claude/")] + f".codebot/{relative}"
        return str(target)

    return pattern.sub(point, command)


def _merge_hook(
    setup: Setup, event: str, matcher: str, handler: dict[str, Any], item: Item
) -> None:
    if item.notes:
        item.action = "translate"
    item.target = setup.settings_path
    section = setup.document.setdefault("hooks", {})
    if not isinstance(section, dict):
        item.action, item.reason = "skip", f"'hooks' in {setup.settings_path} is not an object"
        return
    groups = section.setdefault(event, [])
    if not isinstance(groups, list):
        item.action, item.reason = "skip", f"'hooks.{event}' in {setup.settings_path} is not a list"
        return
    same = [g for g in groups if isinstance(g, dict) and str(g.get("matcher") or "") == matcher]
    for group in same:
        if handler in (group.get("hooks") or []):
            item.action, item.reason = "same", f"already in {setup.settings_path}"
            return
    for group in same:
        if isinstance(group.get("hooks"), list):
            group["hooks"].append(handler)
            return
    groups.append({"matcher": matcher, "hooks": [handler]} if matcher else {"hooks": [handler]})


# --- MCP servers --------------------------------------------------------------------------


def _servers(setup: Setup, cwd: Path) -> None:
    from codebot_mcp.core.config import serveredit as settings_edit
    from codebot_mcp.core.config.importers import claude_code
    from codebot_mcp.core.config.importers.plan import ImportPlan, Planned, decide

    if setup.scope == "user":
        source = Source(claude_code.NAME, claude_json(), "global")
    else:
        assert setup.root is not None
        source = Source(claude_code.NAME, setup.root / ".mcp.json", "project")
    setup.looked.append(source.path)
    found: list[Imported] = []
    if source.path.is_file():
        try:
            found = claude_code.read(source)
        except ImportFormatError as exc:
            setup.errors.append(str(exc))
    found += setup.servers
    if not found:
        return
    servers = ImportPlan(
        servers=[Planned(i, None, "skip" if i.skipped else "add", i.skipped) for i in found]
    )
    decide(servers, "global" if setup.scope == "user" else "project", setup.root or cwd)
    entries = settings_edit.server_entries(setup.document, setup.settings_path)
    for planned in servers.servers:
        it = planned.item
        item = Item("server", it.name, it.source.path, target=planned.target, notes=list(it.notes))
        setup.items.append(item)
        if planned.action == "add" or (planned.action == "clash" and setup.force):
            item.action = "translate" if it.notes else "copy"
            if planned.action == "clash":
                item.action = "replace"
                item.notes.append("replaced the different entry of that name (--force)")
            entries[it.name] = it.entry
        else:
            item.action = {"same": "same", "clash": "clash"}.get(planned.action, "skip")
            item.reason = planned.reason
            if planned.action == "clash":
                item.reason = f"{planned.reason}; --force replaces it"


# --- agents, commands, skills ---------------------------------------------------------------


def _definitions(setup: Setup, kind: str, aliases: Mapping[str, str]) -> None:
    from codebot_mcp.core.config.discovery import walk

    folder = setup.source_dir / kind
    setup.looked.append(folder)
    if not folder.is_dir():
        return
    taken: dict[Path, Path] = {}
    for path in [p for p in walk(folder) if p.suffix == ".md"][:MAX_FILES_PER_KIND]:
        relative = path.relative_to(folder)
        item = Item(kind[:-1], relative.with_suffix("").as_posix(), path)
        setup.items.append(item)
        if path.is_symlink():
            item.action, item.reason = "skip", "a symlink: not copied (copy its target by hand)"
            continue
        target = setup.target_dir / kind / path.name
        if len(relative.parts) > 1:
            nested = ":".join(relative.with_suffix("").parts)
            item.notes.append(
                f"written flat as {kind}/{path.name}: Claude Code names it by its file name, "
                f"codebot would name a subfolder's {kind[:-1]} {nested}"
            )
        if target in taken:
            item.action = "skip"
            item.reason = f"{taken[target]} has the same name and is imported"
            continue
        taken[target] = path
        data = _read_bytes(path)
        if data is None:
            item.action, item.reason = "skip", "cannot be read (or over 16 MiB)"
            continue
        translated = translate_text(data, kind, aliases, item, folder_name=None)
        if translated is None:
            continue
        _place(setup, item, target, translated, None, data)


def _skills(setup: Setup, aliases: Mapping[str, str]) -> None:
    from codebot_mcp.core.config.discovery import walk

    folder = setup.source_dir / "skills"
    setup.looked.append(folder)
    if not folder.is_dir():
        return
    for directory in sorted(folder.iterdir())[:MAX_FILES_PER_KIND]:
        if not (directory / "SKILL.md").is_file():
            continue
        item = Item("skill", directory.name, directory)
        setup.items.append(item)
        if directory.is_symlink():
            item.action, item.reason = "skip", "a symlink: not copied (copy its target by hand)"
            continue
        target = setup.target_dir / "skills" / directory.name
        item.target = target
        files: dict[Path, tuple[bytes, int | None]] = {}
        unchanged = True
        for path in walk(directory):
            relative = path.relative_to(directory)
            if path.is_symlink() or path.stat().st_size > MAX_FILE_BYTES:
                item.notes.append(f"{relative.as_posix()} not copied (a symlink or over 16 MiB)")
                continue
            data = _read_bytes(path)
            if data is None:
                item.notes.append(f"{relative.as_posix()} cannot be read: not copied")
                continue
            out = data
            if relative.as_posix() == "SKILL.md":
                translated = translate_text(data, "skills", aliases, item, directory.name)
                if translated is None:
                    break
                out = translated
            unchanged = unchanged and out == data
            files[target / relative] = (out, path.stat().st_mode & 0o777)
        if item.action == "skip":
            continue
        _place_folder(setup, item, target, files, unchanged)


def _place_folder(
    setup: Setup,
    item: Item,
    target: Path,
    files: dict[Path, tuple[bytes, int | None]],
    unchanged: bool,
) -> None:
    present = target.exists()
    if present:
        differs = [p for p, (data, _) in files.items() if _read_bytes(p) != data]
        if not differs:
            item.action, item.reason = "same", f"already in {target}"
            return
        if not setup.force:
            item.action = "clash"
            item.reason = f"{target} exists with other content (kept; --force replaces it)"
            return
        item.action = "replace"
        files = {p: files[p] for p in differs}
    else:
        item.action = "copy" if unchanged and not item.notes else "translate"
    setup.files.update(files)


# --- memory --------------------------------------------------------------------------------


def _memory(setup: Setup) -> None:
    from codebot_mcp.core.config.notes import NOTE_FILES

    if setup.scope == "user":
        path = setup.source_dir / "CLAUDE.md"
        setup.looked.append(path)
        if path.is_file():
            item = Item("memory", "CLAUDE.md", path)
            setup.items.append(item)
            data = _read_bytes(path)
            if data is None:
                item.action, item.reason = "skip", "cannot be read"
                return
            _place(setup, item, setup.target_dir / "AGENTS.md", data, None, data)
        return
    assert setup.root is not None
    root = setup.root
    present = [n for n in NOTE_FILES if (root / n).is_file()]
    for path in (root / "CLAUDE.md", root / ".claude" / "CLAUDE.md", root / "CLAUDE.local.md"):
        setup.looked.append(path)
        if not path.is_file():
            continue
        item = Item("memory", path.relative_to(root).as_posix(), path)
        setup.items.append(item)
        if path.name == "CLAUDE.local.md":
            item.action = "skip"
            item.reason = "personal notes: codebot reads yours from ~/.codebot/AGENTS.md"
        elif path.parent == root and not present:
            item.action = "kept"
            item.reason = "codebot reads CLAUDE.md where it is (no AGENTS.md or CODEBOT.md here)"
        elif path.parent == root:
            item.action = "skip"
            item.reason = (
                f"{present[0]} is here, so codebot does not read CLAUDE.md: merge it into "
                f"{present[0]} by hand"
            )
        elif present or (root / "CLAUDE.md").is_file():
            item.action = "skip"
            item.reason = "the project has its own notes file: merge this one into it by hand"
        else:
            data = _read_bytes(path)
            if data is not None:
                _place(setup, item, root / "CODEBOT.md", data, None, data)


# --- placing files and writing ---------------------------------------------------------------


def _read_bytes(path: Path) -> bytes | None:
    """The file's bytes; None when it cannot be read or is over :data:`MAX_FILE_BYTES`
    (never a part of it)."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None
    return None if len(data) > MAX_FILE_BYTES else data


def _place(
    setup: Setup, item: Item, target: Path, data: bytes, mode: int | None, original: bytes
) -> None:
    """Decide ``item``'s action for writing ``data`` to ``target``."""
    item.target = target
    if item.action == "skip":
        return
    if target in setup.files:
        if setup.files[target][0] == data:
            item.action, item.reason = "same", "imported once already"
        else:
            item.action, item.reason = "skip", f"another item is written to {target}"
        return
    if target.exists() or target.is_symlink():
        if not target.is_symlink() and _read_bytes(target) == data:
            item.action, item.reason = "same", f"already in {target}"
            return
        if not setup.force:
            item.action = "clash"
            item.reason = f"{target} exists with other content (kept; --force replaces it)"
            return
        item.action = "replace"
    else:
        item.action = "copy" if data == original and not item.notes else "translate"
    setup.files[target] = (data, mode)


def apply(setup: Setup) -> list[Path]:
    """Write every file and the settings file (each atomically); the paths written.

    Raises:
        SettingsError: a file cannot be written (``ProjectWriteError`` when it would land
            outside the project).
    """
    from codebot_mcp.core.config import projectfiles
    from codebot_mcp.core.config import serveredit as settings_edit
    from codebot_mcp.core.errors import SettingsError
    from codebot_mcp.core.fsutil import atomic_write

    written: list[Path] = []
    for target, (data, mode) in setup.files.items():
        try:
            if setup.root is not None:
                projectfiles.make_dirs(target.parent, setup.root)
                projectfiles.write(target, data, root=setup.root, mode=mode)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(target, data, mode=mode)
        except OSError as exc:
            raise SettingsError(
                f"cannot write {target}: {exc.strerror or exc}",
                hint="Check the folder's permissions and run the import again (it is idempotent).",
            ) from None
        written.append(target)
    if setup.settings_changed:
        private = projectfiles.is_global_settings(setup.settings_path)
        settings_edit.write_document(setup.settings_path, setup.document, private=private)
        written.append(setup.settings_path)
    return written


__all__ = ["ACTIONS", "Item", "Setup", "apply", "claude_home", "plan"]
