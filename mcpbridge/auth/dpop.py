"""DPoP (RFC 9449, SEP-1932): sender-constrained tokens, as an ``httpx2.Auth`` flow around
whichever OAuth provider the server uses (the SDK's, or ``auth.grants``').

:class:`DPoPAuth` sees every request of the provider's flow and every answer:

- it reads the authorization server's metadata as it goes by: when it advertises
  ``dpop_signing_alg_values_supported`` with ``ES256`` (and ``oauth.dpop`` is not false), every
  token request (and refresh) carries a ``DPoP`` proof signed with the entry's key;
- a token answered with ``token_type: DPoP`` is bound: from then on each MCP request says
  ``Authorization: DPoP <token>`` with a fresh proof (its own ``jti``, ``htm``, ``htu``,
  ``iat`` and ``ath``, the token's hash). The answer reaches the SDK as a bearer token (its
  token model knows no other type); the binding is kept beside the tokens;
- a ``use_dpop_nonce`` answer (400 from the token endpoint, 401 from the MCP server, RFC 9449
  §8, §9) is retried once with the server's ``DPoP-Nonce``; later nonces are kept per origin;
- ``oauth.dpop: true`` refuses an authorization server that cannot bind tokens, or one that
  answers a proof with a bearer token.

The key (EC P-256) is made on first use and kept with the tokens (``dpop.json``, 0600), so a
refresh in a later run proves the same key. Proofs are signed with PyJWT: already installed
as the MCP SDK's own JOSE library (its ``private_key_jwt`` signer), maintained, ES256 on
``cryptography``, and ``jwt.encode`` takes the ``typ``/``jwk`` header a proof needs.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from collections.abc import AsyncGenerator
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit, urlunsplit

import httpx2

from codebot_mcp.core.config.servers import ServerConfig
from codebot_mcp.mcpbridge.auth.auth_errors import GrantError
from codebot_mcp.mcpbridge.auth.token_store import TokenStore

ALGORITHM = "ES256"
"""The one algorithm codebot signs proofs with (what every DPoP server must accept in practice,
and the one the MCP extension's examples use)."""
METADATA_PATHS = ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration")

DPoPState = Literal["bound", "bearer", "off", "unknown"]
"""For views: tokens bound to the key; bearer tokens (the authorization server offers no
DPoP); ``oauth.dpop: false``; not known yet (no token seen in this run or stored)."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def htu(url: str) -> str:
    """The proof's ``htu``: the URL without query and fragment (RFC 9449 §4.2)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


class DPoPKey:
    """The entry's proof key: an EC P-256 private key and its public JWK."""

    def __init__(self, pem: bytes) -> None:
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.serialization import load_pem_private_key

        key = load_pem_private_key(pem, password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey):
            raise ValueError("not an EC key")
        self.private = key
        self.pem = pem
        numbers = key.public_key().public_numbers()
        self.jwk = {
            "kty": "EC",
            "crv": "P-256",
            "x": _b64(numbers.x.to_bytes(32, "big")),
            "y": _b64(numbers.y.to_bytes(32, "big")),
        }

    @classmethod
    def generate(cls) -> DPoPKey:
        """A new key."""
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        key = ec.generate_private_key(ec.SECP256R1())
        pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        return cls(pem)

    @property
    def thumbprint(self) -> str:
        """RFC 7638 thumbprint of the public key (the token's ``cnf.jkt``)."""
        canonical = json.dumps(
            {k: self.jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":")
        )
        return _b64(hashlib.sha256(canonical.encode()).digest())

    def proof(
        self, method: str, url: str, *, nonce: str | None = None, access_token: str | None = None
    ) -> str:
        """A fresh proof JWT for one request."""
        import jwt  # PyJWT[crypto]: the SDK's own maintained JOSE library; ES256 on cryptography

        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(24),
            "htm": method.upper(),
            "htu": htu(url),
            "iat": int(time.time()),
        }
        if nonce is not None:
            claims["nonce"] = nonce
        if access_token is not None:
            claims["ath"] = _b64(hashlib.sha256(access_token.encode("ascii")).digest())
        headers = {"typ": "dpop+jwt", "jwk": self.jwk}
        return jwt.encode(claims, self.private, algorithm=ALGORITHM, headers=headers)


