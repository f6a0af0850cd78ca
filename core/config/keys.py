"""The table of settings keys, assembled from the sections the features register
(:mod:`.sections`), and what every reader of keys shares.

Parsing (:func:`parse_scalars`), the unknown-key warning with its "did you mean"
(:func:`unknown_keys`), the defaults (:func:`default`, used by ``Settings``), trust gating
(:func:`gated_keys`), ``docs/settings.schema.json`` (:func:`json_schema`, from the sections'
pydantic models; ``python -m codebot_mcp.core.config.keys`` prints it, and a test checks the
checked-in copy is current) and the key reference of ``docs/settings.md``
(:func:`key_reference`; ``--reference``) all read the registered sections. :data:`KEYS`,
:data:`BY_NAME` and :data:`TOP_LEVEL_KEYS` are computed on first use, once the features have
registered.

The kernel's own keys are declared here: the agent loop's limits (``max_turns``,
``tool_result_max_tokens``, ``tool_search``, ``usage_line_after``, ``subagent_depth``), the
approval gate's ``permissions`` and ``$schema``. A scalar key of any section is checked by
:func:`check`, driven by its model's field as the generated :mod:`.keytable` holds it (type,
enum values, bounds), which words the errors users see (:mod:`.fieldcheck`, which checks an
object section's fields the same way); :func:`roots` and :func:`aliases` are the shared
parsers of the other kinds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from codebot_mcp.core.config.fieldcheck import fields, refusal, values
from codebot_mcp.core.config.keytable import KEYS as _TABLE
from codebot_mcp.core.config.keytable import Spec
from codebot_mcp.core.config.sections import (
    NOT_SET,
    Key,
    Section,
    Trust,
    by_name,
    register,
    row,
    sections,
)
from codebot_mcp.core.errors import SettingsError
from codebot_mcp.core.jsonutil import json_type

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["Key", "Trust"]


def check(path: Path, key: str, value: Any) -> Any:
    """A scalar key's value, checked against its model's field as :mod:`.keytable` holds it
    (:func:`refusal`) and returned as ``Settings`` holds it (an empty string as None, a number
    of seconds as a float).

    Raises:
        SettingsError: the value is not one the model takes (naming the file and the key).
    """
    spec = _TABLE[key]
    if value is None and "null" in spec.types:
        return None
    problem = refusal(spec, value)
    if problem is not None:
        raise SettingsError(f"'{key}' in {path} {problem}", hint=_hint(spec))
    if spec.types[0] == "string" and not spec.enum:
        return value or None
    if spec.types[0] == "number":
        return float(value)
    return value


def _hint(spec: Spec) -> str:
    """How to write a top-level scalar key."""
    key = spec.name
    if spec.enum and "boolean" in spec.types:
        return f'Write it as "{key}": {json.dumps(spec.default)} (the default), true or false.'
    if spec.enum:
        return f'Write it as "{key}": "{spec.enum[-1]}", or leave it out for the default.'
    kind = spec.types[0]
    if kind == "boolean":
        return f'Write it as "{key}": false, or leave it out for the default.'
    if kind == "string":
        return f'Write it as "{key}": "...".'
    if kind == "integer":
        return f'Write it as "{key}": {max(int(spec.minimum or 0), 50)}.'
    return f'Write it as "{key}": 600.'


def roots(path: Path, key: str, value: Any) -> tuple[Path, ...]:
    """Relative to the project root (a project file) or to the home directory (global)."""
    if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        raise SettingsError(
            f"'{key}' in {path} must be a list of directory paths, found {json_type(value)}",
            hint=f'Write it as "{key}": ["~/src/shared", "../docs"].',
        )
    base = path.parent.parent if path.parent.name == ".codebot" else Path.home()
    return tuple((base / Path(r).expanduser()).resolve() for r in value)


MODEL_APIS: tuple[str, ...] = values("api")
"""The two wire formats of the model API (``api``; ``--api`` on ``chat``)."""
REASONING_EFFORTS: tuple[str, ...] = values("reasoning_effort")
"""The values of ``reasoning_effort`` (``--effort`` on ``chat``)."""


def aliases(path: Path, key: str, value: Any) -> Mapping[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and k and v for k, v in value.items()
    ):
        raise SettingsError(
            f"'{key}' in {path} must be an object of model names, found {json.dumps(value)}",
            hint=f'Write it as "{key}": {{"sonnet": "gpt-4o", "haiku": "gpt-4o-mini"}}.',
        )
    return dict(value)


DEFAULT_MAX_TURNS = 50
DEFAULT_TOOL_RESULT_MAX_TOKENS = 25_000
DEFAULT_MAX_TOKENS = 8192
"""Output tokens per model turn (``max_tokens``): a long file fits, a runaway does not."""
DEFAULT_USAGE_LINE_AFTER = 100_000
"""Session tokens after which the REPL prints a usage line after each answer."""
DEFAULT_WARM_IDLE_TIMEOUT = 600.0
"""Seconds a warm holder (``codebot mcp warm``) stays up without a request."""
DEFAULT_SUBAGENT_DEPTH = 1
"""How deep ``task`` may nest: 1 lets the main agent start subagents, and them none."""
DEFAULT_REGISTRY_URL = "https://registry.modelcontextprotocol.io"
"""The official MCP Registry, where ``mcp search`` and ``mcp install`` look by default."""

PERMISSION_TRUST: Mapping[str, Trust] = {"allow": "gated", "ask": "free", "deny": "free"}
"""``permissions`` is a section: ``allow`` lets tools run unasked (gated); ``ask`` and
``deny`` only make codebot more careful (free)."""
PERMISSION_KEYS: tuple[str, ...] = fields("permissions")
"""Its lists, as its model declares them (each has its trust in :data:`PERMISSION_TRUST`)."""
SERVER_KEYS = ("mcp_servers", "mcpServers")


@cache
def _kernel_model() -> type[BaseModel]:
    """The kernel's keys as a pydantic model (built on demand: see :mod:`.sections`)."""
    from typing import Annotated

    from pydantic import BaseModel, ConfigDict, Field

    positive = Annotated[int, Field(ge=1)]
    counted = Annotated[int, Field(ge=0)]

    class Permissions(BaseModel):
        model_config = ConfigDict(extra="forbid")
        allow: list[str] = Field(default_factory=list[str])
        ask: list[str] = Field(default_factory=list[str])
        deny: list[str] = Field(default_factory=list[str])

    class KernelSection(BaseModel):
        model_config = ConfigDict(extra="forbid", populate_by_name=True)
        max_turns: positive = Field(
            default=DEFAULT_MAX_TURNS,
            description="Model turns per prompt before the agent stops (exit 6).",
            examples=[20],
        )
        tool_result_max_tokens: positive = Field(
            default=DEFAULT_TOOL_RESULT_MAX_TOKENS,
            description="A tool result longer than this is cut before the model sees it.",
            examples=[10_000],
        )
        tool_search: Literal["auto"] | bool = Field(
            default="auto",
            description='Defer MCP tool schemas behind search_tools: "auto", true or false.',
            examples=[False],
        )
        usage_line_after: counted = Field(
            default=DEFAULT_USAGE_LINE_AFTER,
            description="Session tokens after which the REPL prints a usage line after each "
            "answer.",
            examples=[50_000],
        )
        subagent_depth: counted = Field(
            default=DEFAULT_SUBAGENT_DEPTH,
            description="How deep the task tool may nest subagents (0: no task tool).",
            examples=[0],
        )
        permissions: Permissions = Field(
            default_factory=Permissions,
            description="Tool-name patterns: allow (runs without asking; needs trust in a "
            "project file), ask, deny (deny wins over ask, ask over allow).",
            examples=[{"allow": ["mcp__docs__*"], "deny": ["bash"]}],
        )
        schema_: str = Field(
            default=NOT_SET,
            alias="$schema",
            description="The JSON Schema of this file, for editors.",
            examples=["../docs/settings.schema.json"],
        )

    return KernelSection


