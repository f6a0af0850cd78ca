"""Claude Code's hook contract: the names and fields a hook script written for Claude Code
reads and writes, translated both ways for codebot's built-in tools.

- :func:`claude_name`: ``bash`` → ``Bash`` (MCP tools keep ``mcp__<server>__<tool>``);
- :func:`claude_input`: a call's arguments as Claude Code's ``tool_input`` (``file_path``
  absolute, ``timeout`` in milliseconds, ``subagent_type``, …), and :func:`codebot_input`
  back, for a hook's ``updatedInput``;
- :func:`claude_response`: ``tool_response`` for ``PostToolUse``, Claude Code's fields beside
  codebot's own (``content``, ``is_error``);
- :func:`condition_matches`: a hook's ``if``, one permission rule in Claude Code's syntax
  (``Bash(git commit:*)``, ``Edit(*.ts)``, ``mcp__github__*``).

``docs/hooks.md`` holds the table this module implements; a test holds the two together.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

CLAUDE_NAMES = {
    "bash": "Bash",
    "read": "Read",
    "write": "Write",
    "edit": "Edit",
    "glob": "Glob",
    "grep": "Grep",
    "task": "Agent",
    "skill": "Skill",
    "todo_write": "TodoWrite",
    "bash_output": "BashOutput",
    "bash_kill": "KillShell",
}
"""codebot's built-in tool → the name Claude Code gives the same tool."""
OLD_NAMES = {"Task": "task", "MultiEdit": "edit", "LS": "glob", "KillBash": "bash_kill"}
"""Older Claude Code names still found in files written for it."""
CODEBOT_NAMES = {**{v: k for k, v in CLAUDE_NAMES.items()}, **OLD_NAMES}
"""A Claude Code name → codebot's tool."""

# (codebot argument, Claude Code field) per tool; a field not listed passes as it is.
_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "read": (("path", "file_path"),),
    "write": (("path", "file_path"),),
    "edit": (("path", "file_path"),),
    "grep": (("ignore_case", "-i"), ("context", "-C")),
    "task": (("agent", "subagent_type"),),
    "skill": (("name", "skill"),),
    "bash_output": (("job_id", "bash_id"),),
    "bash_kill": (("job_id", "shell_id"),),
}
_ABSOLUTE = {"read", "write", "edit"}
"""Tools whose ``file_path`` Claude Code always sends absolute."""


def claude_name(tool: str) -> str:
    """The name a hook sees for ``tool`` (MCP and unknown tools keep theirs)."""
    return CLAUDE_NAMES.get(tool, tool)


def claude_input(tool: str, arguments: Mapping[str, Any], cwd: Path) -> dict[str, Any]:
    """``tool_input`` for a call of codebot's ``tool`` with ``arguments``."""
    out = dict(arguments)
    for mine, theirs in _FIELDS.get(tool, ()):
        if mine in out:
            out[theirs] = out.pop(mine)
    path = out.get("file_path")
    if tool in _ABSOLUTE and isinstance(path, str) and path:
        out["file_path"] = os.path.abspath(cwd / Path(path).expanduser())
    if tool == "bash":
        timeout = out.get("timeout")
        if isinstance(timeout, int | float) and not isinstance(timeout, bool):
            out["timeout"] = int(timeout * 1000)  # Claude Code's Bash timeout is in ms
        if out.pop("sandbox", None) is False:
            out["dangerouslyDisableSandbox"] = True
    if tool == "grep":
        out.setdefault("output_mode", "content")  # codebot's grep shows matching lines
    return out


def codebot_input(tool: str, tool_input: Mapping[str, Any]) -> dict[str, Any]:
    """A hook's ``updatedInput`` (Claude Code's fields) as arguments of codebot's ``tool``;
    codebot's own argument names are taken as they are."""
    out = dict(tool_input)
    for mine, theirs in _FIELDS.get(tool, ()):
        if theirs in out:
            out[mine] = out.pop(theirs)
    if tool == "bash":
        timeout = out.get("timeout")
        if isinstance(timeout, int | float) and not isinstance(timeout, bool):
            out["timeout"] = max(1, round(timeout / 1000))
        if out.pop("dangerouslyDisableSandbox", None) is True:
            out["sandbox"] = False
        out.pop("description", None)
    if tool == "grep":
        out.pop("output_mode", None)
    return out


def claude_response(
    tool: str,
    arguments: Mapping[str, Any],
    result: tuple[str, bool, Mapping[str, Any]],
    cwd: Path,
) -> dict[str, Any]:
    """``tool_response`` for a ``result`` (text, is_error, data): codebot's fields
    (``content``, ``is_error``, the tool's data) and Claude Code's for the built-ins
    (``stdout`` for Bash; ``filePath``, absolute, for the file tools; a Write's ``content``
    is what was written, as in Claude Code)."""
    text, is_error, data = result
    out: dict[str, Any] = {"content": text, "is_error": is_error, **data}
    path = arguments.get("path")
    if isinstance(path, str) and path:
        path = os.path.abspath(cwd / Path(path).expanduser())
    if tool == "bash":
        out.update(stdout=text, stderr="", interrupted=False, isImage=False)
    elif tool in ("write", "edit") and isinstance(path, str):
        out.update(filePath=path, success=not is_error)
        if tool == "edit":
            out.update(
                oldString=arguments.get("old_string"),
                newString=arguments.get("new_string"),
                replaceAll=bool(arguments.get("replace_all")),
            )
        else:
            out.update(type="update", content=arguments.get("content", text))
    elif tool == "read" and isinstance(path, str):
        out.update(type="text", file={"filePath": path, "content": text})
    return out


