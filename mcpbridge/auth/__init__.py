"""OAuth for http servers: the SDK's providers, a token store, the loopback callback.

Modules: ``flow`` (the provider of one entry), ``grants`` (jwt-bearer, identity assertion),
``dpop`` (RFC 9449 binding), ``sources`` (assertion and ID token), ``errors``, ``guard``
(the origin rule), ``loopback``, ``store``, ``revoke``.
"""

from codebot_mcp.mcpbridge.auth.auth_errors import GrantError
from codebot_mcp.mcpbridge.auth.flow import AuthTrace, LoginOptions, NeedsLoginError, ServerAuth
from codebot_mcp.mcpbridge.auth.loopback import LoginError, LoopbackListener
from codebot_mcp.mcpbridge.auth.token_store import TokenStore

__all__ = [
    "AuthTrace",
    "GrantError",
    "LoginError",
    "LoginOptions",
    "LoopbackListener",
    "NeedsLoginError",
    "ServerAuth",
    "TokenStore",
]
