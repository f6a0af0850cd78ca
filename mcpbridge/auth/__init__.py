"""OAuth for http servers: the SDK's providers, a token store, the loopback callback."""

from codebot_mcp.mcpbridge.auth.flow import AuthTrace, LoginOptions, NeedsLoginError, ServerAuth
from codebot_mcp.mcpbridge.auth.loopback import LoginError, LoopbackListener
from codebot_mcp.mcpbridge.auth.store import TokenStore

__all__ = [
    "AuthTrace",
    "LoginError",
    "LoginOptions",
    "LoopbackListener",
    "NeedsLoginError",
    "ServerAuth",
    "TokenStore",
]
