"""Local skills: folders holding a ``SKILL.md``, as the definitions reader finds them.

The folders, in order of precedence: the project's ``.codebot/skills/`` and
``.claude/skills/``, then the user's ``~/.codebot/skills/`` (``$CODEBOT_HOME/skills``); where
they are and how a ``SKILL.md`` is read is :mod:`core.config.definitions`' (one reader for
agents, commands and skills), and so is the trust gate over the project's ones
(``discovery.definition_files``). A skill's name is its front matter's ``name`` (default: the
folder's name); ``description`` is required. A name found twice keeps the first; the others
are reported as shadowed, never dropped silently. An untrusted project's skills are not read
(``discover(include_project=False)``): only their folders are named, to say so.

Discovery reads each ``SKILL.md`` (front matter and body, capped by the reader); the other
files of a skill are read when it is loaded (``core.skills.skillload``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from codebot_mcp.core.config import definitions
from codebot_mcp.core.config.definitions import Kind, Scope

SKILL_FILE = "SKILL.md"
MAX_FILES = 512
"""Files per skill: the limit the MCP skills extension sets, held for local skills too."""
MAX_BYTES = 16 * 1024 * 1024
"""Bytes per skill (the sum over its files), as for MCP-served skills."""
MAX_DESCRIPTION = 1024
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
"""A skill name: what the model passes to the ``skill`` tool (no ``:``, no ``/``, no space)."""
SKIPPED_DIRS = frozenset({".git", "__pycache__", "node_modules", ".venv"})

ScopeName = Literal["project", "user"]


@dataclass(frozen=True, slots=True)
class LocalSkill:
    """One skill folder, as discovery saw it."""

    name: str
    description: str
    directory: Path
    scope: ScopeName
    front_matter: dict[str, Any] = field(default_factory=dict[str, Any])
    note: str | None = None
    """Said once: how it was read differently from its file (a title as ``name``)."""
    folder: str = ""
    """Where it was found, as shown: ``.codebot/skills``, ``~/.claude/skills``..."""

    @property
    def skill_file(self) -> Path:
        """The skill's ``SKILL.md``."""
        return self.directory / SKILL_FILE


@dataclass(frozen=True, slots=True)
class SkillIssue:
    """A skill folder that is not offered, and why (shown by ``skills list`` and ``/skills``)."""

    path: Path
    message: str


@dataclass(frozen=True, slots=True)
class LocalSkills:
    """What discovery found: the skills offered, those a same-named one shadows, the rest."""

    skills: tuple[LocalSkill, ...] = ()
    shadowed: tuple[tuple[LocalSkill, LocalSkill], ...] = ()
    """(hidden, the skill that took its name)."""
    issues: tuple[SkillIssue, ...] = ()
    untrusted: tuple[Path, ...] = ()
    """Project skill folders left out because the project is not trusted."""


def from_definition(item: definitions.Definition) -> LocalSkill | SkillIssue:
    """A skill from its ``SKILL.md`` as the definitions reader read it, or why it is skipped."""
    directory = item.path.parent
    name = item.front.get("name") or directory.name
    note = None
    if isinstance(name, str) and not NAME.match(name) and NAME.match(directory.name):
        # Claude Code names a skill by its folder; `name: Hook Development` is a label
        note = (
            f"its name {name!r} is not a skill name (letters, digits, '.', '_' and '-'); "
            f"it is loaded as '{directory.name}', its folder's name"
        )
        name = directory.name
    if not isinstance(name, str) or not NAME.match(name):
        return SkillIssue(
            item.path,
            f"its name {name!r} is not a skill name (letters, digits, '.', '_' and '-', "
            "at most 64, starting with a letter or digit)",
        )
    description = item.front.get("description")
    if not isinstance(description, str) or not description.strip():
        return SkillIssue(item.path, "its front matter has no 'description' (the model needs one)")
    scope: ScopeName = "project" if item.scope is Scope.PROJECT else "user"
    text = description.strip()[:MAX_DESCRIPTION]
    return LocalSkill(
        name, text, directory.resolve(), scope, dict(item.front), note, item.folder.label
    )


def discover(
    project_root: Path | None, *, include_project: bool = True, claude: bool = True
) -> LocalSkills:
    """Every local skill, the first of a name winning, with the folders that were skipped
    (``claude=False``: none from ``.claude`` or ``~/.claude``)."""
    found = definitions.find(
        Kind.SKILLS, project_root, include_project=include_project, claude=claude
    )
    ordered = sorted(
        [*found.definitions.values(), *found.shadowed], key=lambda d: _precedence(d, project_root)
    )
    skills: dict[str, LocalSkill] = {}
    shadowed: list[tuple[LocalSkill, LocalSkill]] = []
    issues = [SkillIssue(p.path, p.message) for p in found.problems]
    for item in ordered:
        skill = from_definition(item)
        if isinstance(skill, SkillIssue):
            issues.append(skill)
        elif skill.name in skills:
            shadowed.append((skill, skills[skill.name]))
        else:
            skills[skill.name] = skill
    untrusted: list[Path] = []
    if not include_project:
        for folder in definitions.folders(Kind.SKILLS, project_root, claude=claude):
            if folder.scope is Scope.PROJECT and folder.path.is_dir():
                untrusted += sorted(d for d in folder.path.iterdir() if (d / SKILL_FILE).is_file())
    return LocalSkills(tuple(skills.values()), tuple(shadowed), tuple(issues), tuple(untrusted))


def _precedence(item: definitions.Definition, root: Path | None) -> tuple[int, str]:
    labels = [f.label for f in definitions.folders(Kind.SKILLS, root)]
    rank = labels.index(item.folder.label) if item.folder.label in labels else len(labels)
    return rank, item.path.parent.name


@dataclass(frozen=True, slots=True)
class SkillFileInfo:
    """One file of a local skill: its path relative to the skill folder, and its size."""

    relative: str
    size: int


class SkillTooLargeError(ValueError):
    """A skill folder holds more files or bytes than a skill may (the message says which)."""


def list_files(directory: Path) -> list[SkillFileInfo]:
    """Every file of a skill folder, ``SKILL.md`` first, then sorted (symlinks not followed).

    Raises:
        SkillTooLargeError: more than :data:`MAX_FILES` files or :data:`MAX_BYTES` bytes.
    """
    out: list[SkillFileInfo] = []
    total = 0
    for top, dirs, files in os.walk(directory, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in sorted(files):
            path = Path(top) / name
            try:
                size = path.lstat().st_size
            except OSError:  # boundary: a file that vanished is not part of the skill
                continue
            out.append(SkillFileInfo(path.relative_to(directory).as_posix(), size))
            total += size
            if len(out) > MAX_FILES:
                raise SkillTooLargeError(f"it holds more than {MAX_FILES} files")
            if total > MAX_BYTES:
                raise SkillTooLargeError(f"its files add up to more than {MAX_BYTES} bytes")
    out.sort(key=lambda f: (f.relative != SKILL_FILE, f.relative))
    return out
