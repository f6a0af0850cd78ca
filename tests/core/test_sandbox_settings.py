"""The ``sandbox`` setting and a server entry's ``sandbox``: validation, merging, trust."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from codebot_mcp.core.config import settings as settings_mod
from codebot_mcp.core.config import trust
from codebot_mcp.core.config.sandboxing import ServerSandbox
from codebot_mcp.core.errors import SettingsError
from codebot_mcp.core.sandbox.sandboxsettings import SandboxSettings
from codebot_mcp.core.sandbox.sandboxsettings import of as sandbox_of
from tests.helpers import server_config, write_settings


def write_global(data: dict[str, object]) -> Path:
    path = Path(os.environ["CODEBOT_HOME"]) / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_defaults_and_a_full_setting(tmp_path: Path) -> None:
    assert sandbox_of(settings_mod.load_unfiltered(tmp_path)) == SandboxSettings(None, False, ())
    write_settings(
        tmp_path, {"sandbox": {"mode": "read-only", "network": True, "writable": ["build", "~"]}}
    )
    loaded = sandbox_of(settings_mod.load_unfiltered(tmp_path))
    assert loaded == SandboxSettings(
        "read-only", True, ((tmp_path / "build").resolve(), Path.home().resolve())
    )


@pytest.mark.parametrize(
    ("value", "key", "found"),
    [
        ({"mode": "sideways"}, "sandbox.mode", '"sideways"'),
        ({"network": "no"}, "sandbox.network", '"no"'),
        ({"writable": "~/.cache"}, "sandbox.writable", "a string"),
        ("workspace-write", "sandbox", "a string"),
    ],
)
def test_bad_values_name_the_file_and_key(
    tmp_path: Path, value: object, key: str, found: str
) -> None:
    path = write_settings(tmp_path, {"sandbox": value})
    with pytest.raises(SettingsError) as caught:
        settings_mod.load_unfiltered(tmp_path)
    message = caught.value.message
    assert f"'{key}' in {path}" in message and found in message
    assert caught.value.hint


def test_an_unknown_sandbox_key_warns_with_a_suggestion(tmp_path: Path) -> None:
    write_settings(tmp_path, {"sandbox": {"netwrok": True}})
    warnings = [str(w) for w in settings_mod.load_unfiltered(tmp_path).warnings]
    assert any("'sandbox.netwrok'" in w and "'sandbox.network'" in w for w in warnings)


def test_the_project_adds_writable_paths_and_overrides_the_rest(tmp_path: Path) -> None:
    write_global({"sandbox": {"mode": "read-only", "writable": ["/usr/local/share"]}})
    write_settings(tmp_path, {"sandbox": {"mode": "workspace-write", "writable": ["out"]}})
    loaded = sandbox_of(settings_mod.load_unfiltered(tmp_path))
    assert loaded.mode == "workspace-write"
    assert loaded.writable == (Path("/usr/local/share"), (tmp_path / "out").resolve())


@pytest.mark.parametrize(
    ("project", "gated"),
    [
        ({"mode": "off"}, True),
        ({"network": True}, True),
        ({"writable": ["/"]}, True),
        ({"mode": "read-only"}, False),
        ({"mode": "workspace-write", "network": False}, False),
        ({"network": ["pypi.org"]}, True),
        ({"network": []}, False),
    ],
)
def test_loosening_needs_trust_tightening_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, project: dict[str, object], gated: bool
) -> None:
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")
    write_settings(tmp_path, {"sandbox": project})
    loaded = settings_mod.load_unfiltered(tmp_path)
    assert ("sandbox" in loaded.project_gated) is gated
    check = trust.check(loaded)
    effective = sandbox_of(trust.without_untrusted(loaded, check))
    if gated:
        assert check.needs_trust and effective == SandboxSettings()
    else:
        assert not check.needs_trust and effective == sandbox_of(loaded)


def test_a_server_entry_sandbox(tmp_path: Path) -> None:
    source = tmp_path / ".codebot" / "settings.json"
    base = {"command": "x"}
    plain = server_config("s", {**base, "sandbox": "workspace-write"}, source)
    assert plain.error is None and plain.sandbox is not None
    assert plain.sandbox.mode == "workspace-write" and not plain.sandbox.network
    full = server_config(
        "s", {**base, "sandbox": {"mode": "read-only", "network": True, "writable": ["c"]}}, source
    )
    assert full.sandbox == ServerSandbox(
        "read-only",
        True,
        ((tmp_path / "c").resolve(),),
        full.sandbox.workspace if full.sandbox else None,
    )
    assert server_config("s", {**base, "sandbox": "off"}, source).sandbox is None
    bad = server_config("s", {**base, "sandbox": "tight"}, source)
    assert bad.error is not None and "'sandbox.mode'" in bad.error and str(source) in bad.error
    http = server_config("s", {"url": "https://h/mcp", "sandbox": "read-only"}, source)
    assert http.error is not None and "only for stdio servers" in http.error
    odd = server_config("s", {**base, "sandbox": {"mood": "read-only"}}, source)
    assert odd.error is not None and "sandbox.mood" in odd.error


def test_deny_read_expands_and_adds_up(tmp_path: Path) -> None:
    write_global({"sandbox": {"deny_read": ["~/.config/mytool/token", "/srv/keys"]}})
    write_settings(tmp_path, {"sandbox": {"deny_read": [".env.local", "~/.vault"]}})
    loaded = sandbox_of(settings_mod.load_unfiltered(tmp_path))
    assert loaded.deny_read == (
        Path.home() / ".config/mytool/token",
        Path("/srv/keys"),
        tmp_path / ".env.local",
        Path.home() / ".vault",
    )
    assert "sandbox" not in settings_mod.load_unfiltered(tmp_path).project_gated  # it only tightens


@pytest.mark.parametrize(
    ("value", "found"),
    [
        ("~/.token", "a string"),
        ([1], "a list with an empty or non-string item"),
        (["ok", ""], "a list with an empty or non-string item"),
        ({"path": "x"}, "an object"),
    ],
)
def test_bad_deny_read_names_the_file_and_key(tmp_path: Path, value: object, found: str) -> None:
    path = write_settings(tmp_path, {"sandbox": {"deny_read": value}})
    with pytest.raises(SettingsError) as caught:
        settings_mod.load_unfiltered(tmp_path)
    message = caught.value.message
    assert f"'sandbox.deny_read' in {path}" in message and found in message
    assert caught.value.hint and "deny_read" in caught.value.hint


def test_an_untrusted_project_may_add_deny_read_even_when_the_rest_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``deny_read`` only tightens: it applies before trust, alone or beside a widening key
    that waits for trust."""
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")
    write_global({"sandbox": {"deny_read": ["/srv/global"]}})
    write_settings(tmp_path, {"sandbox": {"deny_read": ["secret.txt"]}})
    loaded = settings_mod.load_unfiltered(tmp_path)
    check = trust.check(loaded)
    assert not check.needs_trust
    assert sandbox_of(trust.without_untrusted(loaded, check)).deny_read == (
        Path("/srv/global"),
        tmp_path / "secret.txt",
    )
    write_settings(tmp_path, {"sandbox": {"network": True, "deny_read": ["secret.txt"]}})
    loaded = settings_mod.load_unfiltered(tmp_path)
    check = trust.check(loaded)
    effective = sandbox_of(trust.without_untrusted(loaded, check))
    assert check.needs_trust and not effective.network
    assert effective.deny_read == (Path("/srv/global"), tmp_path / "secret.txt")


