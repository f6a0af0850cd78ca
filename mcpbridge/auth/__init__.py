"""OAuth for http servers: the SDK's providers, a token store, the loopback callback."""

from mcpbridge.auth.flow import AuthTrace, LoginOptions, NeedsLoginError, ServerAuth
from mcpbridge.auth.loopback import LoginError, LoopbackListener
from mcpbridge.auth.store import TokenStore

__all__ = [
    "AuthTrace",
    "LoginError",
    "LoginOptions",
    "LoopbackListener",
    "NeedsLoginError",
    "ServerAuth",
    "TokenStore",
]
