"""Shell completion for bash, zsh and fish: the scripts, installing one, and what completes.

Server names come from the settings files and tool names from the last ``mcp list`` of the
same entry (a small cache in the state directory) plus the literal names in ``include_tools``;
completing never starts a server.

Typer's completion runtime is used as it is, through :mod:`cli._typer` (the scripts and the
shell classes that answer them), and tested end to end in ``tests/cli/test_command_line.py``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from codebot_mcp.core.config.servers import ServerConfig

PROG = "codebot"
COMPLETE_VAR = "_CODEBOT_COMPLETE"
SHELLS = ("bash", "zsh", "fish")
TOOLS_CACHE = "tool_names.json"


def prepare() -> None:
    """Register Typer's shell classes; call before the command runs a completion request."""
    from codebot_mcp.cli._typer import completion_init

    completion_init()


_ZSH_REGISTER = f"compdef _codebot_completion {PROG}"
_ZSH_AUTOLOADED = f"""{_ZSH_REGISTER}
if (( ${{+compstate}} )); then
  # run as the completion function itself (autoloaded from $fpath by a <TAB>): complete now
  _codebot_completion "$@"
fi"""


def script(shell: str) -> str:
    """The completion script for ``shell`` (bash, zsh or fish)."""
    from codebot_mcp.cli._typer import completion_script

    text = completion_script(PROG, COMPLETE_VAR, shell)
    if shell == "zsh":
        # Typer's script, installed as ~/.zfunc/_codebot, only registers itself when zsh
        # autoloads it on a <TAB>, so that <TAB> completed nothing (found in an interactive
        # zsh); it completes too when it runs inside a completion.
        text = text.replace(_ZSH_REGISTER, _ZSH_AUTOLOADED)
    return text


def detect_shell() -> str | None:
    """The user's shell from ``$SHELL``, when it is one we complete for."""
    name = Path(os.environ.get("SHELL", "")).name
    return name if name in SHELLS else None


def install(shell: str) -> Path:
    """Install the script where ``shell`` finds it (and source it from the rc file for bash)."""
    from codebot_mcp.cli._typer import install_completion

    path = install_completion(PROG, COMPLETE_VAR, shell)
    if shell == "zsh":
        from codebot_mcp.core.fsutil import atomic_write

        atomic_write(path, script(shell), follow_symlinks=True)  # with the first-<TAB> fix
    return path


def _root_cwd(ctx: Any) -> Path:
    root = ctx.find_root() if ctx is not None else None
    value = root.params.get("cwd") if root is not None else None
    value = value or _cwd_from_words()
    return Path(value).expanduser() if value else Path.cwd()


def _cwd_from_words() -> str | None:
    """``--cwd DIR`` written after the command (``codebot mcp call --cwd X <TAB>``): the
    words being completed are not hoisted as a command line is, so they are read here."""
    import shlex

    text = os.environ.get("COMP_WORDS") or os.environ.get("_TYPER_COMPLETE_ARGS") or ""
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    found: str | None = None
    for i, word in enumerate(words):
        if word == "--":
            break
        if word == "--cwd" and i + 1 < len(words):
            found = words[i + 1]
        elif word.startswith("--cwd="):
            found = word.split("=", 1)[1]
    return found


def _settings(ctx: Any) -> Any:
    from codebot_mcp.core.config import settings

    try:
        return settings.load_unfiltered(_root_cwd(ctx))  # names only: nothing runs
    except Exception:  # boundary: completion must never fail or print
        return None


_WORD = re.compile(r"^[A-Za-z0-9_./:-]{1,128}$")
"""What a completion may offer: a tool name from a stranger's server with spaces, quotes or
control characters is left out rather than handed to the shell."""


def server_names(ctx: Any, incomplete: str) -> list[str]:
    """Configured server names starting with ``incomplete``."""
    from codebot_mcp.core.config.servers import SERVER_NAME_RE

    loaded = _settings(ctx)
    names: Iterable[str] = loaded.servers if loaded is not None else ()
    return [n for n in names if n.startswith(incomplete) and SERVER_NAME_RE.fullmatch(n)]


def tool_names(ctx: Any, incomplete: str) -> list[str]:
    """Tool names of the server named before this argument: the literal names in its
    ``include_tools``, and what the last ``mcp list`` saw of this very entry (a cache entry
    recorded for another project's server of that name, or before the entry changed, is not
    used)."""
    server = ctx.params.get("server") if ctx is not None else None
    if not isinstance(server, str):
        return []
    loaded = _settings(ctx)
    config = loaded.servers.get(server) if loaded is not None else None
    if config is None:
        return []
    names: set[str] = set()
    cached = _cached_tools().get(server)
    if cached is not None and cached[0] == fingerprint(config):
        names.update(cached[1])
    if config.include_tools:
        names.update(t for t in config.include_tools if not any(c in t for c in "*?["))
    return sorted(n for n in names if n.startswith(incomplete) and _WORD.fullmatch(n))


def fingerprint(config: ServerConfig) -> str:
    """Which entry a cached tool list belongs to: its file and what it says."""
    import hashlib

    text = json.dumps([str(config.source), config.raw], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _cache_path() -> Path:
    from codebot_mcp.core.config import paths

    return paths.state_dir() / TOOLS_CACHE


def _cached_tools() -> dict[str, tuple[str, list[str]]]:
    """``{server: (entry fingerprint, tool names)}`` from the cache file."""
    from codebot_mcp.core import jsonutil

    try:
        data = jsonutil.loads(_cache_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    out: dict[str, tuple[str, list[str]]] = {}
    for name, value in data.items():
        if isinstance(value, dict) and isinstance(value.get("tools"), list):
            tools = [str(t) for t in value["tools"]]
            out[str(name)] = (str(value.get("entry")), tools)
    return out


def remember_tools(views: list[dict[str, Any]], servers: Mapping[str, ServerConfig]) -> None:
    """Keep the tool names ``mcp list`` just saw, for completion (0600, best effort)."""
    from codebot_mcp.core.config import paths

    cache: dict[str, Any] = {
        name: {"entry": entry, "tools": tools} for name, (entry, tools) in _cached_tools().items()
    }
    for view in views:
        config = servers.get(view["name"])
        if view.get("status") == "connected" and config is not None:
            cache[view["name"]] = {
                "entry": fingerprint(config),
                "tools": sorted(t["original_name"] for t in view.get("tools", [])),
            }
    from codebot_mcp.core.fsutil import atomic_write  # deferred: tempfile is slow to import

    path = _cache_path()
    try:
        paths.private_dir(path.parent)
        from codebot_mcp.core.fsutil import atomic_write

        atomic_write(path, json.dumps(cache, sort_keys=True), mode=0o600)
    except OSError:  # boundary: a read-only state dir only costs completion
        pass
