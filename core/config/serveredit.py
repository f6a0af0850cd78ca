"""Edit the settings files from the shell: add, remove, enable and disable server entries.

Every write reads the file as it is, changes one entry and writes it back atomically (a
temporary file in the same directory, then ``os.replace``), so a crash leaves the old file or the
new one, never half of one. The file's other keys, and their order, are kept. A global settings
file is created 0600 in a 0700 directory (it may name commands and variables worth hiding); an
existing file keeps its mode.

Values that look like secrets are refused in clear (:mod:`core.secretscan`): the settings
should say ``${VAR}`` and the secret stay in the environment.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from codebot_mcp.core.config import paths
from codebot_mcp.core.config.servers import SERVER_NAME_RE, parse_server
from codebot_mcp.core.errors import SettingsError, UsageError
from codebot_mcp.core.fsutil import atomic_write

Scope = Literal["global", "project"]
SCOPES: tuple[str, ...] = ("global", "project")


@dataclass(frozen=True, slots=True)
class Edit:
    """What a write did, for the message the command prints."""

    path: Path
    created: bool
    """The file did not exist before."""


def settings_file(scope: Scope, cwd: Path) -> Path:
    """The file a scope writes to.

    ``global`` is ``$CODEBOT_HOME/settings.json``. ``project`` is the nearest existing
    ``.codebot/settings.json`` from ``cwd`` upward, else ``cwd/.codebot/settings.json``.

    Raises:
        ProjectWriteError: the project file would be codebot's own (run from the home
            directory) or lead outside the project (``core.config.projectfiles``).
    """
    if scope == "global":
        return paths.global_settings_path()
    from codebot_mcp.core.config import projectfiles
    from codebot_mcp.core.config.discovery import find_project_file

    path = find_project_file(cwd) or cwd / paths.PROJECT_DIR / paths.SETTINGS_FILE
    projectfiles.landing(path, path.parent.parent)
    return path


def read_document(path: Path) -> dict[str, Any]:
    """The file's JSON object in file order (``{}`` when it does not exist or is empty).

    Raises:
        SettingsError: the file cannot be read, is not JSON, or is not an object.
    """
    if not path.exists():
        return {}
    from codebot_mcp.core.config.settings import read_json

    return read_json(path)


def servers_key(document: Mapping[str, Any]) -> str:
    """``mcpServers`` when the file already uses it, else codebot's ``mcp_servers``."""
    return "mcpServers" if "mcpServers" in document else "mcp_servers"


def server_entries(document: dict[str, Any], path: Path) -> dict[str, Any]:
    """The document's server table (created when missing), for editing in place.

    Raises:
        SettingsError: the table is not an object.
    """
    key = servers_key(document)
    entries = document.setdefault(key, {})
    if not isinstance(entries, dict):
        raise SettingsError(
            f"'{key}' in {path} is not an object; codebot will not rewrite it",
            hint=f"Fix '{key}' by hand first (it maps server names to entries).",
        )
    return entries


def write_document(path: Path, document: Mapping[str, Any], *, private: bool) -> Edit:
    """Write ``document`` to ``path`` atomically (temporary file + rename).

    A new file gets mode 0600 when ``private`` (the global file), else 0644 filtered by the
    umask; an existing file keeps its mode. A new ``private`` directory gets 0700. Any file
    but the global settings file is a project file: it is written by
    :func:`core.config.projectfiles.write`, never outside the project it belongs to (a
    symlinked ``.codebot`` cannot send it into your global settings).

    Raises:
        ProjectWriteError: a project file would land outside its project or in codebot's own
            directories.
        SettingsError: the file or its directory cannot be written.
    """
    from codebot_mcp.core.config import projectfiles

    created = not path.exists()
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    try:
        if projectfiles.is_global_settings(path):
            paths.private_dir(path.parent)
            atomic_write(path, text, mode=0o600 if private and created else None)
        else:
            projectfiles.write(path, text, root=path.parent.parent)
    except OSError as exc:
        raise SettingsError(
            f"cannot write settings file {path}: {exc.strerror or exc}",
            hint=f"Check that {path.parent} exists and is writable.",
        ) from None
    return Edit(path, created)


