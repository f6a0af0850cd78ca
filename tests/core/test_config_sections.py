"""The settings sections: each feature's model and the rows the loader runs on say the same.

The loader checks values with each row's parser and the table generated from the models
(``core/config/keytable.py``: pydantic stays off ``mcp list`` and the warm call); the schema,
the docs' key table, the rows' defaults and the "did you mean" hints come from the models.
These tests hold them together, in process: the table current, the same keys and defaults,
the same verdict on good and bad values, and errors worded as ever, naming the file and key.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import BaseModel, ValidationError

from codebot_mcp.core.config import keys, keytable, oauth, sandboxing, sections, servers, tablegen
from codebot_mcp.core.config.mcpsection import HTTP_TYPES, server_model
from codebot_mcp.core.errors import SettingsError

ROOT = Path(__file__).resolve().parents[2]
FILE = Path("/p/.codebot/settings.json")
CANDIDATES: list[Any] = ["x", "", 0, 1, -1, 2.5, 1e12, True, None, [], ["a"], {}, {"a": "b"}]
"""Values of every JSON type, in range and out of it."""


def _fields(model: type[BaseModel]) -> dict[str, Any]:
    return {(f.alias or name): f for name, f in model.model_fields.items()}


SCHEMA_STRICTER: dict[str, tuple[Any, ...]] = {"base_url": ("x", ""), "api_key_env": ("",)}
"""Where the schema guides an editor further than the loader checks (``base_url``'s scheme is
the model client's to check; an empty ``api_key_env`` means the default variable)."""


def _accepts(model: type[BaseModel], data: dict[str, Any], *, warned: bool) -> bool:
    """The model's verdict; ``warned``: an unknown key inside the section only warns
    (``keys.unknown_keys``) where the loader knows the section's keys."""
    try:
        model.model_validate(data, strict=True)
    except ValidationError as exc:
        return warned and all(
            e["type"] == "extra_forbidden" and len(e["loc"]) > 1 for e in exc.errors()
        )
    return True


SECTIONS = sections.sections()
ROWS = [(s, k) for s in SECTIONS for k in s.keys]


@pytest.mark.parametrize("section", SECTIONS, ids=lambda s: s.name)
def test_a_sections_rows_are_its_models_fields(section: sections.Section) -> None:
    assert [k.name for k in section.keys] == list(_fields(section.model()))


@pytest.mark.parametrize(("section", "key"), ROWS, ids=lambda x: getattr(x, "name", ""))
def test_a_rows_default_is_its_models(section: sections.Section, key: sections.Key) -> None:
    value = _fields(section.model())[key.name].get_default(call_default_factory=True)
    if isinstance(value, BaseModel):
        value = value.model_dump(exclude_none=True)
    if key.parse is not None and value is not None:
        assert key.parse(FILE, key.name, value) == key.default
    elif key.default is not None:
        assert key.default in (value, (value,))  # registry_url: one URL, as a list of one


@pytest.mark.parametrize(
    ("section", "key"), [(s, k) for s, k in ROWS if k.keys], ids=lambda x: getattr(x, "name", "")
)
def test_a_sections_own_keys_are_its_models(section: sections.Section, key: sections.Key) -> None:
    """The keys the "did you mean" hints know inside ``sandbox``, ``permissions``..."""
    inner = _fields(section.model())[key.name].annotation
    assert key.keys == tuple(_fields(inner))


@pytest.mark.parametrize(
    ("section", "key"), [(s, k) for s, k in ROWS if k.parse], ids=lambda x: getattr(x, "name", "")
)
def test_parser_and_model_agree_on_every_kind_of_value(
    section: sections.Section, key: sections.Key
) -> None:
    """What the model refuses, the parser refuses with a message naming file and key (and
    the other way round): the schema an editor checks with is the loader's truth."""
    assert key.parse is not None
    model = section.model()
    example = keys.example(key.name)
    assert example is not None, f"give '{key.name}' an example in its section's model"
    for value in [example, *CANDIDATES]:
        try:
            key.parse(FILE, key.name, value)
            parsed = True
        except SettingsError as exc:
            parsed = False
            assert f"'{key.name}" in exc.message and str(FILE) in exc.message, exc.message
        if any(value == v and type(value) is type(v) for v in SCHEMA_STRICTER.get(key.name, ())):
            assert parsed and not _accepts(model, {key.name: value}, warned=False)
            continue
        verdict = _accepts(model, {key.name: value}, warned=key.keys is not None)
        assert parsed == verdict, (key.name, value)


def test_server_keys_are_the_entry_models() -> None:
    stdio, http = get_args(server_model())
    both = set(_fields(stdio)) | set(_fields(http))
    assert both == set(servers._SERVER_KEYS)
    common = set(_fields(stdio)) & set(_fields(http))
    assert get_args(_fields(http)["type"].annotation) == HTTP_TYPES
    assert get_args(_fields(stdio)["log_level"].annotation) == servers.LOG_LEVELS
    assert get_args(_fields(stdio)["protocol"].annotation) == servers.PROTOCOLS
    assert {"timeout", "enabled", "protocol"} <= common and "url" not in common
    oauth_model = oauth.oauth_model()
    assert tuple(_fields(oauth_model)) == oauth.OAUTH_KEYS
    assert get_args(_fields(oauth_model)["grant"].annotation) == oauth.GRANTS
    assert tuple(_fields(sandboxing.sandbox_model())) == sandboxing.SANDBOX_KEYS
    assert get_args(sandboxing.Mode) == sandboxing.MODES


def test_every_entry_field_is_read_by_a_step() -> None:
    """``servers._STEPS`` reads every field of the entry models (``type`` first, on its own;
    ``description`` is for people), so a field added to a model cannot go unchecked."""
    read = {key for key, _ in servers._STEPS}
    assert read | {"type", "description"} == set(keytable.SERVER_FIELDS)
    assert not read & {"type", "description"}


def test_model_choices_are_the_flags_choices() -> None:
    model = sections.by_name()  # loads every section
    assert "api" in model
    fields = _fields(next(s for s in SECTIONS if s.name == "model").model())
    for name, choices in (("api", keys.MODEL_APIS), ("reasoning_effort", keys.REASONING_EFFORTS)):
        literal = get_args(fields[name].annotation)[0]
        assert get_args(literal) == choices


@pytest.mark.parametrize(
    "entry",
    [
        {"command": "npx", "args": ["-y", "pkg"], "timeout": 60, "sandbox": "read-only"},
        {"type": "http", "url": "https://h/mcp", "headers": {"A": "b"}, "oauth": False},
        {"url": "${BASE}/mcp", "oauth": {"client_id": "c", "client_secret": "${SECRET}"}},
        {"command": "x", "sandbox": {"mode": "workspace-write", "network": ["pypi.org"]}},
        {"command": "x", "url": "https://h/mcp"},
        {"type": "http", "command": "x"},
        {"command": 5},
        {"command": "x", "args": "a b"},
        {"command": "x", "timeout": 0},
        {"command": "x", "enabled": "yes"},
        {"command": "x", "protocol": "2024"},
        {"command": "x", "log_level": "loud"},
        {"url": "ftp://h"},
        {"command": "x", "oauth": {}},
        {"url": "https://h", "sandbox": "read-only"},
        {"url": "https://h", "oauth": {"client_secret": "clear"}},
        {"command": "x", "sandbox": "tight"},
        {"command": "x", "env": {"A": 1}},
    ],
)
def test_the_entry_model_and_the_entry_parser_agree(entry: dict[str, Any]) -> None:
    """``servers.parse_server`` (the run-time check, with its messages) and the entry model
    (the schema) accept and refuse the same entries."""
    from pydantic import TypeAdapter

    config = servers.parse_server(
        "s", entry, FILE, {"BASE": "https://h", "SECRET": "s"}, Path("/p")
    )
    try:
        TypeAdapter(server_model()).validate_python(entry, strict=True)
        modelled = True
    except ValidationError:
        modelled = False
    assert (config.error is None) == modelled, (entry, config.error)
    if config.error is not None:
        assert config.error.startswith(f"server 's' in {FILE}: ")


@pytest.mark.parametrize(
    "entry",
    [
        {"command": "x", "headers": {"A": "b"}},
        {"url": "https://h/mcp", "env": {"A": "b"}},
        {"url": "https://h/mcp", "args": ["a"], "cwd": "."},
    ],
)
def test_the_entry_schema_refuses_the_other_transports_keys(entry: dict[str, Any]) -> None:
    """Where the schema is stricter than the loader: a key of the other transport does
    nothing (the loader keeps the entry, as before), and an editor flags it."""
    from pydantic import TypeAdapter

    config = servers.parse_server("s", entry, FILE, {}, Path("/p"))
    assert config.error is None and not config.warnings
    with pytest.raises(ValidationError):
        TypeAdapter(server_model()).validate_python(entry, strict=True)


def test_unknown_keys_hint_from_every_section() -> None:
    data = {
        "max_turn": 3,
        "sandbox": {"netwrok": True},
        "telemetry": {"endpont": "x"},
        "checkpoints": {"max_file": 3},
        "permissions": {"dney": []},
    }
    messages = [w.message for w in keys.unknown_keys(FILE, data)]
    for wrong, right in (
        ("max_turn", "max_turns"),
        ("sandbox.netwrok", "sandbox.network"),
        ("telemetry.endpont", "telemetry.endpoint"),
        ("checkpoints.max_file", "checkpoints.max_files"),
        ("permissions.dney", "permissions.deny"),
    ):
        assert (
            f"unknown setting '{wrong}' in {FILE} is ignored (did you mean '{right}'?)" in messages
        )


def test_a_second_section_cannot_take_a_key() -> None:
    taken = sections.Section("intruder", (sections.Key("max_turns"),), lambda: BaseModel, 1)
    with pytest.raises(ValueError, match="max_turns"):
        sections.register(taken)


def test_the_field_table_is_current() -> None:
    """The run time reads the models through the generated :mod:`.keytable` (no pydantic)."""
    text = (ROOT / "core" / "config" / "keytable.py").read_text(encoding="utf-8")
    assert text == tablegen.table_text(), (
        "regenerate: python -m codebot_mcp.core.config.tablegen > core/config/keytable.py"
    )
    assert tuple(keytable.KEYS) == keys.TOP_LEVEL_KEYS


def test_the_field_table_can_be_written_from_an_empty_one() -> None:
    """A field added to a model is missing from the table until it is written again: the
    loader must still import, and the generator write the same table, from an empty one."""
    probe = (
        "import sys, types, dataclasses;"
        "from codebot_mcp.core.config import keytable as real;"
        "empty = types.ModuleType(real.__name__);"
        "empty.Spec, empty.KEYS, empty.FIELDS, empty.SERVER_FIELDS = real.Spec, {}, {}, {};"
        "sys.modules[real.__name__] = empty;"
        "from codebot_mcp.core.config import tablegen;"
        "sys.stdout.write(tablegen.table_text())"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == (ROOT / "core" / "config" / "keytable.py").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("key", "value", "message", "hint"),
    [
        ("model", 5, "must be a string, found a number", 'Write it as "model": "...".'),
        ("max_turns", 0, "must be a positive integer, found 0", 'Write it as "max_turns": 50.'),
        (
            "usage_line_after",
            -1,
            "must be an integer >= 0, found -1",
            'Write it as "usage_line_after": 50.',
        ),
        (
            "model_retries",
            None,
            "must be an integer >= 0, found null",
            'Write it as "model_retries": 50.',
        ),
        (
            "tool_search",
            "yes",
            'must be "auto", true or false, found "yes"',
            'Write it as "tool_search": "auto" (the default), true or false.',
        ),
        (
            "api",
            "grpc",
            'must be one of "chat_completions", "responses", found "grpc"',
            'Write it as "api": "responses", or leave it out for the default.',
        ),
        (
            "claude_files",
            "no",
            'must be true or false, found "no"',
            'Write it as "claude_files": false, or leave it out for the default.',
        ),
        (
            "warm_idle_timeout",
            1e9,
            "must be a positive number of seconds, found 1000000000.0",
            'Write it as "warm_idle_timeout": 600.',
        ),
    ],
)
def test_the_generic_check_words_each_kind_of_key(
    key: str, value: Any, message: str, hint: str
) -> None:
    """One checker, driven by the table, words every scalar key's error as its own parser did."""
    with pytest.raises(SettingsError) as caught:
        keys.check(FILE, key, value)
    assert caught.value.message == f"'{key}' in {FILE} {message}"
    assert caught.value.hint == hint


def test_a_rows_default_is_its_tables_as_held() -> None:
    table = sections.by_name()
    assert table["max_turns"].default == keys.DEFAULT_MAX_TURNS
    assert table["warm_idle_timeout"].default == keys.DEFAULT_WARM_IDLE_TIMEOUT
    assert table["registry_url"].default == (keys.DEFAULT_REGISTRY_URL,)
    assert table["roots"].default == ()
    assert table["model"].default is None and table["tool_search"].default == "auto"
    assert table["permissions"].keys == keys.PERMISSION_KEYS and table["images"].keys is None
    assert tuple(keys.PERMISSION_TRUST) == keys.PERMISSION_KEYS  # a trust for each list


def test_the_lists_of_names_and_values_are_the_models() -> None:
    """What the loader names as known keys or allowed values comes from the models."""
    from codebot_mcp.core.config import hooks, managed
    from codebot_mcp.core.hooks.hooksection import section_model
    from codebot_mcp.core.telemetry import exportsettings

    entry = section_model().model_fields["hooks"].annotation
    group = get_args(get_args(entry)[1])[0]
    hook = get_args(_fields(group)["hooks"].annotation)[0]
    assert hooks.KNOWN_FIELDS == tuple(_fields(hook))
    assert hooks.SANDBOX_MODES == get_args(_fields(hook)["sandbox"].annotation)
    assert managed.RULE_KINDS == ("name", "command", "url")
    assert exportsettings.PROTOCOLS == ("http/protobuf", "grpc")
    assert sandboxing.SANDBOX_KEYS == ("mode", "network", "writable", "deny_read")


def test_the_docs_key_table_is_current() -> None:
    text = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    table = text.split("<!-- keys:begin -->\n", 1)[1].split("<!-- keys:end -->", 1)[0]
    assert table == keys.key_reference(), (
        "regenerate: python -m codebot_mcp.core.config.keys --reference, into docs/settings.md"
    )


def test_loading_settings_builds_no_model_and_imports_no_pydantic(tmp_path: Path) -> None:
    """The loader runs on the rows: pydantic stays off ``mcp list`` and the warm call."""
    probe = (
        "import sys; from pathlib import Path;"
        "from codebot_mcp.core.config import effective;"
        "effective.load(Path(sys.argv[1]));"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic'))"
    )
    (tmp_path / ".codebot").mkdir()
    (tmp_path / ".codebot" / "settings.json").write_text(
        '{"model": "m", "sandbox": {"mode": "read-only"}, "telemetry": {}, "images": {},'
        ' "checkpoints": {}, "mcp_servers": {"s": {"command": "x"}}}'
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"CODEBOT_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_every_settings_example_in_the_docs_fits_the_schema() -> None:
    """The models are strict (unknown keys refused): the docs' examples are held to them."""
    import json
    import re

    import jsonschema

    schema = keys.json_schema()
    known = set(keys.TOP_LEVEL_KEYS)
    checked = 0
    for page in sorted([*(ROOT / "docs").glob("*.md"), ROOT / "README.md"]):
        for block in re.findall(r"```json\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
            try:
                data = json.loads(block)
            except ValueError:
                continue  # an excerpt, not a whole file
            if isinstance(data, dict) and data and set(data) <= known:
                jsonschema.validate(data, schema)
                checked += 1
    assert checked >= 10


def test_a_features_keys_are_held_in_sections_and_read_through_its_accessor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kernel's ``Settings`` names no feature's type: ``checkpoints``, ``telemetry`` and
    ``images`` are held in ``Settings.sections`` through their rows (checkpoints merged key by
    key, a project's telemetry or images replacing yours whole), and an untrusted project's
    fall back to yours."""
    import dataclasses
    import json

    from codebot_mcp.core.checkpoints import checkpointing
    from codebot_mcp.core.config import effective, settings
    from codebot_mcp.core.media import imagelimits
    from codebot_mcp.core.telemetry import exportsettings

    names = {f.name for f in dataclasses.fields(settings.Settings)}
    assert not names & {"checkpoints", "telemetry", "images"} and "sections" in names
    assert checkpointing.of(settings.Settings()) == checkpointing.CheckpointSettings()
    assert exportsettings.of(settings.Settings()) == exportsettings.TelemetrySettings()
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(
        json.dumps(
            {
                "checkpoints": {"max_files": 7},
                "telemetry": {"enabled": True, "endpoint": "http://127.0.0.1:4318"},
                "images": {"max_per_request": 2},
            }
        )
    )
    project = tmp_path / "p"
    (project / ".codebot").mkdir(parents=True)
    (project / ".codebot" / "settings.json").write_text(
        json.dumps(
            {
                "checkpoints": {"max_size_mb": 9, "enabled": False},
                "telemetry": {},
                "images": {"max_bytes": 5},
            }
        )
    )
    loaded = settings.load_unfiltered(project)
    assert checkpointing.of(loaded) == checkpointing.CheckpointSettings(False, 7, 9)
    assert exportsettings.of(loaded) == exportsettings.TelemetrySettings()  # replaced whole
    assert imagelimits.of(loaded) == imagelimits.ImageLimits(max_bytes=5)  # the same
    assert loaded.project_gated["checkpoints"] == '{"enabled": false, "max_size_mb": 9}'
    assert loaded.project_gated["telemetry"] == {}
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")
    untrusted, check = effective.load(project)
    assert check.needs_trust
    assert checkpointing.of(untrusted) == checkpointing.CheckpointSettings(max_files=7)
    assert exportsettings.of(untrusted).endpoint == "http://127.0.0.1:4318"
    assert imagelimits.of(untrusted) == imagelimits.ImageLimits(max_per_request=2)
    trusted, _ = effective.load(project, assume_trusted=True)
    assert checkpointing.of(trusted) == checkpointing.of(loaded)
    assert exportsettings.of(trusted) == exportsettings.of(loaded)
    assert imagelimits.of(trusted) == imagelimits.of(loaded)


@pytest.mark.parametrize(
    ("entry", "message", "hint"),
    [
        ({"command": ""}, "'command' must be a non-empty string, found a string", None),
        (
            {"command": "x", "include_tools": "a"},
            "'include_tools' must be a list of strings, found a string",
            'Write it as "include_tools": ["a", "b"].',
        ),
        (
            {"url": "https://h/mcp", "headers": None},
            "'headers' must be an object of string values, found null",
            'Write it as "headers": {"NAME": "value"} (numbers must be quoted).',
        ),
        (
            {"command": "x", "tool_timeout": "5"},
            "'tool_timeout' must be a positive number of seconds, found \"5\"",
            'Write it as "tool_timeout": 30.',
        ),
        ({"command": "x", "enabled": None}, "'enabled' must be true or false, found null", None),
        (
            {"command": "x", "protocol": None},
            "unknown protocol null (key 'protocol')",
            'Use "auto" (default), "legacy" (initialize handshake) or "2026-07-28".',
        ),
        (
            {"command": "x", "log_level": "loud"},
            "unknown log_level \"loud\" (key 'log_level')",
            "Use one of debug, info, notice, warning, error, critical, alert, emergency.",
        ),
        (  # several wrong: the first in the order the fields are read (servers._STEPS)
            {"command": 5, "args": "a b", "enabled": "yes", "timeout": 0},
            "'enabled' must be true or false, found \"yes\"",
            None,
        ),
        (
            {"command": "${NOPE}", "args": ["${NOPE}"], "cwd": "${NOPE}"},
            "variable ${NOPE} in 'cwd' is not set",
            "Export NOPE, or write ${NOPE:-default} to give a default (write $${ for a literal "
            "'${').",
        ),
        (
            {"command": "${NOPE}", "args": 5},
            "'args' must be a list of strings, found a number",
            'Write it as "args": ["a", "b"].',
        ),
    ],
)
def test_a_bad_entry_field_is_worded_as_ever(
    entry: dict[str, Any], message: str, hint: str | None
) -> None:
    """The table-driven entry reader words each kind of field's error as the hand-written
    checks did (message and hint), and reports the first in their order."""
    config = servers.parse_server("s", entry, FILE, {}, Path("/p"))
    assert config.error == f"server 's' in {FILE}: {message}"
    assert config.hint == hint


def test_null_reads_as_left_out_where_it_always_did() -> None:
    config = servers.parse_server(
        "s",
        {"command": "x", "timeout": None, "tool_timeout": None, "args": None, "log_level": None},
        FILE,
        {},
        Path("/p"),
    )
    assert config.error is None
    assert (config.timeout, config.tool_timeout, config.args, config.log_level) == (
        servers.DEFAULT_HANDSHAKE_TIMEOUT,
        None,
        (),
        None,
    )
    assert (config.exclude_tools, config.include_tools, dict(config.env)) == ((), None, {})


HOOKS_SCHEMA_LOOSER = [
    {"Stop": [{"hooks": [{"type": "command"}]}]},  # a command hook needs its command
]
"""Where the loader refuses what the model lets through (the model lets every hook type
through: Claude Code has more, which the loader warns about and skips)."""


@pytest.mark.parametrize(
    "hooks",
    [
        {"PreToolUse": [{"matcher": "bash", "hooks": [{"command": "./check", "timeout": 5}]}]},
        {"Stop": [{"matcher": None, "hooks": [{"command": "x", "async": True, "if": "Bash(x)"}]}]},
        {"Stop": [{"hooks": [{"command": "x", "sandbox": "read-only", "once": True}]}]},
        {"Stop": [{"hooks": [{"type": "prompt", "prompt": "why?"}]}]},
        {"Nope": [{"hooks": [{"command": "x"}]}]},
        {"Stop": [{"hooks": [{"command": "x", "timeout": 5000}]}]},
        {"Stop": [{"matcher": 5, "hooks": []}]},
        {"Stop": [{"hooks": [{"command": ""}]}]},
        {"Stop": [{"hooks": [{"command": "x", "timeout": 0}]}]},
        {"Stop": [{"hooks": [{"command": "x", "timeout": True}]}]},
        {"Stop": [{"hooks": [{"command": "x", "async": "yes"}]}]},
        {"Stop": [{"hooks": [{"command": "x", "sandbox": "off"}]}]},
        {"Stop": [{"hooks": [{"command": "x", "if": 3}]}]},
        {"Stop": [{"hooks": "x"}]},
        {"Stop": {}},
        *HOOKS_SCHEMA_LOOSER,
    ],
)
def test_the_hook_entry_model_and_the_hooks_grammar_agree(hooks: dict[str, Any]) -> None:
    """``core.config.hooks.parse_hooks`` (the run-time check, its plain fields read from the
    table) and the hooks section's model accept and refuse the same sections."""
    from codebot_mcp.core.config.hooks import parse_hooks
    from codebot_mcp.core.hooks.hooksection import section_model

    try:
        parse_hooks(FILE, {"hooks": hooks})
        parsed = True
    except SettingsError as exc:
        parsed = False
        assert exc.message.startswith("'hooks.") and str(FILE) in exc.message, exc.message
    modelled = _accepts(section_model(), {"hooks": hooks}, warned=False)
    if hooks in HOOKS_SCHEMA_LOOSER:
        assert modelled and not parsed
    else:
        assert parsed == modelled, hooks


SECTION_FIELDS = [
    name
    for name in keytable.FIELDS
    if name.split(".")[0] in ("images", "checkpoints", "telemetry", "sandbox")
]
NULL_IS_LEFT_OUT = ("telemetry.endpoint", "telemetry.protocol", "telemetry.headers")
NULL_IS_LEFT_OUT += ("telemetry.service_name",)
"""Where the loader reads ``null`` as left out (as it always did) and the model refuses it."""
BLANK = ("telemetry.endpoint", "telemetry.service_name")
"""Where the loader refuses a blank string the model's least length lets through."""


@pytest.mark.parametrize("name", SECTION_FIELDS)
def test_a_section_field_is_checked_as_its_model_checks_it(name: str) -> None:
    """Each field of an object section, given every kind of value: the row's parser and the
    model agree, and a refusal names the file and the field's path, with a hint."""
    section, field = name.split(".")
    key = sections.by_name()[section]
    model = next(s for s in SECTIONS if section in {k.name for k in s.keys}).model()
    assert key.parse is not None or section == "sandbox"
    for value in [*CANDIDATES, " "]:
        try:
            if section == "sandbox":
                sandboxing.parse_sandbox(FILE, {field: value})
            else:
                assert key.parse is not None
                key.parse(FILE, section, {field: value})
            parsed = True
        except SettingsError as exc:
            parsed = False
            assert exc.message.startswith(f"'{name}") and str(FILE) in exc.message, exc.message
            assert exc.hint and exc.hint.startswith("Write it as"), exc.hint
        verdict = _accepts(model, {section: {field: value}}, warned=False)
        if value is None and name in NULL_IS_LEFT_OUT:
            assert parsed and not verdict
        elif value == " " and name in BLANK:
            assert verdict and not parsed
        else:
            assert parsed == verdict, (name, value)


@pytest.mark.parametrize(
    ("section", "value", "message", "hint"),
    [
        (
            "images",
            {"max_bytes": 0},
            "'images.max_bytes' in {f} must be a positive integer, found 0",
            'Write it as "images": {"max_bytes": 5242880}.',
        ),
        (
            "checkpoints",
            [],
            "'checkpoints' in {f} must be an object, found an array",
            'Write it as "checkpoints": {"enabled": true, "max_files": 20000, "max_size_mb": 200}.',
        ),
        (
            "telemetry",
            {"headers": {"a": 1}},
            "'telemetry.headers' in {f} must be an object of strings, found an object with a "
            "non-string value",
            'Write it as "telemetry": {"headers": {"x-api-key": "${OTEL_API_KEY}"}}.',
        ),
        (
            "sandbox",
            {"mode": "tight"},
            '\'sandbox.mode\' in {f} must be one of "read-only", "workspace-write", "off", found '
            '"tight"',
            'Write it as "sandbox": {"mode": "read-only"} (or "workspace-write", "off").',
        ),
    ],
)
def test_a_section_fields_error_names_the_file_the_path_the_problem_and_a_hint(
    section: str, value: Any, message: str, hint: str
) -> None:
    from codebot_mcp.core.config.fieldcheck import check_section

    with pytest.raises(SettingsError) as caught:
        if section == "sandbox":
            sandboxing.parse_sandbox(FILE, value)
        else:
            check_section(FILE, section, value)
    assert caught.value.message == message.format(f=FILE)
    assert caught.value.hint == hint
