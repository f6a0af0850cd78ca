"""MCP bundles (``mcpb`` packages): download, check, unpack, and the command they run.

A bundle is a zip with a ``manifest.json`` whose ``server.mcp_config`` says how to start it.
The download is checked against the registry's ``fileSha256`` before anything else reads
it; a mismatch deletes it and installs nothing. Every later read (the manifest, the unpack
after you confirm) copies the archive into a private unlinked temporary file, checks the
sha256 of that copy and reads only the copy: the bytes unpacked are the bytes checked, even
if the cached file is replaced in between (a mismatch then refuses, naming the file).
Unpacking refuses links, absolute paths and ``..``, and stops at a size and file count no
real bundle reaches; the files land in ``<data dir>/bundles/<sha256>`` (by content: the same
bundle is unpacked once), moved there whole once every file is written, read-only, with the
sha256 of each file recorded beside it (``<sha256>.files.json``). An unpacked folder is
reused only when it still matches that record (no file changed, added or removed);
otherwise it is unpacked again from the checked archive, and the install says why.

The manifest's ``${__dirname}``, ``${HOME}``, ``${/}`` and ``${user_config.KEY}`` are
substituted; its ``user_config`` settings become install questions (a ``sensitive`` one is a
secret: the entry reads it from an environment variable).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import sys
import tempfile
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any

from codebot_mcp.core.config import paths
from codebot_mcp.core.errors import UsageError
from codebot_mcp.core.fsutil import atomic_write
from codebot_mcp.core.proc.lookup import find_command
from codebot_mcp.core.registry import http
from codebot_mcp.core.registry.http import RegistryError
from codebot_mcp.core.registry.inputs import Question, escape
from codebot_mcp.core.registry.serverjson import Input, Package
from codebot_mcp.core.secrets.redact import printable, redact_url

MAX_FILES = 20_000
MAX_UNPACKED_BYTES = 1 << 30
"""A bundle with its ``node_modules`` unpacks to hundreds of MB; past 1 GiB it is a bomb."""
MAX_MANIFEST_BYTES = 1 << 20
_FORMATS = {"number": "number", "boolean": "boolean", "directory": "filepath", "file": "filepath"}


@dataclass(slots=True)
class Bundle:
    """A downloaded bundle whose sha256 matched."""

    sha256: str
    archive: Path
    manifest: dict[str, Any]
    directory: Path
    """Where it is (or will be) unpacked."""
    settings: list[Question] = field(default_factory=list[Question])
    """Its ``user_config``, as questions."""
    url: str = ""
    """Where it was downloaded from (for messages)."""
    replaced: str | None = None
    """Set by :func:`unpack`: why an earlier unpacked folder was not reused."""


def _shown(url: str) -> str:
    return printable(redact_url(url), one_line=True)


def fetch(package: Package) -> Bundle:
    """Download the bundle and check it against ``fileSha256``; read its manifest.

    Raises:
        RegistryError: the download fails, its sha256 differs (the file is deleted), or it
            is not a bundle codebot can read.
    """
    expected = (package.file_sha256 or "").lower()
    cache = paths.cache_dir() / "bundles"
    paths.private_dir(cache)
    archive = cache / f"{expected}.mcpb"
    if not (archive.is_file() and _sha256(archive) == expected):
        handle, temp = tempfile.mkstemp(dir=cache, suffix=".part")
        try:
            with os.fdopen(handle, "wb") as sink:
                actual = http.download(package.identifier, sink)
            if actual != expected:
                raise RegistryError(
                    f"the bundle {_shown(package.identifier)} does not match the registry's "
                    f"sha256 (expected {expected}, got {actual}): nothing was installed",
                    hint="The file changed since it was published, or someone altered it on "
                    "the way; tell the server's publisher.",
                )
            os.replace(temp, archive)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)
    with verified(archive, expected, package.identifier) as data:
        manifest = _manifest(data, package.identifier)
    bundle = Bundle(expected, archive, manifest, paths.data_dir() / "bundles" / expected)
    bundle.settings = _settings(manifest)
    bundle.url = package.identifier
    return bundle


def verified(archive: Path, expected: str, url: str) -> IO[bytes]:
    """A private copy of ``archive`` (an unlinked temporary file, at its start) whose sha256
    is ``expected``: what is read from it is what was checked.

    Raises:
        RegistryError: the archive cannot be read, or is no longer the bundle checked.
    """
    import hashlib

    copy = tempfile.TemporaryFile(dir=paths.private_dir(archive.parent))
    digest = hashlib.sha256()
    try:
        with archive.open("rb") as source:
            while chunk := source.read(1 << 20):
                digest.update(chunk)
                copy.write(chunk)
        if digest.hexdigest() != expected:
            raise RegistryError(
                f"the downloaded bundle {archive} changed since it was checked against the "
                f"registry's sha256 (expected {expected}, got {digest.hexdigest()}) for "
                f"{_shown(url)}: nothing was installed",
                hint=f"Something rewrote codebot's cache; delete {archive} and run the "
                "install again (it downloads and checks the bundle anew).",
            )
    except OSError as exc:
        copy.close()
        raise RegistryError(f"cannot read the downloaded bundle {archive}: {exc}") from None
    except BaseException:
        copy.close()
        raise
    copy.seek(0)
    return copy


def _sha256(path: Path) -> str:
    import hashlib

    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _manifest(archive: IO[bytes], url: str) -> dict[str, Any]:
    problem = f"the bundle {_shown(url)} is not an MCP bundle codebot can read"
    try:
        with zipfile.ZipFile(archive) as bundle:
            info = bundle.getinfo("manifest.json")
            if info.file_size > MAX_MANIFEST_BYTES:
                raise RegistryError(f"{problem}: its manifest.json is too big")
            data = json.loads(bundle.read(info))
    except (KeyError, zipfile.BadZipFile, OSError, ValueError, RecursionError) as exc:
        raise RegistryError(f"{problem}: {printable(str(exc), one_line=True)}") from None
    if not isinstance(data, dict) or not isinstance(data.get("server"), dict):
        raise RegistryError(f"{problem}: its manifest has no 'server' object")
    manifest: dict[str, Any] = data
    return manifest


def _settings(manifest: Mapping[str, Any]) -> list[Question]:
    """The manifest's ``user_config`` as questions (key ``user_config.KEY``)."""
    config = manifest.get("user_config")
    if not isinstance(config, dict):
        return []
    out: list[Question] = []
    for key, spec in list(config.items())[:64]:
        if not isinstance(spec, dict) or not isinstance(key, str):
            continue
        default = spec.get("default")
        if isinstance(default, list):
            default = ",".join(str(d) for d in default)
        elif isinstance(default, bool):
            default = "true" if default else "false"
        elif default is not None:
            default = str(default)
        title, description = spec.get("title"), spec.get("description")
        text = ": ".join(str(t) for t in (title, description) if isinstance(t, str))
        item = Input(
            kind="variable",
            name=key,
            description=text[:1000] or None,
            is_required=spec.get("required") is True,
            format=_FORMATS.get(str(spec.get("type")), "string"),
            is_secret=spec.get("sensitive") is True,
            default=_home(default) if isinstance(default, str) else None,
            is_repeated=spec.get("multiple") is True,
        )
        out.append(Question(f"user_config.{key}", item, f"bundle setting {key}"))
    return out


