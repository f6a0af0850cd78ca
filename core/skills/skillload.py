"""Loading a skill as the model would: its ``SKILL.md`` body, then its files on request.

A served skill (SEP-2640) is loaded under the entry its server listed, and every file read
is verified against that entry before anything of it is used: its size, its SHA-256 digest,
and for ``SKILL.md`` its front matter, field by field. The first failure stops the load with
a :class:`SkillVerificationError` naming the file and what did not match; nothing after it
is fetched. A file the entry does not list is never read. Files are fetched one at a time,
when asked for (never ahead), and verified bytes are kept in memory for the session.

A local skill is read from its folder; a project skill must still hold, file by file, what
the trust gate hashed when the session started (an edit after trust needs trust again).
Neither kind runs anything: scripts in a skill run only through ``bash``, under its approval.
"""

from __future__ import annotations

import hashlib
import json
import math
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codebot_mcp.core.config.definitions import FrontMatterError, parse, parse_strict
from codebot_mcp.core.config.skills import (
    MAX_BYTES,
    MAX_FILES,
    SKILL_FILE,
    SkillTooLargeError,
    list_files,
)
from codebot_mcp.core.errors import CodebotError, UsageError
from codebot_mcp.core.skills.skillcatalog import Skill
from codebot_mcp.core.tools.sources import SkillEntry, SkillFile, SkillSource

VERIFY_HINT = (
    "The server's entry and the file it sent disagree: the file was tampered with, corrupted, "
    "or changed since it was listed. codebot used nothing of it. List the skills again "
    "(`codebot skills list`, /skills) once the server is fixed."
)


class SkillLoadError(CodebotError):
    """A skill that cannot be loaded as it is (dynamic, or larger than a skill may be)."""


class SkillVerificationError(CodebotError):
    """A skill file did not match its entry (or its trusted content): nothing of it is used."""

    def __init__(self, skill: Skill, file: str, problem: str, *, hint: str = VERIFY_HINT) -> None:
        super().__init__(
            f"skill '{skill.handle}' failed verification: {file}: {problem}", hint=hint
        )
        self.file = file
        self.problem = problem


@dataclass(frozen=True, slots=True)
class FileRef:
    """One file of a skill: its path relative to the skill's root, and its size."""

    path: str
    size: int
    uri: str | None = None
    """The resource URI (served skills)."""


@dataclass
class LoadedSkill:
    """A loaded skill: its body and front matter, its files, and those fetched so far."""

    skill: Skill
    front_matter: dict[str, Any]
    body: str
    files: list[FileRef]
    """Every file but ``SKILL.md``, in the entry's (or the folder's) order."""
    fetched: dict[str, bytes] = field(default_factory=dict[str, bytes])
    """Path → verified bytes, for the files read so far (``--files``, ``file=``)."""


