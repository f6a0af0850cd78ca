"""Definition files: Markdown with YAML front matter in ``.codebot/X``, ``.claude/X`` and
``~/.codebot/X``, one reader for agents, commands and skills.

A kind (``agents``, ``commands``, ``skills``) is a folder name; where it is looked for, in
order of precedence (the first definition of a name wins, the others are *shadowed*):

1. ``<project>/.codebot/<kind>/`` and 2. ``<project>/.claude/<kind>/`` (project configuration:
   read only while the project is trusted, see :mod:`core.config.trust`);
3. ``$CODEBOT_HOME/<kind>/`` (``~/.codebot/<kind>/``: yours, always read);
4. the enabled plugins' folders (``core.config.plugins``): their names are ``PLUGIN:NAME``.

Layouts: ``agents`` are ``NAME.md``; ``commands`` are ``NAME.md`` in any depth of subfolders,
each folder a namespace (``frontend/review.md`` is ``frontend:review``); ``skills`` are
folders holding a ``SKILL.md``. A file that cannot be used (too large, bad front matter, a bad
name, a symlink out of the project) is reported as a :class:`Problem` naming it; the rest load.

Front matter is YAML (PyYAML's safe loader with YAML 1.2's core scalars, a key written twice
refused: skills served over MCP carry their front matter as JSON, and local files must read
the same way). Files written for Claude Code
are often not strict YAML (``description: Use when: ...``, ``argument-hint: [file]``, a
multi-line ``description`` holding ``<example>`` dialogue), so a line-based reading takes over
when YAML fails, as Claude Code's loader reads them (:func:`_lenient`: a multi-line value kept
whole, only known keys opening a field after a free-text one), and fields that must be text
keep the text as written when YAML would make a list of it. Lists (``tools``) read in every
form: ``Read, Grep``, ``["Read", "Grep"]``, a YAML list (:meth:`Definition.names`).

Size: one reader for three kinds of file, and most of it is reading front matter the way
Claude Code does when it is not strict YAML (keys on their own lines, multi-line descriptions
with example dialogue, tool lists in every form); the kinds' own rules live with each kind.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any

from codebot_mcp.core.config import paths
from codebot_mcp.core.config.discovery import CLAUDE_DIR, MAX_FILES, walk

MAX_DEFINITION_BYTES = 256 * 1024
"""A definition larger than this is not read (it would go into the prompt whole)."""
MAX_FRONT_MATTER_NODES = 2_000
"""YAML aliases can make a small file a huge (or endless) structure: it is refused."""
NAME_PATTERN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
TEXT_FIELDS = ("name", "description", "argument-hint", "model")
"""Fields that are text even when YAML would read them otherwise (``[file]`` is a list)."""


class Kind(StrEnum):
    """The definition folders."""

    AGENTS = "agents"
    COMMANDS = "commands"
    SKILLS = "skills"


class Scope(StrEnum):
    """Whose a definition is."""

    PROJECT = "project"
    USER = "user"


@dataclass(frozen=True, slots=True)
class Folder:
    """One place definitions of a kind are looked for."""

    scope: Scope
    label: str
    """How it is shown: ``.codebot/agents``, ``.claude/commands``, ``~/.codebot/agents``."""
    path: Path
    root: Path
    """Files must stay inside it (a project file that is a symlink out of it is refused)."""
    namespace: str = ""
    """A plugin's name: its definitions are ``PLUGIN:NAME`` (``core.config.plugins``)."""
    only: tuple[Path, ...] = ()
    """When set, only these files (or skill folders) of ``path`` are read."""


