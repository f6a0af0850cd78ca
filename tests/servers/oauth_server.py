"""An OAuth 2.1 authorization server and a protected MCP server, both on one 127.0.0.1 port.

The authorization server (in memory, auto-approving: the "user" always consents) serves
RFC 8414 metadata, RFC 7591 dynamic registration, ``/authorize`` (PKCE S256 required, the
RFC 8707 ``resource`` checked, RFC 9207 ``iss`` in the redirect), ``/token``
(``authorization_code``, ``refresh_token`` with rotation, ``client_credentials`` with
``client_secret_basic``/``client_secret_post`` or ``private_key_jwt``) and RFC 7009
``/revoke``. The MCP endpoint ``/mcp`` publishes RFC 9728 metadata and accepts only bearer
tokens issued for it; the tool ``admin_op`` needs the ``admin`` scope (HTTP 403
``insufficient_scope`` otherwise: step-up). ``GET /_test/stats`` reports what happened
(grants by type, revocations, registrations, the last authorize request), so tests can check
what the client did rather than trust it.

The extensions (``tests/servers/oauth_extensions.py``): ``--jwt-bearer-key FILE`` accepts
workload JWTs signed by that key in the RFC 7523 jwt-bearer grant (client authentication
``none`` for a client registered without a secret); ``/idp/token`` is an identity provider
(issuer ``<origin>/idp``) that exchanges the ID token ``--id-token VALUE`` for an ID-JAG,
which the jwt-bearer grant accepts from the client it names; ``--dpop`` advertises DPoP and
binds tokens requested with a proof (``--dpop-nonce``: both endpoints demand nonces).

``--issuer-path /as`` moves the authorization server under that path (issuer
``http://127.0.0.1:<port>/as``, its endpoints below it), as when the authorization server is
not the resource server; ``/token`` at the resource server's root then answers 400 and
counts what it was sent (``rs_token_requests``: a client that sends a refresh token or a
secret there sent it to the wrong place). ``--resource-metadata URL`` puts that URL in the
401 challenge (another origin, an internal host); the test then counts whether the client
fetched it. The tool ``echo_token`` answers with the bearer token it was called with (a
server that echoes credentials).

Prints exactly one stdout line ``READY http://127.0.0.1:<port>/mcp`` once it accepts
connections. Run: ``python -m tests.servers.oauth_server [--port 0] [--token-lifetime S]
[--client-id ID --client-secret S] [--jwt-public-key FILE] [--no-registration] [--deny]
[--issuer-path PATH] [--resource-metadata URL] [--jwt-bearer-key FILE] [--id-token VALUE]
[--dpop] [--dpop-nonce]``.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import logging
import secrets
import sys
import time
from collections import Counter
from typing import Any
from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from tests.servers.http_server import serve
from tests.servers.oauth_extensions import JWT_BEARER, RS_NONCE, Extensions

BASE_SCOPES = ["mcp"]
ALL_SCOPES = ["mcp", "admin", "offline_access"]


class AuthServer:
    """All state of the authorization server, in memory."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.base = ""  # set once the port is known
        self.clients: dict[str, dict[str, Any]] = {}
        self.codes: dict[str, dict[str, Any]] = {}
        self.access: dict[str, dict[str, Any]] = {}
        self.refresh: dict[str, dict[str, Any]] = {}
        self.stats: Counter[str] = Counter()
        self.last_authorize: dict[str, str] = {}
        self.origin = ""  # set once the port is known
        self.jkt: str | None = None  # the key the token being issued is bound to (DPoP)
        self.rs_token_requests: list[dict[str, Any]] = []
        self.last_bearer = ""
        self.ext = Extensions(args, self)
        if args.client_id:
            self.clients[args.client_id] = {
                "client_id": args.client_id,
                "client_secret": args.client_secret,
                "redirect_uris": None,  # pre-registered: any loopback redirect (RFC 8252 7.3)
                "token_endpoint_auth_method": "client_secret_basic"
                if args.client_secret
                else "private_key_jwt",
            }
        if args.public_client:  # a workload's client: no secret, authentication "none"
            self.clients[args.public_client] = {
                "client_id": args.public_client,
                "redirect_uris": None,
                "token_endpoint_auth_method": "none",
            }

    @property
    def resource(self) -> str:
        return f"{self.origin}/mcp"

    # -- metadata -------------------------------------------------------------------------

    async def prm(self, request: Request) -> Response:
        return JSONResponse(
            {
                "resource": self.resource,
                "authorization_servers": [self.base],
                "scopes_supported": BASE_SCOPES,
            }
        )

    async def metadata(self, request: Request) -> Response:
        data: dict[str, Any] = {
            "issuer": self.base,
            "authorization_endpoint": f"{self.base}/authorize",
            "token_endpoint": f"{self.base}/token",
            "revocation_endpoint": f"{self.base}/revoke",
            "scopes_supported": ALL_SCOPES,
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "token_endpoint_auth_methods_supported": [
                "client_secret_basic",
                "client_secret_post",
                "none",
                "private_key_jwt",
            ],
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": True,
        }
        if not self.args.no_registration:
            data["registration_endpoint"] = f"{self.base}/register"
        self.ext.metadata(data)
        return JSONResponse(data)

    # -- registration and authorization -------------------------------------------------

    async def register(self, request: Request) -> Response:
        body = await request.json()
        method = body.get("token_endpoint_auth_method") or "client_secret_basic"
        client = {
            **body,
            "client_id": "dyn-" + secrets.token_hex(8),
            "token_endpoint_auth_method": method,
            "client_id_issued_at": int(time.time()),
        }
        if method != "none":
            client["client_secret"] = secrets.token_urlsafe(24)
        self.clients[client["client_id"]] = client
        self.stats["registrations"] += 1
        return JSONResponse(client, status_code=201)

    async def authorize(self, request: Request) -> Response:
        q = dict(request.query_params)
        self.last_authorize = q
        self.stats["authorize"] += 1
        client = self.clients.get(q.get("client_id", ""))
        redirect = q.get("redirect_uri", "")
        if client is None:
            return Response("unknown client_id", status_code=400)
        allowed = client.get("redirect_uris")
        if allowed is not None and redirect not in allowed:
            return Response("redirect_uri not registered", status_code=400)
        if not redirect.startswith("http://127.0.0.1:"):
            return Response("redirect_uri must be a loopback URL", status_code=400)
        state = q.get("state", "")

        def back(**params: str) -> Response:
            return RedirectResponse(f"{redirect}?{urlencode(params)}", status_code=302)

        if self.args.deny:
            return back(error="access_denied", error_description="the user said no", state=state)
        if q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
            return back(
                error="invalid_request", error_description="PKCE S256 required", state=state
            )
        if q.get("resource") != self.resource:
            return back(error="invalid_target", error_description="wrong resource", state=state)
        scopes = (q.get("scope") or "").split()
        if any(s not in ALL_SCOPES for s in scopes):
            return back(error="invalid_scope", state=state)
        code = secrets.token_urlsafe(16)
        self.codes[code] = {
            "client_id": client["client_id"],
            "redirect_uri": redirect,
            "challenge": q["code_challenge"],
            "scopes": scopes or BASE_SCOPES,
            "resource": q["resource"],
        }
        return back(code=code, state=state, iss=self.base)

    # -- tokens ---------------------------------------------------------------------------

    async def token(self, request: Request) -> Response:
        form = dict(await request.form())
        client, problem = self._authenticate(request, form)
        if client is None:
            return JSONResponse({"error": "invalid_client", "error_description": problem}, 401)
        grant = form.get("grant_type")
        self.stats[f"token:{grant}"] += 1
        jkt = None
        if self.args.dpop:
            jkt, refused = self.ext.token_proof(request)
            if refused is not None:
                return refused
        self.jkt = jkt
        if grant == JWT_BEARER:
            scopes = self.ext.jwt_bearer(client, form)
            if isinstance(scopes, Response):
                return scopes
            return self._issue(client["client_id"], scopes, form.get("resource"), False)
        if grant == "authorization_code":
            return self._code_grant(client, form)
        if grant == "refresh_token":
            entry = self.refresh.pop(str(form.get("refresh_token")), None)
            if entry is None or entry["client_id"] != client["client_id"]:
                return JSONResponse({"error": "invalid_grant"}, 400)
            return self._issue(client["client_id"], entry["scopes"], entry["resource"], True)
        if grant == "client_credentials":
            scopes = str(form.get("scope") or "mcp").split()
            return self._issue(client["client_id"], scopes, form.get("resource"), False)
        return JSONResponse({"error": "unsupported_grant_type"}, 400)

    def _code_grant(self, client: dict[str, Any], form: dict[str, Any]) -> Response:
        entry = self.codes.pop(str(form.get("code")), None)
        if entry is None or entry["client_id"] != client["client_id"]:
            return JSONResponse({"error": "invalid_grant", "error_description": "bad code"}, 400)
        verifier = str(form.get("code_verifier") or "")
        digest = hashlib.sha256(verifier.encode()).digest()
        challenge = base64.urlsafe_b64encode(digest).decode().rstrip("=")
        if challenge != entry["challenge"] or form.get("redirect_uri") != entry["redirect_uri"]:
            return JSONResponse({"error": "invalid_grant", "error_description": "PKCE"}, 400)
        if form.get("resource") != entry["resource"]:
            return JSONResponse({"error": "invalid_target"}, 400)
        refresh = "offline_access" in entry["scopes"] or not self.args.no_refresh
        return self._issue(client["client_id"], entry["scopes"], entry["resource"], refresh)

    def _issue(self, client_id: str, scopes: list[str], resource: Any, refresh: bool) -> Response:
        token = "at-" + secrets.token_urlsafe(24)
        lifetime = self.args.token_lifetime
        self.access[token] = {
            "client_id": client_id,
            "scopes": scopes,
            "resource": resource,
            "expires": time.time() + lifetime,
            "jkt": self.jkt,
        }
        body: dict[str, Any] = {
            "access_token": token,
            "token_type": "DPoP" if self.jkt else "Bearer",
            "expires_in": lifetime,
            "scope": " ".join(scopes),
        }
        if refresh and not self.args.no_refresh:
            rt = "rt-" + secrets.token_urlsafe(24)
            self.refresh[rt] = {"client_id": client_id, "scopes": scopes, "resource": resource}
            body["refresh_token"] = rt
        return JSONResponse(body, headers={"Cache-Control": "no-store"})

    def _authenticate(
        self, request: Request, form: dict[str, Any]
    ) -> tuple[dict[str, Any] | None, str]:
        header = request.headers.get("authorization", "")
        if header.startswith("Basic "):
            from urllib.parse import unquote

            decoded = base64.b64decode(header[6:]).decode()
            cid, _, secret = decoded.partition(":")
            cid, secret = unquote(cid), unquote(secret)
            client = self.clients.get(cid)
            if (
                client
                and client.get("client_secret")
                and secrets.compare_digest(client["client_secret"], secret)
            ):
                self.stats["auth:client_secret_basic"] += 1
                return client, ""
            return None, "bad basic credentials"
        if form.get("client_assertion"):
            return self._jwt_client(str(form["client_assertion"]))
        client = self.clients.get(str(form.get("client_id") or ""))
        if client is None:
            return None, "unknown client"
        if client.get("client_secret"):
            supplied = str(form.get("client_secret") or "")
            if not secrets.compare_digest(client["client_secret"], supplied):
                return None, "client_secret required"
            self.stats["auth:client_secret_post"] += 1
            return client, ""
        self.stats["auth:none"] += 1
        return client, ""

    def _jwt_client(self, assertion: str) -> tuple[dict[str, Any] | None, str]:
        import jwt

        if not self.args.jwt_public_key:
            return None, "private_key_jwt not configured"
        with open(self.args.jwt_public_key, encoding="utf-8") as f:
            key = f.read()
        try:
            claims = jwt.decode(assertion, key, algorithms=["ES256", "RS256"], audience=self.base)
        except jwt.PyJWTError as exc:
            return None, f"bad assertion: {exc}"
        client = self.clients.get(claims.get("sub", ""))
        if client is None or claims.get("iss") != claims.get("sub"):
            return None, "assertion names an unknown client"
        self.stats["auth:private_key_jwt"] += 1
        return client, ""

    async def revoke(self, request: Request) -> Response:
        form = dict(await request.form())
        token = str(form.get("token") or "")
        found = self.access.pop(token, None) or self.refresh.pop(token, None)
        self.stats["revoked" if found else "revoke-unknown"] += 1
        return Response(status_code=200)

    async def resource_token(self, request: Request) -> Response:
        """``/token`` at the resource server's origin when the authorization server is
        elsewhere: nothing valid is ever issued here; what arrives is recorded."""
        form = dict(await request.form())
        self.rs_token_requests.append(
            {
                "form": {k: str(v) for k, v in form.items()},
                "authorization": request.headers.get("authorization"),
            }
        )
        self.stats["rs:token"] += 1
        return JSONResponse({"error": "invalid_request"}, 400)

    async def test_stats(self, request: Request) -> Response:
        return JSONResponse(
            {
                "rs_token_requests": self.rs_token_requests,
                "stats": dict(self.stats),
                "last_authorize": self.last_authorize,
                "live_access_tokens": len(self.access),
                "live_refresh_tokens": len(self.refresh),
                "last_exchange": self.ext.last_exchange,
                "last_jwt_bearer": self.ext.last_jwt_bearer,
            }
        )

    # -- the protected MCP endpoint --------------------------------------------------------

    def challenge(self, status: int, error: str, scope: str) -> Response:
        metadata = (
            self.args.resource_metadata or f"{self.origin}/.well-known/oauth-protected-resource/mcp"
        )
        header = f'Bearer error="{error}", scope="{scope}", resource_metadata="{metadata}"'
        return JSONResponse(
            {"error": error}, status_code=status, headers={"WWW-Authenticate": header}
        )

    def gate(self, app: Any) -> Any:
        async def gated(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            headers = dict(scope.get("headers") or [])
            supplied = headers.get(b"authorization", b"").decode()
            token = supplied.partition(" ")[2] if supplied.startswith(("Bearer ", "DPoP ")) else ""
            entry = self.access.get(token)
            if entry is not None and entry.get("jkt"):
                url = self.origin + scope["path"]
                problem = self.ext.resource_check(headers, entry, scope["method"], url)
                if problem is not None:
                    self.stats["mcp:401"] += 1
                    extra = {"DPoP-Nonce": RS_NONCE} if problem[0] == "use_dpop_nonce" else {}
                    challenge = f'DPoP error="{problem[0]}", error_description="{problem[1]}"'
                    await JSONResponse(
                        {"error": problem[0]},
                        401,
                        headers={"WWW-Authenticate": challenge, **extra},
                    )(scope, receive, send)
                    return
            ok = (
                entry is not None
                and entry["expires"] > time.time()
                and entry["resource"] in (self.resource, None)
            )
            if not ok:
                self.stats["mcp:401"] += 1
                await self.challenge(401, "invalid_token", "mcp")(scope, receive, send)
                return
            assert entry is not None
            self.last_bearer = token
            body = b""
            more = True
            while more:
                message = await receive()
                body += message.get("body", b"")
                more = message.get("more_body", False)
            if b'"admin_op"' in body and b"tools/call" in body and "admin" not in entry["scopes"]:
                self.stats["mcp:403"] += 1
                await self.challenge(403, "insufficient_scope", "mcp admin")(scope, receive, send)
                return
            self.stats["mcp:ok"] += 1
            sent = False

            async def replay() -> dict[str, Any]:
                nonlocal sent
                if not sent:
                    sent = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await receive()

            await app(scope, replay, send)

        return gated


def build_app(args: argparse.Namespace) -> tuple[Any, AuthServer]:
    from mcp.server.mcpserver import MCPServer

    server = AuthServer(args)
    mcp = MCPServer("oauth-protected", version="0.1.0", log_level="WARNING")

    @mcp.tool(structured_output=False)
    def echo(text: str) -> str:
        """Echo the given text back unchanged."""
        return text

    @mcp.tool(structured_output=False)
    def echo_token() -> str:
        """Say which bearer token this call came with (a server that echoes credentials)."""
        return f"you sent: Bearer {server.last_bearer}"

    @mcp.tool(structured_output=False)
    def admin_op() -> str:
        """An operation that needs the admin scope."""
        return "admin done"

    mcp_app = mcp.streamable_http_app(host="127.0.0.1")
    gated = server.gate(mcp_app)
    prefix = args.issuer_path.rstrip("/")
    routes = [
        Route("/.well-known/oauth-protected-resource/mcp", server.prm),
        Route(f"/.well-known/oauth-authorization-server{prefix}", server.metadata),
        Route(f"{prefix}/register", server.register, methods=["POST"]),
        Route(f"{prefix}/authorize", server.authorize),
        Route(f"{prefix}/token", server.token, methods=["POST"]),
        Route(f"{prefix}/revoke", server.revoke, methods=["POST"]),
        Route("/_test/stats", server.test_stats),
        Route("/idp/.well-known/openid-configuration", server.ext.idp_metadata),
        Route("/idp/token", server.ext.idp_token, methods=["POST"]),
    ]
    if prefix:
        routes.append(Route("/token", server.resource_token, methods=["POST"]))
        routes.append(Route("/register", server.resource_token, methods=["POST"]))
    auth_app = Starlette(routes=routes)

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await mcp_app(scope, receive, send)
        elif scope["type"] == "http" and scope["path"].rstrip("/") == "/mcp":
            await gated(scope, receive, send)
        else:
            await auth_app(scope, receive, send)

    return app, server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--token-lifetime", type=int, default=3600)
    parser.add_argument("--client-id")
    parser.add_argument("--client-secret")
    parser.add_argument("--jwt-public-key", help="PEM file to verify private_key_jwt assertions")
    parser.add_argument("--no-registration", action="store_true")
    parser.add_argument("--no-refresh", action="store_true", help="never issue refresh tokens")
    parser.add_argument("--deny", action="store_true", help="the user denies every request")
    parser.add_argument("--issuer-path", default="", help="serve the authorization server here")
    parser.add_argument("--resource-metadata", help="resource_metadata URL in the 401 challenge")
    parser.add_argument("--jwt-bearer-key", help="PEM file to verify workload JWT assertions")
    parser.add_argument("--public-client", help="a pre-registered client without a secret")
    parser.add_argument("--id-token", help="the one ID token the identity provider accepts")
    parser.add_argument("--dpop", action="store_true", help="advertise and bind DPoP tokens")
    parser.add_argument("--dpop-nonce", action="store_true", help="demand DPoP nonces")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    app, server = build_app(args)

    def on_port(port: int) -> None:
        server.origin = f"http://127.0.0.1:{port}"
        server.base = server.origin + args.issuer_path.rstrip("/")

    import asyncio

    asyncio.run(serve(app, args.port, on_port=on_port))


if __name__ == "__main__":
    main()
