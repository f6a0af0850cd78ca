"""``codebot mcp install``: from a ``server.json`` to the settings entry that runs it.

A server offers remotes and packages. A Streamable HTTP remote fits as it is (the older SSE
transport does not: codebot speaks Streamable HTTP); a package fits when its runtime
(``npx``, ``uvx``, ``docker``, ``dnx``) is on PATH and it talks stdio; an MCP bundle
(``mcpb``) fits when the registry gives the sha256 to check its download against.

The command line is built as a list, never through a shell: the runtime, the runtime's
arguments (``docker run -i --rm`` first, ``npx -y``), the identifier at the exact version
(``pkg@1.2.3``, ``pkg==1.2.3``, ``image:1.2.3``), then the package's arguments. A named
argument is two words (``--port 8080``): ``docker -e NAME=value`` takes no ``=`` form. The
entry records where it came from (``provenance``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from codebot_mcp.core.config.provenance import PROVENANCE_KEY
from codebot_mcp.core.config.settings import LOOPBACK_HOSTS
from codebot_mcp.core.proc.lookup import find_command
from codebot_mcp.core.registry.inputs import Question, escape
from codebot_mcp.core.registry.serverjson import Input, Package, ServerInfo, Transport

RUNTIMES: dict[str, str] = {"npm": "npx", "pypi": "uvx", "oci": "docker", "nuget": "dnx"}
"""The runtime of each package type when ``runtimeHint`` names none."""
KNOWN_RUNTIMES = ("npx", "uvx", "docker", "dnx")
RISKY_ENV = re.compile(
    r"^(PATH|LD_\w+|DYLD_\w+|PYTHONPATH|PYTHONSTARTUP|PYTHONHOME|NODE_OPTIONS|NODE_PATH|"
    r"BASH_ENV|ENV|PERL5OPT|RUBYOPT|GIT_\w+)$"
)
"""Variables that change what a program loads: a server.json setting one is pointed out."""
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_WORD = re.compile(r"^[^\s-][^\s]*$")
"""An identifier or version that cannot pass for an option (``--registry=...``)."""


@dataclass(frozen=True, slots=True)
class Option:
    """One way to run the server: a remote or a package, and whether it fits here."""

    kind: Literal["remote", "package"]
    index: int
    """In ``remotes`` or ``packages``."""
    label: str
    runtime: str | None = None
    """``npx``, ``uvx``, ``docker`` or ``dnx`` for a package run by one."""
    fits: bool = True
    reason: str | None = None
    """Why it does not fit."""

    @property
    def via(self) -> str:
        """``remote``, or the package's type (``npm``, ``pypi``, ``oci``, ``nuget``, ``mcpb``)."""
        return "remote" if self.kind == "remote" else self.label.split(" ", 1)[0]


def _remote_option(index: int, remote: Transport) -> Option:
    label = f"remote {remote.type} {remote.url or '?'}"
    if remote.type == "sse":
        return Option(
            "remote",
            index,
            label,
            fits=False,
            reason="the older SSE transport (codebot speaks "
            "Streamable HTTP; many servers serve it at /mcp beside /sse)",
        )
    if remote.type != "streamable-http" or not remote.url:
        return Option("remote", index, label, fits=False, reason=f"transport '{remote.type}'")
    return Option("remote", index, label)


def _package_option(index: int, package: Package, cwd: Path) -> Option:
    label = f"{package.registry_type} {package.identifier}"
    if package.version:
        label += f" {package.version}"

    def unfit(reason: str, runtime: str | None = None) -> Option:
        return Option("package", index, label, runtime, fits=False, reason=reason)

    if package.transport.type != "stdio":
        return unfit(
            f"it serves {package.transport.type} itself (codebot starts stdio packages only)"
        )
    if not _WORD.match(package.identifier) or (
        package.version is not None and not _WORD.match(package.version)
    ):
        return unfit("its identifier or version is not one word, or starts with '-'")
    if package.registry_type == "mcpb":
        if not package.file_sha256 or not re.fullmatch(r"[0-9a-f]{64}", package.file_sha256):
            return unfit("the registry gives no fileSha256 to check the download against")
        if not _downloadable(package.identifier):
            return unfit("its URL is not https")
        return Option("package", index, label + " (bundle)")
    runtime = package.runtime_hint or RUNTIMES.get(package.registry_type)
    if runtime is None:
        return unfit(f"no runtime is known for {package.registry_type} packages")
    if runtime not in KNOWN_RUNTIMES:
        return unfit(f"runtime '{runtime}' is not one codebot runs ({', '.join(KNOWN_RUNTIMES)})")
    if find_command(runtime, cwd, {}) is None:
        return unfit(f"it needs '{runtime}', which is not on PATH", runtime)
    return Option("package", index, f"{label} ({runtime})", runtime)


def _downloadable(url: str) -> bool:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS)


