"""The sandbox's grammar, as the kernel reads it: a ``sandbox`` object's parts, checked, and a
stdio server entry's ``sandbox`` key.

The ``sandbox`` setting is the sandbox feature's section (``core.sandbox.sandboxsettings``:
its value, how the files combine, the managed policy's locks); what stays here is what the
kernel itself parses: a server entry carries a sandbox (:func:`parse_server_sandbox`,
:class:`ServerSandbox`, read by ``core.config.servers``), Claude Code's files name hosts
(:func:`normalize_pattern`), and one file's ``sandbox`` object is checked by the same rules
(:func:`parse_sandbox`, which the feature's section parses with)::

    "sandbox": {"mode": "workspace-write", "network": false, "writable": ["~/.cache/pip"],
                "deny_read": ["~/.config/mytool/token"]}

- ``mode``: ``read-only`` | ``workspace-write`` | ``off``; left out: ``workspace-write`` where
  the machine supports it (``core.sandbox.confinement`` decides), else off.
- ``network``: ``false`` (the default) = no network at all from inside, loopback included;
  ``true`` = the whole network; a list of host patterns (``["pypi.org", "*.npmjs.org"]``) =
  only those hosts, over HTTP and HTTPS through codebot's proxy (``core.sandbox.netproxy``:
  ``x`` is that host exactly, ``*.x`` any subdomain of ``x`` at any depth, not ``x`` itself).
- ``writable``: more directories a ``workspace-write`` command may write (``~`` expands;
  relative paths start at the project root for the project file, at home for the global one).
- ``deny_read``: more files and directories hidden from confined commands, on top of the
  built-in credential locations (``core.sandbox.confinement``); paths as for ``writable``.

A stdio server entry may set ``"sandbox": "read-only"`` or ``"workspace-write"`` (or an
object with ``mode``, ``network`` and ``writable``) to be started confined the same way.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from codebot_mcp.core.config.fieldcheck import check_section, fields, part_hint, refusal, values
from codebot_mcp.core.config.keytable import FIELDS
from codebot_mcp.core.config.sections import NOT_SET
from codebot_mcp.core.errors import SettingsError

if TYPE_CHECKING:
    from pydantic import BaseModel

MODES: tuple[str, ...] = values("sandbox.mode")
"""From the tightest to none, as the model lists them (:data:`Mode`)."""
DEFAULT_MODE = "workspace-write"
SANDBOX_KEYS: tuple[str, ...] = fields("sandbox")
"""The keys of a ``sandbox`` object, as its model declares them (unknown ones warn)."""
_LABEL = re.compile(r"^(?!-)[a-z0-9_-]{1,63}(?<!-)$")


@dataclass(frozen=True, slots=True)
class ServerSandbox:
    """A stdio server entry's ``sandbox``: it runs confined in ``mode``."""

    mode: str
    network: bool = False
    writable: tuple[Path, ...] = ()
    workspace: Path | None = None
    """The project root (or working directory) it may write in ``workspace-write``."""
    deny_read: tuple[Path, ...] = ()
    """More paths hidden from it (the built-in credential locations are hidden anyway)."""
    domains: tuple[str, ...] = ()
    """``network`` as a list: the host patterns it reaches through the proxy."""


class PatternError(ValueError):
    """A ``sandbox.network`` entry is not a host name pattern."""


def normalize_pattern(entry: str) -> str:
    """A ``sandbox.network`` entry, checked and in lower case: a host name (``pypi.org``), or
    ``*.`` and one (``*.npmjs.org``: any subdomain, at any depth, not the name itself).

    Raises:
        PatternError: it is not one of those (the message says why).
    """
    text = entry.strip().lower().rstrip(".")
    name = text[2:] if text.startswith("*.") else text
    if not name:
        raise PatternError(f"{entry!r} names no host")
    if "*" in name:
        raise PatternError(f"{entry!r}: '*' may only start a pattern, as '*.example.com'")
    if "/" in name or ":" in name:
        raise PatternError(f"{entry!r}: a host name only, without scheme, port or path")
    if not all(_LABEL.match(label) for label in name.split(".")) or len(name) > 253:
        raise PatternError(f"{entry!r} is not a host name (letters, digits, '-', '.')")
    if text.startswith("*.") and "." not in name:
        raise PatternError(f"{entry!r} would allow a whole top-level domain")
    return text


def base_of(path: Path) -> Path:
    """Where relative paths of a settings file start: the project root for a project file
    (``<root>/.codebot/settings.json``, ``<root>/.mcp.json``), home for the global one."""
    if path.parent.name == ".codebot" or path.name == ".mcp.json":
        return path.parent.parent if path.parent.name == ".codebot" else path.parent
    return Path.home()


class _BadEntryError(Exception):
    def __init__(self, key: str, problem: str, hint: str) -> None:
        super().__init__(problem)
        self.key = key
        self.problem = problem
        self.hint = hint


