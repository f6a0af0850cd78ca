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
    target.parent.mkdir(parents=True, exist_ok=True)
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


def locate() -> Path | None:
    """The helper's path, building it on first use when need be; None when it cannot be had
    (:func:`problem` says why). Remembered for the process. Blocks while it compiles."""
    global _located, _problem
    if _located is not None or _problem is not None:
        return _located
    if not sys.platform.startswith("linux"):
        _problem = "the exec helper is for Linux only"
        return None
    if _fresh(INSTALLED):
        _located = INSTALLED
        return _located
    try:
        cached = cached_path()
        if not _usable(cached):
            build(cached)
        _located = cached
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
    return _probe  # pyright: ignore[reportUnknownVariableType]


def forget() -> None:
    """Locate and probe again next time (tests)."""
    global _located, _problem, _probe
    _located = _problem = _probe = None
