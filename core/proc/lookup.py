"""Where a stdio server's ``command`` is found: one lookup for the launcher, doctor and trust.

A command with a ``/`` is a path, taken from the server's ``cwd`` (as the OS does when it
starts a program in that directory). A bare name is searched on ``PATH`` only, the server's
``env.PATH`` when it sets one (its relative entries taken from ``cwd``), never in ``cwd``
itself: a cloned repository cannot shadow ``npx`` with a file of the same name.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

INHERITED_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
"""The SDK's allow-list: everything else of codebot's environment stays out of servers."""


def child_environment(
    env: Mapping[str, str], environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The allow-listed variables of our environment plus the server's own ``env``."""
    environ = os.environ if environ is None else environ
    out = {
        key: value
        for key in INHERITED_ENV
        if (value := environ.get(key)) is not None and not value.startswith("()")
    }
    out.update(env)
    return out


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_command(
    command: str, cwd: Path | None, env: Mapping[str, str], environ: Mapping[str, str] | None = None
) -> Path | None:
    """The absolute path of the program a server entry starts, or None when there is none.

    Args:
        command: ``command`` of the entry, expanded.
        cwd: The server's working directory (relative paths start there).
        env: The server's ``env`` (its ``PATH`` replaces ours).
        environ: codebot's environment; defaults to ``os.environ``.
    """
    base = cwd or Path.cwd()
    if os.sep in command or (os.altsep and os.altsep in command):
        candidate = Path(command).expanduser()
        candidate = candidate if candidate.is_absolute() else base / candidate
        return Path(os.path.abspath(candidate)) if _executable(candidate) else None
    search = child_environment(env, environ).get("PATH", os.defpath)
    for entry in search.split(os.pathsep):
        if not entry:
            continue  # an empty entry would mean the current directory
        directory = Path(entry).expanduser()
        directory = directory if directory.is_absolute() else base / directory
        candidate = directory / command
        if _executable(candidate):
            return Path(os.path.abspath(candidate))
    return None
