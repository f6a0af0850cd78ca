"""The ``oauth`` key of an ``http`` server entry: how codebot authorizes to that server.

Absent, codebot tries OAuth when the server asks for it (HTTP 401), registering itself
dynamically. ``false`` never tries. An object tunes the flow; every value is checked here,
so a bad key fails that server alone with a message naming the key.

Grants: ``authorization_code`` (the browser), ``client_credentials``, ``jwt_bearer``
(workload identity: a signed JWT the platform gives the job, SEP-1933) and
``identity_assertion`` (enterprise-managed: the user's ID token exchanged at the company's
identity provider for an ID-JAG, SEP-990). ``dpop`` binds tokens to a key (RFC 9449).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

from codebot_mcp.core.config.keytable import SERVER_FIELDS
from codebot_mcp.core.config.sections import NOT_SET

if TYPE_CHECKING:
    from pydantic import BaseModel

Grant = Literal["authorization_code", "client_credentials", "jwt_bearer", "identity_assertion"]
TokenAuthMethod = Literal["client_secret_basic", "client_secret_post", "none"]
GRANTS: tuple[str, ...] = (
    "authorization_code",
    "client_credentials",
    "jwt_bearer",
    "identity_assertion",
)
BROWSERLESS_GRANTS: tuple[str, ...] = ("client_credentials", "jwt_bearer", "identity_assertion")
"""Grants that never open a browser: codebot gets its tokens by itself on every run."""
TOKEN_AUTH_METHODS: tuple[str, ...] = ("client_secret_basic", "client_secret_post", "none")
SIGNING_ALGORITHMS: tuple[str, ...] = (
    "ES256",
    "ES384",
    "ES512",
    "RS256",
    "RS384",
    "RS512",
    "PS256",
)
DEFAULT_SIGNING_ALGORITHM = "ES256"

_OAUTH = SERVER_FIELDS.get("oauth")
OAUTH_KEYS: tuple[str, ...] = () if _OAUTH is None else _OAUTH.keys or ()
"""The keys of the ``oauth`` object, as its model declares them (:func:`oauth_model`, through
the generated ``core.config.keytable``; none while it is written again)."""
SECRET_KEYS = ("client_secret", "private_key", "assertion", "id_token")
"""Values never shown: in ``--json`` output and findings they are masked."""


@dataclass(frozen=True, slots=True)
class OAuthSettings:
    """The validated ``oauth`` object (``enabled`` False for ``"oauth": false``)."""

    enabled: bool = True
    client_id: str | None = None
    client_secret: str | None = None
    client_metadata_url: str | None = None
    scopes: tuple[str, ...] | None = None
    """Requested scopes; None lets discovery choose (challenge, then ``scopes_supported``)."""
    callback_port: int | None = None
    """The loopback redirect port; None picks a free one (and reuses it for that client)."""
    grant: Grant = "authorization_code"
    private_key: str | None = None
    """PEM text: with ``client_credentials``, sign a ``private_key_jwt`` assertion with it."""
    signing_algorithm: str = DEFAULT_SIGNING_ALGORITHM
    issuer: str | None = None
    """The authorization server the pre-registered credentials belong to (checked)."""
    token_endpoint_auth_method: TokenAuthMethod | None = None
    """For a pre-registered client; default ``client_secret_basic`` with a secret, else none."""
    assertion: str | None = None
    """``jwt_bearer``: the workload's signed JWT itself (normally ``${VAR}``)."""
    assertion_file: str | None = None
    """``jwt_bearer``: a file holding it, re-read at every token request (it rotates)."""
    idp_token_endpoint: str | None = None
    """``identity_assertion``: the identity provider's token endpoint (RFC 8693 exchange)."""
    idp_issuer: str | None = None
    """``identity_assertion``: the identity provider's issuer; its token endpoint is discovered."""
    idp_client_id: str | None = None
    """``identity_assertion``: codebot's client id at the identity provider."""
    id_token: str | None = None
    """``identity_assertion``: the user's ID token (normally ``${VAR}``)."""
    id_token_file: str | None = None
    """``identity_assertion``: a file holding the ID token, re-read at every exchange."""
    id_token_command: tuple[str, ...] | None = None
    """``identity_assertion``: a command (argv, run without a shell) that prints the ID token."""
    dpop: bool | None = None
    """None: bind tokens with DPoP when the authorization server offers it; False: never;
    True: always, refusing an authorization server that cannot."""

    @property
    def secrets(self) -> tuple[str, ...]:
        """Values to redact wherever text is shown."""
        values = (self.client_secret, self.private_key, self.assertion, self.id_token)
        return tuple(v for v in values if v)

    @property
    def browserless(self) -> bool:
        """The grant gets tokens without a browser (nothing to do interactively)."""
        return self.grant in BROWSERLESS_GRANTS

    @property
    def client_key(self) -> str:
        """Which client this is, for the token store's key (never a secret)."""
        if self.grant != "authorization_code":
            return f"{self.grant}:{self.client_id}"
        if self.client_id:
            return f"pre-registered:{self.client_id}"
        if self.client_metadata_url:
            return f"cimd:{self.client_metadata_url}"
        return "dynamic"