def _home(text: str) -> str:
    home = str(Path.home())
    for name, value in (
        ("${HOME}", home),
        ("${DESKTOP}", os.path.join(home, "Desktop")),
        ("${DOCUMENTS}", os.path.join(home, "Documents")),
        ("${DOWNLOADS}", os.path.join(home, "Downloads")),
    ):
        text = text.replace(name, value)
    return text


def _substitute(text: str, directory: Path, answers: Mapping[str, list[str]]) -> str:
    """One manifest string with its ``${...}`` substituted, the rest written literally."""
    import re

    out: list[str] = []
    position = 0
    for match in re.finditer(r"\$\{([^}]*)\}", text):
        out.append(escape(_home(text[position : match.start()])))
        name = match.group(1)
        if name == "__dirname":
            out.append(escape(str(directory)))
        elif name in ("/", "pathSeparator"):
            out.append(os.sep)
        elif name.startswith("user_config."):
            out.append(",".join(answers.get(name, [])))
        else:
            out.append(escape(_home(match.group(0))))
        position = match.end()
    out.append(escape(_home(text[position:])))
    return "".join(out)


def entry(bundle: Bundle, answers: Mapping[str, list[str]], cwd: Path) -> dict[str, Any]:
    """``command``, ``args``, ``env`` and ``cwd`` (the bundle's directory) that start it.

    Raises:
        UsageError: the manifest says no command codebot can run here.
    """
    server: dict[str, Any] = bundle.manifest["server"]
    config = server.get("mcp_config")
    config = dict(config) if isinstance(config, dict) else {}
    overrides = config.get("platform_overrides")
    if isinstance(overrides, dict) and isinstance(overrides.get(sys.platform), dict):
        config.update(overrides[sys.platform])
    directory = bundle.directory
    entry_point = server.get("entry_point")
    if "command" not in config and isinstance(entry_point, str):
        kind = server.get("type")
        runner = {"node": ["node"], "python": ["python3"], "binary": []}.get(str(kind))
        if runner is None:
            raise UsageError(f"the bundle's server type {json.dumps(kind)} needs an mcp_config")
        config["command"] = runner[0] if runner else f"${{__dirname}}/{entry_point}"
        config["args"] = [f"${{__dirname}}/{entry_point}"] if runner else []
    command, args, env = config.get("command"), config.get("args", []), config.get("env", {})
    if not isinstance(command, str) or not command:
        raise UsageError("the bundle's manifest names no command (server.mcp_config.command)")
    if not isinstance(args, list) or not isinstance(env, dict):
        raise UsageError("the bundle's mcp_config has malformed 'args' or 'env'")
    words: list[str] = []
    for arg in args:
        if not isinstance(arg, str):
            continue
        key = arg[2:-1] if arg.startswith("${user_config.") and arg.endswith("}") else None
        if key is not None and "}" not in arg[:-1]:
            words += answers.get(key, [])  # one word per value of a multiple setting
        else:
            words.append(_substitute(arg, directory, answers))
    program = _substitute(command, directory, answers)
    if "/" in program and not program.startswith("/"):
        program = str(directory / program)  # relative to the bundle
    if program.startswith(str(directory)):  # in the bundle: it must stay there
        inside = os.path.normpath(program)
        if inside != str(directory) and not inside.startswith(str(directory) + os.sep):
            raise UsageError(
                f"the bundle's command {printable(command, one_line=True)!r} leaves its directory"
            )
    if "/" not in program and find_command(program, cwd, {}) is None:
        raise UsageError(
            f"the bundle runs '{printable(program, one_line=True)}', which is not on PATH",
            hint=f"Install {printable(program, one_line=True)}, then run the install again.",
        )
    out: dict[str, Any] = {"command": program, "args": words, "cwd": escape(str(directory))}
    variables = {
        str(k): _substitute(v, directory, answers) for k, v in env.items() if isinstance(v, str)
    }
    if variables:
        out["env"] = {k: v for k, v in variables.items() if v}
    return out


