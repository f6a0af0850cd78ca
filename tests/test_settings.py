"""Settings: merge by name, provenance, expansion, validation with file/server/key in messages."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codebot_mcp.core.config import settings
from codebot_mcp.core.envexpand import UndefinedVariableError, expand
from codebot_mcp.core.errors import SettingsError
from tests.helpers import write_settings


def write_global(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "home" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_project_entry_replaces_global_entry_entirely_and_records_provenance(
    tmp_path: Path,
) -> None:
    global_file = write_global(
        tmp_path,
        {
            "mcp_servers": {
                "shared": {"command": "global-cmd", "env": {"ONLY_GLOBAL": "1"}},
                "mine": {"command": "mine"},
            }
        },
    )
    project = tmp_path / "proj"
    project_file = write_settings(project, {"mcp_servers": {"shared": {"command": "proj-cmd"}}})
    loaded = settings.load_unfiltered(project)
    shared = loaded.servers["shared"]
    assert shared.command == "proj-cmd"
    assert dict(shared.env) == {}  # replaced entirely, not merged key by key
    assert shared.source == project_file
    assert shared.overrides == global_file
    assert loaded.servers["mine"].source == global_file
    assert loaded.servers["mine"].overrides is None
    assert loaded.project_root == project


def test_project_file_is_found_from_a_subdirectory(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    write_settings(project, {"mcp_servers": {"a": {"command": "x"}}})
    deep = project / "src" / "pkg"
    deep.mkdir(parents=True)
    loaded = settings.load_unfiltered(deep)
    assert loaded.project_root == project
    assert loaded.servers["a"].cwd == project  # stdio servers run in the project root


def test_expansion_with_defaults_and_escapes(tmp_path: Path) -> None:
    write_settings(
        tmp_path,
        {
            "mcp_servers": {
                "s": {
                    "command": "x",
                    "args": ["--token=${TOKEN}", "${MISSING:-fallback}", "$${LITERAL}"],
                    "env": {"KEY": "${TOKEN}"},
                },
                "h": {
                    "url": "https://${HOST:-example.com}/mcp",
                    "headers": {"Authorization": "Bearer ${TOKEN}"},
                },
            }
        },
    )
    loaded = settings.load_unfiltered(tmp_path, environ={"TOKEN": "t0k"})
    s = loaded.servers["s"]
    assert s.args == ("--token=t0k", "fallback", "${LITERAL}")
    assert dict(s.env) == {"KEY": "t0k"}
    h = loaded.servers["h"]
    assert h.type == "http"
    assert h.url == "https://example.com/mcp"
    assert dict(h.headers) == {"Authorization": "Bearer t0k"}


def test_undefined_variable_fails_only_that_server(tmp_path: Path) -> None:
    path = write_settings(
        tmp_path,
        {
            "mcp_servers": {
                "bad": {"command": "x", "env": {"K": "${NOT_SET_ANYWHERE}"}},
                "good": {"command": "y"},
            }
        },
    )
    loaded = settings.load_unfiltered(tmp_path, environ={})
    bad = loaded.servers["bad"]
    assert bad.error is not None
    assert "${NOT_SET_ANYWHERE}" in bad.error and "'bad'" in bad.error and str(path) in bad.error
    assert "env.K" in bad.error
    assert bad.hint is not None and "NOT_SET_ANYWHERE:-" in bad.hint
    assert loaded.servers["good"].error is None


@pytest.mark.parametrize(
    ("entry", "fragment"),
    [
        ({"type": "grpc", "command": "x"}, 'unknown type "grpc"'),
        ({"args": ["x"]}, "missing 'command'"),
        ({"type": "http"}, "missing 'url'"),
        ({"command": "x", "url": "https://a"}, "both 'command' and 'url'"),
        ({"command": "x", "args": "not-a-list"}, "'args' must be a list of strings"),
        ({"command": "x", "env": {"N": 1}}, "'env' must be an object of string values"),
        ({"command": "x", "timeout": -1}, "'timeout' must be a positive number"),
        ({"command": "x", "enabled": "yes"}, "'enabled' must be true or false"),
        ({"command": "x", "protocol": "v9"}, 'unknown protocol "v9"'),
        ({"url": "ftp://host"}, "'url' must be an http:// or https:// URL"),
        ("just a string", "the entry must be an object"),
    ],
)
def test_bad_entries_name_file_server_and_key(tmp_path: Path, entry: object, fragment: str) -> None:
    path = write_settings(tmp_path, {"mcp_servers": {"srv": entry, "ok": {"command": "y"}}})
    loaded = settings.load_unfiltered(tmp_path)
    error = loaded.servers["srv"].error
    assert error is not None
    assert fragment in error
    assert f"server 'srv' in {path}" in error
    assert loaded.servers["ok"].error is None


@pytest.mark.parametrize(
    ("entry", "fragment", "hint"),
    [
        ({"comand": "npx"}, "missing 'command'", "Rename 'comand' to 'command'"),
        ({"ulr": "https://a/mcp"}, "missing 'command'", "Rename 'ulr' to 'url'"),
        ({"type": "http", "URL": "https://a/mcp"}, "missing 'url'", "Rename 'URL' to 'url'"),
        ({"type": "stdio", "ulr": "https://a"}, "missing 'command'", 'Add "command": "npx"'),
        ({"args": ["x"], "zzz": 1}, "missing 'command'", 'Add "command": "npx"'),
    ],
)
def test_a_misspelt_command_or_url_is_named_in_the_hint(
    tmp_path: Path, entry: object, fragment: str, hint: str
) -> None:
    write_settings(tmp_path, {"mcp_servers": {"srv": entry}})
    config = settings.load_unfiltered(tmp_path).servers["srv"]
    assert config.error is not None and fragment in config.error
    assert config.hint is not None and hint in config.hint, config.hint


@pytest.mark.parametrize("name", ["has space", "double__underscore", "dot.name", ""])
def test_invalid_server_names(tmp_path: Path, name: str) -> None:
    write_settings(tmp_path, {"mcp_servers": {name: {"command": "x"}}})
    error = settings.load_unfiltered(tmp_path).servers[name].error
    assert error is not None and "must not contain '__'" in error


def test_unknown_keys_warn_with_a_suggestion(tmp_path: Path) -> None:
    write_settings(tmp_path, {"mcp_servers": {"s": {"command": "x", "agrs": []}}})
    [warning] = settings.load_unfiltered(tmp_path).servers["s"].warnings
    assert warning.key == "agrs"
    assert "did you mean 'args'" in warning.message


def test_every_documented_top_level_setting_is_known(tmp_path: Path) -> None:
    """A setting the loader reads must never warn as unknown (each feature adds its key)."""
    every = {
        "model": "m",
        "base_url": "http://127.0.0.1:1/v1",
        "api_key_env": "K",
        "max_turns": 5,
        "tool_result_max_tokens": 100,
        "max_tokens": 100,
        "model_retries": 0,
        "context_window": 1000,
        "tool_search": "auto",
        "usage_line_after": 10,
        "roots": [],
        "permissions": {"allow": [], "ask": [], "deny": []},
        "mcp_servers": {},
    }
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "settings.json").write_text(json.dumps(every))
    loaded = settings.load_unfiltered(tmp_path, environ={"CODEBOT_HOME": str(tmp_path / "home")})
    assert [w.key for w in loaded.warnings] == []
    assert loaded.max_tokens == 100 and loaded.context_window == 1000


def test_invalid_json_is_a_settings_error_with_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / ".codebot" / "settings.json"
    path.parent.mkdir()
    path.write_text('{\n  "mcp_servers": {,}\n}')
    with pytest.raises(SettingsError) as info:
        settings.load_unfiltered(tmp_path)
    assert f"invalid JSON in {path} at line 2, column 19" in info.value.message


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("[1, 2]", "must contain a JSON object at the top level, found an array"),
        ('{"mcp_servers": []}', "'mcp_servers' in"),
        ('{"model": 5}', "'model' in"),
        ('{"max_turns": 0}', "'max_turns' in"),
        ('{"permissions": {"allow": "bash"}}', "'permissions.allow' in"),
    ],
)
def test_bad_top_level_shapes(tmp_path: Path, content: str, fragment: str) -> None:
    path = tmp_path / ".codebot" / "settings.json"
    path.parent.mkdir()
    path.write_text(content)
    with pytest.raises(SettingsError) as info:
        settings.load_unfiltered(tmp_path)
    assert fragment in info.value.message
    assert info.value.hint


def test_settings_path_that_is_a_directory(tmp_path: Path) -> None:
    (tmp_path / ".codebot" / "settings.json").mkdir(parents=True)
    with pytest.raises(SettingsError, match="is a directory"):
        settings.load_unfiltered(tmp_path)


def test_model_settings_and_permissions_merge(tmp_path: Path) -> None:
    write_global(tmp_path, {"model": "gpt-g", "max_turns": 7, "permissions": {"deny": ["bash"]}})
    write_settings(tmp_path / "p", {"model": "gpt-p", "permissions": {"allow": ["mcp__a__*"]}})
    loaded = settings.load_unfiltered(tmp_path / "p")
    assert (loaded.model, loaded.max_turns) == ("gpt-p", 7)
    assert loaded.permissions.deny == ("bash",)
    assert loaded.permissions.allow == ("mcp__a__*",)


def test_mcp_servers_camel_case_alias_is_accepted(tmp_path: Path) -> None:
    write_settings(tmp_path, {"mcpServers": {"a": {"command": "x"}}})
    assert settings.load_unfiltered(tmp_path).servers["a"].command == "x"


# -- expansion properties --------------------------------------------------------------

names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True)
plain = st.text(alphabet=st.characters(blacklist_characters="$"), max_size=20)


@given(plain)
def test_text_without_dollar_is_unchanged(text: str) -> None:
    assert expand(text, {}) == text


@given(names, st.text(max_size=20).filter(lambda v: "\x00" not in v), plain, plain)
def test_defined_variables_expand_anywhere(name: str, value: str, before: str, after: str) -> None:
    assert expand(f"{before}${{{name}}}{after}", {name: value}) == f"{before}{value}{after}"


@given(names, st.text(alphabet=st.characters(blacklist_characters="}"), max_size=15))
def test_default_applies_when_unset_or_empty(name: str, default: str) -> None:
    assert expand(f"${{{name}:-{default}}}", {}) == default
    assert expand(f"${{{name}:-{default}}}", {name: ""}) == default
    assert expand(f"${{{name}:-{default}}}", {name: "set"}) == "set"


@given(names)
def test_undefined_without_default_raises_naming_the_variable(name: str) -> None:
    with pytest.raises(UndefinedVariableError) as info:
        expand(f"x${{{name}}}y", {})
    assert info.value.name == name


@given(names, st.text(max_size=10))
def test_escaped_dollar_brace_is_literal(name: str, value: str) -> None:
    assert expand(f"$${{{name}}}", {name: value}) == f"${{{name}}}"


server_names = st.from_regex(r"[A-Za-z0-9-]{1,10}", fullmatch=True)


@given(
    st.dictionaries(server_names, st.sampled_from(["g1", "g2"]), max_size=4),
    st.dictionaries(server_names, st.sampled_from(["p1", "p2"]), max_size=4),
)
def test_merge_property_project_wins_by_name(
    tmp_path_factory: pytest.TempPathFactory,
    global_servers: dict[str, str],
    project_servers: dict[str, str],
) -> None:
    root = tmp_path_factory.mktemp("merge")
    previous = os.environ["CODEBOT_HOME"]
    os.environ["CODEBOT_HOME"] = str(root / "home")
    try:
        write_global(root, {"mcp_servers": {n: {"command": c} for n, c in global_servers.items()}})
        write_settings(
            root / "p", {"mcp_servers": {n: {"command": c} for n, c in project_servers.items()}}
        )
        loaded = settings.load_unfiltered(root / "p", environ={})
    finally:
        os.environ["CODEBOT_HOME"] = previous
    assert set(loaded.servers) == set(global_servers) | set(project_servers)
    for name, config in loaded.servers.items():
        expected = project_servers.get(name, global_servers.get(name))
        assert config.command == expected
        assert (config.overrides is not None) == (
            name in global_servers and name in project_servers
        )
