"""The wire both MCP paths speak over stdio, in one SDK-free place.

codebot talks to a stdio server two ways: through the SDK (``connection.client.Client`` over
:mod:`.stdio` and :mod:`.probe`), and, for ``mcp list`` and ``mcp call``, through the hot
path of :mod:`mcpbridge.calls.lite`, which never imports the SDK (why it stays, with the
numbers: that module's docstring). Whatever the two must agree on lives here, once:

- **framing**: newline-delimited JSON-RPC, one message at most :data:`MAX_MESSAGE_BYTES`
  (:class:`LineFramer`), and the error answer for a line that is too large or unreadable
  when its request id can be read from its start (:func:`answer_id`, :func:`error_answer`);
- **protocol constants**: the versions of each era, the error codes, the ``_meta`` keys;
- **the era decision**: ``server/discover``, then a request of a method no server has and a
  ``ping``; the order of the answers tells whether a silent ``server/discover`` will ever be
  answered (:class:`EraProbe`);
- **the tool filter**: ``include_tools``/``exclude_tools`` and the app-only tools of MCP Apps
  (:func:`split_tools`);
- **what codebot declares**: its client info and capabilities (:func:`client_info`,
  :data:`CLIENT_CAPABILITIES`, :func:`modern_envelope`), and the extension ids.

It imports neither ``mcp`` nor ``mcp_types`` nor ``pydantic`` (a test checks): the SDK path
wraps these values in the SDK's models where it needs them; tests compare both paths'
messages on the wire.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, Generic, Literal, TypeVar

from codebot_mcp.core import __version__, jsonutil

__all__ = [
    "CLIENT_CAPABILITIES",
    "LEGACY_VERSION",
    "LEGACY_VERSIONS",
    "MAX_MESSAGE_BYTES",
    "MODERN_CAPABILITIES",
    "MODERN_VERSION",
    "EraProbe",
    "LineFramer",
    "Oversized",
    "answer_id",
    "app_only",
    "client_info",
    "error_answer",
    "modern_envelope",
    "split_tools",
]

# -- protocol constants (a test checks each against mcp_types) ---------------------------------

MODERN_VERSION = "2026-07-28"
"""The stateless era (``server/discover``, the ``_meta`` envelope on every request)."""
LEGACY_VERSION = "2025-11-25"
"""What ``initialize`` offers: the newest handshake-era version."""
LEGACY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""Handshake-era versions a server may answer ``initialize`` with."""

MAX_LIST_PAGES = 1000
"""A server whose cursor never ends must not hang us: pages of one ``*/list`` read, at most."""

METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001
HEADER_MISMATCH = -32020
UNSUPPORTED_VERSION = -32022
"""An answer to ``server/discover`` naming the versions the server speaks instead."""
USER_REJECTED = -1
"""The spec's code for a request the user (or codebot's policy) refused, e.g. sampling."""

META = "_meta"
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

MAX_INPUT_ROUNDS = 10
"""Rounds of answers one multi-round call (SEP-2322) gets before codebot gives up on it: a
server that asks forever must not hold the call (nor the user) forever. Both paths."""

# -- what codebot declares -------------------------------------------------------------------

TASKS = "io.modelcontextprotocol/tasks"
"""Tasks (SEP-2663): declared on 2026-07-28 requests only (the SDK activates the claim on
modern wires; ``connection.tasks`` follows them)."""
SKILLS = "io.modelcontextprotocol/skills"
"""Skills served over MCP (SEP-2640): codebot lists and loads them (``connection.skills``)."""
UI = "io.modelcontextprotocol/ui"
"""MCP Apps (SEP-1865): never declared; app-only tools are kept from the model instead."""

CLIENT_CAPABILITIES: dict[str, Any] = {
    "sampling": {},
    "elicitation": {"form": {}, "url": {}},
    "roots": {"listChanged": True},
    "extensions": {SKILLS: {}},
}
"""What codebot declares on a handshake-era wire. The SDK path declares it by passing the
elicitation, sampling and roots callbacks (``connection.requests``) and the extensions of
``connection.serverinfo.client_extensions`` (built from this); the hot path sends it as is.
A test compares both paths' messages."""
MODERN_CAPABILITIES: dict[str, Any] = {
    **CLIENT_CAPABILITIES,
    "extensions": {**CLIENT_CAPABILITIES["extensions"], TASKS: {}},
}
"""On 2026-07-28 requests the tasks extension is declared too (SEP-2663)."""


def client_info() -> dict[str, str]:
    """What codebot tells servers about itself."""
    return {"name": "codebot", "version": __version__}


