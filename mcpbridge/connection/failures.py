"""Why a server is not usable: the stage it failed at, a readable reason and a fix.

The record alone, on the standard library and ``core.errors``: a manager with no server to
start (``chat`` without MCP servers) and the hot path (``mcpbridge.calls.lite``) never load the
SDK. :mod:`.explain` turns what a transport or the SDK raised into the reason and the hint;
every reader renders the record (``mcp list``, ``mcp call`` through :meth:`Failure.error`,
doctor).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from codebot_mcp.core.errors import ServerError

Stage = Literal["config", "launch", "handshake", "auth", "list", "call", "lock"]
"""Where it failed; ``lock``: connected, but held back by the pinned tools
(``mcpbridge.tools.pinning``: a rug pull, or a tool the lock does not know)."""

STDERR_TAIL_LINES = 12
STDERR_TAIL_BYTES = 4096


@dataclass(frozen=True, slots=True)
class Failure:
    """A server that could not be used."""

    server: str
    stage: Stage
    message: str
    hint: str | None = None
    stderr_tail: str = ""
    log_file: Path | None = None
    needs_login: bool = False
    """Stage "auth": the server wants a login that this run did not do (status "needs login")."""
    timed_out: bool = False
    """The client gave up waiting for the handshake or the first listing (``timeout``)."""

    def error(self) -> ServerError:
        """The error of a call to this server (``mcp call``, ``--batch``, the warm holder):
        ``server 'x': <describe()>`` with the hint, the same on the SDK path and the hot path."""
        return ServerError(f"server '{self.server}': {self.describe()}", hint=self.hint)

    def describe(self) -> str:
        """One paragraph: message, then the stderr tail indented."""
        text = f"{self.stage} failed: {self.message}"
        if self.stage == "lock":
            text = self.message  # "server 'x' is held back: ...", with the diff
        if self.stderr_tail:
            tail = "\n".join(f"    {line}" for line in self.stderr_tail.splitlines())
            text += f"\n  server stderr (last lines):\n{tail}"
        return text


def read_tail(path: Path | None) -> str:
    """The last lines of a log file, bounded in bytes; empty when there is none."""
    if path is None:
        return ""
    try:
        with path.open("rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - STDERR_TAIL_BYTES))
            data = f.read()
    except OSError:
        return ""
    lines = data.decode("utf-8", "replace").splitlines()
    if size > STDERR_TAIL_BYTES and lines:
        lines = lines[1:]  # the first line is probably cut
    return "\n".join(lines[-STDERR_TAIL_LINES:]).strip()