RECORD_SUFFIX = ".files.json"
"""Beside ``<sha256>/``: the sha256 of each unpacked file, written at unpack time."""


def record_path(directory: Path) -> Path:
    """Where the digests of the files unpacked into ``directory`` are recorded."""
    return directory.with_name(directory.name + RECORD_SUFFIX)


def unpack(bundle: Bundle) -> Path:
    """Unpack the checked bundle into its directory, from a copy whose sha256 is checked
    again (:func:`verified`). A folder already there is kept when it matches the digests
    recorded when it was unpacked; otherwise it is replaced (``bundle.replaced`` says why).

    Raises:
        RegistryError: the archive changed since it was checked, a member is a link or
            leaves the directory, or the bundle is too big.
    """
    target = bundle.directory
    parent = paths.private_dir(target.parent)
    with verified(bundle.archive, bundle.sha256, bundle.url) as data:
        if target.exists() or target.is_symlink():
            problem = check_unpacked(target)
            if problem is None:
                return target
            bundle.replaced = problem
            _remove(target)
        temp = Path(tempfile.mkdtemp(dir=parent, prefix=".unpack-"))
        try:
            with zipfile.ZipFile(data) as archive:
                digests = _extract(archive, temp)
            atomic_write(record_path(target), json.dumps(digests, sort_keys=True), mode=0o600)
            _read_only(temp)
            try:
                os.rename(temp, target)
            except OSError:
                if check_unpacked(target) is not None:  # not another install's, just now
                    raise
        except (OSError, zipfile.BadZipFile) as exc:
            raise RegistryError(f"cannot unpack the bundle into {target}: {exc}") from None
        finally:
            if temp.exists():
                _remove(temp)
    return target