def modern_envelope() -> dict[str, Any]:
    """The ``_meta`` keys every 2026-07-28 request carries (the SDK's stamp, as it sends it)."""
    return {
        PROTOCOL_VERSION_KEY: MODERN_VERSION,
        CLIENT_INFO_KEY: client_info(),
        CLIENT_CAPABILITIES_KEY: MODERN_CAPABILITIES,
    }


# -- framing ---------------------------------------------------------------------------------

MAX_MESSAGE_BYTES = 32 * 1024 * 1024
"""One message from a server may be this large; a 50 MB tool result is refused, not buffered."""
HEAD_BYTES = 4096
"""How much of a line's start is searched for its request id."""
UNREADABLE = "the server's answer is not valid JSON-RPC (not UTF-8 or JSON)"
"""The error answer for a line that cannot be read, when its request id can."""
_ID_PATTERN = re.compile(rb'"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)')

RequestId = int | str


def answer_id(head: bytes) -> RequestId | None:
    """The id of the answer whose line starts with ``head``; None when there is none to read,
    or when the line is a request or notification of the server's (it names a method)."""
    head = head[:HEAD_BYTES]
    if b'"method"' in head:
        return None
    match = _ID_PATTERN.search(head)
    if match is None:
        return None
    try:
        request_id = jsonutil.loads(match.group(1))
    except ValueError:
        return None
    return request_id if isinstance(request_id, int | str) else None


def error_answer(request_id: RequestId, message: str) -> dict[str, Any]:
    """The JSON-RPC error that fails request ``request_id`` in place of an answer we dropped."""
    error = {"code": INTERNAL_ERROR, "message": message}
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


@dataclass(frozen=True)
class Oversized:
    """A line over :data:`MAX_MESSAGE_BYTES`, dropped; the id of the request it answered, if
    its start names one (the error answer then fails that request at once)."""

    size: int
    request_id: RequestId | None

    @property
    def message(self) -> str:
        return (
            f"the server's answer is larger than {MAX_MESSAGE_BYTES // 2**20} MB "
            f"(at least {self.size // 2**20} MB) and was dropped"
        )


class LineFramer:
    """Complete lines from a stream of chunks, each at most :data:`MAX_MESSAGE_BYTES`.

    :meth:`feed` returns the complete, non-blank lines (without the newline) and, for a line
    that grew too large, one :class:`Oversized` the moment it passes the limit; the rest of
    that line is skipped as it comes, never buffered.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._dropped = 0  # > 0 while skipping the rest of an oversized line

    def feed(self, chunk: bytes) -> list[bytes | Oversized]:
        out: list[bytes | Oversized] = []
        while chunk:
            newline = chunk.find(b"\n")
            part, chunk = (chunk, b"") if newline < 0 else (chunk[:newline], chunk[newline + 1 :])
            if self._dropped:
                self._dropped += len(part)
            else:
                self._buffer += part
                if len(self._buffer) > MAX_MESSAGE_BYTES:
                    size = len(self._buffer)
                    out.append(Oversized(size, answer_id(bytes(self._buffer[:HEAD_BYTES]))))
                    self._dropped = size
                    self._buffer.clear()
            if newline >= 0:
                if not self._dropped and self._buffer.strip():
                    out.append(bytes(self._buffer))
                self._buffer.clear()
                self._dropped = 0
        return out


# -- the era decision ------------------------------------------------------------------------

DISCOVER_METHOD = "server/discover"
UNKNOWN_METHOD = "codebot/no-such-method"
"""A method no server implements: whether it is answered tells how the server treats methods
it does not know."""
UNKNOWN_ID = "codebot-discover-unknown"
SENTINEL_ID = "codebot-discover-sentinel"
"""The ``ping`` sent after the probe (allowed before initialization in every era)."""
IGNORED = (
    f"the server drops requests it does not know: {DISCOVER_METHOD} and "
    f"{UNKNOWN_METHOD} went unanswered, ping was answered"
)
"""The message of the ``-32601`` codebot answers a dropped ``server/discover`` with."""

Verdict = Literal["pass", "swallow", "answer_probe", "drop"]


class EraProbe:
    """Which era a stdio server speaks, decided by the order of its answers, never a clock.

    Right after ``server/discover`` the client sends :meth:`follow_ups`: a request of
    :data:`UNKNOWN_METHOD`, then a ``ping``. A server reads its input in order, so by the time
    the ping's answer arrives it has dealt with both earlier requests:

    - the unknown method was answered (an error, as JSON-RPC requires): the server answers
      what it does not know, so the probe's own answer is still coming, however slow (a
      2026-07-28 server busy starting up); it is waited for, within the SDK's own timeout;
    - the unknown method went unanswered: the server drops requests it does not know, and
      the silence on ``server/discover`` means the same. The client answers the probe itself
      with ``-32601`` (:meth:`ignored_answer`) at once and falls back to ``initialize``.

    :meth:`seen` is told the id of every answer from the server, and says what to do with it.
    Neither answer to the two extra requests is ever passed on.
    """

    def __init__(self) -> None:
        self.discover_id: RequestId | None = None
        self.answered = False
        """The probe got an answer, its own or the one :meth:`ignored_answer` made."""
        self.synthesized = False
        self.answers_unknown = False
        """The unknown method was answered before the ping."""

    def sent(self, discover_id: RequestId) -> list[dict[str, Any]]:
        """Note the probe's id; the two requests to send right after it."""
        self.discover_id = discover_id
        return [
            {"jsonrpc": "2.0", "id": UNKNOWN_ID, "method": UNKNOWN_METHOD},
            {"jsonrpc": "2.0", "id": SENTINEL_ID, "method": "ping"},
        ]

    def seen(self, response_id: Any) -> Verdict:
        """What to do with the server's answer to request ``response_id``:

        ``pass`` it on; ``swallow`` it (one of ours); ``answer_probe``: swallow it and answer
        the probe with :meth:`ignored_answer` now; ``drop`` it (the probe's late real answer,
        after it was answered for it).
        """
        if response_id == UNKNOWN_ID:
            self.answers_unknown = True
            return "swallow"
        if response_id == SENTINEL_ID:
            if self.answered or self.answers_unknown or self.discover_id is None:
                return "swallow"  # answered, or its answer is still coming
            self.answered = self.synthesized = True
            return "answer_probe"
        if self.discover_id is not None and response_id == self.discover_id:
            if self.synthesized:
                return "drop"
            self.answered = True
        return "pass"

    def ignored_answer(self) -> dict[str, Any]:
        """The ``-32601`` that answers a ``server/discover`` the server dropped."""
        return {
            "jsonrpc": "2.0",
            "id": self.discover_id,
            "error": {"code": METHOD_NOT_FOUND, "message": IGNORED},
        }


