"""The grants without a browser and DPoP, end to end: our authorization server, identity
provider and protected MCP server on 127.0.0.1 (``tests/servers/oauth_server.py`` with
``tests/servers/oauth_extensions.py``), the real CLI in the worker.

The servers' ``/_test/stats`` say what the client really sent (grants, client authentication,
proofs, nonce challenges), so no test takes codebot's word for it. One server per module
group: tests read deltas of its counters.
"""

from __future__ import annotations

import json
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest

from tests.cli.test_oauth import BROWSER, browser_log, codebot, global_settings, state_files, stats
from tests.servers.util import run_http_server

ID_TOKEN = "id-token-of-the-user-123"
SECRET = "app-secret-value-456"


@pytest.fixture(autouse=True)
def _browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BROWSER", str(BROWSER))
    monkeypatch.setenv("FAKE_BROWSER_LOG", str(tmp_path / "browser.jsonl"))


@pytest.fixture(scope="module")
def workload_key(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    public = tmp_path_factory.mktemp("keys") / "workload.pem"
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return key, public


@pytest.fixture(scope="module")
def server(workload_key: tuple[Any, Path]) -> Iterator[str]:
    """Bearer tokens: a confidential client ``app``, a public one ``wl``, the IdP."""
    args = ("--client-id", "app", "--client-secret", SECRET, "--public-client", "wl")
    args += ("--jwt-bearer-key", str(workload_key[1]), "--id-token", ID_TOKEN)
    with run_http_server(*args, module="oauth_server") as url:
        yield url


@pytest.fixture(scope="module")
def dpop_server(workload_key: tuple[Any, Path]) -> Iterator[str]:
    """DPoP advertised, nonces demanded at both endpoints, 5 s tokens (always refreshed)."""
    args = ("--dpop", "--dpop-nonce", "--token-lifetime", "5", "--public-client", "wl")
    with run_http_server(
        *args, "--jwt-bearer-key", str(workload_key[1]), module="oauth_server"
    ) as url:
        yield url


def workload_jwt(key: Any, url: str, *, expired: bool = False) -> str:
    now = int(time.time())
    claims = {
        "iss": "https://ci.example",
        "sub": "system:serviceaccount:ci:runner",
        "aud": url.rsplit("/mcp", 1)[0],
        "iat": now - 120,
        "exp": now - 60 if expired else now + 600,
    }
    return jwt.encode(claims, key, algorithm="ES256")


def counters(url: str) -> dict[str, int]:
    return dict(stats(url)["stats"])


def delta(before: dict[str, int], url: str) -> dict[str, int]:
    after = counters(url)
    return {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)}


