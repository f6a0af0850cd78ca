"""OAuth for http servers: the SDK's providers, a token store, the loopback callback.

- :mod:`.flow`: the OAuth client of one server entry (the SDK's providers);
- :mod:`.grants`: the grants without a browser (jwt-bearer, identity assertion), their
  credentials from :mod:`.credential_sources`, their failures as data in :mod:`.auth_errors`;
- :mod:`.dpop`: sender-constrained tokens (RFC 9449);
- :mod:`.guard`: where the flow may send requests (the origin rule);
- :mod:`.loopback`: the redirect listener; :mod:`.token_store`: where tokens live;
  :mod:`.revoke`: ``mcp logout``.

May import: :mod:`mcpbridge.tools`, :mod:`mcpbridge.transport` and ``core``.
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
