"""Where codebot keeps its files: settings home, state (history, trust), logs, cache, data.

``CODEBOT_HOME`` moves everything at once (tests use it); otherwise settings live in
``~/.codebot`` and state and logs in the platformdirs state directory.
"""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "codebot"
PROJECT_DIR = ".codebot"
SETTINGS_FILE = "settings.json"


def codebot_home() -> Path:
    """The global settings directory: ``$CODEBOT_HOME`` or ``~/.codebot``."""
    env = os.environ.get("CODEBOT_HOME")
    return Path(env).expanduser() if env else Path.home() / PROJECT_DIR


def global_settings_path() -> Path:
    """``<home>/settings.json``."""
    return codebot_home() / SETTINGS_FILE


def state_dir() -> Path:
    """History, trust store: ``$CODEBOT_HOME/state`` or the platformdirs user state dir."""
    env = os.environ.get("CODEBOT_HOME")
    if env:
        return Path(env).expanduser() / "state"
    import platformdirs  # deferred: keeps `codebot --help` import-light

    return Path(platformdirs.user_state_dir(APP_NAME))


def cache_dir() -> Path:
    """What codebot can fetch again (the registry's catalog): ``$CODEBOT_HOME/cache`` or the
    platformdirs user cache dir."""
    env = os.environ.get("CODEBOT_HOME")
    if env:
        return Path(env).expanduser() / "cache"
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME))


def data_dir() -> Path:
    """What codebot installs and cannot fetch back without asking (unpacked server bundles):
    ``$CODEBOT_HOME/data`` or the platformdirs user data dir."""
    env = os.environ.get("CODEBOT_HOME")
    if env:
        return Path(env).expanduser() / "data"
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME))


def log_dir() -> Path:
    """Per-server stderr logs: ``<state>/log``."""
    return state_dir() / "log"


def private_dir(path: Path) -> Path:
    """Create ``path`` with mode 0700, and any missing parent the same way; return it."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for directory in reversed(missing):
        directory.mkdir(mode=0o700, exist_ok=True)
        directory.chmod(0o700)  # mkdir's mode is filtered by the umask
    try:
        path.chmod(0o700)
    except OSError:  # boundary: a directory we do not own; keep going with its mode
        pass
    return path