class DPoPBinding:
    """What this entry knows about DPoP: the setting, what the authorization server offers,
    the key, whether the stored token is bound, the nonces; persisted in ``dpop.json``."""

    def __init__(self, config: ServerConfig, store: TokenStore) -> None:
        self.config = config
        self.mode = config.oauth.dpop
        self.store = store
        saved = store.load_dpop()
        algs = saved.get("algs")
        self.algs: list[str] | None = [str(a) for a in algs] if isinstance(algs, list) else None
        """The authorization server's ``dpop_signing_alg_values_supported`` ([] when it
        advertises none; None while its metadata has not been seen)."""
        self.issuer: str | None = (
            saved.get("issuer") if isinstance(saved.get("issuer"), str) else None
        )
        self.bound = saved.get("bound") is True and store.has_tokens()
        self._key: DPoPKey | None = None
        pem = saved.get("key")
        if isinstance(pem, str):
            try:
                self._key = DPoPKey(pem.encode())
            except ValueError:  # boundary: an unreadable key is no key (tokens bound to it fail)
                self._key = None
        self.nonces: dict[tuple[str, str, int | None], str] = {}

    @property
    def state(self) -> DPoPState:
        """For ``mcp doctor`` and ``mcp list --json``."""
        if self.mode is False:
            return "off"
        if self.bound:
            return "bound"
        if self.algs is not None and self.store.has_tokens():
            return "bearer"
        return "unknown"

    @property
    def offered(self) -> bool:
        """The authorization server advertises ES256 proofs."""
        return self.algs is not None and ALGORITHM in self.algs

    def key(self) -> DPoPKey:
        """The entry's key, made (and saved) on first use."""
        if self._key is None:
            self._key = DPoPKey.generate()
            self.save()
        return self._key

    def save(self) -> None:
        """Write ``dpop.json`` beside the tokens (0600)."""
        self.store.save_dpop(
            {
                "alg": ALGORITHM,
                "key": self._key.pem.decode() if self._key is not None else None,
                "algs": self.algs,
                "issuer": self.issuer,
                "bound": self.bound,
            }
        )

    def saw_metadata(self, data: dict[str, Any]) -> None:
        """The authorization server's metadata went by."""
        algs = data.get("dpop_signing_alg_values_supported")
        self.algs = [str(a) for a in algs] if isinstance(algs, list) else []
        issuer = data.get("issuer")
        self.issuer = issuer if isinstance(issuer, str) else self.issuer

    def proves_token_requests(self) -> bool:
        """Whether a token request gets a proof now.

        Raises:
            GrantError: ``oauth.dpop`` is true and the authorization server cannot bind.
        """
        if self.mode is False:
            return False
        if self.offered or (self.algs is None and self.bound):
            return True
        if self.mode is True:
            raise self.refusal(
                "does not offer DPoP with ES256 (its metadata has no "
                "'dpop_signing_alg_values_supported' with ES256)"
            )
        return False

    def refusal(self, why: str) -> GrantError:
        """The error for ``oauth.dpop: true`` and a server that cannot do it."""
        who = f"authorization server '{self.issuer}'" if self.issuer else "its authorization server"
        return GrantError(
            f"server '{self.config.name}' requires DPoP (\"oauth.dpop\": true) but {who} {why}",
            f"Remove \"dpop\": true from 'oauth' of server '{self.config.name}' in "
            f"{self.config.source} to accept bearer tokens from it.",
        )


