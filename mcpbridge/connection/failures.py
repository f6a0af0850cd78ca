"""Why a server or a call is not usable: the stage it failed at, a readable reason and a fix.

The records alone, on the standard library and ``core``: a manager with no server to start
(``chat`` without MCP servers) and the hot path (``mcpbridge.calls.lite``) never load the
SDK. :class:`Failure` is a server's (``mcp list``, ``mcp call`` through :meth:`Failure.error`,
doctor), :class:`CallFailure` one call's (stage "call": ``mcp call``, ``--batch``, the warm
holder, the model). Every wording of a call's failure is a constructor here, used by both
paths (the SDK path through :mod:`.explain`, which reads what the SDK raised; the hot path
directly): the same failure makes the same record and the same text on either path.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from codebot_mcp.core.config.servers import ServerConfig
from codebot_mcp.core.errors import CodebotError, ServerError, UsageError

Stage = Literal["config", "launch", "handshake", "auth", "list", "call", "lock"]
"""Where it failed; ``lock``: connected, but held back by the pinned tools
(``mcpbridge.tools.tool_pins``: a rug pull, or a tool the lock does not know)."""

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


def no_answer(config: ServerConfig) -> tuple[str, str]:
    """The message and hint of a server silent for its ``timeout`` during the handshake or
    the first listing (both paths: ``Client.run`` and the hot path)."""
    return (
        f"no answer within {config.timeout:g} s",
        f"Raise 'timeout' for server '{config.name}' in {config.source}, "
        "or check that the server starts on its own.",
    )


def closed_early(config: ServerConfig) -> tuple[str, str]:
    """The message and hint of a server that closed the connection before it was usable
    (the SDK's ``CONNECTION_CLOSED`` in ``explain``, the hot path's end of stdout)."""
    return (
        "the server closed the connection (it exited or crashed)",
        f"Run the command of server '{config.name}' in {config.source} by hand to see why "
        "it exits.",
    )


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


CallKind = Literal[
    "timeout", "closed", "oversized", "refused", "rejected", "auth", "gone", "invalid",
    "rounds", "output_schema", "broken", "unexpected",
]  # fmt: skip
"""What went wrong with one call: no answer in time, the server closed the connection, an
answer over the size cap, our own refusal of a request inside the call (SEP-2322), an error
answer, an authorization failure, the connection lost, a result the MCP schema rejects, input
rounds without end, a result that breaks the tool's output schema, a server that breaks the
protocol otherwise, anything else."""

BREAKS = "The server breaks the protocol; report it to its authors."
"""The hint of every failure that is the server's fault."""


@dataclass(frozen=True, slots=True)
class CallFailure:
    """One failed ``tools/call``, worded once, where the bridge meets the server (stage
    "call"): every reader renders this record. ``mcp call``, ``--batch`` and the warm holder
    raise :meth:`error` (the message, the hint, the exit code); the model is told
    :attr:`model_text` (:meth:`MCPTool.execute`, shorter: no hint for a terminal)."""

    server: str
    tool: str
    """The tool's own name on its server."""
    kind: CallKind
    message: str
    hint: str | None = None
    model_text: str = ""
    """What the model is told (empty: :attr:`message`)."""
    stage: Stage = "call"

    def error(self) -> CodebotError:
        """The error ``mcp call`` reports: exit 1 for our own refusal inside the call (as when
        the tool reports an error), 4 (server) for everything else."""
        cls = CodebotError if self.kind == "refused" else ServerError
        return cls(self.message, hint=self.hint)

    def for_model(self) -> str:
        """The tool result's text for the model."""
        return self.model_text or self.message