def test_a_server_entry_may_hide_more(tmp_path: Path) -> None:
    source = tmp_path / ".codebot" / "settings.json"
    entry = {"command": "x", "sandbox": {"mode": "read-only", "deny_read": ["keys"]}}
    config = server_config("s", entry, source)
    assert config.sandbox is not None and config.sandbox.deny_read == (tmp_path / "keys",)
    bad = server_config(
        "s", {"command": "x", "sandbox": {"mode": "read-only", "deny_read": 3}}, source
    )
    assert bad.error is not None and "'sandbox.deny_read'" in bad.error


def test_network_as_a_list_of_host_patterns(tmp_path: Path) -> None:
    write_settings(
        tmp_path, {"sandbox": {"network": ["PyPI.org.", "*.npmjs.org", "pypi.org", "10.0.0.5"]}}
    )
    loaded = sandbox_of(settings_mod.load_unfiltered(tmp_path))
    assert loaded.network is False  # never the whole network
    assert loaded.domains == ("pypi.org", "*.npmjs.org", "10.0.0.5")
    write_settings(tmp_path, {"sandbox": {"network": []}})
    assert sandbox_of(settings_mod.load_unfiltered(tmp_path)) == SandboxSettings()


@pytest.mark.parametrize(
    ("entries", "key", "found"),
    [
        (["pypi.org", "https://files.pythonhosted.org"], "sandbox.network[1]", "without scheme"),
        ([3], "sandbox.network[0]", "a number"),
        (["*.com"], "sandbox.network[0]", "top-level domain"),
        (["npm*.org"], "sandbox.network[0]", "'*' may only start"),
        (["pypi.org:443"], "sandbox.network[0]", "without scheme, port or path"),
        ([""], "sandbox.network[0]", "names no host"),
        (["bad_host!.org"], "sandbox.network[0]", "not a host name"),
    ],
)
def test_a_bad_host_pattern_names_the_file_the_key_and_the_entry(
    tmp_path: Path, entries: list[object], key: str, found: str
) -> None:
    path = write_settings(tmp_path, {"sandbox": {"network": entries}})
    with pytest.raises(SettingsError) as caught:
        settings_mod.load_unfiltered(tmp_path)
    message = caught.value.message
    assert f"'{key}' in {path}" in message and found in message, message
    assert "pypi.org" in (caught.value.hint or "")


@pytest.mark.parametrize(
    ("global_network", "project_network", "gated"),
    [
        (True, ["pypi.org"], False),  # from everything to a list: tighter
        (["pypi.org", "*.npmjs.org"], ["pypi.org"], False),
        (["pypi.org"], ["pypi.org", "evil.example"], True),
        (["pypi.org"], True, True),
        (["pypi.org"], False, False),
    ],
)
def test_a_project_list_that_adds_hosts_needs_trust(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    global_network: object,
    project_network: object,
    gated: bool,
) -> None:
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")
    write_global({"sandbox": {"network": global_network}})
    write_settings(tmp_path, {"sandbox": {"network": project_network}})
    assert ("sandbox" in settings_mod.load_unfiltered(tmp_path).project_gated) is gated


def test_a_server_entry_may_list_hosts(tmp_path: Path) -> None:
    source = tmp_path / ".codebot" / "settings.json"
    entry = {"command": "x", "sandbox": {"mode": "workspace-write", "network": ["*.npmjs.org"]}}
    made = server_config("s", entry, source)
    assert made.sandbox is not None and not made.sandbox.network
    assert made.sandbox.domains == ("*.npmjs.org",)
    bad = server_config(
        "s", {"command": "x", "sandbox": {"mode": "read-only", "network": ["*"]}}, source
    )
    assert bad.error is not None and "'sandbox.network[0]'" in bad.error