def options(server: ServerInfo, cwd: Path) -> list[Option]:
    """Every way to run ``server``, in the order install prefers: Streamable HTTP remotes,
    SSE remotes (they never fit), then packages as the publisher lists them."""
    remotes = [_remote_option(i, r) for i, r in enumerate(server.remotes)]
    remotes.sort(key=lambda o: not o.fits)
    return [*remotes, *(_package_option(i, p, cwd) for i, p in enumerate(server.packages))]


def takes_value(item: Input) -> bool:
    """An input without a fixed value that asks for one (a named argument with nothing to
    describe it is a bare flag, always passed)."""
    if item.value is not None:
        return False
    if item.kind != "named":
        return True
    return bool(
        item.description
        or item.default is not None
        or item.choices
        or item.is_required
        or item.placeholder
        or item.is_secret
        or item.value_hint
        or item.format != "string"
    )


def _where(item: Input) -> str:
    if item.kind == "env":
        return f"environment variable {item.name}"
    if item.kind == "header":
        return f"header {item.name}"
    if item.kind == "named":
        return f"argument {item.name}"
    if item.kind == "positional":
        return f"argument <{item.value_hint or '?'}>"
    return f"variable {{{item.name}}}"


def _walk(server: ServerInfo, option: Option) -> list[tuple[str, Input]]:
    """(key, input) of every input of the option, in the order they are asked."""
    found: list[tuple[str, Input]] = []
    if option.kind == "remote":
        remote = server.remotes[option.index]
        found += [(f"url.{name}", item) for name, item in remote.variables]
        found += [(f"header[{i}]", h) for i, h in enumerate(remote.headers)]
        return found
    package = server.packages[option.index]
    for prefix, items in (
        ("runtime", package.runtime_arguments),
        ("package", package.package_arguments),
        ("env", package.environment_variables),
    ):
        found += [(f"{prefix}[{i}]", item) for i, item in enumerate(items)]
    return found


def questions(
    server: ServerInfo, option: Option, extra: list[Question] | None = None
) -> list[Question]:
    """What the option needs answered: each input without a fixed value, and the
    ``{variables}`` of those with one (``extra``: a bundle's own settings)."""
    out: list[Question] = []
    for key, item in _walk(server, option):
        if key.startswith("url."):
            out.append(Question(key, item, f"variable {{{item.name}}} of the URL"))
        elif item.value is not None:
            for name, variable in item.variables:
                out.append(Question(f"{key}.{name}", variable, f"{{{name}}} in {_where(item)}"))
        elif takes_value(item):
            out.append(Question(key, item, _where(item)))
    return [*out, *(extra or [])]


def _template(text: str, key: str, names: set[str], answers: Mapping[str, list[str]]) -> str:
    """``text`` with its ``{variables}`` answered; the rest written literally (escaped as a
    whole: ``$`` + ``{X}`` is the ``${X}`` a publisher wrote, never an expansion)."""
    out: list[str] = []
    literal = ""
    position = 0
    for match in _PLACEHOLDER.finditer(text):
        literal += text[position : match.start()]
        position = match.end()
        name = match.group(1)
        if name not in names:  # an unknown {x} stays as written (the schema says so)
            literal += match.group(0)
            continue
        values = answers.get(f"{key}.{name}") or [""]
        out += [escape(literal), values[0]]
        literal = ""
    return "".join([*out, escape(literal + text[position:])])


def _values(item: Input, key: str, answers: Mapping[str, list[str]]) -> list[str]:
    if item.value is not None:
        return [_template(item.value, key, {n for n, _ in item.variables}, answers)]
    return list(answers.get(key, [])) if takes_value(item) else []


def _arguments(
    items: tuple[Input, ...], prefix: str, answers: Mapping[str, list[str]]
) -> list[str]:
    out: list[str] = []
    for i, item in enumerate(items):
        values = _values(item, f"{prefix}[{i}]", answers)
        if item.kind != "named":
            out += values
        elif item.name:
            if item.value is None and not takes_value(item):
                out.append(escape(item.name))  # a bare flag
            for value in values:
                out += [escape(item.name), value]
    return out


def identifier_at_version(package: Package, runtime: str) -> str:
    """The package as its runtime names one exact version."""
    ident, version = package.identifier, package.version
    if not version:
        return ident
    if runtime == "uvx":
        return f"{ident}=={version}"
    if runtime == "docker":
        tagged = "@sha256:" in ident or ":" in ident.rsplit("/", 1)[-1]
        return ident if tagged else f"{ident}:{version}"
    return f"{ident}@{version}"


@dataclass(slots=True)
class Draft:
    """The entry install would write, and what the user must know about it."""

    entry: dict[str, Any]
    secrets: list[Question] = field(default_factory=list[Question])
    """The secret inputs the entry reads from the environment (one per variable)."""
    notes: list[str] = field(default_factory=list[str])