@dataclass(frozen=True, slots=True)
class Definition:
    """One definition file, read."""

    kind: Kind
    name: str
    """``review``, ``frontend:review`` (namespaces from subfolders), or the agent's name."""
    path: Path
    folder: Folder
    front: Mapping[str, Any]
    """The front matter as read (YAML types; text fields as text)."""
    body: str

    @property
    def scope(self) -> Scope:
        """Project or user."""
        return self.folder.scope

    def text(self, key: str) -> str | None:
        """A front matter field as one line of text, or None when absent or empty."""
        value = self.front.get(key)
        if value is None:
            return None
        text = " ".join(str(value).split())
        return text or None

    def names(self, key: str) -> tuple[str, ...] | None:
        """A list field (``tools``, ``allowed-tools``): a YAML list, a flow list written as
        text (``["Read", "Grep"]``), or names separated by commas or spaces (outside
        parentheses: ``Bash(git add:*), Read``); None when absent."""
        value = self.front.get(key)
        if value is None:
            return None
        if isinstance(value, str) and value.strip().startswith("["):
            value = _flow_list(value.strip())
        elif isinstance(value, str) and value.lstrip().startswith("- "):
            # a YAML block list the lenient reader kept as lines (`tools:` then `  - Read`)
            value = [line.strip()[2:] for line in value.splitlines() if line.strip()[:2] == "- "]
        if isinstance(value, list):
            items = [str(v).strip() for v in value]
        else:
            items = split_list(str(value))
        return tuple(_unquote(i.strip()) for i in items if i.strip())


@dataclass(frozen=True, slots=True)
class Problem:
    """A definition file that was skipped, and why (shown as a warning)."""

    path: Path
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass(slots=True)
class Found:
    """What :func:`find` read."""

    definitions: dict[str, Definition] = field(default_factory=dict[str, Definition])
    """By name, the winning definition of each."""
    shadowed: list[Definition] = field(default_factory=list[Definition])
    """Definitions of a name an earlier folder already defines."""
    problems: list[Problem] = field(default_factory=list[Problem])


def split_list(text: str) -> list[str]:
    """``a, b(c, d), e`` or ``a b(c d) e`` → ``["a", "b(c, d)", "e"]`` (commas and spaces
    inside parentheses stay)."""
    out: list[str] = []
    depth = 0
    current = ""
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        if (char == "," or char.isspace()) and depth == 0:
            out.append(current.strip())
            current = ""
        else:
            current += char
    out.append(current.strip())
    return [o for o in out if o]


def _flow_list(text: str) -> Any:
    """``["Read", "Grep"]`` written where YAML could not read it: as YAML (JSON) when it
    reads, else the text between the brackets."""
    import yaml

    try:
        value: Any = yaml.load(text, Loader=_loader())  # a safe loader
    except (yaml.YAMLError, FrontMatterError):
        value = None
    return value if isinstance(value, list) else text.strip("[]")


def folders(
    kind: Kind, root: Path | None, *, include_project: bool = True, claude: bool = True
) -> list[Folder]:
    """Where definitions of ``kind`` are looked for, in order of precedence: the project's
    ``.codebot`` and ``.claude``, then your ``~/.codebot`` and ``~/.claude``
    (``$CLAUDE_CONFIG_DIR``); ``claude=False`` (``"claude_files": false``) leaves out both
    ``.claude`` folders."""
    from codebot_mcp.core.config.claudefiles import label, user_dir

    out: list[Folder] = []
    bases = (paths.PROJECT_DIR, CLAUDE_DIR) if claude else (paths.PROJECT_DIR,)
    if root is not None and include_project:
        for base in bases:
            out.append(Folder(Scope.PROJECT, f"{base}/{kind}", root / base / kind, root))
    home = paths.codebot_home()
    out.append(Folder(Scope.USER, f"~/{paths.PROJECT_DIR}/{kind}", home / kind, home))
    if claude:
        theirs = user_dir()
        out.append(Folder(Scope.USER, label(theirs / str(kind)), theirs / kind, theirs))
    from codebot_mcp.core.config.plugins.load import folders as plugin_folders

    for spec in plugin_folders(str(kind), root):  # installed plugins: last
        out.append(Folder(Scope.USER, spec.label, spec.path, spec.root, spec.namespace, spec.only))
    return out