def check_unpacked(directory: Path) -> str | None:
    """Why the unpacked ``directory`` no longer matches the digests recorded when it was
    unpacked (a file changed, added, removed, or a link), or None when it matches."""
    import hashlib

    try:
        recorded = json.loads(record_path(directory).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return f"{directory} has no record of its files (unpacked by an older codebot?)"
    if not isinstance(recorded, dict) or directory.is_symlink() or not directory.is_dir():
        return f"{directory} is not the folder codebot unpacked"
    seen: set[str] = set()
    for folder, dirs, files in os.walk(directory, followlinks=False):
        for name in [*dirs, *files]:
            path = Path(folder) / name
            relative = path.relative_to(directory).as_posix()
            if path.is_symlink():
                return f"{relative} in {directory} is a link, which the bundle does not hold"
            if name in files:
                expected = recorded.get(relative)
                if expected is None:
                    return f"{relative} in {directory} is not a file of the bundle"
                digest = hashlib.sha256()
                try:
                    with path.open("rb") as handle:
                        while chunk := handle.read(1 << 20):
                            digest.update(chunk)
                except OSError as exc:
                    return f"{relative} in {directory} cannot be read ({exc.strerror})"
                if digest.hexdigest() != expected:
                    return f"{relative} in {directory} changed since it was unpacked"
                seen.add(relative)
    missing = [str(k) for k in recorded if k not in seen]
    if missing:
        return f"{missing[0]} in {directory} is missing"
    return None


def _read_only(root: Path) -> None:
    """Files and folders read-only (nothing the server runs writes beside its code: a
    planted ``__pycache__`` would be code too)."""
    for folder, dirs, files in os.walk(root, topdown=False):
        for name in files:
            path = Path(folder) / name
            path.chmod(stat.S_IMODE(path.stat().st_mode) & ~0o222)
        for name in dirs:
            (Path(folder) / name).chmod(0o555)
    root.chmod(0o555)


def _remove(root: Path) -> None:
    """Delete ``root`` (made writable again first); a link is removed, not followed."""
    if root.is_symlink() or root.is_file():
        root.unlink()
        return
    for folder, dirs, _ in os.walk(root):
        os.chmod(folder, 0o700)
        for name in dirs:
            path = Path(folder) / name
            if not path.is_symlink():
                path.chmod(0o700)
    shutil.rmtree(root, ignore_errors=True)


def _extract(archive: zipfile.ZipFile, root: Path) -> dict[str, str]:
    """Write the members under ``root``; the sha256 of each file written, by path."""
    import hashlib

    members = archive.infolist()
    if len(members) > MAX_FILES:
        raise RegistryError(f"the bundle has more than {MAX_FILES} files")
    written = 0
    digests: dict[str, str] = {}
    for info in members:
        name = PurePosixPath(info.filename)
        mode = info.external_attr >> 16
        if (
            name.is_absolute()
            or ".." in name.parts
            or "\\" in info.filename
            or "\0" in info.filename
            or stat.S_ISLNK(mode)
        ):
            raise RegistryError(
                f"the bundle holds {printable(info.filename, one_line=True)!r}, a link or a path "
                "outside it: nothing was installed"
            )
        path = root.joinpath(*name.parts)
        if info.is_dir():
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        with archive.open(info) as source, path.open("wb") as sink:
            while chunk := source.read(1 << 20):
                written += len(chunk)
                if written > MAX_UNPACKED_BYTES:
                    raise RegistryError(
                        f"the bundle unpacks to more than {MAX_UNPACKED_BYTES >> 30} GiB"
                    )
                digest.update(chunk)
                sink.write(chunk)
        path.chmod(0o755 if mode & 0o111 else 0o644)
        digests[path.relative_to(root).as_posix()] = digest.hexdigest()
    return digests
