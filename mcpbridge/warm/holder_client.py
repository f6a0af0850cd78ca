"""The warm path: a background holder keeps the configured servers connected for scripts.

``codebot mcp warm`` starts the holder (``python -m mcpbridge.warm_holder``), detached. It loads the
settings exactly as the command did, applies trust, starts every server through the ordinary
:class:`~mcpbridge.manager.Manager` (so env, redaction, restart policy and process cleanup are the
cold path's own), and listens on a Unix socket:

- the socket lives in ``<state dir>/warm/`` (0700), is created 0600, and is named after where the
  settings come from (project file or working directory, and the global file);
- every request carries the **digest** of the effective settings (the server entries after
  trust and ``${VAR}`` expansion, the inherited environment, codebot's version and interpreter):
  a holder whose digest differs answers "stale" and the client takes the cold path, so a changed
  config is never served;
- a warm ``mcp call`` from a shell sends instead its directory, environment and words
  (``"call_here"``): the holder reads the settings as the client would and compares the same
  digest itself (:mod:`.callhere`), so the client reads no settings file. Only a client in the
  holder's own environment asks so: the holder writes its :func:`environment_digest` beside
  the socket (:func:`environment_file`) and checks it again;
- the client checks the socket's owner and mode before connecting and the holder checks the
  peer's uid (``SO_PEERCRED``): only the same user is served;
- the holder exits after ``warm_idle_timeout`` seconds without a request (a setting), on
  ``codebot mcp warm --stop``, and on SIGTERM, SIGINT or SIGHUP, stopping its servers.

The client half (:func:`request`, :func:`socket_path`, :func:`fingerprint`) imports the
standard library and ``core`` only: a warm ``mcp call`` never loads anyio or the MCP SDK.

Wire format: one JSON object per line. The client sends ``{"digest", "op", ...}``; the holder
answers ``{"digest", "accepted": true}`` at once, then ``{"digest", "working": true}`` every
:data:`HEARTBEAT_SECONDS` while the request runs, then one result line. A client that loses the
connection *before* the acceptance falls back to the cold path; after it, a ``call`` may have
run, so it is an error rather than a silent retry. A holder that stops answering after the
acceptance (hung, stopped, wedged) is given up on after :data:`SILENCE_SECONDS` without a line:
a clear error (exit 4), never a wait without end; a long call that keeps its holder alive is
waited for as long as it takes, as on the cold path.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codebot_mcp.core import __version__, jsonutil
from codebot_mcp.core.config import paths
from codebot_mcp.core.proc.lookup import INHERITED_ENV

if TYPE_CHECKING:
    from codebot_mcp.core.config.servers import ServerConfig

CONNECT_TIMEOUT = 1.0
"""A holder that does not accept within this is treated as absent (cold path)."""
ACCEPT_TIMEOUT = 5.0
"""After connecting, the holder's acceptance line must arrive within this."""
HEARTBEAT_SECONDS = 1.0
"""While a request runs, the holder says so this often."""
SILENCE_SECONDS = 10.0
"""After the acceptance, a holder silent this long (no heartbeat, no answer) is given up on."""
MAX_LINE_BYTES = 64 * 1024 * 1024
"""One request or answer line may be this large (a tool result of 32 MB, JSON-escaped)."""
SOCKET_PATH_LIMIT = 104
"""sun_path is 108 bytes on Linux, 104 on macOS."""


class WarmError(Exception):
    """The holder went away after accepting a request, or answered nonsense."""


# -- shared by client and holder --------------------------------------------------------------


def _config_data(config: ServerConfig) -> dict[str, Any]:
    from dataclasses import asdict  # deferred: a warm call's client never takes a digest

    data = asdict(config)
    data.pop("raw", None)
    return data


