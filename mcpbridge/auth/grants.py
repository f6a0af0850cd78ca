"""The grants that need no browser: ``jwt_bearer`` (workload identity, SEP-1933) and
``identity_assertion`` (enterprise-managed authorization, SEP-990).

**jwt_bearer.** :class:`JWTBearerAuth` is an ``httpx2.Auth`` like the SDK's providers: on the
server's 401 it finds the authorization server (the configured ``oauth.issuer``, else the
protected-resource metadata of the server's own origin, RFC 9728), reads its RFC 8414
metadata from that issuer's own well-known, and sends one RFC 7523 token request:
``grant_type=jwt-bearer``, the workload JWT read afresh (``oauth.assertion_file`` rotates),
``client_id``, ``resource`` and the scope. Client authentication is ``none`` unless a secret is
configured (the workload JWT is the credential). It never registers a client, never opens a
browser, and never retries or falls back to another grant: an error answer ends the flow with
a :class:`~.errors.GrantError` naming the server, the authorization server and its answer.
(The SDK has no provider for it: its identity-assertion provider is for confidential clients.)

**identity_assertion.** Leg 2 is the SDK's ``IdentityAssertionOAuthProvider`` (the RFC 7523
grant with the ID-JAG, client secret authentication). Its ``assertion_provider`` is
:class:`TokenExchange`, leg 1: the RFC 8693 token exchange at the identity provider
(``oauth.idp_token_endpoint``, or discovered from ``oauth.idp_issuer``) of the user's ID token
(``oauth.id_token`` / ``_file`` / ``_command``) for an ID-JAG whose audience is the MCP
authorization server and whose resource is the MCP server. The SDK takes the authorization
server as configuration: ``oauth.issuer``, else :func:`discover_issuer` reads it once from the
server's protected-resource metadata (and it is remembered with the tokens).
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import AsyncGenerator
from urllib.parse import quote

import anyio
import httpx2
from mcp.client.auth import TokenStorage
from mcp.client.auth.utils import (
    build_oauth_authorization_server_metadata_discovery_urls,
    build_protected_resource_metadata_discovery_urls,
    create_oauth_metadata_request,
    extract_field_from_www_auth,
    extract_resource_metadata_from_www_auth,
    extract_scope_from_www_auth,
    handle_auth_metadata_response,
    handle_protected_resource_response,
    handle_token_response_scopes,
    union_scopes,
)
from mcp.shared.auth import OAuthMetadata, OAuthToken, ProtectedResourceMetadata
from mcp.shared.auth_utils import (
    calculate_token_expiry,
    check_resource_allowed,
    resource_url_from_server_url,
)

from codebot_mcp.core.config.servers import ServerConfig
from codebot_mcp.core.secrets.redact import SECRETS
from codebot_mcp.mcpbridge.auth.auth_errors import GrantError, answer_of
from codebot_mcp.mcpbridge.auth.credential_sources import CredentialSource
from codebot_mcp.mcpbridge.auth.guard import is_internal, origin

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"
IDP_TIMEOUT_SECONDS = 30.0
"""Leg 1 and issuer discovery run outside the MCP connection's own timeouts: bound them."""


def _where(config: ServerConfig) -> str:
    return f"server '{config.name}' in {config.source}"


