"""Where the OAuth flow may send requests: the origin rule, enforced on every request the
SDK's provider makes besides the MCP request itself.

The rule (``docs/security.md``):

1. **Metadata comes from the server's own origin.** Protected-resource metadata is fetched
   only from the MCP server's origin (scheme, host and port): a ``resource_metadata`` URL in
   a ``WWW-Authenticate`` challenge that names another origin is not fetched (the well-known
   URLs of the server's origin are used instead). Authorization-server metadata is fetched
   only from the origin of the authorization server that metadata named.
2. **Credentials go only to endpoints the authorization server published.** A token or
   registration request (a refresh token, a client secret, an authorization code) goes only
   to the ``token_endpoint`` / ``registration_endpoint`` of the authorization server's
   metadata, discovered in this process or remembered with the tokens. A guessed
   ``<origin>/token`` is allowed only on the legacy path where the server is its own
   authorization server, and never for a refresh.
3. **No internal hosts for a public server.** Loopback, private, link-local and other
   non-global addresses (and ``localhost``) are reached only when the MCP server itself is
   on such an address.

A refused request is never sent: the flow gets a 404 (a GET) or a 400 (a POST) in its place,
so discovery falls back to the well-known URLs and a refused refresh ends in "needs login".
"""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncGenerator, Callable
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp.client.auth import OAuthClientProvider


def origin(url: str) -> tuple[str, str, int | None]:
    """``(scheme, host, port)`` with the scheme's default port filled in."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = -1
    if port is None:
        port = {"http": 80, "https": 443}.get(scheme)
    return scheme, (parts.hostname or "").lower().rstrip("."), port


def is_internal(url: str) -> bool:
    """A host that is not on the public internet: ``localhost``, a loopback, private,
    link-local, shared or reserved address (an IPv4-mapped IPv6 address counts as its IPv4)."""
    host = origin(url)[1]
    if host == "localhost" or host.endswith((".localhost", ".local", ".internal")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return not address.is_global


def _grant(request: httpx2.Request) -> str | None:
    try:
        body = request.content.decode("utf-8", "replace")
    except httpx2.RequestNotRead:  # a streamed body: not one the OAuth flow makes
        return None
    return parse_qs(body).get("grant_type", [None])[0]


class OriginRule:
    """Decides, for one provider, whether a request of its flow may be sent."""

    def __init__(self, provider: OAuthClientProvider) -> None:
        self.provider = provider
        self.refused: list[str] = []
        """The URLs refused, for messages and tests."""

    def reason(self, request: httpx2.Request) -> str | None:
        """Why ``request`` must not be sent, or None."""
        context = self.provider.context
        url = str(request.url)
        server = context.server_url
        if is_internal(url) and not is_internal(server):
            return "an internal host, for a server on the internet"
        if request.method == "GET":
            allowed = {origin(server)}
            if context.auth_server_url:
                allowed.add(origin(context.auth_server_url))
            return None if origin(url) in allowed else "another origin than the server's"
        metadata = context.oauth_metadata
        if metadata is not None:
            published = {str(metadata.token_endpoint)}
            if metadata.registration_endpoint is not None:
                published.add(str(metadata.registration_endpoint))
            if url in published:
                return None
            return "not an endpoint the authorization server published"
        if _grant(request) == "refresh_token":
            return "a refresh without the authorization server's published token endpoint"
        own = context.auth_server_url is None or origin(context.auth_server_url) == origin(server)
        if own and origin(url) == origin(server):
            return None  # the legacy path: the server is its own authorization server
        return "not an endpoint of the server's authorization server"


class GuardedAuth(httpx2.Auth):
    """The provider's flow, with every request but the MCP one checked by :class:`OriginRule`
    (refused ones answered locally, never sent)."""

    requires_request_body = True
    requires_response_body = True

    def __init__(
        self, provider: OAuthClientProvider, on_refused: Callable[[str, str], None] | None = None
    ) -> None:
        self.provider = provider
        self.rule = OriginRule(provider)
        self.on_refused = on_refused

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = self.provider.async_auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                reason = None if outgoing is request else self.rule.reason(outgoing)
                if reason is None:
                    response = yield outgoing
                else:
                    url = str(outgoing.url).split("?", 1)[0]
                    self.rule.refused.append(url)
                    if self.on_refused is not None:
                        self.on_refused(url, reason)
                    status = 404 if outgoing.method == "GET" else 400
                    response = httpx2.Response(
                        status,
                        json={"error": "invalid_request", "error_description": reason},
                        request=outgoing,
                    )
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()
