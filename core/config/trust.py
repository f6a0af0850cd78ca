"""Trust for project settings: a cloned repository must not start commands on its own.

Servers defined by the project's ``.codebot/settings.json`` start only once the project is
trusted, and so do the project settings that decide where the API key goes (``base_url``,
``api_key_env``), let tools run without asking (``permissions.allow``) or run commands
(``hooks``), the project's definition files (agents, commands and skills in ``.codebot/``
and ``.claude/``, :mod:`core.config.definitions`), every project file a trusted entry runs
(a server's script, a hook's script, what a command or skill names: :mod:`.runfiles`) and the
project's notes (``AGENTS.md``, ``CLAUDE.md``...: they go into every prompt). Trust is
recorded per project root as the user reached it (never through a symlinked settings file)
together with a hash of everything that decides what runs (see :func:`digest`: entries,
settings and each file's content) and each file's own digest, so a change needs trust again
and the question names the changed file. Global settings and your own definitions are always
trusted. The hooks' commands reach trust through their feature's
:class:`core.config.combining.EntryCombiner` (:func:`run_commands`): the kernel names no
feature.

The store is ``<state dir>/trust.json`` (0600, in a 0700 directory): per project root,
``{"digest", "files": {path: digest}, "notes": {path: digest}}`` (a plain digest string, as
written before files were named, is still read).

Size: one idea, the trust decision: what needs trust (entries, settings, files, notes), its
digest, the store, and the messages that name what changed; what a prompt changed is
:mod:`.trustwatch`, which files an entry runs is :mod:`.runfiles`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from codebot_mcp.core import jsonutil
from codebot_mcp.core.config import combining, paths
from codebot_mcp.core.config.sandboxing import ServerSandbox
from codebot_mcp.core.config.servers import ServerConfig
from codebot_mcp.core.config.settings import Settings
from codebot_mcp.core.fsutil import atomic_write
from codebot_mcp.core.proc.lookup import find_command
from codebot_mcp.core.secrets.credentials import is_credential_name
from codebot_mcp.core.secrets.redact import expandable_values

TRUST_ENV = "CODEBOT_TRUST_PROJECT"
STORE_NAME = "trust.json"


class TrustReason(StrEnum):
    """Why a project is trusted or not."""

    NOTHING = "nothing to trust"
    RECORDED = "recorded"
    FLAG = "--trust-project"
    ENV = f"{TRUST_ENV}=1"
    CHANGED = "changed since trusted"
    """Trust was recorded for other server entries or gated settings than the current ones."""
    UNTRUSTED = "not trusted"


@dataclass(frozen=True, slots=True)
class TrustCheck:
    """Whether the project's servers may start, and which servers that concerns."""

    project_file: Path | None
    digest: str
    key: str | None
    api_key_env: str | None
    """The variable holding the model's API key (``api_key_env`` of the trusted settings)."""
    servers: tuple[ServerConfig, ...]
    """Servers defined by the project file (they need trust); empty when there are none."""
    gated: Mapping[str, Any]
    """Trust-gated settings the project file sets (``Settings.project_gated``)."""
    trusted: bool
    reason: TrustReason
    files: tuple[Path, ...] = ()
    """Project files that need trust: definitions (agents, commands, skills) and the files
    its servers, hooks, commands and skills run (:mod:`.runfiles`); their content is part
    of :attr:`digest`."""
    root: Path | None = None
    """The project root the files are in."""
    notes: tuple[Path, ...] = ()
    """The project's notes the prompt would read (``AGENTS.md``...): trusted file by file."""
    changed_files: tuple[str, ...] = ()
    """Files (relative to :attr:`root`) whose content differs from what was trusted, or that
    are new or gone since (``tools/server.py``, ``AGENTS.md (new)``)."""
    core_digest: str = ""
    """:func:`digest` alone (:attr:`digest` adds the notes)."""
    file_digests: Mapping[str, str] = field(default_factory=dict[str, str])
    """Each of :attr:`files` by relative path: its digest, as recorded."""
    note_digests: Mapping[str, str] = field(default_factory=dict[str, str])
    """Each of :attr:`notes` by relative path: its digest, as recorded."""
    confined: tuple[str, ...] = ()
    """Your own hooks and servers that run a file of this project (:func:`global_runs`):
    while the project is not trusted they run confined."""

    @property
    def needs_trust(self) -> bool:
        """True when the project asks for something that needs trust, and is not trusted."""
        return self.asks and not self.trusted

    @property
    def asks(self) -> bool:
        """True when the project has anything that needs trust (trusted or not)."""
        return bool(self.servers) or bool(self.gated) or bool(self.files) or bool(self.notes)

    @property
    def changed(self) -> bool:
        """True when the project was trusted before, for entries it no longer has."""
        return self.reason is TrustReason.CHANGED

    @property
    def state(self) -> str:
        """How an untrusted project is described to the user (naming what changed)."""
        if not self.changed:
            return "not trusted"
        return "changed since it was trusted" + changed_suffix(self.changed_files)


