"""The words for a JSON-RPC error a server answered: its message, then its code, once.

Servers built on the TypeScript SDK put the code in the message already ("MCP error -32602:
Resource not found"); every place that shows such an error names the code itself, so the
server's own prefix is taken off first. Also the words for a call whose server kept asking for
input (SEP-2322). SDK-free: the hot path uses it too.
"""

from __future__ import annotations

import re

from codebot_mcp.mcpbridge.transport.wire import MAX_INPUT_ROUNDS

_PREFIX = re.compile(r"^\s*(?:MCP error|JSON-RPC error|Error)\s*-?\d+\s*:\s*", re.IGNORECASE)


def bare_message(message: str) -> str:
    """``message`` without the "MCP error <code>:" prefix(es) a server may have put on it."""
    while True:
        stripped = _PREFIX.sub("", message, count=1)
        if stripped == message:
            return message.strip() or "no message"
        message = stripped


def rpc_error_text(code: int, message: str) -> str:
    """``<message> (MCP error <code>)``, the code said once."""
    return f"{bare_message(message)} (MCP error {code})"


def too_many_rounds(server: str, what: str) -> str:
    """The message for a call that still asked for input after ``MAX_INPUT_ROUNDS`` rounds."""
    return (
        f"{what} on server '{server}' still asked for input after {MAX_INPUT_ROUNDS} rounds "
        "of answers; codebot gave up"
    )


TOO_MANY_ROUNDS_HINT = (
    "The server loops on its input requests (SEP-2322); report it to its authors."
)
