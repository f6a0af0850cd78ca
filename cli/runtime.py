"""The composition root: settings → manager (→ session, for chat)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import SettingsError, UsageError

if TYPE_CHECKING:
    # Settings and trust load only when a command runs: `codebot --help` stays light.
    from core import trust
    from core.servers import ServerConfig
    from core.settings import Settings
    from mcpbridge.auth import LoginOptions
    from mcpbridge.manager import Manager


@dataclass(frozen=True, slots=True)
class Globals:
    """Options of the root command, shared by every subcommand."""

    cwd: Path
    debug: bool = False
    trust_project: bool = False


def load_settings(globals_: Globals) -> Settings:
    """Read the settings for the working directory (raises ``SettingsError``).

    Every secret the settings name (header and env values, the API key) is handed to the
    process-wide redactor, so no log line or message can print it.
    """
    import os

    from cli import render
    from core import settings as settings_mod

    settings = settings_mod.load(globals_.cwd)
    for config in settings.servers.values():
        render.REDACTOR.add([*config.headers.values(), *config.env.values()])
        render.REDACTOR.add(config.oauth.secrets)
    for name in (settings.api_key_env, "OPENAI_API_KEY"):
        if name and os.environ.get(name):
            render.REDACTOR.add([os.environ[name]])
    return settings


def apply_trust(globals_: Globals, settings: Settings) -> tuple[Settings, trust.TrustCheck]:
    """Drop untrusted project servers, with a warning naming the fix (non-interactive use)."""
    from core import trust

    result = trust.check(settings, assume_trusted=globals_.trust_project)
    if result.needs_trust:
        from cli import render

        render.warn(trust.untrusted_message(result))
    return trust.without_untrusted(settings, result), result


def require_trusted(name: str, result: trust.TrustCheck) -> None:
    """A server named on the command line that the project defines, untrusted, is an error."""
    if result.needs_trust and any(c.name == name for c in result.servers):
        changed = result.reason.startswith("changed")
        state = "changed since it was trusted" if changed else "not trusted"
        raise SettingsError(
            f"server '{name}' is defined by {result.project_file}, and the project is {state}",
            hint="Review it and run `codebot trust`, or pass --trust-project "
            "(or set CODEBOT_TRUST_PROJECT=1).",
        )


def select_servers(settings: Settings, names: list[str] | None) -> dict[str, ServerConfig]:
    """The named servers (all when ``names`` is empty), or a usage error naming the known ones."""
    if not names:
        return dict(settings.servers)
    unknown = [n for n in names if n not in settings.servers]
    if unknown:
        known = ", ".join(settings.servers) or "none"
        raise UsageError(
            f"unknown server '{unknown[0]}' (configured: {known})",
            hint=describe_settings_files(settings),
        )
    return {n: settings.servers[n] for n in dict.fromkeys(names)}


def with_timeout(
    servers: Mapping[str, ServerConfig], timeout: float | None
) -> dict[str, ServerConfig]:
    """Override every server's handshake and tool timeout (``--timeout``)."""
    if timeout is None:
        return dict(servers)
    return {n: replace(c, timeout=timeout, tool_timeout=timeout) for n, c in servers.items()}


def describe_settings_files(settings: Settings) -> str:
    """Where servers are configured, for hints."""
    files = [str(p) for p in (settings.global_file, settings.project_file) if p is not None]
    if not files:
        from core import paths

        return (
            f"No settings file found: add servers to {paths.global_settings_path()} or "
            f"{settings.cwd / paths.PROJECT_DIR / paths.SETTINGS_FILE}."
        )
    return "Servers are configured in " + " and ".join(files) + "."


@asynccontextmanager
async def open_manager(
    servers: Mapping[str, ServerConfig],
    *,
    prelaunch: bool = True,
    login: LoginOptions | None = None,
) -> AsyncIterator[Manager]:
    """A manager over ``servers`` (not yet started); every server is stopped on exit.

    With ``prelaunch`` the stdio servers' processes are launched *before* the MCP SDK is
    imported, so they boot while Python imports it (about a second of CPU each way). Without
    it, servers launch when ``start_all`` names them. With ``login`` a server that needs
    authorization runs the browser flow (``--login``); without, it fails as "needs login".
    """
    from mcpbridge import process  # no SDK import

    async with process.prelaunch(servers if prelaunch else {}) as launched:
        from mcpbridge.manager import Manager  # imports the SDK while the servers boot

        async with Manager(servers, prelaunched=launched, login=login) as manager:
            yield manager
