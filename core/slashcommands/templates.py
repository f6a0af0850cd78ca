"""Custom slash commands: prompt templates the user types as ``/name arguments``.

They are definition files (:mod:`core.config.definitions`, kind ``commands``):
``.codebot/commands/``, ``.claude/commands/`` and ``~/.codebot/commands/``; a subfolder is a
namespace (``frontend/review.md`` is ``/frontend:review``). Front matter (all optional):

- ``description``: shown by ``/help`` and completion;
- ``argument-hint``: what the arguments are (``[file] [focus]``), shown beside it;
- ``allowed-tools``: tools that run without asking while this command's prompt runs, as if
  ``permissions.allow`` held them (deny and ask rules still win). Each entry is a Claude Code
  permission rule, translated as ``.claude/settings.json``'s are
  (:func:`core.config.claudefiles.translate_rule`): ``Bash(git add:*)`` allows the ``bash``
  calls whose every part matches ``git add *`` and nothing else, as in Claude Code; an entry
  codebot cannot narrow (``WebFetch(domain:x)``, an MCP tool with a pattern) is not honoured,
  with the reason;
- ``model``: the model (at the same endpoint) that answers this prompt; a Claude model name
  (``sonnet``, ``claude-sonnet-4-0``) goes through ``model_aliases``
  (:mod:`core.config.modelnames`).

Before the prompt is sent, :func:`prepare` runs its ``!`cmd``` lines (the session's ``bash``
tool and gate; ``allowed-tools`` ``Bash(...)`` entries pre-approve the lines they cover) and
inlines its ``@path`` files, as Claude Code does.

The body is the prompt: ``$ARGUMENTS`` is everything after the name, ``$1``, ``$2``... the
arguments one by one (shell-style quoting groups words). A body with neither gets the
arguments appended (``ARGUMENTS: ...``), as Claude Code does.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from codebot_mcp.core.agent.loop import Agent
from codebot_mcp.core.config import claudefiles, definitions, modelnames
from codebot_mcp.core.config.definitions import Kind, codebot_tool_name
from codebot_mcp.core.model.client import ChatModel

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
    ignored_tools: tuple[tuple[str, str], ...]
    """``allowed-tools`` entries narrowed by a pattern that are not honoured, and why."""
    model: str | None
    body: str
    path: Path
    origin: str
    """The folder it came from (``.codebot/commands``...)."""
    shell_rules: tuple[str, ...] = ()
    """Its ``allowed-tools`` entries for ``Bash`` (``Bash(git status:*)``): the ``!`cmd```
    lines they cover run without asking."""


@dataclass(slots=True)
class CommandCatalog:
    """A session's commands, and what was skipped."""

    commands: dict[str, CustomCommand] = field(default_factory=dict[str, CustomCommand])
    problems: list[str] = field(default_factory=list[str])
    shadowed: list[CustomCommand] = field(default_factory=list[CustomCommand])
    notes: list[str] = field(default_factory=list[str])
    """Said once at load (a Claude model name that means your model)."""

    def find(self, line: str) -> tuple[CustomCommand, str] | None:
        """The command ``line`` (``/name args``) runs, and its arguments; None for none."""
        head, _, rest = line.strip().partition(" ")
        command = self.commands.get(head.removeprefix("/")) if head.startswith("/") else None
        if command is None and head.startswith("/") and ":" not in head:
            command = self.plugin_command(head.removeprefix("/"))
        return (command, rest.strip()) if command is not None else None

    def plugin_command(self, name: str) -> CustomCommand | None:
        """A plugin's ``/PLUGIN:NAME`` typed as ``/NAME``, when exactly one plugin has it
        (and no other command is named so), as Claude Code allows."""
        found = [
            c
            for c in self.commands.values()
            if c.origin.startswith("plugin:") and c.name.rpartition(":")[2] == name
        ]
        return found[0] if len(found) == 1 else None


def load_commands(
    root: Path | None,
    *,
    include_project: bool,
    reserved: Iterable[str] = (),
    model_aliases: Mapping[str, str] | None = None,
    claude: bool = True,
) -> CommandCatalog:
    """Every command file (project ones only when ``include_project``); a command named like
    a built-in one (``reserved``, without the slash) is shadowed by it. A Claude model name in
    ``model:`` resolves through ``model_aliases`` (:mod:`core.config.modelnames`)."""
    found = definitions.find(Kind.COMMANDS, root, include_project=include_project, claude=claude)
    catalog = CommandCatalog(problems=[str(p) for p in found.problems])
    aliases = model_aliases or {}
    uses = [(d.text("model"), str(d.path)) for d in found.definitions.values()]
    catalog.notes += modelnames.notes(uses, aliases)
    taken = set(reserved)
    for item in [*found.definitions.values(), *found.shadowed]:
        command = _command(item, aliases)
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