def find(
    kind: Kind, root: Path | None, *, include_project: bool = True, claude: bool = True
) -> Found:
    """Every definition of ``kind`` (see the module docstring for where, and precedence).

    Args:
        kind: Which folder.
        root: The project root (:func:`project_root`); None for none.
        include_project: False while the project is not trusted: only yours are read.
        claude: False (``"claude_files": false``): no ``.claude`` or ``~/.claude`` folder.
    """
    found = Found()
    for folder in folders(kind, root, include_project=include_project, claude=claude):
        listed = _plugin_candidates(kind, folder) if folder.namespace else None
        for name, path in listed if listed is not None else _candidates(kind, folder.path):
            item = _read(kind, name, path, folder)
            if isinstance(item, Definition) and folder.namespace:  # a plugin's: PLUGIN:NAME
                item = _namespaced(item, folder)
            if isinstance(item, Problem):
                found.problems.append(item)
            elif item.name in found.definitions:
                found.shadowed.append(item)
            else:
                found.definitions[item.name] = item
    return found


def _candidates(kind: Kind, directory: Path) -> Iterator[tuple[str, Path]]:
    """(name from the path, file) of each definition file in ``directory``."""
    if not directory.is_dir():
        return
    if kind is Kind.SKILLS:
        for entry in sorted(directory.iterdir())[:MAX_FILES]:
            if (entry / "SKILL.md").is_file():
                yield entry.name, entry / "SKILL.md"
        return
    if kind is Kind.AGENTS:
        for entry in sorted(directory.glob("*.md"))[:MAX_FILES]:
            yield entry.stem, entry
        return
    for path in walk(directory):
        if path.suffix == ".md":
            parts = path.relative_to(directory).with_suffix("").parts
            yield ":".join(parts), path


def _plugin_candidates(kind: Kind, folder: Folder) -> list[tuple[str, Path]]:
    """An installed plugin's definitions: its agents in subfolders too (as Claude Code reads
    them), only the files ``plugin.json`` names when it names files."""
    if kind is Kind.AGENTS and folder.path.is_dir():
        found = [(p.stem, p) for p in walk(folder.path) if p.suffix == ".md"]
    else:
        found = list(_candidates(kind, folder.path))
    if folder.only:
        found = [(n, p) for n, p in found if p in folder.only or p.parent in folder.only]
    return found


def _namespaced(item: Definition, folder: Folder) -> Definition:
    """``PLUGIN:NAME``; an agent in a subfolder gets it too (``agents/review/security.md`` is
    ``PLUGIN:review:security``). ``${CLAUDE_PLUGIN_ROOT}`` and ``${CLAUDE_PLUGIN_DATA}`` are
    replaced in its body and front matter (a command's ``!`cmd``` lines and ``allowed-tools``
    name the plugin's scripts so)."""
    from codebot_mcp.core.config.plugins.load import plugin_variables, substitute

    parts = [folder.namespace]
    if item.kind is Kind.AGENTS and item.path.is_relative_to(folder.path):
        parts += item.path.relative_to(folder.path).parent.parts
    names = plugin_variables(folder.namespace, folder.root)
    return replace(
        item,
        name=":".join([*parts, item.name]),
        body=substitute(item.body, names),
        front=substitute(dict(item.front), names),
    )


def _read(kind: Kind, name: str, path: Path, folder: Folder) -> Definition | Problem:
    if not all(NAME_PATTERN.match(part) for part in name.split(":")):
        return Problem(path, f"'{name}' is not a usable name (letters, digits, '_', '-', '.')")
    if folder.scope is Scope.PROJECT and not _inside(path, folder.root):
        return Problem(path, "it is a symlink that leads out of the project; not read")
    try:
        size = path.stat().st_size
        if size > MAX_DEFINITION_BYTES:
            return Problem(path, f"it is {size} bytes, over the {MAX_DEFINITION_BYTES}-byte cap")
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return Problem(path, f"cannot read it: {exc.strerror or exc}")
    try:
        front, body = parse(text)
    except FrontMatterError as exc:
        return Problem(path, str(exc))
    if kind is Kind.AGENTS:
        declared = front.get("name")
        if isinstance(declared, str) and declared.strip():
            name = declared.strip()
            if not NAME_PATTERN.match(name):
                return Problem(path, f"'name: {name}' is not a usable name")
    return Definition(kind, name, path, folder, front, body)


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


class FrontMatterError(ValueError):
    """The front matter cannot be read (the message says why)."""


