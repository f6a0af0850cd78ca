"""The exec helper, ``codebot-exec`` (``exec_helper.c``): where it is, building it, probing.

Every child codebot starts goes through this small C program (Linux): it sets the parent-death
signal, announces the child to the reaper, and confines it (the sandbox) before it execs the
real command, so nothing runs as Python between fork and exec in our threaded process.

C, not a Python script run with ``-I -S``, because of its start cost per call, measured on the
development machine (``docs/sandbox.md``): about 0.1 ms on top of ``bash -c true`` for the C
program with the whole sandbox, against about 10 ms for an interpreter that only sets the
parent-death signal.

Where it comes from:
- ``make install`` compiles it beside its source (``core/proc/codebot-exec``);
- otherwise (a wheel install), the first use compiles it with the system's C compiler into the
  cache directory, named by the source's hash, once;
- when neither works, :func:`locate` returns None and :func:`problem` says why: children start
  without the parent-death signal, and the sandbox reports itself unavailable.

What runs outside the sandbox must not be writable from inside it: the cache directory is
0700, and every sandbox keeps it (and the helper beside its source, when that lies in a
writable tree) read-only (``core.sandbox.guarded``). Before each use :func:`check` compares
the file with what :func:`locate` verified (its identity, and its sha256 whenever that moved;
:func:`locate` also refuses one another user owns or anyone may write); a helper that changed
is never run.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

SOURCE = Path(__file__).with_name("exec_helper.c")
INSTALLED = Path(__file__).with_name("codebot-exec")
"""Where ``make install`` puts the compiled helper."""
BUILD_SECONDS = 120
PROBE_SECONDS = 10
COMPILERS = ("cc", "gcc", "clang")
FLAGS = ("-O2", "-Wall", "-Wextra")
STATIC = "-static"
"""Tried first: no dynamic loader at each start (about 1 ms less); not every C library has it."""

_located: Path | None = None
_problem: str | None = None
_probe: dict[str, Any] | None = None
_verified: tuple[tuple[int, ...], str] | None = None
"""The located helper's identity (device, inode, size, times) and sha256 when verified."""


class HelperChangedError(OSError):
    """The exec helper is not the file codebot verified (or anyone else may write it)."""


def _cache_dir() -> Path:
    """``$CODEBOT_HOME/cache`` or the platformdirs user cache directory (as ``core.config.paths``
    places state; ``proc`` sits below ``config``, so the two lines are repeated here)."""
    home = os.environ.get("CODEBOT_HOME")
    if home:
        return Path(home).expanduser() / "cache"
    import platformdirs

    return Path(platformdirs.user_cache_dir("codebot"))


def _usable(path: Path) -> bool:
    try:
        return path.is_file() and os.access(path, os.X_OK)
    except OSError:
        return False


def _fresh(path: Path) -> bool:
    """Built from the current source (a checkout whose ``.c`` changed since ``make install``
    builds a new one)."""
    try:
        return _usable(path) and path.stat().st_mtime >= SOURCE.stat().st_mtime
    except OSError:
        return False


def cached_path() -> Path:
    """Where a helper built on first use lives: one per source version and machine type."""
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16]
    return _cache_dir() / f"codebot-exec-{digest}-{platform.machine()}"


def build(target: Path) -> None:
    """Compile the helper to ``target`` (atomically: a half-written binary is never run).

    Raises:
        OSError: no C compiler, or the compilation failed (the message says which).
    """
    compiler = next((found for name in COMPILERS if (found := shutil.which(name))), None)
    if compiler is None:
        raise OSError("no C compiler (cc, gcc or clang) on PATH to build it")
    _private_dirs(target.parent)
    fd, temporary = tempfile.mkstemp(prefix=".codebot-exec-", dir=target.parent)
    os.close(fd)
    try:
        for flags in ((*FLAGS, STATIC), FLAGS):
            done = subprocess.run(
                [compiler, *flags, "-o", temporary, str(SOURCE)],
                capture_output=True,
                text=True,
                timeout=BUILD_SECONDS,
                check=False,
            )
            if done.returncode == 0:
                break
        if done.returncode != 0:
            first = (done.stderr.strip().splitlines() or ["no message"])[0]
            raise OSError(f"{compiler} could not compile {SOURCE.name}: {first}")
        os.chmod(temporary, 0o700)  # in the user's cache: theirs alone, as everything there
        os.replace(temporary, target)
    except subprocess.TimeoutExpired:
        raise OSError(f"{compiler} took longer than {BUILD_SECONDS}s") from None
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def _private_dirs(directory: Path) -> None:
    """Create ``directory`` and its missing parents 0700 (as ``core.config.paths.private_dir``;
    ``proc`` sits below ``config``)."""
    missing = [p for p in (directory, *directory.parents) if not p.exists()]
    for made in reversed(missing):
        made.mkdir(mode=0o700, exist_ok=True)
        made.chmod(0o700)


