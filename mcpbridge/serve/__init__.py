"""``codebot mcp serve``: codebot's own tools (read, edit, write, glob, grep, bash, ask) as an
MCP server over stdio: the server (:mod:`.server`), the tools' definitions and truthful hints
(:mod:`.served_tools`), approvals asked of the client (:mod:`.approval`), and ``ask``, a whole
chat session behind one call (:mod:`.ask`).

May import: every other part of :mod:`mcpbridge` and ``core``; ``cli`` composes it.
"""

from codebot_mcp.mcpbridge.serve.ask import Asker, AskOutcome, AskTool
from codebot_mcp.mcpbridge.serve.served_tools import TOOL_NAMES
from codebot_mcp.mcpbridge.serve.server import Served, build_server, serve_stdio

__all__ = [
    "TOOL_NAMES",
    "AskOutcome",
    "AskTool",
    "Asker",
    "Served",
    "build_server",
    "serve_stdio",
]
