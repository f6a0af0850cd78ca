"""The settings every command runs with: trust and the managed policy applied, once, here.

:func:`load` reads the settings files and removes what an untrusted project asks for (its
servers, and every gated key of its file: endpoint, key variable, model, limits, roots,
``permissions.allow``...; see :mod:`core.config.keys`). Commands, the REPL, the warm holder
and doctor all start from it, so no path can forget the trust rule. The unfiltered settings
(:func:`core.config.settings.load_unfiltered`) are for showing the user what trust holds back
and for editing the files; a test keeps the list of their readers short.

After trust, the managed settings (:mod:`core.config.managed`) are applied the same way: the
servers they deny (or do not allow) are left out, the keys they set or lock take their value.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codebot_mcp.core.config import managed, trust
from codebot_mcp.core.config.settings import Settings, load_unfiltered
from codebot_mcp.core.errors import SettingsError


@dataclass(frozen=True, slots=True)
class Effective:
    """The settings to run with, and the trust decision behind them."""

    settings: Settings
    """Trust applied: what an untrusted project asks for is not here."""
    trust: trust.TrustCheck
    """What the project file asks for (``servers``, ``gated``) and whether it is trusted;
    when ``trust.needs_trust`` those were left out of ``settings``."""
    policy: managed.ManagedPolicy = field(default_factory=managed.ManagedPolicy)
    """The managed settings applied (``settings.policy_removed`` names what they removed)."""
    policy_warnings: tuple[str, ...] = ()
    """Values of the user's or project's files that a locked key overrode."""

    def __iter__(self) -> Iterator[Any]:
        """``settings, check = effective.load(...)``."""
        return iter((self.settings, self.trust))


def apply(
    unfiltered: Settings,
    *,
    assume_trusted: bool = False,
    environ: Mapping[str, str] | None = None,
) -> Effective:
    """Apply trust and the managed policy to settings read with ``load_unfiltered`` (for a
    caller that also shows the user what is held back); :func:`load` is the usual way.
    ``environ``: the variables ``unfiltered`` was read with (``${VAR}`` expansion), for a file
    the policy makes read again.

    Raises:
        SettingsError: the managed settings file is broken (naming it).
    """
    policy = managed.load()
    forced = policy.values.get("claude_files")
    fallback = unfiltered.untrusted_fallback.get("claude_files", forced)
    if forced is not None and (forced != unfiltered.claude_files or forced != fallback):
        # the policy turns Claude Code's files on or off: read them so
        unfiltered = load_unfiltered(unfiltered.cwd, environ, claude_files=forced)
    result = trust.check(unfiltered, assume_trusted=assume_trusted)
    settings, warnings = managed.enforce(trust.without_untrusted(unfiltered, result), policy)
    return Effective(settings, result, policy, tuple(warnings))


def load(
    cwd: Path | None = None,
    *,
    assume_trusted: bool = False,
    environ: Mapping[str, str] | None = None,
) -> Effective:
    """Read the settings for ``cwd`` and apply trust.

    Args:
        cwd: The working directory (``--cwd``); defaults to the process's.
        assume_trusted: ``--trust-project`` (``CODEBOT_TRUST_PROJECT=1`` is read by trust).
        environ: Variables for ``${VAR}`` expansion; defaults to ``os.environ``.

    Raises:
        SettingsError: a settings file cannot be read or has the wrong shape.
    """
    return apply(load_unfiltered(cwd, environ), assume_trusted=assume_trusted, environ=environ)


def require_trusted(name: str, result: trust.TrustCheck, settings: Settings) -> None:
    """A server named on the command line that the project defines, untrusted, is an error
    (unless a global entry of the same name stands in for it).

    Raises:
        SettingsError: the server is the untrusted project's.
    """
    if name in settings.shadowed:
        return
    if result.needs_trust and any(c.name == name for c in result.servers):
        raise SettingsError(
            f"server '{name}' is defined by {result.project_file}, "
            f"and the project is {result.state}",
            hint="Review it (`codebot trust` shows what changed) and run `codebot trust`, or "
            "pass --trust-project (or set CODEBOT_TRUST_PROJECT=1).",
        )


def secrets_of(unfiltered: Settings, environ: Mapping[str, str] | None = None) -> list[str]:
    """Every secret the settings name, for the redactor, so no message or result prints it:
    each server entry's (header and env values, expanded credentials, OAuth secrets, untrusted
    entries too) and the model's API key, by the variable each file names."""
    from codebot_mcp.core.secrets.redact import entry_secrets

    environ = os.environ if environ is None else environ
    out: list[str] = []
    for config in unfiltered.servers.values():
        out += entry_secrets(config, environ)
        out += config.oauth.secrets
    for name in (
        unfiltered.api_key_env,
        unfiltered.untrusted_fallback.get("api_key_env"),
        "OPENAI_API_KEY",
    ):
        if name and environ.get(name):
            out.append(environ[name])
    return out


def warnings_of(unfiltered: Settings) -> list[str]:
    """What the files got wrong but could be read past, one line each, in file order: the
    settings' own warnings, then each server entry's, naming the server and its file."""
    out = [str(warning) for warning in unfiltered.warnings]
    for config in unfiltered.servers.values():
        out += [f"server '{config.name}' in {config.source}: {w}" for w in config.warnings]
    return out