def _identity(info: os.stat_result) -> tuple[int, ...]:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _digest(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _verify(path: Path) -> None:
    """Record the helper as it is now, after checking that no other user can change it.

    Raises:
        HelperChangedError: it (or its directory) is another user's, or world-writable.
    """
    global _verified
    for item in (path, path.parent):
        info = item.stat()
        if info.st_uid not in (os.geteuid(), 0) or info.st_mode & 0o002:
            raise HelperChangedError(
                f"the exec helper {path} is not safe to run: {item} is writable by everyone "
                f"or owned by another user (mode {info.st_mode & 0o7777:o}, uid {info.st_uid})"
            )
    before = _identity(path.stat())
    digest = _digest(path)
    if _identity(path.stat()) != before:
        raise HelperChangedError(f"the exec helper {path} changed while codebot checked it")
    _verified = (before, digest)


def check(path: Path) -> None:
    """Before each use: ``path`` is still the helper :func:`locate` verified (a ``stat``; its
    sha256 again when the file's identity moved).

    Raises:
        HelperChangedError: its content changed since (it is not run).
    """
    global _verified
    if _verified is None:
        _verify(path)
        return
    identity, digest = _verified
    try:
        now = _identity(path.stat())
        if now == identity:
            return
        current = _digest(path)
    except OSError as exc:
        raise HelperChangedError(f"the exec helper {path} cannot be checked: {exc}") from None
    if current != digest:
        raise HelperChangedError(
            f"the exec helper {path} changed since codebot verified it (sha256 {current[:12]}, "
            f"expected {digest[:12]}): nothing is started through it. Remove it and run "
            "codebot again (or `make install` in a checkout) to build it afresh."
        )
    _verified = (now, digest)


def locate() -> Path | None:
    """The helper's path, building it on first use when need be; None when it cannot be had
    (:func:`problem` says why). Remembered for the process. Blocks while it compiles."""
    global _located, _problem
    if _located is not None or _problem is not None:
        return _located
    if not sys.platform.startswith("linux"):
        _problem = "the exec helper is for Linux only"
        return None
    try:
        if _fresh(INSTALLED):
            found = INSTALLED
        else:
            found = cached_path()
            if not _usable(found):
                build(found)
        _verify(found)
        _located = found
    except HelperChangedError as exc:
        _problem = str(exc)
    except OSError as exc:
        _problem = f"the exec helper codebot-exec is not built ({exc}); run `make install`"
    return _located


def decided() -> bool:
    """True once :func:`locate` found the helper or gave up (it will not block again)."""
    return _located is not None or _problem is not None


def problem() -> str | None:
    """Why :func:`locate` found no helper (None while it has one, or before it was asked)."""
    return _problem


def probe() -> dict[str, Any]:
    """What this kernel offers for the sandbox, as the helper measures it (remembered):
    ``landlock_abi``, ``landlock_min_abi``, ``seccomp``, ``userns`` (with ``userns_error``),
    ``netns``, ``mountns``; ``{"error": ...}`` when it cannot be asked."""
    global _probe
    if _probe is not None:
        return _probe
    helper = locate()
    if helper is None:
        _probe = {"error": problem() or "no exec helper"}
        return _probe
    try:
        done = subprocess.run(
            [str(helper), "--probe"],
            capture_output=True,
            text=True,
            timeout=PROBE_SECONDS,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        value = json.loads(done.stdout)
        _probe = value if isinstance(value, dict) else {"error": "unreadable probe"}
    except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
        _probe = {"error": f"the exec helper's probe failed: {exc}"}
    return _probe
