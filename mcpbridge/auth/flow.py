"""The OAuth client of one http server entry, on the SDK's ``mcp.client.auth`` providers.

The SDK does the protocol: ``WWW-Authenticate`` parsing, RFC 9728 protected-resource
metadata (resource checked), RFC 8414 / OpenID / 2025-03-26 discovery (issuer checked),
CIMD, dynamic registration, PKCE S256 with ``resource``, the token endpoint's auth methods,
scope selection with ``offline_access``, step-up on 403 ``insufficient_scope``, the RFC 9207
``iss`` check, re-registration when the authorization server changes, refresh, and the
client-credentials grant (secret or ``private_key_jwt``) and leg 2 of the identity-assertion
grant; :mod:`.grants` adds the jwt-bearer grant and leg 1, :mod:`.dpop` binds the tokens of
any of them (RFC 9449) when the authorization server offers it. This module chooses the
provider from the settings, gives it the token store, the loopback listener and the browser opener
(injected by ``cli``), and records what happened as data (:class:`AuthTrace`) so failures
are classified by status, not by message text.

Without a login (no ``--login``), the browser never opens: a server with no stored tokens is
connected without OAuth and its 401 becomes "needs login"; one whose tokens cannot be
refreshed, or that asks for more scope, stops at the point the browser would open.

Every request of the flow passes :mod:`.guard`'s origin rule, and what discovery found (the
authorization server's metadata, the protected-resource metadata) is saved beside the tokens
the moment they are saved, then restored in the next process: a refresh there goes to the
authorization server's own token endpoint, never to a guess at the resource server's origin.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import httpx2
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata

from codebot_mcp.core.config.servers import ServerConfig
from codebot_mcp.core.httpcap import AnswerCap, async_client
from codebot_mcp.mcpbridge.auth.credential_sources import assertion_source, id_token_source
from codebot_mcp.mcpbridge.auth.dpop import DPoPAuth, DPoPBinding, DPoPState
from codebot_mcp.mcpbridge.auth.grants import JWTBearerAuth, TokenExchange, discover_issuer
from codebot_mcp.mcpbridge.auth.guard import GuardedAuth
from codebot_mcp.mcpbridge.auth.loopback import LOGIN_TIMEOUT_SECONDS, LoginError, LoopbackListener
from codebot_mcp.mcpbridge.auth.token_store import TokenStore

OpenURL = Callable[[str, str], None]
"""``open_url(server_name, authorization_url)``: show it and open a browser (``cli``)."""


class NeedsLoginError(Exception):
    """The server needs the browser flow, and this run may not start it."""


@dataclass(slots=True)
class LoginOptions:
    """Allows the browser flow (``mcp login``, ``--login``, REPL ``/mcp login``)."""

    open_url: OpenURL
    timeout: float = LOGIN_TIMEOUT_SECONDS
    force: bool = False
    """Ignore stored tokens and authorize afresh (``mcp login``); they stay until replaced."""


@dataclass(slots=True)
class AuthTrace:
    """What the HTTP layer saw, as data."""

    status: int | None = None
    """The last HTTP status of the MCP endpoint itself (not of discovery or token requests)."""
    www_authenticate: str | None = None
    needs_login: bool = False
    """The server asked for authorization that only a login (browser) can give."""
    refused: list[str] = field(default_factory=list[str])
    """Requests the origin rule kept from being sent (``auth.guard``): ``reason: URL``."""
    uses_oauth: bool = False
    """An OAuth provider is attached (tokens stored, client credentials, or a login)."""
    auth_server: str | None = None
    """The authorization server a browserless grant talks to, once known (for messages)."""


class ServerAuth:
    """OAuth for one client connection; :meth:`open` returns the ``httpx2.Auth`` to use."""

    def __init__(self, config: ServerConfig, login: LoginOptions | None = None) -> None:
        self.config = config
        self.login = login
        self.store = TokenStore(config, hide_tokens=bool(login and login.force))
        self.store.on_saved = self._remember
        self.trace = AuthTrace()
        self.provider: httpx2.Auth | None = None
        """The OAuth provider: the SDK's (``OAuthClientProvider`` and its extensions) or
        :class:`~.grants.JWTBearerAuth`."""
        self.dpop: DPoPBinding | None = None
        self.listener: LoopbackListener | None = None
        self.on_wait: Callable[[bool], None] | None = None
        """Called with True while the user is in the browser, False after (the client
        suspends its handshake deadline meanwhile; the listener has its own)."""

    @property
    def enabled(self) -> bool:
        """False for stdio servers and ``"oauth": false``."""
        return self.config.type == "http" and self.config.oauth.enabled

    def secrets(self) -> list[str]:
        """The stored tokens and client secret, for the redactor (none for stdio servers)."""
        return self.store.secrets() if self.enabled else []

    async def open(self, stack: AsyncExitStack) -> httpx2.Auth | None:
        """The auth to attach to the HTTP client, or None (plain requests).

        Raises:
            LoginError: the loopback port cannot be bound.
        """
        if not self.enabled:
            return None
        oauth = self.config.oauth
        provider: httpx2.Auth
        if oauth.grant == "client_credentials":
            provider = self._client_credentials()
        elif oauth.grant == "jwt_bearer":
            provider = JWTBearerAuth(self.config, self.store, assertion_source(oauth, self._base))
            self.trace.auth_server = oauth.issuer
        elif oauth.grant == "identity_assertion":
            provider = await self._identity_assertion()
        elif self.login is None and not self.store.has_tokens():
            return None  # a 401 says "needs login"; nothing is registered behind the user's back
        else:
            redirect = await self._redirect_uri(stack)
            provider = OAuthClientProvider(
                server_url=self._url,
                client_metadata=OAuthClientMetadata(
                    client_name="codebot",
                    redirect_uris=[redirect],  # type: ignore[list-item]
                    grant_types=["authorization_code", "refresh_token"],
                    response_types=["code"],
                    scope=" ".join(oauth.scopes) if oauth.scopes else None,
                ),
                storage=self.store,
                redirect_handler=self._redirect,
                callback_handler=self._callback,
                client_metadata_url=oauth.client_metadata_url,
            )
            if oauth.client_id:
                self.store.preset = self._pre_registered(redirect)
        self.provider = provider
        auth: httpx2.Auth = provider
        if isinstance(provider, OAuthClientProvider):
            self._restore(provider)
            auth = GuardedAuth(provider, self._refused)
        self.trace.uses_oauth = True
        self.dpop = DPoPBinding(self.config, self.store)
        return DPoPAuth(auth, self.dpop)

    @property
    def dpop_state(self) -> DPoPState | None:
        """Whether this server's tokens are DPoP-bound (None: no OAuth in this run)."""
        if not self.enabled:
            return None
        if self.config.oauth.dpop is False:
            return "off"
        return self.dpop.state if self.dpop is not None else None

    async def _identity_assertion(self) -> httpx2.Auth:
        """Leg 2 is the SDK's provider; leg 1 (:class:`~.grants.TokenExchange`) gives it the
        ID-JAG. Its authorization server is configuration: ``oauth.issuer``, else the one
        remembered with the tokens, else the server's protected-resource metadata names it."""
        from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider

        oauth = self.config.oauth
        assert oauth.client_id is not None and oauth.client_secret is not None
        remembered = self.store.load_server().get("issuer")
        issuer = oauth.issuer or (remembered if isinstance(remembered, str) else None)
        issuer = issuer or await discover_issuer(self.config)
        self.trace.auth_server = issuer
        return IdentityAssertionOAuthProvider(
            server_url=self._url,
            storage=self.store,
            client_id=oauth.client_id,
            client_secret=oauth.client_secret,
            issuer=issuer,
            assertion_provider=TokenExchange(self.config, id_token_source(oauth, self._base)),
            scope=" ".join(oauth.scopes) if oauth.scopes else None,
            token_endpoint_auth_method="client_secret_post"
            if oauth.token_endpoint_auth_method == "client_secret_post"
            else "client_secret_basic",
        )

    async def http_client(
        self,
        stack: AsyncExitStack,
        headers: dict[str, str],
        limits: httpx2.Timeout,
        cap: AnswerCap,
    ) -> httpx2.AsyncClient:
        """The HTTP client for the MCP endpoint: this auth attached, statuses recorded,
        every answer under ``cap``.

        Raises:
            httpx2.ProxyError: the environment names a proxy httpx cannot use.
        """
        auth = await self.open(stack)
        http = async_client(
            cap,
            headers=headers,
            timeout=limits,
            follow_redirects=True,
            auth=auth,
            event_hooks=self.event_hooks(),
        )
        await stack.enter_async_context(http)
        return http

    def event_hooks(self) -> dict[str, list[Callable[..., Any]]]:
        """Hooks for the ``httpx2.AsyncClient``: record the MCP endpoint's statuses."""
        target = self._url.rstrip("/")

        async def on_response(response: httpx2.Response) -> None:
            if str(response.request.url).split("?", 1)[0].rstrip("/") == target:
                self.trace.status = response.status_code
                self.trace.www_authenticate = response.headers.get("www-authenticate")

        return {"response": [on_response]}

    def after_connect(self) -> None:
        """Remember the authorization server's endpoints beside the tokens (for logout)."""
        if self.store.has_tokens():
            self._remember()

    def _remember(self) -> None:
        """Save what discovery found beside the tokens: the authorization server's metadata
        (its endpoints, for refresh and logout) and the protected-resource metadata."""
        provider = self.provider
        if isinstance(provider, JWTBearerAuth) and provider.metadata is not None:
            self.trace.auth_server = provider.issuer
            self.store.save_server(
                {
                    "issuer": provider.issuer,
                    "token_endpoint": str(provider.metadata.token_endpoint),
                    "revocation_endpoint": _text(provider.metadata.revocation_endpoint),
                    "auth_server_url": provider.issuer,
                }
            )
            return
        if not isinstance(provider, OAuthClientProvider):
            if self.trace.auth_server:  # identity_assertion: the issuer it was given
                self.store.save_server({"issuer": self.trace.auth_server})
            return
        context = provider.context
        metadata = context.oauth_metadata
        if metadata is None:
            return
        prm = context.protected_resource_metadata
        self.store.save_server(
            {
                "issuer": str(metadata.issuer),
                "token_endpoint": str(metadata.token_endpoint),
                "revocation_endpoint": str(metadata.revocation_endpoint)
                if metadata.revocation_endpoint
                else None,
                "auth_server_url": context.auth_server_url,
                "metadata": metadata.model_dump(mode="json", exclude_none=True),
                "resource_metadata": prm.model_dump(mode="json", exclude_none=True)
                if prm is not None
                else None,
            }
        )

    def _restore(self, provider: OAuthClientProvider) -> None:
        """Give a fresh provider what an earlier run discovered (only what was saved with
        tokens for this very entry); without it a refresh is refused rather than guessed."""
        from mcp.shared.auth import OAuthMetadata, ProtectedResourceMetadata
        from pydantic import ValidationError

        saved = self.store.load_server()
        try:
            if isinstance(saved.get("metadata"), dict):
                provider.context.oauth_metadata = OAuthMetadata.model_validate(saved["metadata"])
            if isinstance(saved.get("resource_metadata"), dict):
                provider.context.protected_resource_metadata = (
                    ProtectedResourceMetadata.model_validate(saved["resource_metadata"])
                )
        except ValidationError:  # boundary: an unreadable record is no record
            provider.context.oauth_metadata = None
            provider.context.protected_resource_metadata = None
            return
        if isinstance(saved.get("auth_server_url"), str):
            provider.context.auth_server_url = saved["auth_server_url"]

    def _refused(self, url: str, reason: str) -> None:
        self.trace.refused.append(f"{reason}: {url}")

    # -- internals --------------------------------------------------------------------------

    @property
    def _url(self) -> str:
        assert self.config.url is not None
        return self.config.url

    @property
    def _base(self) -> Path:
        """Where a relative ``assertion_file`` / ``id_token_file`` / command starts."""
        return self.config.cwd or self.config.source.parent

    def _client_credentials(self) -> OAuthClientProvider:
        from mcp.client.auth.extensions.client_credentials import (
            ClientCredentialsOAuthProvider,
            PrivateKeyJWTOAuthProvider,
            SignedJWTParameters,
        )
        from mcp.shared.exceptions import MCPDeprecationWarning

        oauth = self.config.oauth
        assert oauth.client_id is not None
        scope = " ".join(oauth.scopes) if oauth.scopes else None
        with warnings.catch_warnings():
            # Without 'issuer' the SDK warns that discovery picks the authorization server;
            # docs/settings.md says so, and 'oauth.issuer' pins it.
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            if oauth.private_key:
                signer = SignedJWTParameters(
                    issuer=oauth.client_id,
                    subject=oauth.client_id,
                    signing_key=oauth.private_key,
                    signing_algorithm=oauth.signing_algorithm,
                )
                return PrivateKeyJWTOAuthProvider(
                    server_url=self._url,
                    storage=self.store,
                    client_id=oauth.client_id,
                    assertion_provider=signer.create_assertion_provider(),
                    scope=scope,
                    issuer=oauth.issuer,
                )
            assert oauth.client_secret is not None
            method = oauth.token_endpoint_auth_method
            return ClientCredentialsOAuthProvider(
                server_url=self._url,
                storage=self.store,
                client_id=oauth.client_id,
                client_secret=oauth.client_secret,
                token_endpoint_auth_method="client_secret_post"
                if method == "client_secret_post"
                else "client_secret_basic",
                scope=scope,
                issuer=oauth.issuer,
            )

    def _pre_registered(self, redirect: str) -> OAuthClientInformationFull:
        oauth = self.config.oauth
        method = oauth.token_endpoint_auth_method or (
            "client_secret_basic" if oauth.client_secret else "none"
        )
        return OAuthClientInformationFull(
            client_id=oauth.client_id or "",
            client_secret=oauth.client_secret,
            redirect_uris=[redirect],  # type: ignore[list-item]
            token_endpoint_auth_method=method,
            grant_types=["authorization_code", "refresh_token"],
            issuer=oauth.issuer,
        )

    async def _redirect_uri(self, stack: AsyncExitStack) -> str:
        """Bind the listener (with a login) and return the redirect URI the client uses."""
        oauth = self.config.oauth
        stored = await self.store.get_client_info()
        stored_port = _loopback_port(stored) if stored and not oauth.client_id else None
        if self.login is None:
            return f"http://127.0.0.1:{oauth.callback_port or stored_port or 0}/callback"
        try:
            listener = await stack.enter_async_context(
                LoopbackListener(oauth.callback_port or stored_port, timeout=self.login.timeout)
            )
        except LoginError:
            if oauth.callback_port:
                raise
            # The port of the old registration is taken: register again on a free one.
            listener = await stack.enter_async_context(
                LoopbackListener(None, timeout=self.login.timeout)
            )
        if stored is not None and not oauth.client_id and stored_port != listener.port:
            self.store.forget_client()
        self.listener = listener
        return listener.redirect_uri

    async def _redirect(self, url: str) -> None:
        if self.login is None or self.listener is None:
            self.trace.needs_login = True
            raise NeedsLoginError(f"server '{self.config.name}' needs a login")
        url = self._with_configured_scopes(url)
        state = parse_qs(urlsplit(url).query).get("state", [None])[0]
        self.listener.expected_state = state
        if self.on_wait is not None:
            self.on_wait(True)
        self.login.open_url(self.config.name, url)

    async def _callback(self) -> AuthorizationCodeResult:
        assert self.listener is not None
        try:
            return await self.listener.wait()
        finally:
            if self.on_wait is not None:
                self.on_wait(False)

    def _with_configured_scopes(self, url: str) -> str:
        """``oauth.scopes`` overrides the scopes discovery chose; a challenge's still count."""
        scopes = self.config.oauth.scopes
        if not scopes:
            return url
        parts = urlsplit(url)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        challenged = _challenge_scopes(self.trace.www_authenticate)
        chosen = query.get("scope", "").split()
        merged = [*scopes, *(s for s in chosen if s in challenged or s == "offline_access")]
        query["scope"] = " ".join(dict.fromkeys(merged))
        return urlunsplit(parts._replace(query=urlencode(query)))


def _text(value: object) -> str | None:
    return str(value) if value is not None else None


def _challenge_scopes(header: str | None) -> set[str]:
    import re

    match = re.search(r'scope="([^"]*)"', header or "")
    return set(match.group(1).split()) if match else set()


def _loopback_port(client: OAuthClientInformationFull) -> int | None:
    for uri in client.redirect_uris or []:
        parts = urlsplit(str(uri))
        if parts.hostname == "127.0.0.1" and parts.port:
            return parts.port
    return None
