"""Where a server entry came from: the ``provenance`` key ``codebot mcp install`` writes.

An entry installed from an MCP Registry records the registry, the server's name and version
there, and what was chosen to run it, a package or a remote::

    "provenance": {
      "registry": "https://registry.modelcontextprotocol.io",
      "name": "io.github.example/weather-mcp",
      "version": "0.5.0",
      "package": {"registryType": "pypi", "identifier": "weather-mcp-server", "version": "0.5.0"}
    }

``codebot mcp lock`` pins it, and ``codebot mcp doctor`` asks the registry whether a newer
version exists. Nothing here decides what runs: the entry's ``command``/``url`` do.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

PROVENANCE_KEY = "provenance"
_PACKAGE_KEYS = ("registryType", "identifier", "version", "fileSha256")
_REMOTE_KEYS = ("type", "url")
_NAME = re.compile(r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$")
"""A registry server name (reverse-DNS namespace, one slash), as the registry's schema says."""


class ProvenanceError(Exception):
    """A ``provenance`` value codebot cannot read (the entry still runs)."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where an entry came from: a registry, a server there, one of its versions."""

    registry: str
    """The registry's base URL (``https://registry.modelcontextprotocol.io``)."""
    name: str
    """The server's name in the registry (``io.github.example/weather-mcp``)."""
    version: str
    """The server version that was installed."""
    package: Mapping[str, str] | None = None
    """The package chosen: ``registryType``, ``identifier``, ``version``, ``fileSha256``."""
    remote: Mapping[str, str] | None = None
    """The remote chosen: ``type`` and ``url`` (the template, before its variables)."""

    def as_dict(self) -> dict[str, Any]:
        """The JSON object written in the entry (and pinned in the lock)."""
        out: dict[str, Any] = {"registry": self.registry, "name": self.name}
        out["version"] = self.version
        if self.package is not None:
            out["package"] = dict(self.package)
        if self.remote is not None:
            out["remote"] = dict(self.remote)
        return out

    @property
    def what(self) -> str:
        """``npm @scope/pkg 1.0.2`` or ``remote https://host/mcp``, for messages."""
        if self.package is not None:
            parts = [self.package.get("registryType", "?"), self.package.get("identifier", "?")]
            if self.package.get("version"):
                parts.append(self.package["version"])
            return " ".join(parts)
        return f"remote {self.remote.get('url', '?') if self.remote else '?'}"


def parse_provenance(value: Any) -> Provenance:
    """Read a ``provenance`` object.

    Raises:
        ProvenanceError: it is not an object with a registry URL, a name, a version and
            exactly one of ``package`` and ``remote``.
    """
    hint = "Reinstall with `codebot mcp install NAME --force`, or remove 'provenance'."
    if not isinstance(value, dict):
        raise ProvenanceError("'provenance' must be an object", hint)
    data: dict[str, Any] = value
    for key in ("registry", "name", "version"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise ProvenanceError(f"'provenance.{key}' must be a non-empty string", hint)
    if not re.match(r"^https?://[^/\s]+", data["registry"]):
        raise ProvenanceError("'provenance.registry' must be an http(s) URL", hint)
    if not _NAME.fullmatch(data["name"]):
        raise ProvenanceError(
            "'provenance.name' must be a registry name like 'io.github.user/server'", hint
        )
    unknown = sorted(set(data) - {"registry", "name", "version", "package", "remote"})
    if unknown:
        raise ProvenanceError(f"unknown key 'provenance.{unknown[0]}'", hint)
    if ("package" in data) == ("remote" in data):
        raise ProvenanceError("'provenance' must have exactly one of 'package' and 'remote'", hint)
    section = "package" if "package" in data else "remote"
    keys = _PACKAGE_KEYS if section == "package" else _REMOTE_KEYS
    chosen = data[section]
    if not isinstance(chosen, dict) or not all(
        isinstance(k, str) and k in keys and isinstance(v, str) for k, v in chosen.items()
    ):
        raise ProvenanceError(
            f"'provenance.{section}' must be an object of strings with keys {', '.join(keys)}",
            hint,
        )
    fields: dict[str, str] = chosen
    return Provenance(
        data["registry"],
        data["name"],
        data["version"],
        package=fields if section == "package" else None,
        remote=fields if section == "remote" else None,
    )