def _command(item: definitions.Definition, aliases: Mapping[str, str]) -> CustomCommand:
    allowed: list[str] = []
    ignored: list[tuple[str, str]] = []
    shell: list[str] = []
    for entry in item.names("allowed-tools") or ():
        name, paren, rest = entry.partition("(")
        tool = codebot_tool_name(name.strip())
        if tool == "bash":
            shell.append(entry)
        rules, why = claudefiles.translate_rule(entry)
        pattern = rest.rstrip().removesuffix(")").strip() if paren else ""
        if not rules and tool in claudefiles.PATTERN_TOOLS:  # codebot's own name: bash(...)
            rules = (f"{tool}({pattern})",) if pattern not in ("", "*") else (tool,)
        elif not rules and pattern in ("", "*"):
            rules = (tool,)  # a tool codebot does not have: a rule that matches nothing
        if not rules:
            ignored.append((entry, why or "not a permission rule"))
        allowed += [r for r in rules if r not in allowed]
    description = item.text("description") or _first_line(item.body)
    return CustomCommand(
        item.name,
        description,
        item.text("argument-hint"),
        tuple(allowed),
        tuple(ignored),
        modelnames.resolve(item.text("model"), aliases),
        item.body,
        item.path,
        item.folder.label,
        tuple(shell),
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
    if name and name != model.config.model:
        agent.model = ChatModel(model.client, model.config.with_model(name))
        agent.follow_model()
    try:
        yield
    finally:
        gate.rules = rules
        if agent.model is not model:
            agent.model = model
            agent.follow_model()


# -- what a command's body runs and reads before it is sent -------------------------------------

SHELL_TIMEOUT = 30
"""Seconds a ``!`cmd``` line may run (the bash tool's own bound below it)."""
SHELL_OUTPUT_CAP = 16_000
"""Characters of a ``!`cmd``` line's output inlined; the rest is cut, and said."""
FILE_CAP = 64 * 1024
"""Bytes of an ``@path`` file inlined; a larger file is cut, and said."""
_INLINE = re.compile(
    r"(?<!\S)(?:!`([^`\n]+)`|@([A-Za-z0-9_.~/-][^\s`'\"<>]*))"
    r"|(?ms:^```!\s*\n(.*?)^```[ \t]*$)"
)
_TRAILING = ".,;:!?)]}"


@dataclass(slots=True)
class Prepared:
    """A command's prompt once its ``!`cmd``` lines ran and its ``@path`` files are in."""

    text: str
    notes: list[str] = field(default_factory=list[str])
    """What the user is told: each line refused or failed, each path not inlined."""


async def prepare(agent: Agent, command: CustomCommand, prompt: str, root: Path) -> Prepared:
    """Run ``prompt``'s ``!`cmd``` lines (and ```` ```! ```` blocks) and inline its ``@path``
    files, once (what they bring in is never scanned again).

    A ``!`cmd``` runs as the model's ``bash`` call would: the session's ``bash`` tool, its
    gate and its sandbox; an ``allowed-tools`` ``Bash(...)`` entry of the command that covers
    it (Claude Code's rule syntax, ``core.config.hookcontract``) approves it beforehand, a deny
    rule still refuses it. It is bounded by :data:`SHELL_TIMEOUT` and :data:`SHELL_OUTPUT_CAP`.
    A refused or failed line inlines why. An ``@path`` (a path, with a ``/`` or a ``.``) inside
    ``root`` is inlined up to :data:`FILE_CAP` bytes; outside it or missing, a note says so.
    """
    out = Prepared("")
    parts: list[str] = []
    last = 0
    fenced = _fenced(prompt)
    for match in _INLINE.finditer(prompt):
        if match.group(2) is not None and any(a <= match.start() < b for a, b in fenced):
            continue  # `@pytest.fixture` in a code block is code, not a file
        shell = match.group(1) if match.group(1) is not None else match.group(3)
        if shell is not None:
            text = await _shell(agent, command, shell.strip(), root, out.notes)
        else:
            reference = match.group(2)
            target = reference.rstrip(_TRAILING)
            if ":" in target or not ("/" in target or "." in target.lstrip(".")):
                continue  # @server:uri (a resource mention) or a plain @word
            text = _file(agent, target, root, out.notes) + reference[len(target) :]
        parts += [prompt[last : match.start()], text]
        last = match.end()
    parts.append(prompt[last:])
    out.text = "".join(parts)
    return out


def _fenced(text: str) -> list[tuple[int, int]]:
    """The spans of ```` ``` ```` fenced blocks (an unclosed one runs to the end)."""
    spans: list[tuple[int, int]] = []
    start: int | None = None
    offset = 0
    for line in text.splitlines(keepends=True):
        if line.lstrip().startswith("```"):
            if start is None:
                start = offset
            else:
                spans.append((start, offset + len(line)))
                start = None
        offset += len(line)
    if start is not None:
        spans.append((start, len(text)))
    return spans


async def _shell(
    agent: Agent, command: CustomCommand, line: str, root: Path, notes: list[str]
) -> str:
    import anyio

    from codebot_mcp.core.agent.permissions import Decision, RuleSource, Verdict
    from codebot_mcp.core.config.hookcontract import condition_matches

    def refused(why: str) -> str:
        notes.append(f"/{command.name}: !`{line}` did not run: {why}")
        return f"[!`{line}` did not run: {why}]"

    tool = agent.session.find_tool("bash")
    if tool is None:
        return refused("this session has no bash tool (plan mode, or it is turned off)")
    arguments = {"command": line, "timeout": SHELL_TIMEOUT}
    decision = agent.gate.evaluate(tool, arguments)
    by_rule = decision.source is RuleSource.ASK
    covered = any(condition_matches(r, "bash", arguments, root) for r in command.shell_rules)
    if decision.verdict is Verdict.ASK and covered and not by_rule and not decision.warned:
        # the command's allowed-tools approve what the capability alone would ask
        decision = Decision(Verdict.ALLOW, f"allowed by /{command.name}'s allowed-tools")
    else:
        decision = await agent.gate.check(tool, arguments)
    if not decision.allowed:
        return refused(decision.reason)
    try:
        with anyio.fail_after(SHELL_TIMEOUT + 5):
            result = await tool.execute(arguments)
    except TimeoutError:
        return refused(f"it ran past {SHELL_TIMEOUT}s and was stopped")
    except Exception as exc:  # boundary: a failing tool becomes text the model reads
        return refused(f"bash failed: {exc}")
    from codebot_mcp.core.secrets.redact import SECRETS

    text = SECRETS(result.text)
    if len(text) > SHELL_OUTPUT_CAP:
        text = f"{text[:SHELL_OUTPUT_CAP]}\n[... output cut at {SHELL_OUTPUT_CAP} characters]"
    if result.is_error:
        notes.append(f"/{command.name}: !`{line}` failed: {render_first(result.text)}")
        return f"[!`{line}` failed]\n{text}"
    return text


def render_first(text: str) -> str:
    """The first non-empty line of ``text`` (for a one-line note)."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "(no output)")


def _file(agent: Agent, reference: str, root: Path, notes: list[str]) -> str:
    from codebot_mcp.core.secrets.redact import SECRETS
    from codebot_mcp.core.tools.boundary import BoundaryError, read_regular

    def missing(why: str) -> str:
        notes.append(f"@{reference} is not inlined: {why}")
        return f"@{reference} [not inlined: {why}]"

    path = (root / Path(reference).expanduser()).resolve()
    try:
        path.relative_to(root.resolve())
    except ValueError:
        return missing("it is outside the project")
    if not path.exists():
        return missing("no such file in the project")
    read = agent.session.find_tool("read")
    reach_of = read.info.reach if read is not None else None
    reach = reach_of({"path": str(path)}) if reach_of is not None else None
    if reach is not None and reach.hidden is not None:
        return missing(f"it is in {reach.hidden}, which the sandbox hides (credentials)")
    try:
        data, more = read_regular(path, FILE_CAP)
    except (OSError, BoundaryError) as exc:
        return missing(f"cannot read it: {getattr(exc, 'strerror', None) or exc}")
    text = SECRETS(data.decode("utf-8", errors="replace"))
    cut = f"\n[... cut at {FILE_CAP} bytes]" if more else ""
    return f"@{reference}\n```\n{text}{cut}\n```"
