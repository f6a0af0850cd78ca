"""Local skills: folders holding a ``SKILL.md``, found in the skills folders.

The folders, in order of precedence: the project's ``.codebot/skills/`` and
``.claude/skills/`` (at the project root, see :func:`paths.project_home`), then the user's
``~/.codebot/skills/`` (``$CODEBOT_HOME/skills``). Each direct subfolder holding a
``SKILL.md`` is one skill, its front matter giving ``name`` (default: the folder's name) and
``description`` (required). A name found twice keeps the first; the others are reported as
shadowed, never dropped silently.

Discovery reads only the front matter block of each ``SKILL.md``: the body and the other
files are read when the skill is loaded (``core.tools.skills``). Project skills are project
configuration that can run code: :func:`project_files` is what the trust gate hashes, and an
untrusted project's skills are not offered (``discover(include_project=False)``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from codebot_mcp.core.config import paths
from codebot_mcp.core.config.frontmatter import FrontMatterError, read_head

SKILL_FILE = "SKILL.md"
SKILLS_DIR = "skills"
PROJECT_FOLDERS = (f"{paths.PROJECT_DIR}/{SKILLS_DIR}", f".claude/{SKILLS_DIR}")
"""The project's skills folders, relative to its root, in order of precedence."""
MAX_FILES = 512
"""Files per skill: the limit the MCP skills extension sets, held for local skills too."""
MAX_BYTES = 16 * 1024 * 1024
"""Bytes per skill (the sum over its files), as for MCP-served skills."""
MAX_SKILLS_PER_FOLDER = 200
"""Skill folders read per skills folder: a cloned repository cannot flood the prompt."""
MAX_DESCRIPTION = 1024
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
"""A skill name: what the model passes to the ``skill`` tool (no ``:``, no ``/``, no space)."""
SKIPPED_DIRS = frozenset({".git", "__pycache__", "node_modules", ".venv"})

Scope = Literal["project", "user"]


@dataclass(frozen=True, slots=True)
class LocalSkill:
    """One skill folder, as discovery saw it (front matter only)."""

    name: str
    description: str
    directory: Path
    scope: Scope
    front_matter: dict[str, Any] = field(default_factory=dict[str, Any])

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


def folders(project_root: Path | None) -> list[tuple[Path, Scope]]:
    """Every skills folder to look in, in order of precedence (existing or not)."""
    out: list[tuple[Path, Scope]] = []
    if project_root is not None:
        out += [(project_root / rel, "project") for rel in PROJECT_FOLDERS]
    out.append((paths.codebot_home() / SKILLS_DIR, "user"))
    return out


def skill_dirs(folder: Path) -> list[Path]:
    """The direct subfolders of ``folder`` holding a ``SKILL.md``, sorted by name (bounded)."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:  # boundary: a missing or unreadable folder holds no skills
        return []
    found: list[Path] = []
    for entry in entries:
        if entry.name.startswith(".") or not entry.is_dir():
            continue
        if (Path(entry.path) / SKILL_FILE).is_file():
            found.append(Path(entry.path))
            if len(found) >= MAX_SKILLS_PER_FOLDER:
                break
    return found


def read_skill(directory: Path, scope: Scope) -> LocalSkill | SkillIssue:
    """A skill folder's name and description from its front matter, or why it is skipped."""
    path = directory / SKILL_FILE
    try:
        document = read_head(path)
    except OSError as exc:
        return SkillIssue(path, f"cannot read it: {exc.strerror or exc}")
    except FrontMatterError as exc:
        return SkillIssue(path, str(exc))
    fields = document.fields
    name = fields.get("name", directory.name)
    if not isinstance(name, str) or not NAME.match(name):
        return SkillIssue(
            path,
            f"its name {name!r} is not a skill name (letters, digits, '.', '_' and '-', "
            "at most 64, starting with a letter or digit)",
        )
    description = fields.get("description")
    if not isinstance(description, str) or not description.strip():
        return SkillIssue(path, "its front matter has no 'description' (the model needs one)")
    return LocalSkill(
        name, description.strip()[:MAX_DESCRIPTION], directory.resolve(), scope, dict(fields)
    )


def discover(project_root: Path | None, *, include_project: bool = True) -> LocalSkills:
    """Every local skill, the first of a name winning, with the folders that were skipped."""
    skills: dict[str, LocalSkill] = {}
    shadowed: list[tuple[LocalSkill, LocalSkill]] = []
    issues: list[SkillIssue] = []
    untrusted: list[Path] = []
    for folder, scope in folders(project_root):
        dirs = skill_dirs(folder)
        if scope == "project" and not include_project:
            untrusted += dirs
            continue
        for directory in dirs:
            found = read_skill(directory, scope)
            if isinstance(found, SkillIssue):
                issues.append(found)
            elif found.name in skills:
                shadowed.append((found, skills[found.name]))
            else:
                skills[found.name] = found
    return LocalSkills(tuple(skills.values()), tuple(shadowed), tuple(issues), tuple(untrusted))


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


def project_files(project_root: Path | None) -> dict[str, str]:
    """What the trust gate hashes for the project's skills: every file of every project
    skill folder, by its path relative to the project root, with its content's digest.

    A symlink counts by its target's name (not followed), an oversized skill by a marker, so
    any change to what a project skill holds changes the result.
    """
    if project_root is None:
        return {}
    out: dict[str, str] = {}
    for folder, scope in folders(project_root):
        if scope != "project":
            continue
        for directory in skill_dirs(folder):
            prefix = directory.relative_to(project_root).as_posix()
            try:
                files = list_files(directory)
            except SkillTooLargeError as exc:
                out[f"{prefix}/"] = f"refused: {exc}"
                continue
            for info in files:
                out[f"{prefix}/{info.relative}"] = _digest(directory / info.relative)
    return out


def _digest(path: Path) -> str:
    import hashlib  # deferred: 2-3 ms that `codebot --help` need not pay

    try:
        if path.is_symlink():
            return f"symlink:{os.readlink(path)}"
        with path.open("rb") as stream:
            return "sha256:" + hashlib.file_digest(stream, "sha256").hexdigest()
    except OSError as exc:  # boundary: an unreadable file still changes the digest
        return f"unreadable: {exc.strerror or exc}"