RULE = re.compile(r"^\s*([A-Za-z0-9_*.-]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)
"""One permission rule, ``Tool`` or ``Tool(pattern)``: group 1 the tool, group 2 the pattern
(Claude Code's rules and hooks' ``if`` conditions are written alike)."""
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SEPARATORS = re.compile(r"&&|\|\||[;|&\n]")
_SUBSHELL = re.compile(r"\$\(([^()]*)\)|`([^`]*)`")


def condition_valid(rule: str) -> bool:
    """Whether ``rule`` reads as one permission rule (``Tool`` or ``Tool(pattern)``)."""
    return RULE.match(rule) is not None


def condition_matches(
    rule: str, tool: str, arguments: Mapping[str, Any], cwd: Path, *, every: bool = False
) -> bool:
    """Whether a hook's ``if`` covers this call of codebot's ``tool``. As Claude Code: for
    Bash every subcommand is tested (``$(…)`` and backticks included) after leading
    ``VAR=x`` assignments; ``:*`` at the end is `` *``; a rule that cannot be read, or a
    command that cannot be parsed, matches (the hook runs: it fails open).

    ``every``: the reading of an *allow* permission rule (``core.agent.permissions``): every
    subcommand must match, and a rule or command that cannot be read matches nothing (it
    fails closed: ``Bash(git status:*)`` does not allow ``git status; rm -rf ~``)."""
    found = RULE.match(rule)
    if found is None:
        return not every
    name, pattern = found.group(1), found.group(2)
    if not _name_matches(name, tool):
        return False
    if pattern is None or pattern.strip() in ("", "*"):
        return True
    pattern = pattern.strip()
    if tool == "bash":
        command = arguments.get("command")
        if not isinstance(command, str):
            return not every
        return _command_matches(pattern, command, every=every)
    if tool in ("read", "write", "edit", "glob", "grep"):
        path = arguments.get("path")
        return isinstance(path, str) and _path_matches(pattern, path, cwd)
    if tool == "task":
        return fnmatchcase(str(arguments.get("agent") or ""), pattern)
    return fnmatchcase(" ".join(f"{k}={v}" for k, v in arguments.items()), pattern)


def _name_matches(name: str, tool: str) -> bool:
    if name.startswith("mcp__") or tool.startswith("mcp__"):
        return fnmatchcase(tool, name) or fnmatchcase(tool, name + "__*")
    return CODEBOT_NAMES.get(name, name) == tool


def _command_matches(pattern: str, command: str, *, every: bool = False) -> bool:
    if pattern.endswith(":*"):
        pattern = pattern[:-2].rstrip() + " *"
    parts = _subcommands(command)
    if parts is None:
        return not every
    # `git commit:*` covers a bare `git commit` too
    covered = [
        fnmatchcase(part, pattern) or (pattern.endswith(" *") and part == pattern[:-2])
        for part in parts
    ]
    return all(covered) and bool(covered) if every else any(covered)


def _subcommands(command: str) -> list[str] | None:
    """Each simple command of ``command`` with leading assignments dropped; None when it
    cannot be parsed."""
    texts = [command]
    for inner in _SUBSHELL.finditer(command):
        texts.append(inner.group(1) or inner.group(2) or "")
    texts[0] = _SUBSHELL.sub(" ", command)
    out: list[str] = []
    for text in texts:
        for piece in _SEPARATORS.split(text):
            try:
                words = shlex.split(piece, comments=True)
            except ValueError:
                return None
            while words and _ASSIGNMENT.match(words[0]):
                words.pop(0)
            if words:
                out.append(" ".join(words))
    return out


def _path_matches(pattern: str, path: str, cwd: Path) -> bool:
    """Claude Code's path rules: ``//abs``, ``~/x``, ``/x`` (from the project), ``./x`` or
    ``x/y`` (from the working directory), and a bare ``*.ts`` anywhere (gitignore style)."""
    import pathspec

    target = Path(os.path.abspath(cwd / Path(path).expanduser()))
    if pattern.startswith("//"):
        base, rule = Path("/"), pattern[1:]
    elif pattern.startswith("~/"):
        base, rule = Path.home(), pattern[1:]
    elif pattern.startswith("./"):
        base, rule = cwd, pattern[1:]
    else:
        base, rule = cwd, pattern
    try:
        relative = target.relative_to(base)
    except ValueError:
        return False
    return pathspec.GitIgnoreSpec.from_lines([rule]).match_file(str(relative))