def check_name(name: str) -> None:
    """Raise a usage error for a server name codebot cannot use."""
    if not SERVER_NAME_RE.match(name) or "__" in name:
        raise UsageError(
            f"invalid server name '{name}': use only letters, digits, '-' and '_', without '__'",
            hint="The name becomes part of tool names (mcp__NAME__tool); try e.g. 'my-server'.",
        )


class _Unset(dict[str, str]):
    """The environment an entry is checked against before it is written: none of its
    variables is set. ``${VAR:-default}`` takes its default, as it would when VAR is unset;
    ``${VAR}`` stands for a value of the right shape (an http URL in ``url``), since it is set
    when codebot runs. So ``"url": "${BASE:-https://host}/mcp"`` is checked as
    ``https://host/mcp``, exactly as loading the settings would."""

    PLACEHOLDER = "https://placeholder.invalid"

    def __init__(self, entry: Any) -> None:
        super().__init__()
        from codebot_mcp.core.envexpand import defaulted, referenced

        texts = list(_strings(entry))
        with_default = {n for t in texts for n in defaulted(t)}
        without = {n for t in texts for n in referenced(t)} - with_default
        self._defaulted = with_default - without  # a name used both ways gets the placeholder

    def get(self, key: str, default: Any = None) -> str | None:  # type: ignore[override]
        return None if key in self._defaulted else self.PLACEHOLDER


def _strings(value: Any) -> Any:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def validate_entry(name: str, entry: Any, path: Path) -> None:
    """Check an entry the way loading it would, before it is written.

    Unset ``${VAR}`` references are fine here (they are set when codebot runs); everything
    else that would make the entry unusable is a usage error, and so are secrets in clear and
    unknown keys.

    Raises:
        UsageError: the entry is invalid, has an unknown key, or holds a secret in clear.
        PolicyError: the managed settings do not allow the server (``core.config.managed``).
        SettingsError: the managed settings file is broken.
    """
    from codebot_mcp.core.config import managed

    check_name(name)
    config = parse_server(name, entry, path, _Unset(entry), path.parent)
    if config.error is not None:
        raise UsageError(config.error, hint=config.hint)
    managed.require_allowed(managed.load(), config)  # before anything is written
    if config.warnings:
        warning = config.warnings[0]
        if warning.kind == "unknown_key":  # refused here, so not "ignored" as when loading
            guess = f" (did you mean '{warning.did_you_mean}'?)" if warning.did_you_mean else ""
            raise UsageError(
                f"server '{name}': unknown key '{warning.key}'{guess}; nothing was written",
                hint="Rename or remove the key: codebot writes only keys it knows "
                "(`codebot mcp add --help` lists them).",
            )
        raise UsageError(
            f"server '{name}': {warning}; nothing was written",
            hint=f"{warning.hint}; `codebot mcp add --help` lists the options.",
        )
    from codebot_mcp.core.secrets.scan import refuse_secrets

    refuse_secrets(name, entry)


def add_server(path: Path, name: str, entry: Mapping[str, Any], *, force: bool = False) -> Edit:
    """Add (or with ``force`` replace) one server entry in ``path``.

    Raises:
        UsageError: the entry is invalid, or the name exists and ``force`` is not set.
        SettingsError: the file cannot be read or written.
    """
    validate_entry(name, dict(entry), path)
    document = read_document(path)
    entries = server_entries(document, path)
    if name in entries and not force:
        raise UsageError(
            f"server '{name}' already exists in {path}",
            hint=f"Remove it first (`codebot mcp remove {name}`), or pass --force to replace it.",
        )
    entries[name] = dict(entry)
    return write_document(path, document, private=_is_global(path))


def remove_server(path: Path, name: str) -> Edit:
    """Remove one server entry from ``path``.

    Raises:
        UsageError: ``path`` has no such entry.
        SettingsError: the file cannot be read or written.
    """
    document = read_document(path)
    entries = server_entries(document, path) if document else {}
    if name not in entries:
        raise UsageError(f"server '{name}' is not defined in {path}")
    del entries[name]
    return write_document(path, document, private=_is_global(path))