def _origin(url: httpx2.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port


def _grant(request: httpx2.Request) -> str | None:
    if request.method != "POST":
        return None
    try:
        body = request.content.decode("utf-8", "replace")
    except httpx2.RequestNotRead:
        return None
    return parse_qs(body).get("grant_type", [None])[0]


async def _read(response: httpx2.Response, is_mcp: bool) -> httpx2.Response:
    """The body of the flow's own answers (metadata, tokens: small, capped by the transport)
    and of an MCP 401; an MCP answer proper may be a stream and is left to the SDK."""
    if not is_mcp or response.status_code == 401:
        await response.aread()
    return response


def _json(response: httpx2.Response) -> Any:
    try:
        return json.loads(response.content or b"null")
    except (ValueError, httpx2.ResponseNotRead):
        return None


class DPoPAuth(httpx2.Auth):
    """The inner auth's flow, with DPoP proofs added, nonces retried and bound tokens
    presented as ``DPoP`` (see the module docstring)."""

    requires_request_body = True
    requires_response_body = True

    def __init__(self, inner: httpx2.Auth, binding: DPoPBinding) -> None:
        self.inner = inner
        self.binding = binding

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = self.inner.async_auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                is_mcp = outgoing is request
                grant = None if is_mcp else _grant(outgoing)
                proved = self._sign(outgoing, is_mcp, grant)
                response = await _read((yield outgoing), is_mcp)
                self._observe(outgoing, response)
                if proved and self._asks_nonce(response, is_mcp):
                    self._sign(outgoing, is_mcp, grant)  # once, with the nonce just kept
                    response = await _read((yield outgoing), is_mcp)
                    self._observe(outgoing, response)
                if grant is not None and response.status_code == 200:
                    response = self._token_answer(response, proved)
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()

    def _sign(self, outgoing: httpx2.Request, is_mcp: bool, grant: str | None) -> bool:
        """Add a proof where one belongs; True when one was added."""
        binding = self.binding
        nonce = binding.nonces.get(_origin(outgoing.url))
        if is_mcp:
            header = outgoing.headers.get("Authorization", "")
            scheme, _, token = header.partition(" ")
            if not token or scheme.lower() not in ("bearer", "dpop"):
                return False
            if not binding.bound or binding.mode is False:
                if binding.mode is True:
                    raise binding.refusal("issued a token that is not DPoP-bound")
                return False
            outgoing.headers["Authorization"] = f"DPoP {token}"
            outgoing.headers["DPoP"] = binding.key().proof(
                outgoing.method, str(outgoing.url), nonce=nonce, access_token=token
            )
            return True
        if grant is None or not binding.proves_token_requests():
            return False
        outgoing.headers["DPoP"] = binding.key().proof("POST", str(outgoing.url), nonce=nonce)
        return True

    def _observe(self, outgoing: httpx2.Request, response: httpx2.Response) -> None:
        nonce = response.headers.get("DPoP-Nonce")
        if nonce:
            self.binding.nonces[_origin(outgoing.url)] = nonce
        path = outgoing.url.path
        if (
            outgoing.method == "GET"
            and response.status_code == 200
            and any(p in path for p in METADATA_PATHS)
        ):
            data = _json(response)
            if isinstance(data, dict) and "token_endpoint" in data:
                self.binding.saw_metadata(data)

    def _asks_nonce(self, response: httpx2.Response, is_mcp: bool) -> bool:
        if not response.headers.get("DPoP-Nonce"):
            return False
        if is_mcp:
            challenge = response.headers.get("WWW-Authenticate", "")
            return response.status_code == 401 and "use_dpop_nonce" in challenge
        data = _json(response)
        return (
            response.status_code == 400
            and isinstance(data, dict)
            and data.get("error") == "use_dpop_nonce"
        )

    def _token_answer(self, response: httpx2.Response, proved: bool) -> httpx2.Response:
        """Record whether the new token is bound; hand the SDK a token type it accepts."""
        data = _json(response)
        if not isinstance(data, dict) or "access_token" not in data:
            return response
        binding = self.binding
        bound = proved and str(data.get("token_type", "")).lower() == "dpop"
        if proved and not bound and binding.mode is True:
            raise binding.refusal("answered a DPoP proof with a bearer token")
        binding.bound = bound
        binding.save()
        if not bound:
            return response
        data["token_type"] = "Bearer"
        headers = [
            (k, v)
            for k, v in response.headers.multi_items()
            if k.lower() not in ("content-length", "content-encoding", "transfer-encoding")
        ]
        return httpx2.Response(
            response.status_code,
            headers=headers,
            content=json.dumps(data).encode(),
            request=response.request,
        )