class SkillLoader:
    """Loads skills for one session (or one command), keeping verified bytes in memory."""

    def __init__(
        self,
        source: SkillSource | None = None,
        trusted: Mapping[Path, str] | None = None,
    ) -> None:
        self.source = source
        self.trusted = dict(trusted or {})
        """Project skill files → the digest the trust gate accepted (absolute paths)."""
        self._cache: dict[tuple[str, str, str], bytes] = {}
        """(server, uri, digest) → bytes that matched that digest once."""

    async def load(self, skill: Skill, *, all_files: bool = False) -> LoadedSkill:
        """Read and check ``SKILL.md``; with ``all_files`` every other file too, in order.

        Raises:
            SkillVerificationError: a file did not match its entry; nothing after it was read.
            SkillLoadError: the skill cannot be loaded as it is (dynamic, too large).
            UsageError: a local skill's file cannot be read.
            ServerError: the server failed a read.
        """
        if skill.entry is not None:
            loaded = await self._load_served(skill, skill.entry)
        else:
            loaded = self._load_local(skill)
        if all_files:
            for ref in loaded.files:
                await self.read(loaded, ref.path)
        return loaded

    async def read(self, loaded: LoadedSkill, path: str) -> bytes:
        """One file of a loaded skill, by its path relative to the skill's root.

        Raises:
            UsageError: no such file in the skill.
            SkillVerificationError: it did not match its entry (or its trusted content).
            ServerError: the server failed the read.
        """
        clean = _clean(path)
        if clean in loaded.fetched:
            return loaded.fetched[clean]
        skill = loaded.skill
        if skill.entry is None:
            data = self._read_local(skill, clean)
        else:
            ref = next((f for f in loaded.files if f.path == clean), None)
            listed = _listed(skill.entry)
            if ref is None or ref.uri is None or ref.uri not in listed:
                raise SkillVerificationError(
                    skill,
                    _join(skill.entry.uri, clean),
                    "not listed in the skill's entry, so it is not read (an unlisted file "
                    "counts as a changed skill)",
                    hint="Read only the files the skill lists when it loads.",
                )
            data = await self._fetch(skill, listed[ref.uri])
        loaded.fetched[clean] = data
        return data

    # -- served skills ---------------------------------------------------------------------

    async def _load_served(self, skill: Skill, entry: SkillEntry) -> LoadedSkill:
        if entry.resources is None:
            raise SkillLoadError(
                f"skill '{skill.handle}' of server '{entry.server}' is dynamic: the server "
                "publishes no digests for its files, so codebot cannot verify it and does "
                "not load it",
                hint="Ask the server's authors to publish the skill with digests.",
            )
        total = sum(f.size for f in entry.resources)
        if len(entry.resources) > MAX_FILES or total > MAX_BYTES:
            raise SkillLoadError(
                f"skill '{skill.handle}' of server '{entry.server}' lists "
                f"{len(entry.resources)} files and {total} bytes; a skill may hold at most "
                f"{MAX_FILES} files and {MAX_BYTES} bytes",
                hint="The skill is larger than the skills extension allows; it is not loaded.",
            )
        listed = _listed(entry)
        own = listed.get(entry.uri)
        if own is None:
            raise SkillVerificationError(
                skill, entry.uri, "the entry's resources do not list the skill's own SKILL.md"
            )
        root = entry.uri[: -len(SKILL_FILE)]
        files: list[FileRef] = []
        for item in entry.resources:
            if item.uri == entry.uri:
                continue
            if not item.uri.startswith(root) or _clean_or_none(item.uri[len(root) :]) is None:
                raise SkillVerificationError(
                    skill, item.uri, f"the entry lists a file outside the skill's root {root}"
                )
            files.append(FileRef(item.uri[len(root) :], item.size, item.uri))
        data = await self._fetch(skill, own)
        try:
            front, body = parse_strict(data.decode("utf-8"))
        except UnicodeDecodeError:
            raise SkillVerificationError(skill, entry.uri, "it is not UTF-8 text") from None
        except FrontMatterError as exc:
            raise SkillVerificationError(skill, entry.uri, f"its front matter: {exc}") from None
        mismatch = front_matter_mismatch(front, entry.frontmatter)
        if mismatch is not None:
            raise SkillVerificationError(skill, entry.uri, mismatch)
        return LoadedSkill(skill, front, body, files)

    async def _fetch(self, skill: Skill, file: SkillFile) -> bytes:
        """Read one listed file from the skill's own server and verify it (cached)."""
        assert skill.entry is not None and self.source is not None
        key = (skill.entry.server, file.uri, file.digest)
        cached = self._cache.get(key)
        if cached is not None and _sha256(cached) == file.digest:
            return cached
        data = await self.source.read_skill_file(skill.entry.server, file.uri)
        problem = file_mismatch(file, data)
        if problem is not None:
            raise SkillVerificationError(skill, file.uri, problem)
        self._cache[key] = data
        return data

    # -- local skills ----------------------------------------------------------------------

    def _load_local(self, skill: Skill) -> LoadedSkill:
        assert skill.local is not None
        directory = skill.local.directory
        try:
            listing = list_files(directory)
        except SkillTooLargeError as exc:
            raise SkillLoadError(
                f"skill '{skill.handle}' at {directory} is too large: {exc}",
                hint=f"A skill may hold at most {MAX_FILES} files and {MAX_BYTES} bytes.",
            ) from None
        data = self._read_local(skill, SKILL_FILE)
        try:
            front, body = parse(data.decode("utf-8", errors="replace"))
        except FrontMatterError as exc:
            raise UsageError(
                f"skill '{skill.handle}': {directory / SKILL_FILE}: {exc}",
                hint="Fix the front matter (YAML between '---' lines).",
            ) from None
        files = [FileRef(f.relative, f.size) for f in listing]
        files = [f for f in files if f.path != SKILL_FILE]
        from codebot_mcp.core.config.plugins.load import substitute, variables_at

        body = substitute(body, variables_at(directory))  # a plugin's ${CLAUDE_PLUGIN_ROOT}
        loaded = LoadedSkill(skill, front, body, files)
        loaded.fetched[SKILL_FILE] = data
        return loaded

    def _read_local(self, skill: Skill, path: str) -> bytes:
        assert skill.local is not None
        directory = skill.local.directory
        target = (directory / path).resolve()
        if not target.is_relative_to(directory):
            raise UsageError(
                f"skill '{skill.handle}': {path} leads outside the skill's folder {directory}",
                hint="Read only the files the skill lists when it loads.",
            )
        try:
            if target.stat().st_size > MAX_BYTES:
                raise UsageError(f"skill '{skill.handle}': {path} is larger than {MAX_BYTES} bytes")
            data = target.read_bytes()
        except FileNotFoundError:
            raise UsageError(
                f"skill '{skill.handle}' has no file {path}",
                hint="Read only the files the skill lists when it loads.",
            ) from None
        except OSError as exc:
            raise UsageError(
                f"skill '{skill.handle}': cannot read {target}: {exc.strerror or exc}"
            ) from None
        expected = self.trusted.get(target) if skill.local.scope == "project" else None
        if skill.local.scope == "project" and expected != _sha256(data):
            raise SkillVerificationError(
                skill,
                str(target),
                "it changed since the project was trusted"
                if expected
                else "it was not there when the project was trusted",
                hint="Review the change and run `codebot trust` again (or restart codebot).",
            )
        return data


