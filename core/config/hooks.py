"""Hook entries, as the kernel reads them: the ``hooks`` grammar (Claude Code's shape), checked,
into :class:`HookCommand` records.

::

    "hooks": {
      "PreToolUse": [
        {"matcher": "bash|edit|mcp__github__.*",
         "hooks": [{"type": "command", "command": "./check.sh", "timeout": 60}]}
      ]
    }

The ``hooks`` section is the hooks feature's (``core.hooks.hooksection``: its model, how a
matcher matches); what stays here is what the kernel itself reads: settings loading parses
both settings files (:func:`parse_both`), Claude Code's files and the enabled plugins bring
entries in the same shape (:func:`parse_hooks`), and trust fingerprints every project file a
hook command names (:func:`script_files`), so editing the script needs trust again. Running
them is ``core.hooks.runner``'s job.

Both settings files may hold hooks and all of them run (yours and the project's); the
project's only once the project is trusted (:mod:`core.config.trust`).

A malformed section is a :class:`SettingsError` naming the file and the key; an event or a
hook type codebot does not run (Claude Code has more) is a warning, and is skipped. A hook
entry's plain fields are checked by its model (``core.hooks.hooksection``) as the generated
field table holds it (:func:`_plain`); ``if``, the timeout's cap and the matcher's pattern are
this grammar's own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codebot_mcp.core.config.fieldcheck import fields, refusal, values
from codebot_mcp.core.config.keys import SettingWarning
from codebot_mcp.core.config.keytable import FIELDS
from codebot_mcp.core.errors import SettingsError
from codebot_mcp.core.jsonutil import json_type

EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SessionStart",
    "PreCompact",
    "Notification",
    "PostToolUseFailure",
    "PostCompact",
    "SubagentStart",
    "SubagentStop",
    "SessionEnd",
)
"""The events codebot fires (Claude Code's names)."""
TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")
"""The events about one tool call: the only ones where a hook's ``if`` is tested."""
_ENTRY = "hooks.*[].hooks[]"
"""A hook entry's path in the field table (its model: ``core.hooks.hooksection``)."""
SANDBOX_MODES: tuple[str, ...] = values(f"{_ENTRY}.sandbox")
"""A hook entry's ``sandbox``: run it confined (hooks run as the user by default)."""
UNSUPPORTED_FIELDS = {
    "asyncRewake": 'codebot does not wake the agent from a background hook; use "async"',
    "once": "codebot runs a hook every time its event fires",
    "args": 'codebot runs the "command" line with bash; put the arguments in it',
    "statusMessage": "codebot shows no spinner text for hooks",
}
"""Fields of Claude Code's hook entries that codebot reads but does not honour (a warning
names each); fields nobody documents are warned about too."""
KNOWN_FIELDS: tuple[str, ...] = fields(_ENTRY)
"""The fields of a hook entry codebot reads, as its model declares them."""
DEFAULT_TIMEOUT = 60.0
"""Seconds a hook may run (Claude Code's default)."""
MAX_TIMEOUT = 600.0
"""No hook holds the agent longer than this, whatever its ``timeout`` says."""
PROJECT_DIR_VARIABLES = ("CLAUDE_PROJECT_DIR", "CODEBOT_PROJECT_DIR")
"""Set for every hook to the project root (scripts written for Claude Code use the first)."""


@dataclass(frozen=True, slots=True)
class HookCommand:
    """One command hook, with where it was configured."""

    event: str
    matcher: str
    """``""`` matches everything; see ``core.hooks.hooksection.matches``."""
    command: str
    timeout: float
    source: Path
    key: str
    """Where in the file: ``hooks.PreToolUse[0].hooks[1]``."""
    condition: str = ""
    """``if``: one permission rule (``Bash(git commit:*)``); tool events only."""
    background: bool = False
    """``async``: runs beside the agent; what it says arrives with the next prompt."""
    sandbox: str | None = None
    """``sandbox``: ``workspace-write`` or ``read-only`` runs it confined; None: as the user."""
    env: tuple[tuple[str, str], ...] = ()
    """Variables set for it besides the usual ones (a plugin's ``CLAUDE_PLUGIN_ROOT``)."""


def parse_hooks(
    path: Path, data: Mapping[str, Any]
) -> tuple[tuple[HookCommand, ...], list[SettingWarning]]:
    """The command hooks of one settings file, and warnings for what is skipped.

    Raises:
        SettingsError: the section, a group or a hook has the wrong shape.
    """
    section = data.get("hooks")
    if section is None:
        return (), []
    if not isinstance(section, dict):
        raise _error(path, "hooks", "must be an object mapping event names to lists", section)
    out: list[HookCommand] = []
    warnings: list[SettingWarning] = []
    for event, groups in section.items():
        event = str(event)
        if event not in EVENTS:
            supported = ", ".join(EVENTS)
            message = (
                f"hook event 'hooks.{event}' in {path} is not one codebot fires; ignored "
                f"(it fires {supported})"
            )
            warnings.append(SettingWarning(path, f"hooks.{event}", message))
            continue
        if not isinstance(groups, list):
            raise _error(path, f"hooks.{event}", "must be a list of matcher groups", groups)
        for g, group in enumerate(groups):
            parsed, skipped = _group(path, event, g, group)
            out += parsed
            warnings += skipped
    return tuple(out), warnings


def _group(
    path: Path, event: str, g: int, group: Any
) -> tuple[list[HookCommand], list[SettingWarning]]:
    where = f"hooks.{event}[{g}]"
    if not isinstance(group, dict):
        shape = 'must be an object like {"matcher": "...", "hooks": [...]}'
        raise _error(path, where, shape, group)
    matcher = group.get("matcher", "")
    if matcher is None:
        matcher = ""
    _plain(path, f"{where}.matcher", "hooks.*[].matcher", matcher)
    try:
        re.compile(matcher)
    except re.error as exc:
        raise SettingsError(
            f"'{where}.matcher' in {path} is not a valid regular expression: {exc}",
            hint='Use tool names separated by "|" (bash|edit), or a valid regex (mcp__github__.*).',
        ) from None
    hooks = group.get("hooks")
    if not isinstance(hooks, list):
        raise _error(path, f"{where}.hooks", "must be a list of hooks", hooks)
    out: list[HookCommand] = []
    warnings: list[SettingWarning] = []
    for h, hook in enumerate(hooks):
        key = f"{where}.hooks[{h}]"
        if not isinstance(hook, dict):
            raise _error(path, key, 'must be an object like {"type": "command", ...}', hook)
        kind = hook.get("type", "command")
        if kind != "command":
            message = (
                f"hook '{key}' in {path} has type {json.dumps(kind)}; codebot runs only "
                '"command" hooks, so it is ignored'
            )
            warnings.append(SettingWarning(path, key, message))
            continue
        command = _plain(path, f"{key}.command", f"{_ENTRY}.command", hook.get("command"))
        timeout = _plain(
            path, f"{key}.timeout", f"{_ENTRY}.timeout", hook.get("timeout", DEFAULT_TIMEOUT)
        )
        if timeout > MAX_TIMEOUT:
            message = (
                f"'{key}.timeout' in {path} is {timeout:g} seconds; hooks are stopped after "
                f"{MAX_TIMEOUT:g}"
            )
            warnings.append(SettingWarning(path, f"{key}.timeout", message))
            timeout = MAX_TIMEOUT
        extra = _extras(path, event, key, hook)
        warnings += extra.warnings
        out.append(
            HookCommand(
                event,
                matcher,
                command,
                float(timeout),
                path,
                key,
                condition=extra.condition,
                background=extra.background,
                sandbox=extra.sandbox,
            )
        )
    return out, warnings


@dataclass(slots=True)
class _Extras:
    condition: str
    background: bool
    sandbox: str | None
    warnings: list[SettingWarning]


def _extras(path: Path, event: str, key: str, hook: Mapping[str, Any]) -> _Extras:
    """A hook entry's ``if``, ``async`` and ``sandbox``, and a warning for each field codebot
    does not honour.

    Raises:
        SettingsError: one of them has the wrong type or value.
    """
    warnings: list[SettingWarning] = []
    condition = hook.get("if", "")
    if not isinstance(condition, str):
        raise _error(path, f"{key}.if", 'must be one permission rule like "Bash(git *)"', condition)
    from codebot_mcp.core.config.hookcontract import condition_valid

    if condition and not condition_valid(condition):
        message = (
            f"'{key}.if' in {path} is not a permission rule like \"Bash(git commit:*)\"; "
            "the hook runs on every call (as Claude Code does with a rule it cannot read)"
        )
        warnings.append(SettingWarning(path, f"{key}.if", message))
    if condition and event not in TOOL_EVENTS:
        message = (
            f"'{key}.if' in {path} is tested only on tool events; as in Claude Code, this "
            f"{event} hook never runs"
        )
        warnings.append(SettingWarning(path, f"{key}.if", message))
    background = _plain(path, f"{key}.async", f"{_ENTRY}.async", hook.get("async", False))
    sandbox = hook.get("sandbox")
    if sandbox is not None:
        hint = 'Leave it out to run the hook as you, or write "sandbox": "workspace-write".'
        _plain(path, f"{key}.sandbox", f"{_ENTRY}.sandbox", sandbox, hint)
    shell = hook.get("shell", "bash")
    if shell != "bash":
        message = (
            f"'{key}.shell' in {path} is {json.dumps(shell)}; codebot runs hooks with bash only"
        )
        warnings.append(SettingWarning(path, f"{key}.shell", message))
    for name in hook:
        if name in KNOWN_FIELDS:
            continue
        why = UNSUPPORTED_FIELDS.get(name, "codebot does not know this field")
        message = f"'{key}.{name}' in {path} is not supported ({why}); ignored"
        warnings.append(SettingWarning(path, f"{key}.{name}", message))
    return _Extras(condition, background, sandbox, warnings)


_HINT = (
    'Write hooks as {"PreToolUse": [{"matcher": "bash", "hooks": '
    '[{"type": "command", "command": "./check.sh", "timeout": 60}]}]}.'
)


def _error(path: Path, key: str, what: str, value: Any) -> SettingsError:
    return SettingsError(f"'{key}' in {path} {what}, found {json_type(value)}", hint=_HINT)


def _plain(path: Path, key: str, field: str, value: Any, hint: str = _HINT) -> Any:
    """``value``, checked by the entry model's ``field`` (its JSON type, values and bounds, as
    the field table holds them: ``core.config.fieldcheck.refusal``).

    Raises:
        SettingsError: the model does not take it (naming the file and ``key``).
    """
    problem = refusal(FIELDS[field], value)
    if problem is not None:
        raise SettingsError(f"'{key}' in {path} {problem}", hint=hint)
    return value


def script_files(command: str, root: Path) -> list[Path]:
    """Files inside ``root`` that a hook command names (its script, a config it passes):
    the trust fingerprint covers their content. ``$CLAUDE_PROJECT_DIR`` is the root."""
    try:
        import shlex  # only when hooks are configured

        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()
    out: list[Path] = []
    root = root.resolve()
    for word in words:
        for variable in PROJECT_DIR_VARIABLES:
            word = word.replace("${" + variable + "}", str(root)).replace(f"${variable}", str(root))
        if not word or word.startswith("-"):
            continue
        candidate = Path(word).expanduser()
        candidate = candidate if candidate.is_absolute() else root / candidate
        try:
            resolved = candidate.resolve()
            resolved.relative_to(root)
        except (OSError, ValueError):
            continue
        if resolved.is_file() and resolved not in out:
            out.append(resolved)
    return out


Parsed = tuple[tuple[HookCommand, ...], list[SettingWarning]]


def parse_both(
    global_path: Path,
    global_data: Mapping[str, Any],
    project_path: Path | None,
    project_data: Mapping[str, Any],
) -> tuple[Parsed, Parsed]:
    """The hooks (and warnings) of your settings file and of the project's.

    Raises:
        SettingsError: a section has the wrong shape.
    """
    mine = parse_hooks(global_path, global_data)
    project: Parsed = ((), []) if project_path is None else parse_hooks(project_path, project_data)
    return mine, project
