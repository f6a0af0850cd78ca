"""``server.json`` as codebot reads it: a registry's ``ServerResponse`` as plain data.

The registry's OpenAPI (``/v0.1``) wraps each ``server.json`` (``ServerDetail``) in a
``ServerResponse`` whose ``_meta["io.modelcontextprotocol.registry/official"]`` carries the
status (``active``, ``deprecated``, ``deleted``), its message and ``isLatest``. Field names
are camelCase; the 2025-07 schema's snake_case (``registry_type``, ``environment_variables``)
is read too, since caches and older registries still hold it.

Everything here is a stranger's text: it is kept as data, typed defensively (a field of the
wrong type is dropped, never trusted), bounded in length, and escaped only when printed.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

OFFICIAL_META = "io.modelcontextprotocol.registry/official"
MAX_TEXT = 1000
"""Characters kept of a description or message (the schema allows 100 and 500)."""
MAX_ITEMS = 64
"""Packages, remotes, arguments or variables kept of one list: no real server needs more."""

InputKind = Literal["positional", "named", "env", "header", "variable"]
Status = Literal["active", "deprecated", "deleted"]
FORMATS = ("string", "number", "boolean", "filepath")


@functools.cache
def _snake(camel: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)


def _get(data: Mapping[str, Any], camel: str) -> Any:
    """``data[camel]``, or its snake_case spelling (``registryType`` → ``registry_type``)."""
    if camel in data:
        return data[camel]
    return data.get(_snake(camel))


def _text(data: Mapping[str, Any], camel: str, limit: int = MAX_TEXT) -> str | None:
    value = _get(data, camel)
    return value[:limit] if isinstance(value, str) else None


def _flag(data: Mapping[str, Any], camel: str) -> bool:
    return _get(data, camel) is True


def _objects(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        return []
    return [v for v in value[:MAX_ITEMS] if isinstance(v, dict)]


@dataclass(frozen=True, slots=True)
class Input:
    """One value a server needs: an argument, an environment variable, a header, or a
    ``{variable}`` of one of them (the schema's ``Input`` and its subtypes)."""

    kind: InputKind
    name: str | None = None
    """The flag of a named argument (``--port``), the variable's or header's name, or the
    key of a ``{variable}``; None for a positional argument."""
    value_hint: str | None = None
    """A positional argument's label (``target_dir``)."""
    description: str | None = None
    is_required: bool = False
    format: str = "string"
    value: str | None = None
    """Fixed by the publisher (its ``{variables}`` still asked); None: the user gives it."""
    is_secret: bool = False
    default: str | None = None
    placeholder: str | None = None
    choices: tuple[str, ...] = ()
    is_repeated: bool = False
    variables: tuple[tuple[str, Input], ...] = ()
    """The ``{name}`` placeholders of ``value`` (or of a remote's URL), in order."""

    @property
    def label(self) -> str:
        """How the user names it in ``--set LABEL=VALUE``."""
        if self.kind == "named" and self.name:
            return self.name.lstrip("-") or self.name
        return self.name or self.value_hint or "?"


def parse_input(data: Mapping[str, Any], kind: InputKind, name: str | None = None) -> Input:
    """One ``Input`` object (``name`` for a variable, whose key is its name)."""
    fmt = _get(data, "format")
    choices = _get(data, "choices")
    variables = _get(data, "variables")
    default = _get(data, "default")
    return Input(
        kind=kind,
        name=name if name is not None else _text(data, "name", 200),
        value_hint=_text(data, "valueHint", 200),
        description=_text(data, "description"),
        is_required=_flag(data, "isRequired"),
        format=fmt if fmt in FORMATS else "string",
        value=_text(data, "value"),
        is_secret=_flag(data, "isSecret"),
        default=default[:MAX_TEXT] if isinstance(default, str) else None,
        placeholder=_text(data, "placeholder"),
        choices=tuple(c[:200] for c in choices[:MAX_ITEMS] if isinstance(c, str))
        if isinstance(choices, list)
        else (),
        is_repeated=_flag(data, "isRepeated"),
        variables=_variables(variables),
    )


def _variables(value: Any) -> tuple[tuple[str, Input], ...]:
    if not isinstance(value, dict):
        return ()
    items = list(value.items())[:MAX_ITEMS]
    return tuple(
        (str(k), parse_input(v, "variable", str(k))) for k, v in items if isinstance(v, dict)
    )


def _argument(data: Mapping[str, Any]) -> Input:
    kind: InputKind = "named" if _get(data, "type") == "named" else "positional"
    return parse_input(data, kind)


@dataclass(frozen=True, slots=True)
class Transport:
    """How to talk to a server: ``stdio``, ``streamable-http`` or ``sse`` (with its URL
    template, headers and, for a remote, the URL's variables)."""

    type: str
    url: str | None = None
    headers: tuple[Input, ...] = ()
    variables: tuple[tuple[str, Input], ...] = ()


def _transport(data: Any) -> Transport:
    if not isinstance(data, dict):
        return Transport("stdio")
    kind = _get(data, "type") or _get(data, "transportType")  # type: ignore[arg-type]
    return Transport(
        kind if isinstance(kind, str) else "stdio",
        _text(data, "url", 2000),
        tuple(parse_input(h, "header") for h in _objects(_get(data, "headers"))),
        _variables(_get(data, "variables")),
    )


@dataclass(frozen=True, slots=True)
class Package:
    """One way to run the server locally: a package in npm, PyPI, an OCI registry, NuGet,
    or an MCP bundle (``mcpb``) at a URL."""

    registry_type: str
    identifier: str
    version: str | None = None
    registry_base_url: str | None = None
    file_sha256: str | None = None
    runtime_hint: str | None = None
    transport: Transport = field(default_factory=lambda: Transport("stdio"))
    runtime_arguments: tuple[Input, ...] = ()
    package_arguments: tuple[Input, ...] = ()
    environment_variables: tuple[Input, ...] = ()

    def inputs(self) -> list[Input]:
        """Every input, in the order they are asked."""
        return [*self.runtime_arguments, *self.package_arguments, *self.environment_variables]


def _package(data: Mapping[str, Any]) -> Package | None:
    kind = _text(data, "registryType", 50)
    identifier = _text(data, "identifier", 2000) or _text(data, "name", 2000)
    if kind is None or identifier is None:
        return None
    return Package(
        registry_type=kind,
        identifier=identifier,
        version=_text(data, "version", 255),
        registry_base_url=_text(data, "registryBaseUrl", 2000),
        file_sha256=_text(data, "fileSha256", 64),
        runtime_hint=_text(data, "runtimeHint", 50),
        transport=_transport(_get(data, "transport")),
        runtime_arguments=tuple(_argument(a) for a in _objects(_get(data, "runtimeArguments"))),
        package_arguments=tuple(_argument(a) for a in _objects(_get(data, "packageArguments"))),
        environment_variables=tuple(
            parse_input(e, "env") for e in _objects(_get(data, "environmentVariables"))
        ),
    )


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """One version of one server in one registry."""

    registry: str
    """The base URL of the registry it came from."""
    name: str
    version: str
    description: str = ""
    title: str | None = None
    website_url: str | None = None
    repository_url: str | None = None
    packages: tuple[Package, ...] = ()
    remotes: tuple[Transport, ...] = ()
    status: Status = "active"
    status_message: str | None = None
    is_latest: bool = True
    updated_at: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict[str, Any], repr=False, compare=False)
    """The ``ServerResponse`` as the registry sent it (what the cache keeps)."""

    def inputs(self) -> list[Input]:
        """Every input of every package and remote (with their variables), for the search
        view."""
        out: list[Input] = []
        for package in self.packages:
            out.extend(package.inputs())
        for remote in self.remotes:
            out.extend(v for _, v in remote.variables)
            out.extend(remote.headers)
        return [*out, *(v for i in out for _, v in i.variables)]

    @property
    def secrets(self) -> list[str]:
        """The labels of the secret inputs (API keys, tokens), once each."""
        return list(dict.fromkeys(i.label for i in self.inputs() if i.is_secret))

    def install_options(self) -> list[str]:
        """``npm @scope/pkg``, ``remote streamable-http``...: one short label per way to run
        it, for the search view."""
        out = [f"{p.registry_type} {p.identifier}" for p in self.packages]
        out += [f"remote {r.type}" for r in self.remotes]
        return out


