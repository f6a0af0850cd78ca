"""``mcp logout``: revoke the stored tokens (RFC 7009) where the server supports it, then
delete them."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from urllib.parse import quote

import httpx2

from codebot_mcp.core.config.servers import ServerConfig
from codebot_mcp.mcpbridge.auth.token_store import TokenStore

REVOKE_TIMEOUT_SECONDS = 10.0
"""Logout must not hang on a slow authorization server: the tokens are deleted anyway."""


@dataclass(frozen=True, slots=True)
class LogoutResult:
    """What logout did."""

    had_tokens: bool
    revoked: bool
    """The authorization server accepted the revocation."""
    detail: str
    """One sentence for the user: revoked, not supported, or why revocation failed."""


async def logout(config: ServerConfig) -> LogoutResult:
    """Revoke (best effort) and delete every token stored for ``config``'s entry."""
    store = TokenStore(config)
    token = store.read_tokens_raw()
    if token is None and not store.directory.exists():
        return LogoutResult(False, False, "no tokens were stored")
    endpoint = store.load_server().get("revocation_endpoint")
    client = await store.get_client_info()
    revoked, detail = False, "the authorization server does not support revocation (RFC 7009)"
    if token is not None and isinstance(endpoint, str) and endpoint.startswith("http"):
        revoked, detail = await _revoke(endpoint, token.refresh_token, token.access_token, client)
    store.delete()
    return LogoutResult(token is not None, revoked, detail)


async def _revoke(
    endpoint: str, refresh: str | None, access: str, client: object
) -> tuple[bool, str]:
    client_id = getattr(client, "client_id", None)
    secret = getattr(client, "client_secret", None)
    method = getattr(client, "token_endpoint_auth_method", None)
    headers: dict[str, str] = {}
    auth_data: dict[str, str] = {}
    if secret and method == "client_secret_basic" and client_id:
        pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    elif client_id:
        auth_data["client_id"] = client_id
        if secret:
            auth_data["client_secret"] = secret
    tokens = [(t, hint) for t, hint in ((refresh, "refresh_token"), (access, "access_token")) if t]
    try:
        from codebot_mcp.core.httpcap import async_client
        from codebot_mcp.mcpbridge.transport.limits import answer_cap  # the size cap

        async with async_client(answer_cap(), timeout=REVOKE_TIMEOUT_SECONDS) as http:
            for value, hint in tokens:
                response = await http.post(
                    endpoint,
                    data={"token": value, "token_type_hint": hint, **auth_data},
                    headers=headers,
                )
                if response.status_code != 200:
                    return False, f"revocation answered HTTP {response.status_code}"
    except httpx2.HTTPError as exc:
        return False, f"revocation failed: {type(exc).__name__}"
    return True, "the authorization server revoked them"
