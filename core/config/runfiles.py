"""The project files codebot runs outside any sandbox, for trust (:mod:`.trust`).

A trusted project's stdio server, hook or custom command runs with your rights. What it runs
is not only the entry as written but the files the entry names: ``python tools/server.py``
runs ``tools/server.py``, and a confined ``bash`` can edit that file. So trust's digest covers
the content of every project file a trusted entry executes, found here:

- a stdio server (:func:`server_files`): its command when the program lies inside the project;
  each argument that names a file inside the project (resolved from the server's ``cwd``, then
  from the project root; ``--opt=path`` too); ``-m pkg.mod``: the module's file (or its
  package's ``__init__.py`` and ``__main__.py``) and the ``__init__.py`` of each package on the
  way. Next to a script, the files of the same kind in its folder (what it imports from
  beside it: ``helpers.py`` next to ``server.py``) are covered too;
- a hook: every project file its command names (:func:`.hooks.script_files`);
- a custom command, skill or agent (:func:`definition_scripts`): the project files its text
  names (``scripts/deploy.sh``, ``python tools/gen.py``), the files of its own folder being
  definition files already;
- the project's notes (:func:`note_files`): ``AGENTS.md``/``CODEBOT.md``/``CLAUDE.md`` from the
  root down to the working directory and what they import: they go into every prompt.

Everything is bounded: :data:`MAX_PER_ENTRY` files per entry, :data:`MAX_SIBLINGS` beside a
script, and :data:`.trust.MAX_HASHED_BYTES` of each file's content.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from codebot_mcp.core.config.servers import ServerConfig

MAX_PER_ENTRY = 64
"""Files one server entry, hook or definition contributes at most."""
MAX_SIBLINGS = 32
"""Files of a script's kind beside it that are covered with it (its local imports)."""
MAX_DEFINITION_SCAN = 256 * 1024
"""Bytes of a command's or skill's text searched for the files it names."""
SCRIPT_SUFFIXES = frozenset(
    {".py", ".sh", ".bash", ".zsh", ".js", ".mjs", ".cjs", ".ts", ".mts", ".rb", ".pl", ".php"}
)
"""A word with one of these endings in a command's or skill's text names a script it runs."""
_PATH_WORD = r"[\w.~${}/-]*[/.][\w.${}/-]+"
"""A word that could name a file: it holds a ``/`` or a ``.`` (compiled where definitions
are searched: the trust check of every command pays nothing for it otherwise)."""


def inside(path: Path, root: Path) -> Path | None:
    """``path`` resolved, when it is a regular file inside ``root`` (resolved); else None."""
    try:
        if not os.path.isfile(path):  # one stat: most words name no file
            return None
        resolved = Path(os.path.realpath(path))
    except (OSError, ValueError):
        return None
    return resolved if resolved.is_relative_to(root) else None


def _add(out: list[Path], path: Path | None) -> None:
    if path is not None and path not in out and len(out) < MAX_PER_ENTRY:
        out.append(path)


def server_files(config: ServerConfig, root: Path) -> list[Path]:
    """The project files (resolved, inside ``root``) a stdio server entry executes."""
    if config.type != "stdio" or not config.command or config.error:
        return []
    from codebot_mcp.core.proc.lookup import find_command

    root = root.resolve()
    base = config.cwd or root
    out: list[Path] = []
    found = find_command(config.command, base, config.env)
    program = inside(found, root) if found else None
    _add(out, program)
    _siblings(out, program, root)
    args = list(config.args)
    starts = [base, root]
    for index, arg in enumerate(args):
        if arg == "-m" and index + 1 < len(args):
            bases = (*starts, *_pythonpath(config, root))
            for path in module_files(args[index + 1], bases, root):
                _add(out, path)
            continue
        word = arg.partition("=")[2] if arg.startswith("-") else arg
        if not word or word.startswith("-"):
            continue
        words = _split(word) if any(c.isspace() for c in word) else [word]  # `sh -c "..."`
        for one in words:
            _named(out, one, starts, root)
    return out


def _named(out: list[Path], word: str, starts: list[Path], root: Path) -> None:
    """``word`` as a file inside ``root`` (from each of ``starts``), with its siblings; a
    folder inside the project becomes a start for the words after it (``--directory X``)."""
    candidate = Path(word).expanduser()
    for start in list(starts):
        path = candidate if candidate.is_absolute() else start / candidate
        found = inside(path, root)
        if found is not None:
            _add(out, found)
            _siblings(out, found, root)
            return
        if len(starts) < 8 and os.path.isdir(path):
            real = Path(os.path.realpath(path))
            if real.is_relative_to(root):
                starts.append(real)
                return


def _split(text: str) -> list[str]:
    import shlex

    try:
        words = shlex.split(text, comments=True)
    except ValueError:
        words = text.split()
    return [w for w in words if w and not w.startswith("-")][:MAX_PER_ENTRY]


def _pythonpath(config: ServerConfig, root: Path) -> list[Path]:
    """``PYTHONPATH`` entries the entry sets that lie inside the project."""
    value = config.env.get("PYTHONPATH", "")
    base = config.cwd or root
    out = []
    for entry in value.split(os.pathsep):
        if entry:
            path = Path(entry) if os.path.isabs(entry) else base / entry
            out.append(path)
    return out