# -- the tool filter -------------------------------------------------------------------------

T = TypeVar("T")


def selected(name: str, include: Sequence[str] | None, exclude: Iterable[str]) -> bool:
    """``include_tools`` (None: all) and ``exclude_tools`` of an entry, as shell patterns."""
    if include is not None and not any(fnmatchcase(name, p) for p in include):
        return False
    return not any(fnmatchcase(name, p) for p in exclude)


def visibility(meta: Mapping[str, Any] | None) -> tuple[str, ...] | None:
    """``_meta.ui.visibility`` as a tuple of strings; None when the tool sets none.

    A lone string is read as a one-item list (``"app"`` is as app-only as ``["app"]``);
    anything else that is not a list reads as unset: the spec's default, visible to both.
    """
    if not isinstance(meta, Mapping):
        return None
    ui = meta.get("ui")
    if not isinstance(ui, Mapping):
        return None
    value = ui.get("visibility")
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, str))
    return None


def app_only(meta: Mapping[str, Any] | None) -> bool:
    """True when the tool's visibility leaves out ``"model"`` (``["app"]``, or ``[]``): MCP
    Apps says the host MUST NOT put it in the agent's tool list."""
    seen = visibility(meta)
    return seen is not None and "model" not in seen


@dataclass(frozen=True)
class Split(Generic[T]):
    """A server's tools, in listing order, as both paths split them."""

    offered: list[T]
    """Selected and not app-only: what the model may be offered."""
    apps: list[T]
    """Selected but app-only: never offered; ``mcp list --all`` shows them, ``mcp call``
    may call them."""
    hidden: tuple[str, ...]
    """Names the filters hide, and the app-only ones (their instructions are left out too)."""


def split_tools(
    tools: Sequence[T],
    include: Sequence[str] | None,
    exclude: Iterable[str],
    *,
    name: Callable[[T], str],
    meta: Callable[[T], Mapping[str, Any] | None],
) -> Split[T]:
    """Split a listing by the entry's filters and by app-only visibility."""
    exclude = tuple(exclude)
    chosen = [t for t in tools if selected(name(t), include, exclude)]
    apps = [t for t in chosen if app_only(meta(t))]
    app_names = {name(t) for t in apps}
    offered = [t for t in chosen if name(t) not in app_names]
    kept = {name(t) for t in offered}
    return Split(offered, apps, tuple(name(t) for t in tools if name(t) not in kept))