CHANGED_SHOWN = 5
"""Changed files named in one line (the review lists them all)."""


def changed_suffix(names: tuple[str, ...]) -> str:
    """`` (changed: a, b and 3 more)``, or nothing."""
    if not names:
        return ""
    from codebot_mcp.core.secrets.redact import printable

    shown = ", ".join(printable(n, one_line=True) for n in names[:CHANGED_SHOWN])
    more = f" and {len(names) - CHANGED_SHOWN} more" if len(names) > CHANGED_SHOWN else ""
    return f" (changed: {shown}{more})"


DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"


@dataclass(frozen=True, slots=True)
class Expansion:
    """One ``${VAR}`` an entry expands, where, and what kind of value it is."""

    variable: str
    key: str
    """Where in the entry: ``args[1]``, ``env.TOKEN``, ``headers.Authorization``, ``url``..."""
    credential: bool
    """The name looks like a credential (``*KEY*``, ``*TOKEN*``, ``*SECRET*``...)."""
    api_key: bool
    """It holds the model's API key (by name, or by the same value)."""
    is_set: bool


def expansions(
    config: ServerConfig,
    api_key_env: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[Expansion]:
    """Every variable the entry expands, flagged when it is a credential or the API key."""
    from codebot_mcp.core.envexpand import referenced

    environ = os.environ if environ is None else environ
    key_names = {api_key_env or DEFAULT_API_KEY_ENV, DEFAULT_API_KEY_ENV}
    key_values = {environ[n] for n in key_names if environ.get(n)}
    out: list[Expansion] = []
    for key, text in expandable_values(config.raw):
        for name in referenced(text):
            value = environ.get(name)
            holds_key = name in key_names or (bool(value) and value in key_values)
            out.append(Expansion(name, key, is_credential_name(name), holds_key, value is not None))
    return out


def project_servers(settings: Settings) -> tuple[ServerConfig, ...]:
    """The servers whose entry comes from the project file."""
    if settings.project_file is None:
        return ()
    sources = settings.project_sources or (settings.project_file,)
    return tuple(c for c in settings.servers.values() if c.source in sources)


def run_facts(config: ServerConfig) -> dict[str, Any]:
    """What decides what an entry runs, beyond its text: the resolved program, ``cwd``, the
    names of its ``env`` and any ``PATH`` it sets (a changed file on disk changes these)."""
    facts: dict[str, Any] = {"env_keys": sorted(config.env)}
    if config.type == "stdio":
        found = find_command(config.command, config.cwd, config.env) if config.command else None
        facts["executable"] = os.path.realpath(found) if found else None
        facts["cwd"] = os.path.realpath(config.cwd) if config.cwd else None
        facts["path"] = config.env.get("PATH")
    else:
        facts["url"] = config.url
        command = config.oauth.id_token_command
        if command:  # a program the entry runs too: which file it is counts (absent otherwise)
            found = find_command(command[0], config.cwd, {})
            facts["id_token_command"] = os.path.realpath(found) if found else None
    return facts


def digest(
    servers: tuple[ServerConfig, ...],
    gated: Mapping[str, Any],
    root: Path | None = None,
    files: tuple[Path, ...] = (),
    hashed: Mapping[str, str] | None = None,
) -> str:
    """A hash of everything that decides what the project runs: the project root, each server
    entry as written and its :func:`run_facts`, the gated settings, and each project file
    (definitions, the files servers, hooks, commands and skills run) by path and content
    (``hashed``: those digests, already taken by :func:`file_digests`)."""
    import hashlib  # deferred: 2-3 ms that `codebot --help` need not pay

    section: dict[str, Any] = {
        "root": os.path.realpath(root) if root else None,
        "mcp_servers": {c.name: {"raw": c.raw, "facts": run_facts(c)} for c in servers},
        "settings": dict(gated),
    }
    if files:  # absent otherwise: trust recorded before files were covered stays valid
        section["files"] = dict(hashed) if hashed is not None else file_digests(files, root)
    text = json.dumps(section, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def relative(path: Path, root: Path | None) -> str:
    """``path`` as the user reads it: relative to ``root`` (as given or resolved), else whole."""
    return _relative(path, root)


def _relative(path: Path, root: Path | None) -> str:
    if root is None:
        return str(path)
    for base in (root, Path(os.path.realpath(root))):
        if path.is_relative_to(base):
            return path.relative_to(base).as_posix()
    return str(path)


def file_digests(files: tuple[Path, ...], root: Path | None) -> dict[str, str]:
    """Each file's digest by its path relative to ``root``."""
    return {_relative(p, root): _file_digest(p) for p in files}


MAX_HASHED_BYTES = 16 * 1024 * 1024
"""Of a larger project file, its size and this many first bytes are fingerprinted."""


def _file_digest(path: Path) -> str:
    """``sha256:<hex>`` of the content (a symlink also by its target, a huge file by its size
    and head), or why it is not read."""
    import hashlib

    prefix = f"link:{os.readlink(path)}:" if path.is_symlink() else ""
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > MAX_HASHED_BYTES:
                head = hashlib.sha256(handle.read(MAX_HASHED_BYTES)).hexdigest()
                return f"{prefix}size:{size}:head-sha256:{head}"
            return prefix + "sha256:" + hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError as exc:
        return prefix + f"unreadable:{exc.errno}"


def run_commands(settings: Settings) -> list[combining.RunCommand]:
    """The commands the settings run through a feature's key (``hooks``: its value is the
    feature's, which lists them, ``core.config.combining.EntryCombiner``), in order."""
    return [
        command
        for entries in combining.entry_combiners()
        for command in entries.commands(settings.sections.get(entries.name))
    ]


def project_files(settings: Settings) -> tuple[Path | None, tuple[Path, ...]]:
    """The root of the project's definition folders, and the files that need trust there:
    its definitions, the files its servers run, the files its hooks name, and the files its
    commands and skills name (:mod:`.runfiles`)."""
    from codebot_mcp.core.config import discovery, runfiles
    from codebot_mcp.core.config.hooks import script_files

    root = discovery.project_root(settings.cwd, settings.project_root)
    if root is None:
        return None, ()
    definitions = discovery.definition_files(root, claude=settings.claude_files)
    found = list(definitions)
    seen = set(found)

    def add(paths: list[Path]) -> None:
        for path in paths:
            if path not in seen:
                seen.add(path)
                found.append(path)

    for config in project_servers(settings):
        add(runfiles.server_files(config, root))
    sources = settings.project_sources or (
        (settings.project_file,) if settings.project_file else ()
    )
    for command in run_commands(settings):
        if command.source in sources:
            add(script_files(command.command, root))
    add(runfiles.definition_scripts(definitions, root))
    for files in global_runs(settings, root).values():
        add(list(files))
    return root, tuple(found)


def global_runs(settings: Settings, root: Path | None) -> dict[str, tuple[Path, ...]]:
    """Your own (global) hooks and stdio servers that run a file inside this project, by
    ``hook <key> of <file>`` / ``server <name> of <file>``: the files they name.

    A global entry runs as you, but a script it names inside the project is the project's:
    a confined ``bash`` could rewrite it and have it run unconfined later. So these files are
    covered by the project's trust like its own run files (:func:`project_files`), and while
    the project is not trusted the entries run confined (:func:`without_untrusted`). An entry
    that already runs confined (its own ``sandbox``), and files of codebot's global folder,
    are left out. "Your own" hooks include those of ``~/.claude/settings.json`` (Claude Code's
    file, :mod:`.claudefiles`): any hook whose file is not one of the project's.
    """
    if root is None:
        return {}
    from codebot_mcp.core.config import runfiles
    from codebot_mcp.core.config.hooks import script_files

    sources = set(settings.project_sources or ())
    if settings.project_file is not None:
        sources.add(settings.project_file)
    mine = Path(os.path.realpath(paths.codebot_home()))
    out: dict[str, tuple[Path, ...]] = {}

    def keep(name: str, files: list[Path]) -> None:
        files = [p for p in files if not p.is_relative_to(mine)]
        if files:
            out[name] = tuple(files)

    for command in run_commands(settings):
        if command.source not in sources and not command.confined:
            keep(command.label, script_files(command.command, root))
    for config in settings.servers.values():
        if config.source not in sources and config.sandbox is None:
            keep(f"server {config.name} of {config.source}", runfiles.server_files(config, root))
    return out


def project_notes(settings: Settings, root: Path | None) -> tuple[Path | None, tuple[Path, ...]]:
    """The project's notes the prompt reads for ``settings.cwd``, and the root they are
    trusted under (the project's, else the working directory that holds them)."""
    from codebot_mcp.core.config import runfiles

    notes = tuple(runfiles.note_files(settings.cwd, settings.project_root or root))
    if notes and root is None:
        root = settings.cwd.resolve()
    return root, notes


def held_digests(files: tuple[Path, ...]) -> dict[Path, str]:
    """Each file's digest as :func:`digest` takes it, by resolved path: what a load of a
    project definition is held to (a file edited after trust is refused, not used)."""
    return {p.resolve(): _file_digest(p) for p in files if not p.is_symlink()}


def store_key(settings: Settings, root: Path | None = None) -> str | None:
    """The project as the user reached it: its root directory, not the file a symlinked
    ``.codebot/settings.json`` points to (that would borrow another project's trust).
    ``root``: the definitions' root, for a project without a settings file."""
    found = settings.project_root or root
    if found is None:
        return None
    return os.path.abspath(found)


def _store_path() -> Path:
    return paths.state_dir() / STORE_NAME


def _read_store() -> dict[str, Any]:
    try:
        data = jsonutil.loads(_store_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): v for k, v in data.items()}


@dataclass(frozen=True, slots=True)
class _Record:
    digest: str
    files: Mapping[str, str]
    notes: Mapping[str, str]
    named: bool
    """The record names its files (written since files were named)."""


def _record_of(value: Any) -> _Record | None:
    if isinstance(value, str):
        return _Record(value, {}, {}, False)
    if not isinstance(value, dict):
        return None

    def names(key: str) -> dict[str, str]:
        part = value.get(key)
        if not isinstance(part, dict):
            return {}
        return {str(k): str(v) for k, v in part.items()}

    return _Record(str(value.get("digest", "")), names("files"), names("notes"), True)


MAX_RECORDED_FILES = 4_000
"""File digests kept per project in the store (beyond them a change is still caught by the
project's digest, only not named)."""


def _changes(
    recorded: _Record | None, files: Mapping[str, str], notes: Mapping[str, str]
) -> tuple[str, ...]:
    """What differs from the record, by file: changed, ``(new)`` or ``(removed)``."""
    if recorded is None:
        return ()
    out: list[str] = []
    if recorded.named:
        for name, value in files.items():
            before = recorded.files.get(name)
            if before != value:
                out.append(name if before is not None else f"{name} (new)")
        out += [f"{name} (removed)" for name in recorded.files if name not in files]
    for name, value in notes.items():
        before = recorded.notes.get(name)
        if before != value:
            out.append(name if before is not None else f"{name} (new)")
    return tuple(out)


def check(settings: Settings, *, assume_trusted: bool = False) -> TrustCheck:
    """Decide whether the project's servers, gated settings and files may take effect."""
    import hashlib

    servers = project_servers(settings)
    gated = settings.project_gated
    file = settings.project_file
    root, files = project_files(settings)
    root, notes = project_notes(settings, root)
    hashed = file_digests(files, root)
    value = digest(servers, gated, settings.project_root or root, files, hashed)
    noted = file_digests(notes, root)
    combined = value
    if noted:
        text = json.dumps([value, noted], sort_keys=True)
        combined = hashlib.sha256(text.encode()).hexdigest()
    key = store_key(settings, root)
    api = settings.untrusted_fallback.get("api_key_env") or settings.api_key_env

    def result(trusted: bool, reason: TrustReason, changed: tuple[str, ...] = ()) -> TrustCheck:
        return TrustCheck(
            file,
            combined,
            key,
            api,
            servers,
            gated,
            trusted,
            reason,
            files,
            root,
            notes,
            changed,
            value,
            hashed,
            noted,
            tuple(global_runs(settings, root)),
        )

    if (not servers and not gated and not files and not notes) or key is None:
        return TrustCheck(file, combined, key, api, (), {}, True, TrustReason.NOTHING)
    if assume_trusted:
        return result(True, TrustReason.FLAG)
    if os.environ.get(TRUST_ENV, "") in ("1", "true", "yes"):
        return result(True, TrustReason.ENV)
    recorded = _record_of(_read_store().get(key))
    if (
        recorded is not None
        and recorded.digest == value
        and all(recorded.notes.get(n) == d for n, d in noted.items())
    ):
        return result(True, TrustReason.RECORDED)
    if recorded is None:
        return result(False, TrustReason.UNTRUSTED)
    changed = _changes(recorded, hashed, noted)
    if recorded.digest != value and file is not None and not _changes(recorded, hashed, {}):
        changed = (_relative(file, root), *changed)  # no file changed: its entries or settings
    return result(False, TrustReason.CHANGED, changed)


def record(result: TrustCheck) -> Path:
    """Remember that the project's current entries, settings, files and notes are trusted;
    returns the store path."""
    assert result.key is not None
    store = _read_store()
    before = _record_of(store.get(result.key))
    notes = dict(before.notes) if before is not None else {}
    notes.update(result.note_digests)
    files = dict(list(result.file_digests.items())[:MAX_RECORDED_FILES])
    store[result.key] = {
        "digest": result.core_digest or result.digest,
        "files": files,
        "notes": dict(list(notes.items())[-MAX_RECORDED_FILES:]),
    }
    path = _store_path()
    paths.private_dir(path.parent)
    atomic_write(path, json.dumps(store, indent=2, sort_keys=True), mode=0o600)
    return path


def without_untrusted(settings: Settings, result: TrustCheck) -> Settings:
    """The settings without what an untrusted project asks for: its servers are dropped and
    the gated settings fall back to the global values (its deny and ask rules stay: they only
    make codebot more careful).
    """
    if not result.needs_trust:
        return settings
    names = {c.name for c in result.servers}
    kept = {n: c for n, c in settings.servers.items() if n not in names}
    kept.update({n: settings.shadowed[n] for n in names if n in settings.shadowed})
    kept = dict(sorted(kept.items()))
    fallback = dict(settings.untrusted_fallback)
    confine = global_runs(replace(settings, servers=kept, **fallback), result.root)
    if confine and result.root is not None:
        # Your own hooks and servers that run a file of this untrusted project run confined
        # (the file may have been written by a confined tool): see :func:`global_runs`.
        held = dict(fallback.get("sections", settings.sections))
        for entries in combining.entry_combiners():
            held[entries.name] = entries.confine(held.get(entries.name), confine)
        fallback["sections"] = held
        workspace = Path(os.path.realpath(result.root))
        kept = {
            n: replace(c, sandbox=ServerSandbox("workspace-write", workspace=workspace))
            if f"server {n} of {c.source}" in confine
            else c
            for n, c in kept.items()
        }
    return replace(settings, servers=kept, project_gated={}, **fallback)


def untrusted_message(result: TrustCheck) -> str:
    """One line naming what is skipped and the fixes."""
    from codebot_mcp.core.secrets.redact import printable

    parts = []
    if result.servers:
        names = ", ".join(printable(c.name, one_line=True) for c in result.servers)
        parts.append(f"project servers ({names})")
    if result.gated:
        parts.append(f"project settings ({', '.join(result.gated)})")
    listed = (*result.files, *result.notes)
    if listed:
        shown = [printable(_relative(p, result.root), one_line=True) for p in listed[:3]]
        more = f" and {len(listed) - 3} more" if len(listed) > 3 else ""
        parts.append(f"project files ({', '.join(shown)}{more})")
    confined = ""
    if result.confined:
        names = ", ".join(printable(n, one_line=True) for n in result.confined[:3])
        more = f" and {len(result.confined) - 3} more" if len(result.confined) > 3 else ""
        confined = f"; until then your own {names}{more} run confined"
    return (
        f"skipping {' and '.join(parts)} from {result.project_file or result.root}: "
        f"the project is {result.state}; "
        f"run `codebot trust` to review and trust it, or pass --trust-project "
        f"(or set {TRUST_ENV}=1){confined}"
    )


def record_note(key: str, name: str, value: str) -> bool:
    """Add one note's digest to the project's record (False: no record written since files
    were named, so nothing to add it to)."""
    store = _read_store()
    before = _record_of(store.get(key))
    if before is None or not before.named:
        return False
    store[key] = {
        "digest": before.digest,
        "files": before.files,
        "notes": {**before.notes, name: value},
    }
    atomic_write(_store_path(), json.dumps(store, indent=2, sort_keys=True), mode=0o600)
    return True
