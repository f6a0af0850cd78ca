"""The authorization extensions of ``tests.servers.oauth_server``: the jwt-bearer grant
(workload JWTs, RFC 7523), an identity provider doing the RFC 8693 token exchange of an ID
token for an ID-JAG (SEP-990), and DPoP (RFC 9449) at the token endpoint and the MCP endpoint,
with nonces on both when asked. Each checks what a real server checks (signatures, audience,
expiry, ``htm``/``htu``/``iat``/``ath``, the key thumbprint against ``cnf``) and counts what it
saw in the server's stats, so tests read what the client did.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from typing import Any

import jwt
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
AS_NONCE = "as-nonce-7"
RS_NONCE = "rs-nonce-9"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def thumbprint(jwk: dict[str, Any]) -> str:
    canonical = json.dumps({k: jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"))
    return _b64(hashlib.sha256(canonical.encode()).digest())


def error(status: int, code: str, description: str, **headers: str) -> Response:
    return JSONResponse({"error": code, "error_description": description}, status, headers=headers)


class Extensions:
    """State and checks of the extensions, for one :class:`AuthServer`."""

    def __init__(self, args: Any, server: Any) -> None:
        self.args = args
        self.server = server
        self.jag_key = secrets.token_bytes(32)  # the IdP signs ID-JAGs, the AS verifies them
        self.jtis: set[str] = set()
        self.last_exchange: dict[str, str] = {}
        self.last_jwt_bearer: dict[str, str] = {}

    @property
    def stats(self) -> Any:
        return self.server.stats

    def metadata(self, data: dict[str, Any]) -> None:
        data["grant_types_supported"].append(JWT_BEARER)
        if self.args.dpop:
            data["dpop_signing_alg_values_supported"] = ["ES256"]

    # -- the jwt-bearer grant ---------------------------------------------------------------

    def jwt_bearer(self, client: dict[str, Any], form: dict[str, Any]) -> Response | list[str]:
        """Check the assertion (a workload JWT, or an ID-JAG from our IdP); the scopes."""
        assertion = str(form.get("assertion") or "")
        self.last_jwt_bearer = {
            k: str(v) for k, v in form.items() if k not in ("assertion", "client_secret")
        }
        try:
            header = jwt.get_unverified_header(assertion)
        except jwt.PyJWTError:
            return error(400, "invalid_grant", "the assertion is not a JWT")
        try:
            if header.get("typ") == "oauth-id-jag+jwt":
                claims = jwt.decode(
                    assertion, self.jag_key, algorithms=["HS256"], audience=self.server.base
                )
                if claims.get("client_id") != client["client_id"]:
                    return error(400, "invalid_grant", "ID-JAG client_id is another client")
                self.stats["jwt-bearer:id-jag"] += 1
            else:
                if not self.args.jwt_bearer_key:
                    return error(400, "unauthorized_client", "no workload key configured")
                with open(self.args.jwt_bearer_key, encoding="utf-8") as f:
                    key = f.read()
                jwt.decode(assertion, key, algorithms=["ES256"], audience=self.server.base)
                self.stats["jwt-bearer:workload"] += 1
        except jwt.ExpiredSignatureError:
            return error(400, "invalid_grant", "JWT assertion is expired")
        except jwt.PyJWTError as exc:
            return error(400, "invalid_grant", f"JWT assertion rejected: {exc}")
        if form.get("resource") != self.server.resource:
            return error(400, "invalid_target", "wrong resource")
        return str(form.get("scope") or "mcp").split()

    # -- the identity provider (RFC 8693) ---------------------------------------------------

    async def idp_metadata(self, request: Request) -> Response:
        idp = f"{self.server.origin}/idp"
        return JSONResponse(
            {
                "issuer": idp,
                "token_endpoint": f"{idp}/token",
                "grant_types_supported": [TOKEN_EXCHANGE],
            }
        )

    async def idp_token(self, request: Request) -> Response:
        form = {k: str(v) for k, v in (await request.form()).items()}
        self.last_exchange = {k: v for k, v in form.items() if k != "subject_token"}
        self.stats["idp:token-exchange"] += 1
        if form.get("grant_type") != TOKEN_EXCHANGE:
            return error(400, "unsupported_grant_type", "token exchange only")
        if form.get("subject_token") != self.args.id_token:
            return error(400, "invalid_grant", "the ID token is not valid")
        if form.get("requested_token_type") != ID_JAG or not form.get("audience"):
            return error(400, "invalid_request", "ask for an ID-JAG with an audience")
        now = int(time.time())
        jag = jwt.encode(
            {
                "iss": f"{self.server.origin}/idp",
                "sub": "user-1",
                "aud": form["audience"],
                "resource": form.get("resource"),
                "client_id": self.args.client_id,
                "iat": now,
                "exp": now + 300,
                "jti": secrets.token_hex(8),
            },
            self.jag_key,
            algorithm="HS256",
            headers={"typ": "oauth-id-jag+jwt"},
        )
        return JSONResponse({"access_token": jag, "issued_token_type": ID_JAG, "token_type": "N_A"})

    # -- DPoP -------------------------------------------------------------------------------

    def _proof(
        self, proof: str | None, method: str, url: str, token: str | None
    ) -> tuple[dict[str, Any] | None, str]:
        """The checked proof's claims plus its key's thumbprint (``jkt``), or why not."""
        if not proof:
            return None, "no DPoP proof"
        try:
            header = jwt.get_unverified_header(proof)
            jwk = header.get("jwk") or {}
            if header.get("typ") != "dpop+jwt" or "d" in jwk:
                return None, "bad proof header"
            key = jwt.PyJWK(jwk, algorithm="ES256").key
            claims = jwt.decode(proof, key, algorithms=["ES256"])
        except (jwt.PyJWTError, ValueError, KeyError) as exc:
            return None, f"proof does not verify: {exc}"
        if claims.get("htm") != method or claims.get("htu") != url:
            return None, "htm/htu mismatch"
        if abs(time.time() - float(claims.get("iat", 0))) > 300:
            return None, "iat out of window"
        jti = str(claims.get("jti") or "")
        if not jti or jti in self.jtis:
            return None, "replayed or missing jti"
        self.jtis.add(jti)
        if token is not None:
            ath = _b64(hashlib.sha256(token.encode()).digest())
            if claims.get("ath") != ath:
                return None, "ath mismatch"
        claims["jkt"] = thumbprint(jwk)
        return claims, ""

    def token_proof(self, request: Request) -> tuple[str | None, Response | None]:
        """At the token endpoint: the key thumbprint to bind to, or an error answer."""
        proof = request.headers.get("dpop")
        if proof is None:
            self.stats["dpop:token-without-proof"] += 1
            return None, None
        claims, why = self._proof(proof, "POST", f"{self.server.base}/token", None)
        if claims is None:
            return None, error(400, "invalid_dpop_proof", why)
        if self.args.dpop_nonce and claims.get("nonce") != AS_NONCE:
            self.stats["dpop:as-nonce-challenge"] += 1
            return None, error(400, "use_dpop_nonce", "nonce required", **{"DPoP-Nonce": AS_NONCE})
        self.stats["dpop:token-proof"] += 1
        return str(claims["jkt"]), None

    def resource_check(
        self, headers: dict[bytes, bytes], entry: dict[str, Any], method: str, url: str
    ) -> tuple[str, str] | None:
        """At the MCP endpoint, for a bound token: None when the proof holds, else the
        challenge's ``(error, description)``."""
        supplied = headers.get(b"authorization", b"").decode()
        scheme, _, token = supplied.partition(" ")
        if scheme != "DPoP":
            self.stats["dpop:bound-token-as-bearer"] += 1
            return "invalid_token", "a DPoP-bound token must be sent with the DPoP scheme"
        proof = headers.get(b"dpop", b"").decode() or None
        claims, why = self._proof(proof, method, url, token)
        if claims is None:
            self.stats["dpop:bad-resource-proof"] += 1
            return "invalid_dpop_proof", why
        if claims["jkt"] != entry.get("jkt"):
            return "invalid_dpop_proof", "the proof's key is not the token's"
        if self.args.dpop_nonce and claims.get("nonce") != RS_NONCE:
            self.stats["dpop:rs-nonce-challenge"] += 1
            return "use_dpop_nonce", "nonce required"
        self.stats["dpop:mcp-ok"] += 1
        return None
