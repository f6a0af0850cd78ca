"""Custom slash commands: prompt templates the user types as ``/name arguments``.

They are definition files (:mod:`core.config.definitions`, kind ``commands``):
``.codebot/commands/``, ``.claude/commands/`` and ``~/.codebot/commands/``; a subfolder is a
namespace (``frontend/review.md`` is ``/frontend:review``). Front matter (all optional):

- ``description``: shown by ``/help`` and completion;
- ``argument-hint``: what the arguments are (``[file] [focus]``), shown beside it;
- ``allowed-tools``: tools that run without asking while this command's prompt runs, as if
  ``permissions.allow`` held them (deny and ask rules still win; Claude Code's ``Bash`` and
  friends are understood; an entry narrowed by a specifier, ``Bash(git add:*)``, is not
  honoured, since codebot's rules cannot narrow by arguments: that tool still asks);
- ``model``: the model (at the same endpoint) that answers this prompt.

The body is the prompt: ``$ARGUMENTS`` is everything after the name, ``$1``, ``$2``... the
arguments one by one (shell-style quoting groups words). A body with neither gets the
arguments appended (``ARGUMENTS: ...``), as Claude Code does.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from codebot_mcp.core.agent.loop import Agent
from codebot_mcp.core.config import definitions
from codebot_mcp.core.config.definitions import Kind, codebot_tool_name
from codebot_mcp.core.model.client import ChatModel

INHERIT_MODELS = ("inherit", "sonnet", "opus", "haiku")
_PLACEHOLDER = re.compile(r"\$(ARGUMENTS|[1-9][0-9]?)")


@dataclass(frozen=True, slots=True)
class CustomCommand:
    """One command file."""

    name: str
    """Without the slash: ``review``, ``frontend:review``."""
    description: str
    argument_hint: str | None
    allowed_tools: tuple[str, ...]
    """As permission rules over codebot's tool names."""
    ignored_tools: tuple[str, ...]
    """``allowed-tools`` entries not honoured (narrowed by a specifier)."""
    model: str | None
    body: str
    path: Path
    origin: str
    """The folder it came from (``.codebot/commands``...)."""


@dataclass(slots=True)
class CommandCatalog:
    """A session's commands, and what was skipped."""

    commands: dict[str, CustomCommand] = field(default_factory=dict[str, CustomCommand])
    problems: list[str] = field(default_factory=list[str])
    shadowed: list[CustomCommand] = field(default_factory=list[CustomCommand])

    def find(self, line: str) -> tuple[CustomCommand, str] | None:
        """The command ``line`` (``/name args``) runs, and its arguments; None for none."""
        head, _, rest = line.strip().partition(" ")
        command = self.commands.get(head.removeprefix("/")) if head.startswith("/") else None
        return (command, rest.strip()) if command is not None else None


def load_commands(
    root: Path | None, *, include_project: bool, reserved: Iterable[str] = ()
) -> CommandCatalog:
    """Every command file (project ones only when ``include_project``); a command named like
    a built-in one (``reserved``, without the slash) is shadowed by it."""
    found = definitions.find(Kind.COMMANDS, root, include_project=include_project)
    catalog = CommandCatalog(problems=[str(p) for p in found.problems])
    taken = set(reserved)
    for item in [*found.definitions.values(), *found.shadowed]:
        command = _command(item)
        if item in found.shadowed:
            catalog.shadowed.append(command)
        elif command.name in taken or command.name.startswith("mcp__"):
            catalog.problems.append(
                f"{item.path}: /{command.name} is a built-in command; this file is not used"
            )
        else:
            catalog.commands[command.name] = command
    catalog.commands = dict(sorted(catalog.commands.items()))
    return catalog


def _command(item: definitions.Definition) -> CustomCommand:
    allowed: list[str] = []
    ignored: list[str] = []
    for entry in item.names("allowed-tools") or ():
        name, paren, _ = entry.partition("(")
        if paren and entry.rstrip(")").partition("(")[2].strip() not in ("", "*"):
            ignored.append(entry)
            continue
        allowed.append(codebot_tool_name(name.strip()))
    description = item.text("description") or _first_line(item.body)
    return CustomCommand(
        item.name,
        description,
        item.text("argument-hint"),
        tuple(allowed),
        tuple(ignored),
        item.text("model"),
        item.body,
        item.path,
        item.folder.label,
    )


def _first_line(body: str) -> str:
    for line in body.splitlines():
        if line.strip():
            text = line.strip().lstrip("#").strip()
            return text if len(text) <= 80 else text[:79] + "…"
    return ""


def arguments_of(text: str) -> list[str]:
    """The positional arguments (shell-style quoting; plain words when quotes do not close)."""
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def expand(command: CustomCommand, arguments: str) -> str:
    """The prompt ``/name arguments`` sends (see the module docstring)."""
    positional = arguments_of(arguments)
    used = False

    def fill(match: re.Match[str]) -> str:
        nonlocal used
        used = True
        key = match.group(1)
        if key == "ARGUMENTS":
            return arguments
        index = int(key) - 1
        return positional[index] if index < len(positional) else ""

    text = _PLACEHOLDER.sub(fill, command.body)
    if not used and arguments:
        text = f"{text}\n\nARGUMENTS: {arguments}"
    return text


@asynccontextmanager
async def applied(agent: Agent, command: CustomCommand) -> AsyncIterator[None]:
    """While the command's prompt runs: its ``allowed-tools`` are allow rules, its ``model``
    answers; both are undone afterwards, whatever happens."""
    gate = agent.gate
    rules = gate.rules
    model = agent.model
    if command.allowed_tools:
        gate.rules = replace(rules, allow=(*rules.allow, *command.allowed_tools))
    name = command.model
    if name and name.lower() not in INHERIT_MODELS and name != model.config.model:
        agent.model = ChatModel(model.client, model.config.with_model(name))
        agent.follow_model()
    try:
        yield
    finally:
        gate.rules = rules
        if agent.model is not model:
            agent.model = model
            agent.follow_model()