def file_mismatch(file: SkillFile, data: bytes) -> str | None:
    """Why ``data`` is not the file its entry describes (size first, then digest), or None."""
    if len(data) != file.size:
        return f"size {len(data)} bytes does not match the entry's {file.size} bytes"
    digest = _sha256(data)
    if digest != file.digest:
        return f"digest {digest} does not match the entry's {file.digest}"
    return None


def front_matter_mismatch(found: Mapping[str, Any], entry: Mapping[str, Any]) -> str | None:
    """The first field (sorted) where the file's front matter differs from the entry's."""
    for key in sorted(set(found) | set(entry)):
        if key not in found:
            return f"front matter field '{key}' is in the entry but not in the file"
        if key not in entry:
            return f"front matter field '{key}' is in the file but not in the entry"
        if not json_equal(found[key], entry[key]):
            return (
                f"front matter field '{key}' does not match the entry: the file has "
                f"{_show(found[key])}, the entry has {_show(entry[key])}"
            )
    return None


def json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON sees it: ``true`` is not ``1``, ``1`` is ``1.0``, keys are strings."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a + b))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        left: Mapping[Any, Any] = a
        right: Mapping[Any, Any] = b
        return set(left) == set(right) and all(json_equal(left[k], right[k]) for k in left)
    if isinstance(a, list) and isinstance(b, list):
        xs: list[Any] = a
        ys: list[Any] = b
        return len(xs) == len(ys) and all(json_equal(x, y) for x, y in zip(xs, ys, strict=True))
    return type(a) is type(b) and a == b


def _show(value: Any, limit: int = 80) -> str:
    try:
        text = json.dumps(value, ensure_ascii=True, default=repr)
    except ValueError:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _listed(entry: SkillEntry) -> dict[str, SkillFile]:
    return {f.uri: f for f in entry.resources or ()}


def _join(skill_uri: str, path: str) -> str:
    return skill_uri[: -len(SKILL_FILE)] + path


def _clean_or_none(path: str) -> str | None:
    normal = posixpath.normpath(path.replace("\\", "/")).lstrip("/")
    if not path or normal in ("", ".") or normal == ".." or normal.startswith("../"):
        return None
    return normal


def _clean(path: str) -> str:
    normal = _clean_or_none(path.strip())
    if normal is None:
        raise UsageError(
            f"'{path}' is not a path inside the skill",
            hint="Pass a path relative to the skill's root, as listed when it loads.",
        )
    return normal
