"""A warm ``mcp call`` resolved in the holder: the client's settings, read where they are kept
warm, so the client reads none.

A warm call's client (:func:`cli.warm_client.fast_call`) sends its working directory, its
environment and its ``SERVER TOOL key=value...`` words (a ``"call_here"`` request). The holder
reads the settings for that directory with that environment exactly as the client's own
``load_effective`` would (its modules are imported already: about a millisecond instead of the
client's 30), applies the same checks in the same order, and takes the call only when the
:func:`~mcpbridge.warm.holder_client.fingerprint` of what it read is the holder's own. Whatever
the client would have been told otherwise (an unknown server, an untrusted project, a broken
file, stale settings) is left to the client's ordinary path, which says it as it always does.

Only a client in the holder's own environment is resolved here
(:func:`~mcpbridge.warm.holder_client.environment_digest`): the loaders read ``HOME``,
``CODEBOT_HOME``, ``PATH`` and the trust switch from the process, and they are then the
client's. What the client would have printed, the warnings and the result, is redacted with
the secrets of the client's settings and environment (:func:`core.config.effective.secrets_of`)
before it is sent.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codebot_mcp.core.config import effective
from codebot_mcp.core.config.servers import ServerConfig, require_usable
from codebot_mcp.core.config.settings import load_unfiltered, root_dirs
from codebot_mcp.core.errors import CodebotError
from codebot_mcp.core.secrets.redact import Redactor
from codebot_mcp.core.tools import arguments
from codebot_mcp.mcpbridge.tools.tool_pins import settings_pins
from codebot_mcp.mcpbridge.warm.holder_client import (
    environment_digest,
    fingerprint,
    plain_pair,
)


@dataclass(frozen=True, slots=True)
class Resolved:
    """A client's call as its settings define it, to be run by the holder."""

    config: ServerConfig
    tool: str
    arguments: dict[str, Any]
    """``key=value`` text as :class:`core.tools.arguments.Pairs` (typed by the tool's schema)."""
    warnings: tuple[str, ...]
    """What the client's settings load prints (redacted), in order."""
    redact: Redactor
    """The secrets of the client's settings and environment."""


def resolve(request: dict[str, Any], digest: str) -> Resolved | None:
    """The call of a ``call_here`` request, or None: the client's ordinary path takes it (and
    says why, when something is wrong). ``digest``: the holder's own settings digest."""
    environ = request["environ"]
    cwd = Path(request["cwd"])
    words = request["words"]
    if environment_digest(environ) != environment_digest(os.environ):
        return None  # another HOME, PATH, CODEBOT_HOME...: the loaders would read ours
    if not cwd.is_absolute() or not cwd.is_dir() or not all(plain_pair(w) for w in words):
        return None
    server, tool = request["server"], request["tool"]
    from codebot_mcp.core.config.plugins.load import forget

    forget()  # plugin manifests are read afresh, as a new process reads them
    try:
        unfiltered = load_unfiltered(cwd, environ)
        loaded = effective.apply(unfiltered, environ=environ)
        settings, check = loaded.settings, loaded.trust
        if server not in settings.servers or server in settings.shadowed:
            return None
        effective.require_trusted(server, check, settings)
        require_usable(settings.servers[server])
        parsed = arguments.parse(words, cwd=cwd)
        pins = settings_pins(settings)
    except CodebotError:
        return None
    roots = root_dirs(settings.project_root, settings.cwd, settings.roots)
    own = fingerprint(
        settings.servers, check.trusted, roots, pins.digest() if pins else "", environ
    )
    if own != digest:
        return None  # stale: these settings are not the ones the holder's servers run with
    redact = Redactor(effective.secrets_of(unfiltered, environ))
    warnings = (*effective.warnings_of(unfiltered), *loaded.policy_warnings)
    return Resolved(
        settings.servers[server], tool, parsed, tuple(redact(w) for w in warnings), redact
    )
