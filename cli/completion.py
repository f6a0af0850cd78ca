"""Shell completion for bash, zsh and fish: the scripts, installing one, and what completes.

Server names come from the settings files and tool names from the last ``mcp list`` (a small
cache in the state directory); completing never starts a server.

Typer's completion runtime is used as it is, through :mod:`cli._typer` (the scripts and the
shell classes that answer them), and tested end to end in ``tests/cli/test_command_line.py``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

PROG = "codebot"
COMPLETE_VAR = "_CODEBOT_COMPLETE"
SHELLS = ("bash", "zsh", "fish")
TOOLS_CACHE = "tool_names.json"


def prepare() -> None:
    """Register Typer's shell classes; call before the command runs a completion request."""
    from cli._typer import completion_init

    completion_init()


def script(shell: str) -> str:
    """The completion script for ``shell`` (bash, zsh or fish)."""
    from cli._typer import completion_script

    return completion_script(PROG, COMPLETE_VAR, shell)


def detect_shell() -> str | None:
    """The user's shell from ``$SHELL``, when it is one we complete for."""
    name = Path(os.environ.get("SHELL", "")).name
    return name if name in SHELLS else None


def install(shell: str) -> Path:
    """Install the script where ``shell`` finds it (and source it from the rc file for bash)."""
    from cli._typer import install_completion

    return install_completion(PROG, COMPLETE_VAR, shell)


def _root_cwd(ctx: Any) -> Path:
    root = ctx.find_root() if ctx is not None else None
    value = root.params.get("cwd") if root is not None else None
    return Path(value).expanduser() if value else Path.cwd()


def _settings(ctx: Any) -> Any:
    from core import settings

    try:
        return settings.load(_root_cwd(ctx))
    except Exception:  # boundary: completion must never fail or print
        return None


def server_names(ctx: Any, incomplete: str) -> list[str]:
    """Configured server names starting with ``incomplete``."""
    loaded = _settings(ctx)
    names: Iterable[str] = loaded.servers if loaded is not None else ()
    return [n for n in names if n.startswith(incomplete)]


def tool_names(ctx: Any, incomplete: str) -> list[str]:
    """Tool names of the server named before this argument, from the last ``mcp list``."""
    server = ctx.params.get("server") if ctx is not None else None
    if not isinstance(server, str):
        return []
    names = set(_cached_tools().get(server, []))
    loaded = _settings(ctx)
    config = loaded.servers.get(server) if loaded is not None else None
    if config is not None and config.include_tools:
        names.update(t for t in config.include_tools if not any(c in t for c in "*?["))
    return sorted(n for n in names if n.startswith(incomplete))


def _cache_path() -> Path:
    from core import paths

    return paths.state_dir() / TOOLS_CACHE


def _cached_tools() -> dict[str, list[str]]:
    try:
        data = json.loads(_cache_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        str(k): [str(t) for t in v]  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        for k, v in data.items()  # pyright: ignore[reportUnknownVariableType]
        if isinstance(v, list)
    }


def remember_tools(views: list[dict[str, Any]]) -> None:
    """Keep the tool names ``mcp list`` just saw, for completion (0600, best effort)."""
    from core import paths

    cache = _cached_tools()
    for view in views:
        if view.get("status") == "connected":
            cache[view["name"]] = sorted(t["original_name"] for t in view.get("tools", []))
    path = _cache_path()
    try:
        paths.private_dir(path.parent)
        temporary = path.with_suffix(".tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(cache, handle, sort_keys=True)
        os.replace(temporary, path)
    except OSError:  # boundary: a read-only state dir only costs completion
        pass