class JWTBearerAuth(httpx2.Auth):
    """The RFC 7523 jwt-bearer grant with a workload JWT, for one server (see the module)."""

    requires_response_body = True

    def __init__(
        self, config: ServerConfig, storage: TokenStorage, assertion: CredentialSource
    ) -> None:
        assert config.url is not None and config.oauth.client_id is not None
        self.config = config
        self.server_url = config.url
        self.storage = storage
        self.assertion = assertion
        self.issuer: str | None = config.oauth.issuer
        self.metadata: OAuthMetadata | None = None
        self.resource_metadata: ProtectedResourceMetadata | None = None
        self._scope = " ".join(config.oauth.scopes) if config.oauth.scopes else None
        self._tokens: OAuthToken | None = None
        self._expiry: float | None = None
        self._initialized = False
        self._lock = anyio.Lock()

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        async with self._lock:
            if not self._initialized:
                self._tokens = await self.storage.get_tokens()
                self._expiry = (
                    calculate_token_expiry(self._tokens.expires_in) if self._tokens else None
                )
                self._initialized = True
            if self._valid():
                assert self._tokens is not None
                request.headers["Authorization"] = f"Bearer {self._tokens.access_token}"
            response = yield request
            wanted, scope = self._wanted_scope(response)
            if not wanted:
                return
            if self.metadata is None:
                prm_url = extract_resource_metadata_from_www_auth(response)
                for url in build_protected_resource_metadata_discovery_urls(
                    prm_url, self.server_url
                ):
                    if origin(url) != origin(self.server_url):
                        continue  # metadata only from the server's own origin (auth.guard)
                    prm = await handle_protected_resource_response(
                        (yield create_oauth_metadata_request(url))
                    )
                    if prm is not None:
                        self.resource_metadata = prm
                        break
                self.issuer = self.issuer or self._advertised_issuer()
                for url in build_oauth_authorization_server_metadata_discovery_urls(
                    self.issuer, self.issuer
                ):
                    ok, asm = await handle_auth_metadata_response(
                        (yield create_oauth_metadata_request(url))
                    )
                    if not ok:
                        break
                    if asm is not None:
                        self.metadata = self._checked(asm)
                        break
                if self.metadata is None:
                    raise GrantError(
                        f"the jwt_bearer grant of server '{self.config.name}' failed: "
                        f"authorization server '{self.issuer}' publishes no metadata (RFC 8414)",
                        f"Check 'oauth.issuer' of {_where(self.config)}.",
                    )
            token_response = yield await self._token_request(scope)
            if token_response.status_code != 200:
                raise GrantError(
                    f"the jwt_bearer grant of server '{self.config.name}' was refused by "
                    f"authorization server '{self.issuer}': {answer_of(token_response)}",
                    "Check the workload's JWT ('oauth.assertion' / 'oauth.assertion_file': "
                    "its audience must be the authorization server, and it must not have "
                    f"expired) and 'oauth.client_id' / 'oauth.scopes' of {_where(self.config)}. "
                    "codebot does not retry or fall back to another grant.",
                )
            tokens = await handle_token_response_scopes(token_response)
            if tokens.scope is None:
                tokens.scope = scope
            self._tokens = tokens
            self._expiry = calculate_token_expiry(tokens.expires_in)
            await self.storage.set_tokens(tokens)
            request.headers["Authorization"] = f"Bearer {tokens.access_token}"
            yield request

    def _wanted_scope(self, response: httpx2.Response) -> tuple[bool, str | None]:
        """Whether the answer asks for a token (401, or a 403 step-up), and for which scope."""
        if response.status_code == 401:
            return True, self._scope or extract_scope_from_www_auth(response)
        if (
            response.status_code == 403
            and extract_field_from_www_auth(response, "error") == "insufficient_scope"
        ):
            return True, union_scopes(self._scope, extract_scope_from_www_auth(response))
        return False, None

    def _valid(self) -> bool:
        tokens = self._tokens
        return bool(
            tokens and tokens.access_token and (self._expiry is None or time.time() <= self._expiry)
        )

    def _advertised_issuer(self) -> str:
        prm = self.resource_metadata
        if prm is None or not prm.authorization_servers:
            raise GrantError(
                f"the jwt_bearer grant of server '{self.config.name}' failed: the server "
                "names no authorization server (no protected-resource metadata, RFC 9728)",
                f"Set 'oauth.issuer' of {_where(self.config)} to its authorization server.",
            )
        return str(prm.authorization_servers[0])

    def _checked(self, asm: OAuthMetadata) -> OAuthMetadata:
        """The issuer is the one asked, the token endpoint on its origin, not internal for a
        public server (the origin rule of ``auth.guard``)."""
        assert self.issuer is not None
        token_endpoint = str(asm.token_endpoint)
        problem = None
        if str(asm.issuer).rstrip("/") != self.issuer.rstrip("/"):
            problem = f"its metadata names another issuer ({asm.issuer})"
        elif origin(token_endpoint) != origin(self.issuer):
            problem = f"its token endpoint {token_endpoint} is on another origin"
        elif is_internal(token_endpoint) and not is_internal(self.server_url):
            problem = "its token endpoint is an internal host, for a server on the internet"
        if problem is not None:
            raise GrantError(
                f"the jwt_bearer grant of server '{self.config.name}' stopped at authorization "
                f"server '{self.issuer}': {problem}",
                f"Check 'oauth.issuer' and 'url' of {_where(self.config)}.",
            )
        supported = asm.grant_types_supported
        if supported is not None and JWT_BEARER not in supported:
            raise GrantError(
                f"authorization server '{self.issuer}' of server '{self.config.name}' does not "
                f"offer the jwt-bearer grant (it offers: {', '.join(supported) or 'none'})",
                f"Use another \"grant\" in 'oauth' of {_where(self.config)}.",
            )
        return asm

    def _resource(self) -> str:
        resource = resource_url_from_server_url(self.server_url)
        prm = self.resource_metadata
        if prm is not None and prm.resource:
            published = str(prm.resource)
            if check_resource_allowed(requested_resource=resource, configured_resource=published):
                resource = published
        return resource

    async def _token_request(self, scope: str | None) -> httpx2.Request:
        assert self.metadata is not None
        oauth = self.config.oauth
        assert oauth.client_id is not None
        data = {
            "grant_type": JWT_BEARER,
            "assertion": await self.assertion.read(),
            "client_id": oauth.client_id,
            "resource": self._resource(),
        }
        if scope:
            data["scope"] = scope
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        if oauth.client_secret:
            supported = self.metadata.token_endpoint_auth_methods_supported or []
            method = oauth.token_endpoint_auth_method or (
                "client_secret_post"
                if "client_secret_post" in supported and "client_secret_basic" not in supported
                else "client_secret_basic"
            )
            if method == "client_secret_basic":
                pair = f"{quote(oauth.client_id, safe='')}:{quote(oauth.client_secret, safe='')}"
                headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
            elif method == "client_secret_post":
                data["client_secret"] = oauth.client_secret
        # else "none": the workload JWT is the credential; client_id names the client.
        return httpx2.Request("POST", str(self.metadata.token_endpoint), data=data, headers=headers)