def parse(text: str) -> tuple[dict[str, Any], str]:
    """``(front matter, body)`` of a definition; no front matter is ``{}``.

    Raises:
        FrontMatterError: the front matter is not closed, not a mapping, or too complex.
    """
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return {}, text.strip()
    for index, line in enumerate(lines[1:], start=1):
        if line.strip() in ("---", "..."):
            block = "".join(lines[1:index])
            body = "".join(lines[index + 1 :])
            return _front(block), body.strip()
    raise FrontMatterError("the front matter opened with '---' is never closed by '---'")


def parse_strict(text: str) -> tuple[dict[str, Any], str]:
    """``(front matter, body)`` read strictly as YAML: no line-based fallback, no text fields
    made of lists. A skill served over MCP is held to its entry field by field, so its
    ``SKILL.md`` must read exactly as its YAML says (``core.skills.skillload``).

    Raises:
        FrontMatterError: not closed, not YAML, not a mapping, a key twice, or too complex.
    """
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return {}, text.strip()
    for index, line in enumerate(lines[1:], start=1):
        if line.strip() in ("---", "..."):
            return _strict_front("".join(lines[1:index])), "".join(lines[index + 1 :]).strip()
    raise FrontMatterError("the front matter opened with '---' is never closed by '---'")


def _strict_front(block: str) -> dict[str, Any]:
    import yaml

    try:
        data: Any = yaml.load(block, Loader=_loader())  # a safe loader
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 2}" if mark is not None else ""
        raise FrontMatterError(f"invalid YAML in the front matter{where}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise FrontMatterError(f"invalid YAML in the front matter: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontMatterError("the front matter is not a mapping of fields")
    if _size(data, MAX_FRONT_MATTER_NODES) < 0:
        raise FrontMatterError("the front matter is too complex (YAML aliases?); not read")
    return {str(k): v for k, v in data.items()}


_CORE_SCALARS = {
    "tag:yaml.org,2002:bool": (r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    "tag:yaml.org,2002:int": (r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    "tag:yaml.org,2002:float": (
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+0123456789.",
    ),
}
"""YAML 1.2's core schema for plain scalars: PyYAML follows YAML 1.1, where ``yes``/``on`` are
booleans, ``1:30`` is 90 and ``2024-01-01`` a date. A skill served over MCP carries its front
matter as JSON, compared field by field with the file: the file must read as JSON would."""


@cache
def _loader() -> Any:
    """PyYAML's safe loader (the C one when built) with the core schema's scalars, refusing a
    key written twice (PyYAML would keep the later value silently)."""
    import yaml

    base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class CoreLoader(base):  # type: ignore[misc, valid-type]
        def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if key in seen:
                    raise FrontMatterError(f"the front matter sets '{key}' twice")
                seen.add(key)
            return super().construct_mapping(node, deep)  # type: ignore[no-any-return]

    resolvers: dict[Any, list[tuple[str, Any]]] = {
        first: [(tag, rx) for tag, rx in pairs if tag not in _CORE_SCALARS]
        for first, pairs in base.yaml_implicit_resolvers.items()
    }
    resolvers = {first: pairs for first, pairs in resolvers.items() if pairs}
    for tag, (pattern, firsts) in _CORE_SCALARS.items():
        for first in firsts:
            resolvers.setdefault(first, []).append((tag, re.compile(pattern)))
    # 1.2 integers: `010` is ten (PyYAML's constructor reads a leading 0 as octal).
    CoreLoader.add_constructor("tag:yaml.org,2002:int", _core_int)
    # The 1.1 timestamp resolver goes too: a date stays text.
    CoreLoader.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in pairs if tag != "tag:yaml.org,2002:timestamp"]
        for first, pairs in resolvers.items()
    }
    return CoreLoader


def _core_int(loader: Any, node: Any) -> int:
    """A plain integer as YAML 1.2's core schema reads it: decimal, ``0o`` octal, ``0x`` hex."""
    value = str(loader.construct_scalar(node))
    sign = -1 if value.startswith("-") else 1
    digits = value.lstrip("+-")
    if digits.startswith(("0x", "0o")):
        return sign * int(digits[2:], 16 if digits[1] == "x" else 8)
    return sign * int(digits, 10)


def _front(block: str) -> dict[str, Any]:
    import yaml  # deferred: only runs where definitions are read

    try:
        data: Any = yaml.load(block, Loader=_loader())  # a safe loader
    except yaml.YAMLError:
        data = None
    lenient = _lenient(block)
    if data is None and not block.strip():
        return {}
    if not isinstance(data, dict):
        if not lenient:
            raise FrontMatterError("the front matter is not 'key: value' lines (YAML)")
        return lenient
    if _size(data, MAX_FRONT_MATTER_NODES) < 0:
        raise FrontMatterError("the front matter is too complex (YAML aliases?); not read")
    out: dict[str, Any] = {str(k): v for k, v in data.items()}
    for key in TEXT_FIELDS:
        if key in out and out[key] is not None and not isinstance(out[key], str):
            out[key] = lenient.get(key, str(out[key]))
    return out


KNOWN_KEYS = frozenset(
    {
        "name",
        "description",
        "tools",
        "disallowedTools",
        "model",
        "color",
        "permissionMode",
        "maxTurns",
        "skills",
        "mcpServers",
        "hooks",
        "memory",
        "background",
        "effort",
        "isolation",
        "initialPrompt",
        "argument-hint",
        "allowed-tools",
        "disallowed-tools",
        "disable-model-invocation",
        "user-invocable",
        "when_to_use",
        "arguments",
        "context",
        "agent",
        "paths",
        "shell",
        "license",
        "metadata",
        "compatibility",
        "version",
        "hide-from-slash-command-tool",
    }
)
"""The front matter keys Claude Code documents for agents, commands and skills: after a
free-text field (``description``...), only these start a new field on a line of their own."""
FREE_TEXT = frozenset({"description", "when_to_use", "initialPrompt"})


def _lenient(block: str) -> dict[str, str]:
    """Front matter that is not strict YAML, read as Claude Code's files are written: a
    ``key: value`` line at the start of a line opens a field; other lines continue the field
    before them, kept whole (new lines included). Inside a free-text field (a ``description``
    holding ``<example>`` dialogue with ``user: ...`` lines) only a known key opens a new field,
    and none does inside an open ``<example>``."""
    out: dict[str, str] = {}
    key: str | None = None
    for line in block.splitlines():
        match = re.match(r"^([A-Za-z0-9_-]+)\s*:(.*)$", line)
        opens = match is not None and not line[0].isspace()
        if opens and key in FREE_TEXT and match is not None:
            in_example = out[key].count("<example>") > out[key].count("</example>")
            opens = match.group(1) in KNOWN_KEYS and not in_example
        if opens and match is not None:
            key = match.group(1)
            out[key] = _unquote(match.group(2).strip())
        elif key is not None:
            if not line.strip() and key not in FREE_TEXT:
                continue
            out[key] = f"{out[key]}\n{line.strip()}" if out[key] else line.strip()
    return {k: v.strip() for k, v in out.items()}


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _size(value: Any, budget: int, seen: set[int] | None = None) -> int:
    """What is left of ``budget`` after counting ``value``'s nodes; negative: too big (or a
    cycle)."""
    seen = set() if seen is None else seen
    budget -= 1
    if budget < 0:
        return budget
    if isinstance(value, dict | list):
        if id(value) in seen:
            return -1
        seen.add(id(value))
        items: list[Any] = (
            [*value.keys(), *value.values()] if isinstance(value, dict) else list(value)
        )
        for item in items:
            budget = _size(item, budget, seen)
            if budget < 0:
                return budget
        seen.discard(id(value))
    return budget


CLAUDE_TOOL_NAMES = {
    "Bash": "bash",
    "Read": "read",
    "Edit": "edit",
    "MultiEdit": "edit",
    "Write": "write",
    "Glob": "glob",
    "Grep": "grep",
    "LS": "glob",
    "Task": "task",
    "Agent": "task",
    "Skill": "skill",
}
"""Claude Code's names of the built-in tools, as files written for it use them."""


def codebot_tool_name(name: str) -> str:
    """A tool name as codebot knows it (``Bash`` → ``bash``, ``Agent`` → ``task``); others
    unchanged."""
    from codebot_mcp.core.config.hookcontract import CODEBOT_NAMES

    return CLAUDE_TOOL_NAMES.get(name) or CODEBOT_NAMES.get(name, name)
