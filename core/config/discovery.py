"""Where the project is: the directories searched for its files, and its root.

One walk for everything that looks for the project: its settings files (:func:`project_sources`:
found here, without reading them, so a warm call finds its holder importing nothing else), its
definition folders (:mod:`.definitions`: agents, commands, skills) and its notes
(:mod:`.notes`). It goes up from the working directory and stops at the repository root, the
home directory, or a directory someone else could have planted a file in; a file above those
never becomes "the project".
"""

from __future__ import annotations

import os
from pathlib import Path

from codebot_mcp.core.config import paths

CLAUDE_DIR = ".claude"
"""Claude Code's project folder: its agents, commands and skills are read too."""
DEFINITION_KINDS = ("agents", "commands", "skills")
"""The definition folders (:class:`.definitions.Kind`), in both project folders."""
MAX_FILES = 2_000
"""Files looked at per definition folder tree (definitions, and the trust fingerprint)."""


def search_dirs(cwd: Path) -> list[Path]:
    """The directories project settings are looked for in, nearest first: ``cwd`` and its
    parents, stopping at the first of

    - the repository root (a directory holding ``.git``): searched, then nothing above it;
    - the home directory: not searched (``~/.codebot`` is the global directory), nor above;
    - a directory another user could have planted a file in (owned by another user, or
      writable by group or others, as ``/tmp`` is): not searched, nor above.

    A file in a parent directory of the repository, of the home directory or of a shared
    directory never becomes "the project".
    """
    home = _real(Path.home())
    found: list[Path] = []
    for directory in (cwd, *cwd.parents):
        if _real(directory) == home or not _ours(directory):
            break
        found.append(directory)
        if (directory / ".git").exists():
            break
    return found


def _real(path: Path) -> Path:
    try:
        return Path(os.path.realpath(path))
    except OSError:  # boundary: an unreadable path is compared as written
        return path


def _ours(directory: Path) -> bool:
    """Only this user (or root) can create files in ``directory``."""
    try:
        info = directory.stat()
    except OSError:
        return False
    return info.st_uid in (os.getuid(), 0) and not info.st_mode & 0o022


def find_project_file(cwd: Path) -> Path | None:
    """The nearest ``.codebot/settings.json`` within :func:`search_dirs`, not counting the
    global one."""
    global_file = paths.global_settings_path().resolve()
    for directory in search_dirs(cwd):
        candidate = directory / paths.PROJECT_DIR / paths.SETTINGS_FILE
        if candidate.exists() and candidate.resolve() != global_file:
            return candidate
    return None


MCP_JSON = ".mcp.json"


def find_mcp_json(cwd: Path, project_root: Path | None) -> Path | None:
    """The project's ``.mcp.json``: beside ``.codebot/`` when there is one, else the nearest
    within :func:`search_dirs`."""
    if project_root is not None:
        candidate = project_root / MCP_JSON
        return candidate if candidate.is_file() else None
    for directory in search_dirs(cwd):
        candidate = directory / MCP_JSON
        if candidate.is_file():
            return candidate
    return None


def project_sources(cwd: Path) -> tuple[Path | None, Path | None, Path | None]:
    """The project's ``.codebot/settings.json``, its ``.mcp.json`` and its root, found from
    ``cwd`` (each None when absent); nothing is read."""
    project_path = find_project_file(cwd)
    project_root = project_path.parent.parent if project_path else None
    mcp_json = find_mcp_json(cwd, project_root)
    if project_root is None and mcp_json is not None:
        project_root = mcp_json.parent
    return project_path, mcp_json, project_root


def project_root(cwd: Path, settings_root: Path | None = None) -> Path | None:
    """The project's root: where its settings were found, else the nearest directory of
    :func:`search_dirs` holding ``.git``, ``.codebot/`` or ``.claude/`` (never the global
    ``CODEBOT_HOME``); None outside any project."""
    if settings_root is not None:
        return settings_root
    global_dir = _real(paths.codebot_home())
    for directory in search_dirs(cwd.resolve()):
        mine = directory / paths.PROJECT_DIR
        if mine.is_dir() and _real(mine) != global_dir:
            return directory
        if (directory / CLAUDE_DIR).is_dir() or (directory / ".git").exists():
            return directory
    return None


def walk(directory: Path) -> list[Path]:
    """The regular files below ``directory``, sorted, at most :data:`MAX_FILES` (symlinked
    folders are not entered: a link loop or a link out of the project stays out)."""
    out: list[Path] = []
    for parent, dirs, files in os.walk(directory, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            out.append(Path(parent) / name)
            if len(out) >= MAX_FILES:
                return sorted(out)
    return sorted(out)


def definition_files(root: Path | None, *, claude: bool = True) -> list[Path]:
    """Every file of the project's definition folders (``.codebot`` and ``.claude``; agents,
    commands, skills), for the trust fingerprint: editing any of them needs trust again.
    Here rather than in :mod:`.definitions`: the trust check of every command (a warm call's
    too) needs only this walk, not the reader's classes. ``claude=False``
    (``"claude_files": false``): the ``.claude`` folders are not read, so not fingerprinted."""
    if root is None:
        return []
    out: list[Path] = []
    for kind in DEFINITION_KINDS:
        for base in (paths.PROJECT_DIR, CLAUDE_DIR) if claude else (paths.PROJECT_DIR,):
            directory = root / base / kind
            if directory.is_dir():
                out += walk(directory)
    return out