register(
    Section(
        "kernel",
        (
            row("max_turns", check),
            row("tool_result_max_tokens", check),
            row("tool_search", check),
            row("usage_line_after", check),
            row("subagent_depth", check),
            row("permissions", hints=True),  # trust per list: PERMISSION_TRUST
            row("$schema", trust="free"),
        ),
        _kernel_model,
        order=30,
    )
)


def __getattr__(name: str) -> Any:
    """``KEYS``, ``BY_NAME``, ``TOP_LEVEL_KEYS`` and ``SECTION_KEYS``: the registered table."""
    if name == "KEYS":
        return tuple(by_name().values())
    if name == "BY_NAME":
        return by_name()
    if name == "TOP_LEVEL_KEYS":
        return tuple(by_name())
    if name == "SECTION_KEYS":
        return {k.name: k.keys for k in by_name().values() if k.keys is not None}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def default(name: str) -> Any:
    """The default of a key (what applies when no file sets it)."""
    return by_name()[name].default


def example(name: str) -> Any:
    """A valid value of a key other than its default: its model field's example (this
    builds the models: for the docs and the tests, not for a command's path)."""
    for section in sections():
        for field_name, field in section.model().model_fields.items():
            if (field.alias or field_name) == name:
                return (field.examples or [None])[0]
    raise KeyError(name)


def parse_scalars(path: Path, data: Mapping[str, Any]) -> dict[str, Any]:
    """Every key of ``data`` with a parser, checked, as ``Settings`` attributes.

    Raises:
        SettingsError: a value has the wrong type or range (naming the file and key).
    """
    out: dict[str, Any] = {}
    for key in by_name().values():
        if key.parse is not None and key.attribute is not None and key.name in data:
            out[key.attribute] = key.parse(path, key.name, data[key.name])
    return out