def fingerprint(
    servers: Mapping[str, ServerConfig],
    trusted: bool,
    roots: Any = (),
    pins: str = "",
    environ: Mapping[str, str] | None = None,
) -> str:
    """The digest of everything that decides what the servers are and how they run (and the
    roots the holder answers ``roots/list`` with, and ``pins``: the lock's state,
    ``Pins.digest``, so a re-lock is never served by a holder that checked the old one);
    ``environ``: the environment the servers inherit from (default ``os.environ``)."""
    environ = os.environ if environ is None else environ
    section = {
        "pins": pins,
        "servers": {name: _config_data(c) for name, c in sorted(servers.items())},
        "trusted": trusted,
        "roots": [str(p) for p in roots],
        "env": {k: environ.get(k) for k in INHERITED_ENV},
        "codebot": __version__,
        "python": sys.executable,
    }
    text = json.dumps(section, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def warm_dir() -> Path:
    """``<state dir>/warm``, created 0700."""
    return paths.state_dir() / "warm"


def socket_path(project_file: Path | None, cwd: Path) -> Path:
    """Where the holder for these settings listens (one per settings location)."""
    location = f"{project_file or cwd}\0{paths.global_settings_path()}"
    key = hashlib.sha256(location.encode()).hexdigest()[:20]
    return warm_dir() / f"{key}.sock"


def plain_pair(word: str) -> bool:
    """A ``key=value`` word as a warm call's client passes it on (no option, file, stdin or
    JSON object: those take the ordinary path); the holder resolves no other."""
    return "=" in word and not word.startswith(("-", "@", "{"))


SHELL_BOOKKEEPING = ("_", "OLDPWD", "PWD", "SHLVL")
"""Variables a shell sets per command or per directory; codebot never reads them from its own
environment while it loads settings (``${PWD}`` in a file expands from the caller's)."""


def environment_digest(environ: Mapping[str, str]) -> str:
    """The digest of an environment as settings are loaded in it (every variable but the
    shell's bookkeeping), of codebot's version and of its interpreter. A holder resolves a
    client's call in its own process (a ``call_here`` request, :mod:`.callhere`) only for a
    client whose digest is its own: what the loaders read from the process's environment
    (``HOME``, ``CODEBOT_HOME``, ``PATH``...) is then the client's."""
    kept = sorted((k, v) for k, v in environ.items() if k not in SHELL_BOOKKEEPING)
    text = json.dumps([kept, __version__, sys.executable, os.getuid()], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def environment_file(socket: Path) -> Path:
    """Beside the socket: the holder's :func:`environment_digest`, for clients to compare
    before they ask (the holder compares again)."""
    return socket.with_suffix(".env")


def serves_this_environment(socket: Path) -> bool:
    """A holder listens at ``socket`` and was started in this process's environment (its
    :func:`environment_file` says so, and both are ours); False: no holder, or ask it by
    settings digest (:func:`request`)."""
    record = environment_file(socket)
    if not (_private(record, kind=stat.S_IFREG) and _private(socket, kind=stat.S_IFSOCK)):
        return False
    try:
        with open(record, "rb") as file:
            written = file.read(128).decode("ascii", "replace").strip()
    except OSError:
        return False
    return written == environment_digest(os.environ)


def _private(path: Path, *, kind: int) -> bool:
    """True when ``path`` is ours: owned by us, of ``kind``, no access for group or others."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_IFMT(st.st_mode) == kind and st.st_uid == os.getuid() and st.st_mode & 0o077 == 0


def _read_line(sock: socket.socket, buffer: bytearray) -> bytes:
    while b"\n" not in buffer:
        chunk = sock.recv(1 << 20)
        if not chunk:
            raise EOFError
        buffer += chunk
        if len(buffer) > MAX_LINE_BYTES:
            raise WarmError("the warm holder's answer is too large")
    line, _, rest = bytes(buffer).partition(b"\n")
    buffer[:] = rest
    return line


# -- the client -------------------------------------------------------------------------------


def request(
    path: Path,
    digest: str | None,
    payload: dict[str, Any],
    on_accept: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any] | None:
    """Send one request to the holder at ``path``; its answer, or None to take the cold path.

    None means: no holder, not ours, stale (another digest), declined (a ``call_here`` the
    holder leaves to the client's ordinary path), or it failed before accepting.
    ``on_accept`` is given the acceptance line (a ``call_here``'s warnings) before the request
    runs.

    Raises:
        WarmError: the holder accepted the request and then went away or answered nonsense.
    """
    if not (_private(path.parent, kind=stat.S_IFDIR) and _private(path, kind=stat.S_IFSOCK)):
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_TIMEOUT)
        try:
            sock.connect(str(path))
            sock.sendall(json.dumps({**payload, "digest": digest}).encode() + b"\n")
            sock.settimeout(ACCEPT_TIMEOUT)
            buffer = bytearray()
            first = jsonutil.loads(_read_line(sock, buffer))
        except (OSError, EOFError, ValueError, WarmError):
            return None
        if not isinstance(first, dict):
            return None
        if digest is not None and first.get("digest") != digest:
            return None
        if not first.get("accepted"):
            return None
        if on_accept is not None:
            on_accept(first)
        # The call itself is bounded by the server's own timeouts, as cold; the holder proves
        # it is alive with a heartbeat, so a hung holder cannot hold this process forever.
        sock.settimeout(SILENCE_SECONDS)
        try:
            while True:
                answer = jsonutil.loads(_read_line(sock, buffer))
                if not (isinstance(answer, dict) and answer.get("working")):
                    break
        except TimeoutError:
            raise WarmError(
                f"the warm holder accepted the request, then said nothing for "
                f"{SILENCE_SECONDS:g} s (it hangs or was stopped)"
            ) from None
        except (OSError, EOFError) as exc:
            reason = exc or "EOF"
            raise WarmError(f"the warm holder went away during the request ({reason})") from None
        except ValueError:
            raise WarmError("the warm holder answered with invalid JSON") from None
        if not isinstance(answer, dict):
            raise WarmError("the warm holder answered with something other than an object")
        return answer
    finally:
        sock.close()


def ask(path: Path, payload: dict[str, Any]) -> dict[str, Any] | None:
    """A request that needs no matching digest (status, stop); None when no holder answers.

    The answer carries the holder's ``digest``.
    """
    return request(path, None, payload)


# -- the holder -------------------------------------------------------------------------------