def module_files(name: str, bases: Iterable[Path], root: Path) -> list[Path]:
    """What ``python -m name`` runs from the first of ``bases`` that holds it, as far as it
    lies inside ``root``: each package's ``__init__.py`` on the way, then ``mod.py`` or the
    package's ``__init__.py`` and ``__main__.py``, and the modules beside it (its local
    imports)."""
    parts = [p for p in name.split(".") if p]
    if not parts or not all(p.isidentifier() for p in parts):
        return []
    for base in bases:
        out: list[Path] = []
        folder = base
        for part in parts[:-1]:
            folder = folder / part
            _add(out, _file(folder / "__init__.py"))
        last = folder / parts[-1]
        if (last / "__init__.py").is_file() or (last / "__main__.py").is_file():
            _add(out, _file(last / "__init__.py"))
            _add(out, _file(last / "__main__.py"))
            target = out[-1] if out else None
        elif (folder / f"{parts[-1]}.py").is_file():
            target = _file(folder / f"{parts[-1]}.py")
            _add(out, target)
        else:
            continue
        _siblings(out, target, root)
        return [p for p in out if p.is_relative_to(root)]
    return []


def _file(path: Path) -> Path | None:
    try:
        return path.resolve() if path.is_file() else None
    except (OSError, RuntimeError):
        return None


def _siblings(out: list[Path], script: Path | None, root: Path) -> None:
    """The files of ``script``'s kind in its folder (inside ``root``), sorted, bounded."""
    if script is None or not script.suffix or not script.is_relative_to(root):
        return
    try:
        names = sorted(os.listdir(script.parent))
    except OSError:
        return
    taken = 0
    for name in names:
        if taken >= MAX_SIBLINGS:
            return
        if name.endswith(script.suffix) and name != script.name:
            path = script.parent / name
            if path.is_file() and not path.is_symlink():
                _add(out, path)
                taken += 1


def definition_scripts(files: Iterable[Path], root: Path) -> list[Path]:
    """Project files outside the definition folders that commands, skills and agents name:
    words of their text that end like a script (:data:`SCRIPT_SUFFIXES`) or hold a ``/`` and name a
    file inside ``root`` (from the definition's folder, then from the root)."""
    texts = [p for p in files if p.suffix == ".md"]
    if not texts:
        return []
    root = root.resolve()
    words = re.compile(_PATH_WORD)
    out: list[Path] = []
    for path in texts:
        try:
            with path.open("rb") as handle:
                text = handle.read(MAX_DEFINITION_SCAN).decode("utf-8", errors="replace")
        except OSError:
            continue
        mine: list[Path] = []
        for word in words.findall(text):
            word = word.strip(".,;:'\"`()[]")
            for variable in ("${CLAUDE_PROJECT_DIR}", "$CLAUDE_PROJECT_DIR"):
                word = word.replace(variable, str(root))
            if not word or "://" in word or ("/" not in word and _suffix(word) is None):
                continue
            for start in (path.parent, root):
                candidate = Path(word).expanduser()
                found = inside(candidate if candidate.is_absolute() else start / candidate, root)
                if found is not None:
                    _add(mine, found)
                    break
        out += [p for p in mine if p not in out]
    return out


def _suffix(word: str) -> str | None:
    suffix = os.path.splitext(word)[1]
    return suffix if suffix in SCRIPT_SUFFIXES else None


NOTE_NAMES = ("AGENTS.md", "CODEBOT.md", "CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md")
"""The notes :mod:`.notes` reads in each directory (looked for before it is imported)."""


def note_files(cwd: Path, root: Path | None) -> list[Path]:
    """The project's notes the prompt reads for ``cwd`` (``AGENTS.md``, ``CODEBOT.md``,
    ``CLAUDE.md`` and the files they import), not the user's own."""
    if not _any_note(cwd, root):
        return []  # the common case, without loading the notes reader
    from codebot_mcp.core.config import notes

    try:
        loaded = notes.load(cwd, root)
    except OSError:
        return []
    return [n.path for n in loaded.files if n.kind != "user"]


def signature(files: Iterable[Path]) -> dict[Path, tuple[int, int, int, int] | None]:
    """What a cheap comparison needs of each file: inode, size, modification and change
    times (None: missing). A write changes the change time, whatever it sets the others to."""
    out: dict[Path, tuple[int, int, int, int] | None] = {}
    for path in files:
        try:
            info = os.stat(path)
        except OSError:
            out[path] = None
            continue
        out[path] = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    return out


def _any_note(cwd: Path, root: Path | None) -> bool:
    """A note file exists in ``cwd`` or a directory above it up to the project root (a cheap
    look before :func:`.notes.load`)."""
    from codebot_mcp.core.config import discovery

    try:
        cwd = cwd.resolve()
        top = (discovery.project_root(cwd, root) or cwd).resolve()
    except OSError:
        return True  # let the reader say what is wrong
    for directory in (cwd, *cwd.parents):
        if any(os.path.isfile(directory / name) for name in NOTE_NAMES):
            return True
        if directory == top or not directory.is_relative_to(top):
            return False
    return False
