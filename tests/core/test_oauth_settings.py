"""The ``oauth`` key of an http entry: validated like the other keys, secrets kept out of views."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.core.config.servers import parse_server
from codebot_mcp.mcpbridge.connection.report import config_view

SOURCE = Path("/proj/.codebot/settings.json")
ENV = {
    "SECRET": "s3cr3t-value",
    "PEM": "-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----",
}


def parse(oauth: Any, **extra: Any) -> Any:
    entry = {"type": "http", "url": "https://mcp.example.com/mcp", "oauth": oauth, **extra}
    return parse_server("remote", entry, SOURCE, ENV, Path("/proj"))


def test_absent_means_try_oauth_and_false_means_never() -> None:
    assert parse_server("r", {"url": "https://x/mcp"}, SOURCE, ENV, Path("/")).oauth.enabled
    assert not parse(False).oauth.enabled
    assert not parse_server("s", {"command": "x"}, SOURCE, ENV, Path("/")).oauth.enabled


def test_every_key_is_read_and_expanded() -> None:
    config = parse(
        {
            "client_id": "cid",
            "client_secret": "${SECRET}",
            "scopes": ["read", "write"],
            "callback_port": 8765,
            "issuer": "https://auth.example.com",
            "token_endpoint_auth_method": "client_secret_post",
        }
    )
    assert config.error is None, config.error
    oauth = config.oauth
    assert (oauth.client_id, oauth.client_secret) == ("cid", "s3cr3t-value")
    assert oauth.scopes == ("read", "write") and oauth.callback_port == 8765
    assert oauth.grant == "authorization_code" and oauth.signing_algorithm == "ES256"
    view = config_view(config)["oauth"]
    assert view["client_secret"] == "***" and "s3cr3t-value" not in str(view)


def test_client_credentials_with_a_key() -> None:
    config = parse({"grant": "client_credentials", "client_id": "bot", "private_key": "${PEM}"})
    assert config.error is None, config.error
    assert config.oauth.private_key == ENV["PEM"]
    assert config_view(config)["oauth"]["private_key"] == "***"


@pytest.mark.parametrize(
    ("oauth", "key"),
    [
        ("yes", "'oauth' must be an object or false"),
        ({"grant": "password"}, "'oauth.grant'"),
        ({"callback_port": 0}, "'oauth.callback_port'"),
        ({"callback_port": "80"}, "'oauth.callback_port'"),
        ({"scopes": "read write"}, "'oauth.scopes'"),
        ({"client_metadata_url": "http://x/doc.json"}, "'oauth.client_metadata_url'"),
        ({"grant": "client_credentials"}, "'oauth.client_id' is missing"),
        ({"grant": "client_credentials", "client_id": "c"}, "neither 'oauth.client_secret'"),
        ({"client_secret": "x"}, "without 'oauth.client_id'"),
        ({"private_key": "${PEM}"}, "only used with"),
        ({"signing_algorithm": "HS256"}, "'oauth.signing_algorithm'"),
        ({"client_id": "${NOPE}"}, "variable ${NOPE} in 'oauth.client_id' is not set"),
    ],
)
def test_bad_values_fail_that_server_naming_file_server_and_key(oauth: Any, key: str) -> None:
    config = parse(oauth)
    assert config.error is not None
    assert key in config.error
    assert "server 'remote'" in config.error and str(SOURCE) in config.error


def test_oauth_on_a_stdio_entry_is_an_error() -> None:
    config = parse_server("s", {"command": "x", "oauth": {}}, SOURCE, ENV, Path("/"))
    assert config.error is not None and "only for http servers" in config.error


def test_unknown_oauth_key_is_a_warning() -> None:
    config = parse({"scope": ["read"]})
    assert config.error is None
    assert [w.key for w in config.warnings] == ["oauth.scope"]


def test_browserless_grants_read_their_keys_and_mask_their_credentials() -> None:
    env_jwt = {"client_id": "wl", "assertion": "${SECRET}", "dpop": True}
    config = parse({"grant": "jwt_bearer", **env_jwt})
    assert config.error is None, config.error
    oauth = config.oauth
    assert (oauth.grant, oauth.assertion, oauth.dpop, oauth.browserless) == (
        "jwt_bearer",
        "s3cr3t-value",
        True,
        True,
    )
    assert "s3cr3t-value" in oauth.secrets
    assert config_view(config)["oauth"]["assertion"] == "***"
    config = parse(
        {
            "grant": "identity_assertion",
            "client_id": "app",
            "client_secret": "${SECRET}",
            "idp_issuer": "https://login.example.com",
            "idp_client_id": "cb",
            "id_token_command": "idp-cli print-token --audience 'the app'",
        }
    )
    assert config.error is None, config.error
    assert config.oauth.id_token_command == ("idp-cli", "print-token", "--audience", "the app")
    assert config.oauth.client_key == "identity_assertion:app"
    assert not parse({}).oauth.browserless and parse({}).oauth.dpop is None


@pytest.mark.parametrize(
    ("oauth", "key"),
    [
        ({"grant": "jwt_bearer", "assertion": "x"}, "'oauth.client_id' is missing"),
        ({"grant": "jwt_bearer", "client_id": "c"}, "has no source"),
        (
            {"grant": "jwt_bearer", "client_id": "c", "assertion": "a", "assertion_file": "/f"},
            "has 2 sources",
        ),
        ({"assertion_file": "/f"}, 'only used with "grant": "jwt_bearer"'),
        ({"id_token": "t"}, 'only used with "grant": "identity_assertion"'),
        ({"dpop": "yes"}, "'oauth.dpop' must be true or false"),
        (
            {"grant": "identity_assertion", "client_id": "c", "id_token": "t"},
            "'oauth.client_secret' is missing",
        ),
        (
            {
                "grant": "identity_assertion",
                "client_id": "c",
                "client_secret": "s",
                "id_token": "t",
            },
            "neither 'oauth.idp_token_endpoint' nor 'oauth.idp_issuer'",
        ),
        (
            {
                "grant": "identity_assertion",
                "client_id": "c",
                "client_secret": "s",
                "idp_issuer": "https://idp",
                "idp_client_id": "i",
                "id_token_command": [],
            },
            "'oauth.id_token_command' must be a non-empty list",
        ),
    ],
)
def test_bad_browserless_settings_name_the_key(oauth: Any, key: str) -> None:
    config = parse(oauth)
    assert config.error is not None
    assert key in config.error and "server 'remote'" in config.error