@pytest.mark.timeout(180)  # several CLI runs, each a full connection
def test_jwt_bearer_from_a_rotating_file_never_opens_a_browser(
    tmp_path: Path, server: str, workload_key: tuple[Any, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    key = workload_key[0]
    token_file = tmp_path / "token"
    token_file.write_text(workload_jwt(key, server) + "\n")
    entry = {"type": "http", "url": server, "oauth": {"grant": "jwt_bearer", "client_id": "wl"}}
    entry["oauth"]["assertion_file"] = str(token_file)
    global_settings(tmp_path, {"ci": entry})
    cwd = ("--cwd", str(tmp_path))
    before = counters(server)
    code, out, err = codebot(capsys, *cwd, "mcp", "call", "ci", "echo", "text=wif")
    assert (code, out) == (0, "wif\n"), err
    seen = delta(before, server)
    assert seen["token:urn:ietf:params:oauth:grant-type:jwt-bearer"] == 1
    assert seen["jwt-bearer:workload"] == 1 and seen["auth:none"] == 1
    assert "registrations" not in seen and "authorize" not in seen
    sent = stats(server)["last_jwt_bearer"]
    assert sent["client_id"] == "wl" and sent["resource"] == server
    assert browser_log(tmp_path) == []

    # The file rotates to an expired JWT: it is re-read, refused once, never retried.
    token_file.write_text(workload_jwt(key, server, expired=True))
    before = counters(server)
    code, out, err = codebot(capsys, *cwd, "mcp", "login", "ci")
    assert code == 4, out + err
    assert "jwt_bearer grant of server 'ci' was refused by authorization server" in err
    assert "invalid_grant (JWT assertion is expired)" in err
    assert "does not retry" in err and "Traceback" not in err
    assert token_file.read_text() not in out + err
    seen = delta(before, server)
    assert seen["token:urn:ietf:params:oauth:grant-type:jwt-bearer"] == 1  # no retry
    assert set(seen) <= {
        "token:urn:ietf:params:oauth:grant-type:jwt-bearer",
        "auth:none",
        "mcp:401",
    }  # and no fallback to another grant, no registration

    # Rotated again: `mcp login` says there is nothing to do in a browser, and gets a token.
    token_file.write_text(workload_jwt(key, server))
    code, out, err = codebot(capsys, *cwd, "mcp", "login", "ci")
    assert code == 0, err
    assert "uses the jwt_bearer grant: there is nothing to do interactively" in out
    assert "Got a token without a browser" in out
    assert browser_log(tmp_path) == []


@pytest.mark.timeout(180)  # several CLI runs, each a full connection
def test_identity_assertion_exchanges_the_id_token_then_presents_the_id_jag(
    tmp_path: Path, server: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("APP_SECRET", SECRET)
    origin = server.rsplit("/mcp", 1)[0]
    oauth = {
        "grant": "identity_assertion",
        "client_id": "app",
        "client_secret": "${APP_SECRET}",
        "idp_issuer": f"{origin}/idp",  # the token endpoint is discovered
        "idp_client_id": "codebot-at-idp",
        "id_token_command": [sys.executable, "-c", f"print({ID_TOKEN!r})"],
    }
    global_settings(tmp_path, {"corp": {"type": "http", "url": server, "oauth": oauth}})
    before = counters(server)
    code, out, err = codebot(
        capsys, "--cwd", str(tmp_path), "mcp", "call", "corp", "echo", "text=x"
    )
    assert (code, out) == (0, "x\n"), err
    seen = delta(before, server)
    assert seen["idp:token-exchange"] == 1
    assert seen["jwt-bearer:id-jag"] == 1 and seen["auth:client_secret_basic"] == 1
    exchange = stats(server)["last_exchange"]
    assert exchange["grant_type"] == "urn:ietf:params:oauth:grant-type:token-exchange"
    assert exchange["subject_token_type"] == "urn:ietf:params:oauth:token-type:id_token"
    assert exchange["requested_token_type"] == "urn:ietf:params:oauth:token-type:id-jag"
    assert exchange["audience"] == origin and exchange["resource"] == server
    assert exchange["client_id"] == "codebot-at-idp"
    assert browser_log(tmp_path) == []

    # The identity provider refuses another ID token: the message names it and its answer.
    oauth["id_token_command"] = [sys.executable, "-c", "print('stale-token')"]
    global_settings(tmp_path, {"corp": {"type": "http", "url": server, "oauth": oauth}})
    code, out, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "login", "corp")
    assert code == 4, out + err
    assert f"failed at identity provider '{origin}/idp'" in err
    assert "invalid_grant (the ID token is not valid)" in err
    assert "stale-token" not in out + err and SECRET not in out + err


def test_id_token_command_failure_names_the_key(
    tmp_path: Path, server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    oauth = {
        "grant": "identity_assertion",
        "client_id": "app",
        "client_secret": SECRET,
        "idp_token_endpoint": server.rsplit("/mcp", 1)[0] + "/idp/token",
        "idp_client_id": "codebot-at-idp",
        "id_token_command": [sys.executable, "-c", "import sys; sys.exit(3)"],
    }
    global_settings(tmp_path, {"corp": {"type": "http", "url": server, "oauth": oauth}})
    code, out, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "list")
    assert code == 4
    assert "('oauth.id_token_command') exited with code 3" in out + err

    # Leg 1 works, leg 2 is refused (a wrong client secret): the authorization server is named.
    oauth["id_token_command"] = [sys.executable, "-c", f"print({ID_TOKEN!r})"]
    oauth["client_secret"] = "not-the-secret"
    global_settings(tmp_path, {"corp": {"type": "http", "url": server, "oauth": oauth}})
    code, out, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "list")
    assert code == 4
    origin = server.rsplit("/mcp", 1)[0]
    said = out + err
    assert (
        f"identity_assertion grant of server 'corp' was refused by authorization server '{origin}'"
        in said
    )
    assert "invalid_client" in said and "not-the-secret" not in said


@pytest.mark.timeout(180)  # several CLI runs, each a full connection
def test_dpop_binds_tokens_with_nonces_from_both_servers(
    tmp_path: Path, dpop_server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    url = dpop_server
    global_settings(tmp_path, {"prot": {"type": "http", "url": url}})
    cwd = ("--cwd", str(tmp_path))
    before = counters(url)
    code, out, err = codebot(capsys, *cwd, "mcp", "login", "prot")
    assert code == 0, err
    seen = delta(before, url)
    assert seen["dpop:as-nonce-challenge"] == 1 and seen["dpop:token-proof"] == 1
    assert "dpop:token-without-proof" not in seen
    assert seen["dpop:rs-nonce-challenge"] >= 1 and seen["dpop:mcp-ok"] >= 1
    assert "dpop:bound-token-as-bearer" not in seen and "dpop:bad-resource-proof" not in seen
    [dpop_file] = [p for p in state_files(tmp_path) if p.name == "dpop.json"]
    assert stat.S_IMODE(dpop_file.stat().st_mode) == 0o600
    assert json.loads(dpop_file.read_text())["bound"] is True

    # A later run: the 5 s token is refreshed with a proof of the same key, then used bound.
    before = counters(url)
    code, out, err = codebot(capsys, *cwd, "mcp", "call", "prot", "echo", "text=bound")
    assert (code, out) == (0, "bound\n"), err
    seen = delta(before, url)
    # A new process knows no nonce yet: the refresh is challenged once, then retried with it.
    assert seen["token:refresh_token"] == 2 and seen["dpop:as-nonce-challenge"] == 1
    assert seen["dpop:token-proof"] == 1
    assert seen["dpop:mcp-ok"] >= 1 and "dpop:bad-resource-proof" not in seen
    assert len(browser_log(tmp_path)) == 1

    code, out, _ = codebot(capsys, *cwd, "mcp", "doctor", "--format", "json")
    [view] = json.loads(out)["servers"]
    assert view["auth"] == {"grant": "authorization_code", "browser": True, "dpop": "bound"}


@pytest.mark.timeout(180)  # several CLI runs, each a full connection
def test_dpop_false_opts_out_and_true_refuses_a_server_without_it(
    tmp_path: Path,
    server: str,
    dpop_server: str,
    workload_key: tuple[Any, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = workload_key[0]
    monkeypatch.setenv("WL_JWT", workload_jwt(key, dpop_server))
    oauth = {"grant": "jwt_bearer", "client_id": "wl", "assertion": "${WL_JWT}", "dpop": False}
    global_settings(tmp_path, {"wl": {"type": "http", "url": dpop_server, "oauth": oauth}})
    cwd = ("--cwd", str(tmp_path))
    before = counters(dpop_server)
    code, out, err = codebot(capsys, *cwd, "mcp", "doctor", "--format", "json")
    [view] = json.loads(out)["servers"]
    assert view["status"] == "connected", err
    assert view["auth"] == {"grant": "jwt_bearer", "browser": False, "dpop": "off"}
    seen = delta(before, dpop_server)
    assert seen["dpop:token-without-proof"] == 1 and "dpop:token-proof" not in seen
    code, out, err = codebot(capsys, *cwd, "mcp", "doctor")
    assert "oauth jwt_bearer" in out and "DPoP-bound" not in out, err

    # "dpop": true against an authorization server that offers no DPoP: refused, no token asked.
    monkeypatch.setenv("WL_JWT", workload_jwt(key, server))
    oauth["dpop"] = True
    global_settings(tmp_path, {"wl": {"type": "http", "url": server, "oauth": oauth}})
    before = counters(server)
    code, out, err = codebot(capsys, *cwd, "mcp", "list")
    assert code == 4
    assert 'requires DPoP ("oauth.dpop": true)' in out + err
    assert "does not offer DPoP" in out + err
    assert "token:urn:ietf:params:oauth:grant-type:jwt-bearer" not in delta(before, server)
