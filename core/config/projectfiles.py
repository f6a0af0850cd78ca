"""Writing a file of the project (anything under ``.codebot/``): never outside the project.

A repository decides what its ``.codebot`` is. Linked to ``../.codebot`` (your global
directory) or to ``~/.ssh``, a write "into the project" would land in your own files: an
import would put a stranger's servers into your global settings, ``mcp lock`` would replace a
file of yours. So every project write goes through :func:`write`:

- the directory the file lands in, with every symlink resolved, must be inside the project's
  real root (the root itself resolved the same way);
- it must not be inside codebot's global directory (``$CODEBOT_HOME``, ``~/.codebot``) or the
  state directory (trust records, tokens), whatever the project root is;
- missing directories are created one by one, each checked the same way;
- the file itself is written with :func:`core.fsutil.atomic_write` into the *resolved*
  directory: a temporary file of a unique name, then a rename; a symlink in place of the file
  is refused.

A refusal is a :class:`ProjectWriteError` (exit 3) naming the file, where it would have
landed, and the fix.
"""

from __future__ import annotations

import os
from pathlib import Path

from codebot_mcp.core.config import paths
from codebot_mcp.core.errors import SettingsError
from codebot_mcp.core.fsutil import atomic_write


class ProjectWriteError(SettingsError):
    """A project file would be written outside the project, or into codebot's own files."""


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _protected() -> list[tuple[Path, str]]:
    return [
        (_real(paths.codebot_home()), "codebot's global directory"),
        (_real(paths.state_dir()), "codebot's state directory"),
    ]


def landing(path: Path, root: Path) -> Path:
    """Where a write to ``path`` (a file of the project at ``root``) really lands: its
    directory resolved, the file name kept.

    Raises:
        ProjectWriteError: that is outside the project's real root, or inside codebot's global
            or state directory.
    """
    real_root = _real(root)
    target = _real(path.parent) / path.name
    where = f"it would be written to {target}"
    for protected, name in _protected():
        if target.is_relative_to(protected):
            raise ProjectWriteError(
                f"refusing to write the project file {path}: it leads into {name} ({where})",
                hint="Project files never go there; use --scope global for your own settings, "
                f"or remove the link that points into {protected}.",
            )
    if not target.is_relative_to(real_root):
        raise ProjectWriteError(
            f"refusing to write the project file {path}: it leads outside the project "
            f"({where}, outside {real_root})",
            hint=f"A symlink in the project (such as {root / paths.PROJECT_DIR}) points "
            "elsewhere; remove it and run the command again.",
        )
    return target


def make_dirs(directory: Path, root: Path) -> Path:
    """Create ``directory`` (and missing parents) inside the project at ``root``, each checked
    with :func:`landing`; its resolved path."""
    missing: list[Path] = []
    current = directory
    while not current.exists() and not current.is_symlink() and current != current.parent:
        missing.append(current)
        current = current.parent
    for one in reversed(missing):
        real = landing(one, root)
        real.mkdir(exist_ok=True)
    return landing(directory / ".probe", root).parent


def write(
    path: Path, data: bytes | str, *, root: Path, mode: int | None = None
) -> tuple[Path, bool]:
    """Write ``data`` to ``path``, a file of the project at ``root``, as the module says.

    Returns:
        Where it was written (resolved) and whether the file existed before.

    Raises:
        ProjectWriteError: the write would leave the project or enter codebot's directories.
        OSError: the directory cannot be written, or the file is a symlink.
    """
    landing(path, root)  # named as the caller named it, before anything is created
    directory = make_dirs(path.parent, root)
    target = landing(directory / path.name, root)
    existed = atomic_write(target, data, mode=mode)
    return target, existed


def is_global_settings(path: Path) -> bool:
    """``path`` names the global settings file itself (as written, not through a link)."""
    return os.path.abspath(path) == os.path.abspath(paths.global_settings_path())