def _env(
    items: tuple[Input, ...], answers: Mapping[str, list[str]], notes: list[str]
) -> dict[str, str]:
    env: dict[str, str] = {}
    for i, item in enumerate(items):
        values = _values(item, f"env[{i}]", answers)
        if not item.name or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", item.name):
            notes.append(f"skipped an environment variable with an invalid name: {item.name!r}")
        elif values:
            env[item.name] = values[0]
            if RISKY_ENV.match(item.name):
                notes.append(
                    f"it sets {item.name}, which changes what programs load: check its value"
                )
    return env


def package_entry(
    package: Package, runtime: str, answers: Mapping[str, list[str]], notes: list[str]
) -> dict[str, Any]:
    """``command``, ``args`` and ``env`` that run a package through its runtime."""
    runtime_args = _arguments(package.runtime_arguments, "runtime", answers)
    package_args = _arguments(package.package_arguments, "package", answers)
    env = _env(package.environment_variables, answers, notes)
    ident = escape(identifier_at_version(package, runtime))
    if not package.version and "@sha256:" not in package.identifier:
        notes.append("the package has no version: it runs whatever is newest when it starts")
    if runtime == "npx":
        yes = [] if {"-y", "--yes"} & set(runtime_args) else ["-y"]
        args = [*yes, *runtime_args, ident, *package_args]
    elif runtime == "docker":
        passed = [word for name in env for word in ("-e", name)]  # into the container
        args = ["run", "-i", "--rm", *runtime_args, *passed, ident, *package_args]
    elif runtime == "dnx":
        args = [*runtime_args, ident, "--yes", *(["--"] if package_args else []), *package_args]
    else:
        args = [*runtime_args, ident, *package_args]
    entry: dict[str, Any] = {"command": runtime, "args": args}
    if env:
        entry["env"] = env
    return entry


def remote_entry(
    remote: Transport, answers: Mapping[str, list[str]], notes: list[str]
) -> dict[str, Any]:
    """``type``, ``url`` and ``headers`` of a Streamable HTTP remote."""
    url = _template(remote.url or "", "url", {n for n, _ in remote.variables}, answers)
    headers: dict[str, str] = {}
    for i, item in enumerate(remote.headers):
        values = _values(item, f"header[{i}]", answers)
        if not item.name or not _HEADER_NAME.match(item.name):
            notes.append(f"skipped a header with an invalid name: {item.name!r}")
        elif values:
            headers[item.name] = values[0]
    if url.startswith("http://"):
        notes.append("the URL is plain http: anyone on the way can read the traffic")
    entry: dict[str, Any] = {"type": "http", "url": url}
    if headers:
        entry["headers"] = headers
    return entry


def provenance(server: ServerInfo, option: Option) -> dict[str, Any]:
    """The ``provenance`` the entry records: registry, name, version, package or remote."""
    out: dict[str, Any] = {"registry": server.registry, "name": server.name}
    out["version"] = server.version
    if option.kind == "remote":
        remote = server.remotes[option.index]
        out["remote"] = {"type": remote.type, "url": remote.url or ""}
    else:
        package = server.packages[option.index]
        chosen = {"registryType": package.registry_type, "identifier": package.identifier}
        if package.version:
            chosen["version"] = package.version
        if package.file_sha256:
            chosen["fileSha256"] = package.file_sha256
        out["package"] = chosen
    return out


def draft(
    server: ServerInfo,
    option: Option,
    asked: list[Question],
    answers: Mapping[str, list[str]],
    *,
    bundle_entry: dict[str, Any] | None = None,
) -> Draft:
    """The entry for the chosen option and the answers (``bundle_entry``: a bundle's
    ``command``/``args``/``env``/``cwd``, which the package's own arguments extend)."""
    notes: list[str] = []
    if option.kind == "remote":
        entry = remote_entry(server.remotes[option.index], answers, notes)
    elif bundle_entry is not None:
        package = server.packages[option.index]
        entry = dict(bundle_entry)
        extra = _arguments(package.package_arguments, "package", answers)
        if extra:
            entry["args"] = [*entry.get("args", []), *extra]
        env = {**entry.get("env", {}), **_env(package.environment_variables, answers, notes)}
        if env:
            entry["env"] = env
    else:
        assert option.runtime is not None
        entry = package_entry(server.packages[option.index], option.runtime, answers, notes)
    if server.description:
        entry["description"] = server.description[:200]
    entry[PROVENANCE_KEY] = provenance(server, option)
    secrets = list({q.variable: q for q in asked if q.secret}.values())
    return Draft(entry, secrets, notes)


def default_name(server_name: str) -> str:
    """The local name of a server: the last part of its registry name, made a valid server
    name (``io.github.example/weather-mcp`` → ``weather-mcp``)."""
    tail = server_name.rsplit("/", 1)[-1]
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", tail)
    name = re.sub(r"_{2,}", "_", name).strip("-_")[:40].strip("-_")
    return name or "server"