def parse_server(data: Any, registry: str) -> ServerInfo | None:
    """A ``ServerResponse`` (or a bare ``server.json``) as data; None when it has no usable
    name and version (a broken entry in a list is skipped, not fatal)."""
    if not isinstance(data, dict):
        return None
    response: dict[str, Any] = data
    detail = response.get("server", response)
    if not isinstance(detail, dict):
        return None
    server: dict[str, Any] = detail
    name = _text(server, "name", 200)
    version = _text(server, "version", 255)
    if version is None:  # the 2025-07 schema's version_detail
        nested = _get(server, "versionDetail")
        version = _text(nested, "version", 255) if isinstance(nested, dict) else None
    if not name or not version:
        return None
    meta = response.get("_meta")
    official: Mapping[str, Any] = {}
    if isinstance(meta, dict) and isinstance(meta.get(OFFICIAL_META), dict):
        official = meta[OFFICIAL_META]
    status = official.get("status", server.get("status", "active"))
    repository = server.get("repository")
    return ServerInfo(
        registry=registry,
        name=name,
        version=version,
        description=_text(server, "description") or "",
        title=_text(server, "title", 200),
        website_url=_text(server, "websiteUrl", 2000),
        repository_url=_text(repository, "url", 2000) if isinstance(repository, dict) else None,
        packages=tuple(
            p for p in (_package(d) for d in _objects(server.get("packages"))) if p is not None
        ),
        remotes=tuple(_transport(r) for r in _objects(server.get("remotes"))),
        status=status if status in ("active", "deprecated", "deleted") else "active",
        status_message=_text(official, "statusMessage"),
        is_latest=official.get("isLatest", True) is not False,
        updated_at=_text(official, "updatedAt", 64),
        raw=response,
    )
