"""Plain-data views of servers and tools: one shape for ``mcp list`` (text and JSON) and
``mcp doctor --format json``.

Secrets never enter these views: env and header values that are secrets (the one heuristic,
:func:`core.secrets.credentials.is_secret`) are masked, configuration is shown, URLs lose
credentials.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from codebot_mcp.core.config.oauth import OAUTH_KEYS, SECRET_KEYS, OAuthSettings
from codebot_mcp.core.config.servers import ServerConfig
from codebot_mcp.core.secrets.redact import MASK, Redactor, entry_secrets, masked_values

if TYPE_CHECKING:  # no SDK import at run time: the hot path (mcpbridge.calls.lite) uses these views
    from codebot_mcp.mcpbridge.connection.contract import ListedServer, ListedTool, Reached
    from codebot_mcp.mcpbridge.connection.failures import Failure
    from codebot_mcp.mcpbridge.connection.manager import Manager, ServerStatus


def config_view(config: ServerConfig) -> dict[str, Any]:
    """The entry as configured, secrets masked (also where a credential was expanded into
    ``args`` or ``url``)."""
    redact = Redactor(entry_secrets(config))
    view: dict[str, Any] = {
        "transport": config.type,
        "source": str(config.source),
        "overrides": str(config.overrides) if config.overrides else None,
        "enabled": config.enabled,
    }
    if config.type == "http":
        view["url"] = redact(config.url or "")
        view["headers"] = masked_values(config, "headers")
        view["oauth"] = oauth_view(config.oauth)
    else:
        view["command"] = config.command
        view["args"] = [redact(a) for a in config.args]
        view["env"] = masked_values(config, "env")
        view["cwd"] = str(config.cwd) if config.cwd else None
    return view


def oauth_view(oauth: OAuthSettings) -> dict[str, Any] | bool:
    """The ``oauth`` settings as configured (false when disabled), secrets masked."""
    if not oauth.enabled:
        return False
    view: dict[str, Any] = {}
    for key in OAUTH_KEYS:
        value = getattr(oauth, key)
        if value is None:
            continue
        view[key] = MASK if key in SECRET_KEYS else list(value) if key == "scopes" else value
    return view


def auth_view(config: ServerConfig, client: Reached | None) -> dict[str, Any]:
    """How an http server authorizes: ``grant`` (null with ``"oauth": false``) and ``dpop``:
    ``bound`` (the tokens are bound to codebot's key, RFC 9449), ``bearer`` (the
    authorization server offers no DPoP), ``off`` (``"dpop": false``), ``unknown`` (no token
    seen yet), null without OAuth."""
    oauth = config.oauth
    if not oauth.enabled:
        return {"grant": None, "browser": False, "dpop": None}
    state = client.dpop_state if client is not None else None
    if state is None:
        state = "off" if oauth.dpop is False else "unknown"
    return {"grant": oauth.grant, "browser": not oauth.browserless, "dpop": state}


def tool_view(tool: ListedTool, *, schema: bool = False, app_only: bool = False) -> dict[str, Any]:
    """One tool: visible and original name, capability with its reason, description, and
    whether it is app-only (MCP Apps: never offered to the model)."""
    permission = tool.info.permission
    view: dict[str, Any] = {
        "name": tool.name,
        "original_name": tool.original_name,
        "name_reason": tool.name_reason,
        "capability": permission.capability.value,
        "capability_reason": permission.reason,
        "description": tool.description,
        "app_only": app_only,
    }
    if schema:
        view["input_schema"] = tool.schema()
    return view


def failure_view(failure: Failure | None) -> dict[str, Any] | None:
    """Why a server is not usable: stage, message, hint, the end of its stderr, its log."""
    if failure is None:
        return None
    return {
        "stage": failure.stage,
        "message": failure.message,
        "hint": failure.hint,
        "stderr_tail": failure.stderr_tail,
        "log_file": str(failure.log_file) if failure.log_file else None,
        "needs_login": failure.needs_login,
    }


def server_view(
    name: str,
    status: str,
    config: ServerConfig,
    client: Reached | None,
    tools: Sequence[ListedTool],
    *,
    failure: Failure | None = None,
    schemas: bool = False,
    app_tools: Sequence[ListedTool] = (),
    show_app_tools: bool = False,
    stale: str | None = None,
) -> dict[str, Any]:
    """One server, the same keys for ``mcp list --json`` and doctor's ``--format json``:
    status, the entry (masked), handshake facts, failure, staleness and tools; ``client`` and
    the tools of either transport (:mod:`.contract`).

    ``stale``: why the tools shown are out of date (a re-list after ``tools/list_changed``
    failed; ``{"message": …}`` in the view, null otherwise).

    ``tools`` are what the model is offered (``tool_count``); ``app_tools`` the app-only ones
    (``app_only_count``), listed after them only with ``show_app_tools`` (``mcp list --all``).
    """
    info = client.info if client else None
    listed = [tool_view(t, schema=schemas) for t in tools]
    if show_app_tools:
        listed += [tool_view(t, schema=schemas, app_only=True) for t in app_tools]
    auth = {"auth": auth_view(config, client)} if config.type == "http" else {}
    return {
        "name": name,
        "status": status,
        **config_view(config),
        "protocol_version": info.protocol_version if info else None,
        "server_info": {"name": info.name, "version": info.version} if info else None,
        "capabilities": info.capabilities if info else None,
        "handshake_ms": round(info.handshake_ms, 1) if info else None,
        "tool_count": len(tools),
        "app_only_count": len(app_tools),
        "failure": failure_view(failure),
        "stale": {"message": stale} if stale else None,
        **auth,
        "tools": listed,
    }


def listed_view(
    server: ListedServer, *, schemas: bool = False, show_app_tools: bool = False
) -> dict[str, Any]:
    """:func:`server_view` of one server of a listing, either transport (``mcp list``, the
    warm holder's ``list``)."""
    return server_view(
        server.name,
        server.status,
        server.config,
        server.reached,
        server.tools,
        failure=server.failure,
        schemas=schemas,
        app_tools=server.app_tools,
        show_app_tools=show_app_tools,
        stale=server.stale,
    )


def managed_listing(manager: Manager) -> list[ListedServer]:
    """Every server of ``manager`` as a listing shows it, in :meth:`Manager.status` order."""
    return [_listed(status, manager) for status in manager.status()]


def _listed(status: ServerStatus, manager: Manager) -> ListedServer:
    from codebot_mcp.mcpbridge.connection.contract import ListedServer

    connected = status.status == "connected"
    tools = [t for t in manager.tools() if t.server == status.name] if connected else []
    apps = [t for t in manager.app_tools() if t.server == status.name] if connected else []
    return ListedServer(
        status.name,
        status.status,
        status.config,
        manager.clients.get(status.name),
        tools,
        apps,
        failure=status.failure,
        stale=status.stale,
    )
