"""The words for a JSON-RPC error a server answered: its message, then its code, once.

Servers built on the TypeScript SDK put the code in the message already ("MCP error -32602:
Resource not found"); every place that shows such an error names the code itself, so the
server's own prefix is taken off first. SDK-free: the hot path uses it too.
"""

from __future__ import annotations

import re

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