def _paths(value: Any, key: str, path: Path) -> tuple[Path, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _BadEntryError(
            key,
            f"must be a list of directory paths, found {_kind(value)}",
            'Write it as "writable": ["~/.cache/pip", "../shared"].',
        )
    base = base_of(path)
    items: list[str] = value
    return tuple((base / Path(v).expanduser()).resolve() for v in items)


def _deny_read(value: Any, key: str, path: Path) -> tuple[Path, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        found = _kind(value)
        if isinstance(value, list):
            found = "a list with an empty or non-string item"
        raise _BadEntryError(
            key,
            f"must be a list of file or directory paths, found {found}",
            'Write it as "deny_read": ["~/.config/mytool/token", ".env.local"].',
        )
    base = base_of(path)
    items: list[str] = value
    return tuple(Path(os.path.normpath(base / Path(v).expanduser())) for v in items)


def _mode(value: Any, key: str) -> str:
    """A server entry's ``mode``, checked by the section's field (the same values)."""
    spec = FIELDS["sandbox.mode"]
    problem = refusal(spec, value)
    if problem is not None:
        raise _BadEntryError(key, problem, part_hint(spec))
    return str(value)


def _network(value: Any, key: str) -> bool | tuple[str, ...]:
    """``true``, ``false``, or a list of host patterns (normalized, each once)."""
    hint = 'Write it as "network": false (no network), true, or ["pypi.org", "*.npmjs.org"].'
    if isinstance(value, bool):
        return value
    if not isinstance(value, list):
        raise _BadEntryError(
            key,
            f"must be true, false or a list of host names, found {json.dumps(value)}",
            hint,
        )
    items: list[Any] = value
    out: list[str] = []
    for index, item in enumerate(items):
        if not isinstance(item, str):
            raise _BadEntryError(
                f"{key}[{index}]", f"must be a host name, found {_kind(item)}", hint
            )
        try:
            out.append(normalize_pattern(item))
        except PatternError as exc:
            raise _BadEntryError(f"{key}[{index}]", f"is not a host pattern: {exc}", hint) from None
    return tuple(dict.fromkeys(out))


def network_parts(value: bool | tuple[str, ...]) -> tuple[bool, tuple[str, ...]]:
    """``network`` as written, as (the whole network, the domains through the proxy)."""
    if isinstance(value, tuple):
        return False, value
    return value, ()


_READERS: dict[str, Callable[[Path, str, Any], Any]] = {
    "network": lambda path, key, value: _network(value, key),
    "writable": lambda path, key, value: _paths(value, key, path),
    "deny_read": lambda path, key, value: _deny_read(value, key, path),
}
"""The fields of a ``sandbox`` object read by their own rules (``mode`` is plain: the table's)."""


def parse_sandbox(path: Path, value: Any) -> dict[str, Any]:
    """The keys of one file's ``sandbox`` setting that it sets, validated: ``mode`` by its
    model's field (``core.config.keys.check_section``), the others by :data:`_READERS`.

    Raises:
        SettingsError: it is not an object, or a key has the wrong type or value.
    """
    try:
        return check_section(path, "sandbox", value, own=_READERS)
    except _BadEntryError as exc:
        raise SettingsError(f"'{exc.key}' in {path} {exc.problem}", hint=exc.hint) from None


class EntrySandboxError(Exception):
    """A server entry's ``sandbox`` is invalid (the entry alone fails)."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def parse_server_sandbox(value: Any, source: Path, workspace: Path) -> ServerSandbox | None:
    """A stdio entry's ``sandbox``: a mode, or ``{"mode", "network", "writable",
    "deny_read"}``; None for ``"off"``.

    Raises:
        EntrySandboxError: the value is not one of those.
    """
    hint = 'Write it as "sandbox": "workspace-write" (or "read-only").'
    data: dict[str, Any]
    if isinstance(value, str):
        data = {"mode": value}
    elif isinstance(value, dict):
        data = value
        unknown = [k for k in data if k not in SANDBOX_KEYS]
        if unknown:
            raise EntrySandboxError(f"unknown key 'sandbox.{unknown[0]}'", hint)
    else:
        raise EntrySandboxError(
            f"'sandbox' must be a mode or an object, found {_kind(value)}", hint
        )
    try:
        mode = _mode(data.get("mode"), "sandbox.mode")
        network, domains = network_parts(_network(data.get("network", False), "sandbox.network"))
        writable = _paths(data.get("writable", []), "sandbox.writable", source)
        deny_read = _deny_read(data.get("deny_read", []), "sandbox.deny_read", source)
    except _BadEntryError as exc:
        raise EntrySandboxError(f"'{exc.key}' {exc.problem}", exc.hint) from None
    if mode == "off":
        return None
    return ServerSandbox(mode, network, writable, workspace, deny_read, domains)


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        int: "a number",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


Mode = Literal["read-only", "workspace-write", "off"]


@cache
def sandbox_model(*, server: bool = False) -> type[BaseModel]:
    """The ``sandbox`` object as a pydantic model; ``server``: a stdio entry's, where ``mode``
    is required (built on demand: see :mod:`.sections`)."""
    from typing import Annotated

    from pydantic import BaseModel, ConfigDict, Field

    Host = Annotated[str, Field(min_length=1)]

    class Sandbox(BaseModel):
        model_config = ConfigDict(extra="forbid")
        mode: Mode = NOT_SET
        network: bool | list[Host] = False
        writable: list[str] = Field(default_factory=list[str])
        deny_read: list[Host] = Field(default_factory=list[str])

    class ServerSandbox(Sandbox):
        mode: Mode

    return ServerSandbox if server else Sandbox