def call_failure(
    code: int,
    message: str,
    config: ServerConfig,
    tool: str,
    *,
    restarts: bool = True,
    model_name: str | None = None,
    oversized: bool = False,
) -> CallFailure:
    """A call that ended in a JSON-RPC error ``code`` (the SDK's ``MCPError``, or the hot
    path's wire), ``message`` redacted already.

    ``restarts``: a server that closed the connection will be started again by the next call
    (always for a new ``mcp call``; once per session in ``--batch``, the warm holder and chat).
    ``model_name``: the tool's model-visible name; ``oversized``: the connection closed because
    an answer went over the size cap.
    """
    from codebot_mcp.mcpbridge.transport.limits import default_tool_timeout
    from codebot_mcp.mcpbridge.transport.rpcerror import bare_message, rpc_error_text
    from codebot_mcp.mcpbridge.transport.wire import (
        CONNECTION_CLOSED,
        REQUEST_TIMEOUT,
        USER_REJECTED,
    )

    name = config.name
    answered = f"server '{name}' answered an error: {rpc_error_text(code, message)}"
    if code == CONNECTION_CLOSED and oversized:
        return CallFailure(
            name,
            tool,
            "oversized",
            f"server '{name}' sent an answer to '{tool}' larger than 32 MB; it was dropped",
            "Ask for less (a smaller page or range), or ask its author to cap it.",
            f"server '{name}' sent an answer larger than 32 MB; it was dropped",
        )
    if code == REQUEST_TIMEOUT:
        limit = config.tool_timeout or default_tool_timeout()
        return CallFailure(
            name,
            tool,
            "timeout",
            f"'{tool}' on server '{name}' gave no answer within {limit:g} s",
            "Pass a larger --timeout, or set 'tool_timeout' for the server.",
        )
    if code == CONNECTION_CLOSED:
        see = f"its stderr is logged (`codebot mcp list --server {name}` shows it)"
        again = " The next call restarts it." if restarts else ""
        return CallFailure(
            name,
            tool,
            "closed",
            f"server '{name}' closed the connection during '{tool}' (it exited or crashed)",
            f"The next call restarts it; {see}." if restarts else f"{see[0].upper()}{see[1:]}.",
            f"server '{name}' closed the connection during the call (it exited).{again}",
        )
    if code == USER_REJECTED:  # our own refusal of a request inside the call (SEP-2322)
        return CallFailure(
            name,
            tool,
            "refused",
            f"'{tool}' on server '{name}' could not finish: {bare_message(message)}",
            "Pass --allow-sampling SERVER, or --elicit, to answer the server's requests.",
            answered,
        )
    return CallFailure(
        name,
        tool,
        "rejected",
        f"server '{name}' rejected the call to '{tool}': {rpc_error_text(code, message)}",
        None,
        answered,
    )


def invalid_result(server: str, tool: str, first: str, *, model_name: str = "") -> CallFailure:
    """A result the MCP schema rejects; ``first``: its first problem (``explain``)."""
    text = f"server '{server}' sent a result that does not follow the MCP schema: {first}"
    model = f"{model_name or tool} failed: {text}" if model_name else ""
    return CallFailure(server, tool, "invalid", f"'{tool}' failed: {text}", BREAKS, model)


def too_many_rounds_failure(server: str, tool: str) -> CallFailure:
    """A call whose server still asked for input after the last round (SEP-2322)."""
    from codebot_mcp.mcpbridge.transport.rpcerror import TOO_MANY_ROUNDS_HINT, too_many_rounds

    return CallFailure(
        server, tool, "rounds", too_many_rounds(server, f"'{tool}'"), TOO_MANY_ROUNDS_HINT
    )


def output_schema_failure(server: str, tool: str, detail: str, model_text: str = "") -> CallFailure:
    """A result that breaks the tool's own ``outputSchema`` (``detail`` redacted)."""
    return CallFailure(
        server,
        tool,
        "output_schema",
        f"'{tool}' on server '{server}' returned a result that breaks its own output schema: "
        f"{detail}",
        "The server breaks its tool's outputSchema; report it to its authors.",
        model_text,
    )


def broken(server: str, tool: str, message: str) -> CallFailure:
    """A server that breaks the protocol during the call in another way (``message`` whole)."""
    return CallFailure(server, tool, "broken", message, BREAKS)


def not_jsonrpc(server: str, tool: str, detail: str) -> CallFailure:
    """The answer to the call breaks JSON-RPC (the hot path reads the wire itself)."""
    text = f"server '{server}' sent an answer to the call that is not valid JSON-RPC"
    return broken(server, tool, f"'{tool}' failed: {text} ({detail})")


def unreadable_input(server: str, tool: str) -> CallFailure:
    """Input requests (SEP-2322) the SDK's model read but codebot cannot answer."""
    return broken(
        server, tool, f"'{tool}' on server '{server}' asked for input codebot cannot read"
    )


def undeclared_task(server: str, tool: str) -> CallFailure:
    """A task answer (SEP-2663) from a server whose ``server/discover`` offers no tasks."""
    text = (
        f"server '{server}' answered '{tool}' with a task, but its server/discover "
        "does not advertise the tasks extension (SEP-2663 negotiates it both ways)"
    )
    return broken(server, tool, text)


def no_result(server: str, tool: str) -> CallFailure:
    """An answer of another shape than a call's result, read by the SDK's model."""
    return broken(server, tool, f"'{tool}' failed: server '{server}' sent no result")


def unknown_tool(server: str, name: str, names: list[str]) -> UsageError:
    """The usage error for a tool the server does not list (both paths; found before any
    call): close matches, or how to list them."""
    import difflib

    close = difflib.get_close_matches(name, names, n=3)
    hint = (
        f"Did you mean {', '.join(close)}?"
        if close
        else f"List them with: codebot mcp list --server {server}"
    )
    counted = f"{len(names)} tool{'' if len(names) == 1 else 's'}"
    return UsageError(f"server '{server}' has no tool '{name}' ({counted})", hint=hint)
