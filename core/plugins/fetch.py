"""Getting a source onto the disk: a git clone, a copy of a folder, a JSON document by URL.

Every git command runs with a bound (:data:`GIT_TIMEOUT`), without a terminal prompt, and its
failure names the URL and git's last line of stderr.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from codebot_mcp.core.errors import CodebotError
from codebot_mcp.core.secrets.redact import printable, redact_url

GIT_TIMEOUT = 300.0
"""Seconds a clone may take (a large repository over a slow link)."""
_IGNORED = shutil.ignore_patterns(".git")


class FetchError(CodebotError):
    """A source could not be fetched (exit 1), naming it and why."""


def is_git_url(text: str) -> bool:
    """A git URL: ``https://...`` (not a ``.json``), ``ssh://``, ``git://``, ``file://``,
    ``git@host:path``, optionally with ``#ref``."""
    base = text.split("#", 1)[0]
    if re.match(r"^(ssh|git|file)://", base) or re.match(r"^[\w.-]+@[\w.-]+:", base):
        return True
    return bool(re.match(r"^https?://", base)) and not base.endswith(".json")


def split_ref(url: str) -> tuple[str, str | None]:
    """``URL#ref`` → (URL, ref)."""
    base, sep, ref = url.partition("#")
    return base, (ref or None) if sep else None


def _git(args: list[str], url: str, cwd: Path | None = None) -> str:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true"}
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise FetchError(
            "git is not installed, and this source is a git repository",
            hint="Install git, or install from a local folder.",
        ) from None
    except subprocess.TimeoutExpired:
        raise FetchError(
            f"git {args[0]} of {shown(url)} took longer than {GIT_TIMEOUT:g} s; stopped"
        ) from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        last = printable(
            redact_url(lines[-1]) if lines else f"exit {done.returncode}", one_line=True
        )
        raise FetchError(
            f"git {args[0]} of {shown(url)} failed: {last}",
            hint="Check the URL (and the #ref), and that you can clone it with git yourself.",
        )
    return done.stdout.strip()


def shown(url: str) -> str:
    """A URL as shown (credentials redacted, escaped)."""
    return printable(redact_url(url), one_line=True)


def clone(url: str, target: Path, *, ref: str | None = None, sha: str | None = None) -> str:
    """Clone ``url`` (at ``ref`` or ``sha``) into ``target``; return the commit checked out.

    Raises:
        FetchError: git failed or is missing.
    """
    if sha is None:
        args = ["clone", "--quiet", "--depth", "1"]
        if ref:
            args += ["--branch", ref]
        _git([*args, "--", url, str(target)], url)
    else:
        _git(["clone", "--quiet", "--", url, str(target)], url)
        _git(["checkout", "--quiet", sha], url, cwd=target)
    return _git(["rev-parse", "HEAD"], url, cwd=target)


def head(directory: Path) -> str | None:
    """The commit checked out in ``directory`` (None when it is not a git clone)."""
    if not (directory / ".git").exists():
        return None
    try:
        return _git(["rev-parse", "HEAD"], str(directory), cwd=directory)
    except FetchError:
        return None


def pull(directory: Path, url: str) -> str:
    """Bring a clone up to date with its remote (the branch it follows); return the commit.

    Raises:
        FetchError: git failed.
    """
    _git(["fetch", "--quiet", "--depth", "1", "origin"], url, cwd=directory)
    _git(["reset", "--quiet", "--hard", "FETCH_HEAD"], url, cwd=directory)
    return _git(["rev-parse", "HEAD"], url, cwd=directory)


MAX_FILES = 20_000
MAX_BYTES = 256 << 20
"""A plugin copied into the cache: more than this is not a plugin (a home folder, a
monorepo's build output)."""


def copy_tree(source: Path, target: Path) -> None:
    """Copy a folder (without ``.git``; symlinks kept as links), at most :data:`MAX_FILES`
    files and :data:`MAX_BYTES` bytes.

    Raises:
        FetchError: it is larger.
    """
    files = total = 0
    for top, dirs, names in os.walk(source, followlinks=False):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            files += 1
            try:
                total += (Path(top) / name).lstat().st_size
            except OSError:
                continue
            if files > MAX_FILES or total > MAX_BYTES:
                raise FetchError(
                    f"{source} holds more than {MAX_FILES} files or {MAX_BYTES >> 20} MiB; "
                    "that is not a plugin",
                    hint="Point at the plugin's own folder (the one holding .claude-plugin/).",
                )
    shutil.copytree(source, target, symlinks=True, ignore=_IGNORED)


def get_json(url: str) -> object:
    """A JSON document from an http(s) URL, bounded in time and size.

    Raises:
        FetchError: it could not be fetched or is not JSON.
    """
    from codebot_mcp.core.registry.http import RegistryError
    from codebot_mcp.core.registry.http import get_json as fetch

    try:
        return fetch(url)
    except RegistryError as exc:
        raise FetchError(exc.message, hint="Check the URL of the marketplace.json.") from None