def set_enabled(path: Path, name: str, enabled: bool) -> Edit:
    """Set ``enabled`` on one entry (enabling removes the key: true is the default).

    Raises:
        UsageError: ``path`` has no such entry, or it is not an object.
        SettingsError: the file cannot be read or written.
    """
    document = read_document(path)
    entries = server_entries(document, path) if document else {}
    entry = entries.get(name)
    if not isinstance(entry, dict):
        raise UsageError(f"server '{name}' is not defined in {path}")
    if enabled:
        entry.pop("enabled", None)
    else:
        entry["enabled"] = False
    return write_document(path, document, private=_is_global(path))


def _is_global(path: Path) -> bool:
    from codebot_mcp.core.config import projectfiles

    return projectfiles.is_global_settings(path)


def parse_env(pairs: list[str]) -> dict[str, str]:
    """``-e KEY=VALUE`` options as a mapping, in the order given.

    Raises:
        UsageError: a pair has no ``=`` or an invalid variable name.
    """
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            raise UsageError(
                f"-e {pair!r}: expected KEY=VALUE with a variable name as KEY",
                hint="Write -e API_URL=https://example.com or -e TOKEN='${TOKEN}'.",
            )
        out[key] = value
    return out


def parse_header(lines: list[str]) -> dict[str, str]:
    """``--header 'Key: Value'`` options as a mapping, in the order given.

    Raises:
        UsageError: a header has no ``:`` or an empty name.
    """
    out: dict[str, str] = {}
    for line in lines:
        key, sep, value = line.partition(":")
        key = key.strip()
        if not sep or not key or not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", key):
            raise UsageError(
                f"--header {line!r}: expected 'Name: value'",
                hint="Write --header 'Authorization: Bearer ${TOKEN}'.",
            )
        out[key] = value.strip()
    return out


def build_entry(  # noqa: C901 - one check per option, in the order of the help
    name: str,
    argv: list[str],
    *,
    url: str | None,
    transport: str | None,
    env: list[str],
    headers: list[str],
    timeout: float | None,
    tool_timeout: float | None,
    include_tools: list[str],
    exclude_tools: list[str],
    disabled: bool,
) -> dict[str, Any]:
    """The settings entry ``codebot mcp add`` writes, from its options.

    Raises:
        UsageError: the options contradict each other or miss the command or URL.
    """
    kind = {"http": "http", "streamable-http": "http", "stdio": "stdio"}.get(transport or "")
    if url is None and kind == "http" and len(argv) == 1 and "://" in argv[0]:
        url, argv = argv[0], []  # `--transport http NAME URL`, as Claude Code writes it
    entry: dict[str, Any] = {}
    if url is not None:
        if argv:
            raise UsageError(
                "pass either --url or a command after `--`, not both",
                hint=f"codebot mcp add {name} --url URL, or codebot mcp add {name} -- COMMAND.",
            )
        if kind == "stdio":
            raise UsageError("--transport stdio needs a command, not --url")
        entry["type"] = "http"
        entry["url"] = url
    elif argv:
        if kind == "http":
            raise UsageError(
                "--transport http needs --url URL", hint=f"codebot mcp add {name} --url URL"
            )
        entry["command"] = argv[0]
        if argv[1:]:
            entry["args"] = argv[1:]
    else:
        raise UsageError(
            "missing the command (after `--`) or --url",
            hint=f"codebot mcp add {name} -- npx -y PACKAGE, or codebot mcp add {name} --url URL.",
        )
    if env:
        if "url" in entry:
            raise UsageError("--env is for stdio servers; an http server takes --header")
        entry["env"] = parse_env(env)
    if headers:
        if "url" not in entry:
            raise UsageError("--header is for http servers; a stdio server takes --env")
        entry["headers"] = parse_header(headers)
    for key, value in (("timeout", timeout), ("tool_timeout", tool_timeout)):
        if value is not None:
            entry[key] = int(value) if value == int(value) else value
    if include_tools:
        entry["include_tools"] = include_tools
    if exclude_tools:
        entry["exclude_tools"] = exclude_tools
    if disabled:
        entry["enabled"] = False
    return entry
