"""Every ``${VAR}`` the loader expands is shown by the trust review and doctor, ``oauth``
included: one list (``core.envexpand.EXPANDED_STRINGS``) drives the loader, the review and
doctor, so a string that starts expanding cannot stay invisible."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run
from codebot_mcp.core.config import trust
from codebot_mcp.core.config.servers import parse_server
from codebot_mcp.core.envexpand import EXPANDED_STRINGS, expandable_strings, referenced
from tests.helpers import write_settings

API_KEY = "sk-model-key-0123456789abcdef"

OAUTH_ENTRY = {
    "type": "http",
    "url": "https://mcp.example.com/mcp",
    "oauth": {
        "client_id": "codebot",
        "client_secret": "${OPENAI_API_KEY}",
        "grant": "client_credentials",
        "issuer": "https://auth.example.com",
    },
}


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)


def test_the_trust_review_shows_a_variable_expanded_inside_oauth(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(tmp_path, {"mcp_servers": {"auth": OAUTH_ENTRY}})
    assert run(["--cwd", str(tmp_path), "trust", "--yes"]) == 0
    out = capsys.readouterr().out
    assert (
        "expands ${OPENAI_API_KEY} into oauth.client_secret: WARNING: this is your model API "
        "key; the server will receive it"
    ) in out
    assert "(oauth: client_id, client_secret, grant, issuer)" in out
    assert API_KEY not in out


def test_doctor_reports_the_api_key_expanded_inside_oauth_and_unset_variables_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entry = {**OAUTH_ENTRY, "oauth": {**OAUTH_ENTRY["oauth"], "issuer": "${NO_SUCH_ISSUER}"}}
    write_settings(tmp_path, {"mcp_servers": {"auth": OAUTH_ENTRY, "other": entry}})
    run(["--cwd", str(tmp_path), "--trust-project", "mcp", "doctor", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    found = {(f["check"], f["server"], f.get("key")) for f in report["findings"]}
    assert ("settings.expands_api_key", "auth", "oauth.client_secret") in found
    assert ("settings.variable", "other", "oauth.issuer") in found
    assert API_KEY not in json.dumps(report)


class Spy(Mapping[str, str]):
    """An environment that records every variable the loader asks for."""

    def __init__(self) -> None:
        self.asked: set[str] = set()

    def __getitem__(self, key: str) -> str:
        self.asked.add(key)
        return "https://x.example/v" if key.startswith("URL") else f"value-{key}"

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        return self[key]

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def every_string_entry() -> list[dict[str, Any]]:
    """A ``${VAR}`` in every string of a stdio and an http entry (every key the entry has)."""
    stdio = {
        "command": "${V_COMMAND}",
        "args": ["${V_ARG0}", "--x=${V_ARG1}"],
        "env": {"A": "${V_ENV}"},
        "cwd": "${V_CWD}",
        "description": "${V_DESCRIPTION}",
        "include_tools": ["${V_INCLUDE}"],
        "log_level": "info",
    }
    http = {
        "type": "http",
        "url": "${URL_MCP}",
        "headers": {"Authorization": "Bearer ${V_HEADER}"},
        "oauth": {
            "client_id": "${V_CLIENT_ID}",
            "client_secret": "${V_CLIENT_SECRET}",
            "client_metadata_url": "${URL_CIMD}/client.json",
            "issuer": "${URL_ISSUER}",
            "scopes": ["${V_SCOPE}"],
        },
    }
    return [stdio, http]


@pytest.mark.parametrize("entry", every_string_entry())
def test_the_loader_expands_only_what_the_review_lists(
    tmp_path: Path, entry: dict[str, Any]
) -> None:
    spy = Spy()
    config = parse_server("s", entry, tmp_path / "settings.json", spy, tmp_path)
    assert config.error is None, config.error
    listed = {v for _, text in expandable_strings(entry) for v in referenced(text)}
    assert spy.asked <= listed, spy.asked - listed  # nothing expanded out of the review's sight
    shown = {item.variable for item in trust.expansions(config, None, spy)}
    assert listed <= shown


def test_the_list_names_every_oauth_string() -> None:
    from codebot_mcp.core.config.oauth import OAUTH_KEYS

    text_keys = {k for k in OAUTH_KEYS if k not in ("scopes", "callback_port", "grant")}
    text_keys -= {"signing_algorithm", "token_endpoint_auth_method"}  # choices, not expanded
    text_keys -= {"dpop", "id_token_command"}  # a flag; a command run as written, never expanded
    assert {f"oauth.{k}" for k in text_keys} <= set(EXPANDED_STRINGS)