class OAuthSettingsError(Exception):
    """One bad value in the ``oauth`` object; the entry's parser adds file and server."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def parse_oauth(value: Any, expand: Callable[[str, str], str]) -> tuple[OAuthSettings, list[str]]:
    """Validate the ``oauth`` value of an entry; ``expand(text, key)`` expands ``${VAR}``.

    Returns:
        The settings and the unknown keys (ignored).

    Raises:
        OAuthSettingsError: a key has the wrong type or an impossible value.
    """
    if value is False:
        return OAuthSettings(enabled=False), []
    if value is None or value is True:
        return OAuthSettings(), []
    if not isinstance(value, dict):
        raise OAuthSettingsError(
            "'oauth' must be an object or false",
            hint='Write "oauth": {"scopes": ["read"]}, or "oauth": false to never try OAuth.',
        )
    data: Mapping[str, Any] = value
    warnings = [str(k) for k in data if k not in OAUTH_KEYS]

    def text(key: str) -> str | None:
        raw = data.get(key)
        if raw is None:
            return None
        if not isinstance(raw, str) or not raw:
            raise OAuthSettingsError(f"'oauth.{key}' must be a non-empty string")
        return expand(raw, f"oauth.{key}") or None

    def choice(key: str, allowed: tuple[str, ...], default: str | None) -> str | None:
        raw = data.get(key, default)
        if raw is not None and raw not in allowed:
            raise OAuthSettingsError(
                f"'oauth.{key}' is {json.dumps(raw)}, not one of {', '.join(allowed)}",
                hint=f'Write "{key}": "{allowed[0]}".',
            )
        return raw  # type: ignore[no-any-return]

    scopes = data.get("scopes")
    if scopes is not None and not (
        isinstance(scopes, list) and all(isinstance(s, str) and s and " " not in s for s in scopes)
    ):
        raise OAuthSettingsError(
            "'oauth.scopes' must be a list of scope names (strings without spaces)",
            hint='Write "scopes": ["read", "write"].',
        )
    port = data.get("callback_port")
    if port is not None and (
        isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535
    ):
        raise OAuthSettingsError(
            f"'oauth.callback_port' must be a port number (1-65535), found {json.dumps(port)}",
            hint='Write "callback_port": 8765, or remove it to pick a free port.',
        )
    grant = choice("grant", GRANTS, "authorization_code")
    settings = OAuthSettings(
        client_id=text("client_id"),
        client_secret=text("client_secret"),
        client_metadata_url=text("client_metadata_url"),
        scopes=tuple(scopes) if scopes is not None else None,
        callback_port=port,
        grant=grant,  # type: ignore[arg-type]
        private_key=text("private_key"),
        signing_algorithm=choice("signing_algorithm", SIGNING_ALGORITHMS, "ES256") or "ES256",
        issuer=text("issuer"),
        token_endpoint_auth_method=choice("token_endpoint_auth_method", TOKEN_AUTH_METHODS, None),  # type: ignore[arg-type]
        assertion=text("assertion"),
        assertion_file=text("assertion_file"),
        idp_token_endpoint=text("idp_token_endpoint"),
        idp_issuer=text("idp_issuer"),
        idp_client_id=text("idp_client_id"),
        id_token=text("id_token"),
        id_token_file=text("id_token_file"),
        id_token_command=_command(data.get("id_token_command")),
        dpop=_flag(data.get("dpop")),
    )
    _check_combination(settings)
    return settings, warnings


def _command(raw: Any) -> tuple[str, ...] | None:
    """``id_token_command``: a list of arguments, or one string split as a shell would split
    it (but never run by a shell)."""
    if raw is None:
        return None
    import shlex

    if isinstance(raw, str):
        try:
            argv = shlex.split(raw)
        except ValueError as exc:
            raise OAuthSettingsError(
                f"'oauth.id_token_command' cannot be split into arguments: {exc}",
                hint='Write it as a list: "id_token_command": ["my-idp-cli", "print-id-token"].',
            ) from None
    elif isinstance(raw, list) and all(isinstance(a, str) for a in raw):
        argv = [str(a) for a in raw]
    else:
        argv = []
    if not argv or not argv[0]:
        raise OAuthSettingsError(
            "'oauth.id_token_command' must be a non-empty list of arguments (or a string)",
            hint='Write "id_token_command": ["my-idp-cli", "print-id-token"].',
        )
    return tuple(argv)


def _flag(raw: Any) -> bool | None:
    if raw is None or isinstance(raw, bool):
        return raw
    raise OAuthSettingsError(
        f"'oauth.dpop' must be true or false, found {json.dumps(raw)}",
        hint='Write "dpop": false to never bind tokens, "dpop": true to require it, or remove '
        "it to use DPoP whenever the authorization server offers it.",
    )


_GRANT_KEYS: dict[str, tuple[str, ...]] = {
    "jwt_bearer": ("assertion", "assertion_file"),
    "identity_assertion": (
        "idp_token_endpoint",
        "idp_issuer",
        "idp_client_id",
        "id_token",
        "id_token_file",
        "id_token_command",
    ),
}


def _check_browserless(s: OAuthSettings) -> None:
    """The keys of ``jwt_bearer`` and ``identity_assertion``: each where it belongs, one
    source of the assertion or ID token."""
    for grant, keys in _GRANT_KEYS.items():
        if s.grant == grant:
            continue
        for key in keys:
            if getattr(s, key) is not None:
                raise OAuthSettingsError(
                    f'\'oauth.{key}\' is only used with "grant": "{grant}"',
                    hint=f'Set "grant": "{grant}", or remove "{key}".',
                )
    if s.grant in _GRANT_KEYS and not s.client_id:
        raise OAuthSettingsError(
            f"'oauth.grant' is {s.grant} but 'oauth.client_id' is missing",
            hint='Add "client_id": the client this workload or user is registered as at the '
            "MCP server's authorization server.",
        )
    if s.grant == "jwt_bearer":
        _one_source(s, ("assertion", "assertion_file"), "the workload's JWT")
    if s.grant == "identity_assertion":
        if not s.client_secret:
            raise OAuthSettingsError(
                "'oauth.grant' is identity_assertion but 'oauth.client_secret' is missing",
                hint='Add "client_secret": "${CLIENT_SECRET}" (the MCP authorization server '
                "authenticates the client that presents the ID-JAG).",
            )
        if not s.idp_token_endpoint and not s.idp_issuer:
            raise OAuthSettingsError(
                "'oauth.grant' is identity_assertion but neither 'oauth.idp_token_endpoint' "
                "nor 'oauth.idp_issuer' is set",
                hint='Add "idp_issuer": "https://login.example.com" (its token endpoint is '
                'discovered) or "idp_token_endpoint".',
            )
        if not s.idp_client_id:
            raise OAuthSettingsError(
                "'oauth.grant' is identity_assertion but 'oauth.idp_client_id' is missing",
                hint='Add "idp_client_id": codebot\'s client id at the identity provider.',
            )
        _one_source(s, ("id_token", "id_token_file", "id_token_command"), "the ID token")
        for key in ("idp_token_endpoint", "idp_issuer"):
            value = getattr(s, key)
            if value is not None and not re.match(r"^https?://[^/\s]+", value):
                raise OAuthSettingsError(f"'oauth.{key}' must be an http(s) URL")


def _one_source(s: OAuthSettings, keys: tuple[str, ...], what: str) -> None:
    given = [k for k in keys if getattr(s, k) is not None]
    names = ", ".join(f"'oauth.{k}'" for k in keys)
    if not given:
        raise OAuthSettingsError(
            f"'oauth.grant' is {s.grant} but {what} has no source: set one of {names}",
            hint=f'Write "{keys[0]}": "${{VAR}}", or "{keys[1]}": "/path/to/file".',
        )
    if len(given) > 1:
        raise OAuthSettingsError(
            f"{what} has {len(given)} sources ({', '.join(given)}): set exactly one of {names}",
        )


def _check_combination(s: OAuthSettings) -> None:
    url = s.client_metadata_url
    if url is not None and not re.match(r"^https://[^/\s]+/\S+", url):
        raise OAuthSettingsError(
            "'oauth.client_metadata_url' must be an https:// URL with a path "
            "(the Client ID Metadata Document)",
            hint='Write "client_metadata_url": "https://example.com/codebot-client.json".',
        )
    if s.issuer is not None and not re.match(r"^https?://[^/\s]+", s.issuer):
        raise OAuthSettingsError("'oauth.issuer' must be the authorization server's http(s) URL")
    if s.client_secret and not s.client_id:
        raise OAuthSettingsError(
            "'oauth.client_secret' is set without 'oauth.client_id'",
            hint="Add the client id the secret belongs to.",
        )
    _check_browserless(s)
    if s.grant == "client_credentials":
        if not s.client_id:
            raise OAuthSettingsError(
                "'oauth.grant' is client_credentials but 'oauth.client_id' is missing",
                hint='Add "client_id" and "client_secret" (or "private_key") of the client.',
            )
        if not s.client_secret and not s.private_key:
            raise OAuthSettingsError(
                "'oauth.grant' is client_credentials but neither 'oauth.client_secret' nor "
                "'oauth.private_key' is set",
                hint='Add "client_secret": "${CLIENT_SECRET}", or "private_key": "${KEY_PEM}" '
                "for private_key_jwt.",
            )
    elif s.private_key:
        raise OAuthSettingsError(
            '\'oauth.private_key\' is only used with "grant": "client_credentials"',
            hint='Set "grant": "client_credentials", or remove "private_key".',
        )
    if s.private_key and "-----BEGIN" not in s.private_key:
        raise OAuthSettingsError(
            "'oauth.private_key' is not PEM text (no '-----BEGIN' line)",
            hint='Put the PEM file\'s contents in a variable: "private_key": "${KEY_PEM}".',
        )


@cache
def oauth_model() -> type[BaseModel]:
    """The ``oauth`` object of an http entry as a pydantic model, for the schema and the docs
    (built on demand: ``mcp list`` never imports pydantic; :func:`parse_oauth` checks the
    values at run time, ``tests/core/test_config_sections.py`` holds the two together)."""
    from typing import Annotated

    from pydantic import BaseModel, ConfigDict, Field

    reference = "\\$\\{"  # a ${VAR} reference: never a secret in clear
    url_or_reference = "^(https?://|\\$\\{)"
    text = Annotated[str, Field(min_length=1)]

    class OAuth(BaseModel):
        model_config = ConfigDict(extra="forbid")
        client_id: str = NOT_SET
        client_secret: str = Field(
            default=NOT_SET,
            pattern=reference,
            description="A ${VAR} reference: never a secret in clear.",
        )
        client_metadata_url: str = Field(default=NOT_SET, pattern="^https://")
        scopes: list[str] = NOT_SET
        callback_port: int = Field(default=NOT_SET, ge=1, le=65535)
        grant: Grant = "authorization_code"
        private_key: str = Field(default=NOT_SET, pattern=reference)
        signing_algorithm: str = DEFAULT_SIGNING_ALGORITHM
        issuer: str = Field(default=NOT_SET, pattern="^https?://")
        token_endpoint_auth_method: TokenAuthMethod = NOT_SET
        assertion: str = Field(
            default=NOT_SET,
            pattern=reference,
            description="jwt_bearer: the workload JWT, a ${VAR} reference.",
        )
        assertion_file: str = Field(default=NOT_SET, min_length=1)
        idp_token_endpoint: str = Field(default=NOT_SET, pattern=url_or_reference)
        idp_issuer: str = Field(default=NOT_SET, pattern=url_or_reference)
        idp_client_id: str = Field(default=NOT_SET, min_length=1)
        id_token: str = Field(default=NOT_SET, pattern=reference)
        id_token_file: str = Field(default=NOT_SET, min_length=1)
        id_token_command: text | Annotated[list[str], Field(min_length=1)] = NOT_SET
        dpop: bool = NOT_SET

    return OAuth