class TokenExchange:
    """Leg 1 of ``identity_assertion``: the ID token for an ID-JAG at the identity provider
    (RFC 8693); the SDK's provider calls it as ``assertion_provider(audience, resource)``."""

    def __init__(self, config: ServerConfig, id_token: CredentialSource) -> None:
        self.config = config
        self.id_token = id_token
        self.endpoint = config.oauth.idp_token_endpoint
        self.idp = config.oauth.idp_issuer or config.oauth.idp_token_endpoint or ""

    async def __call__(self, audience: str, resource: str) -> str:
        """A fresh ID-JAG for ``audience`` (the MCP authorization server) and ``resource``.

        Raises:
            GrantError: the ID token could not be read, or the identity provider refused.
        """
        from codebot_mcp.core.httpcap import async_client
        from codebot_mcp.mcpbridge.transport.limits import answer_cap

        oauth = self.config.oauth
        subject = await self.id_token.read()
        async with async_client(answer_cap(), timeout=IDP_TIMEOUT_SECONDS) as http:
            endpoint = self.endpoint or await self._discover(http)
            data = {
                "grant_type": TOKEN_EXCHANGE,
                "subject_token": subject,
                "subject_token_type": ID_TOKEN_TYPE,
                "requested_token_type": ID_JAG_TYPE,
                "audience": audience,
                "resource": resource,
                "client_id": oauth.idp_client_id or "",
            }
            try:
                response = await http.post(endpoint, data=data)
            except httpx2.HTTPError as exc:
                raise self._error(f"cannot reach {endpoint}: {type(exc).__name__}") from None
        if response.status_code != 200:
            raise self._error(f"the token exchange was refused: {answer_of(response)}")
        try:
            answer = json.loads(response.content)
        except ValueError:
            answer = None
        jag = answer.get("access_token") if isinstance(answer, dict) else None
        issued = answer.get("issued_token_type") if isinstance(answer, dict) else None
        if not isinstance(jag, str) or not jag or issued not in (None, ID_JAG_TYPE):
            raise self._error(
                f"the token exchange answered no ID-JAG (issued_token_type {issued!r})"
            )
        SECRETS.add([jag])
        return jag

    async def _discover(self, http: httpx2.AsyncClient) -> str:
        issuer = self.config.oauth.idp_issuer
        assert issuer is not None
        for url in build_oauth_authorization_server_metadata_discovery_urls(issuer, issuer):
            try:
                response = await http.get(url)
            except httpx2.HTTPError:
                continue
            try:
                data = json.loads(response.content) if response.status_code == 200 else None
            except ValueError:
                data = None
            endpoint = data.get("token_endpoint") if isinstance(data, dict) else None
            if isinstance(endpoint, str) and endpoint.startswith(("https://", "http://")):
                self.endpoint = endpoint
                return endpoint
        raise self._error(
            "its metadata (OpenID configuration or RFC 8414) names no token endpoint",
            hint=f"Set 'oauth.idp_token_endpoint' of {_where(self.config)}.",
        )

    def _error(self, why: str, hint: str | None = None) -> GrantError:
        return GrantError(
            f"the identity_assertion grant of server '{self.config.name}' failed at identity "
            f"provider '{self.idp}': {why}",
            hint
            or f"Check the ID token ('oauth.id_token' / '_file' / '_command'), "
            f"'oauth.idp_client_id' and 'oauth.idp_token_endpoint' / 'oauth.idp_issuer' of "
            f"{_where(self.config)}; the ID token may have expired.",
        )


async def discover_issuer(config: ServerConfig) -> str:
    """The authorization server the server's protected-resource metadata names first (its
    own origin's well-known URLs, RFC 9728), for a provider that takes it as configuration.

    Raises:
        GrantError: no metadata, or none that names an authorization server.
    """
    from codebot_mcp.core.httpcap import async_client
    from codebot_mcp.mcpbridge.transport.limits import answer_cap

    assert config.url is not None
    async with async_client(answer_cap(), timeout=IDP_TIMEOUT_SECONDS) as http:
        for url in build_protected_resource_metadata_discovery_urls(None, config.url):
            try:
                prm = await handle_protected_resource_response(await http.get(url))
            except httpx2.HTTPError as exc:
                raise GrantError(
                    f"cannot read the protected-resource metadata of server '{config.name}': "
                    f"{type(exc).__name__}",
                    f"Check 'url' of {_where(config)}, or set 'oauth.issuer'.",
                ) from None
            if prm is not None and prm.authorization_servers:
                return str(prm.authorization_servers[0])
    raise GrantError(
        f"server '{config.name}' names no authorization server (no protected-resource "
        "metadata, RFC 9728)",
        f"Set 'oauth.issuer' of {_where(config)} to the MCP server's authorization server.",
    )