def gated_keys(data: Mapping[str, Any]) -> list[str]:
    """The keys of a project file that wait for trust, in table order (``permissions`` is
    reported per section: ``permissions.allow``). Server tables are trusted per server, by
    ``core.config.trust``, and are not listed here."""
    out = [
        k.name
        for k in by_name().values()
        if k.name in data and k.trust == "gated" and k.name not in (*SERVER_KEYS, "permissions")
    ]
    section = data.get("permissions")
    if isinstance(section, dict):
        out += [
            f"permissions.{name}"
            for name, trust in PERMISSION_TRUST.items()
            if trust == "gated" and section.get(name)
        ]
    return out


@dataclass(frozen=True, slots=True)
class SettingWarning:
    """A top-level (or section) key codebot does not know, kept as data."""

    file: Path
    key: str
    """As written, with its section: ``permisions``, ``permissions.dney`` or
    ``checkpoints.max_size``."""
    message: str

    def __str__(self) -> str:
        return self.message


def unknown_keys(path: Path, data: Mapping[str, Any]) -> list[SettingWarning]:
    """A warning for each top-level or section key codebot does not know (the sections with
    ``keys``: ``permissions``, ``sandbox``, ``checkpoints``, ``telemetry``)."""

    def one(key: str, known: tuple[str, ...], where: str) -> SettingWarning:
        import difflib  # only for a key codebot does not know: not on the warm path

        close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
        suggestion = f" (did you mean '{where}{close[0]}'?)" if close else ""
        message = f"unknown setting '{where}{key}' in {path} is ignored{suggestion}"
        return SettingWarning(path, where + key, message)

    table = by_name()
    known = tuple(table)
    out = [one(k, known, "") for k in data if k not in table]
    out += [
        SettingWarning(
            path,
            k,
            f"'{k}' in {path} is ignored: only the managed settings file may set it "
            "(docs/managed-settings.md)",
        )
        for k in data
        if k in table and table[k].managed_only
    ]
    for key in table.values():
        section = data.get(key.name)
        if key.keys is not None and isinstance(section, dict):
            out += [one(str(k), key.keys, f"{key.name}.") for k in section if k not in key.keys]
    return out


def _untitled(schema: Any) -> Any:
    """``schema`` without pydantic's ``title`` of every model and field (noise to a reader)."""
    if isinstance(schema, dict):
        return {
            k: _untitled(v) for k, v in schema.items() if k != "title" or not isinstance(v, str)
        }
    if isinstance(schema, list):
        return [_untitled(v) for v in schema]
    return schema


def json_schema() -> dict[str, Any]:
    """The JSON Schema of ``settings.json``, from the sections' models (each key's help and
    whether a project file needs trust for it)."""
    table = by_name()
    properties: dict[str, Any] = {}
    defs: dict[str, Any] = {}
    for section in sections():
        schema = section.model().model_json_schema(by_alias=True)
        defs.update(schema.get("$defs", {}))
        for name, entry in schema["properties"].items():
            note = " Needs trust in a project file." if table[name].trust == "gated" else ""
            properties[name] = {**entry, "description": entry["description"] + note}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://codebot.invalid/settings.schema.json",
        "title": "codebot settings.json",
        "type": "object",
        "properties": _untitled(properties),
        "additionalProperties": False,
        "$defs": _untitled(dict(sorted(defs.items()))),
    }


def schema_text() -> str:
    """:func:`json_schema` as the checked-in file holds it."""
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


def _trust_words(key: Key) -> str:
    if key.managed_only:
        return "managed file only"
    if key.name == "permissions":
        return "allow needs trust; ask and deny apply at once"
    if key.name == "sandbox":
        return "tightening applies at once; widening needs trust"
    if key.name in SERVER_KEYS:
        return "each server needs trust"
    return "applies at once" if key.trust == "free" else "needs trust"


def key_reference() -> str:
    """The table of top-level keys in ``docs/settings.md`` (between its markers), from the
    sections' models: key, section, default, what a project file needs, meaning."""
    table = by_name()
    lines = [
        "| key | section | default | in a project file | meaning |",
        "|---|---|---|---|---|",
    ]
    for section in sections():
        for name, field in section.model().model_fields.items():
            key = table[field.alias or name]
            value = field.get_default(call_default_factory=True)
            if hasattr(value, "model_dump"):
                value = value.model_dump(mode="json", exclude_none=True)
            shown = "—" if value is None else f"`{json.dumps(value, ensure_ascii=False)}`"
            trust = _trust_words(key)
            meaning = (field.description or "").replace("|", "\\|")
            lines.append(f"| `{key.name}` | {section.name} | {shown} | {trust} | {meaning} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(key_reference() if sys.argv[1:] == ["--reference"] else schema_text())
