"""Where OAuth tokens live: one 0700 folder per (settings file, server URL, client).

``<state dir>/oauth/<key>/`` holds ``tokens.json`` (access and refresh token, with the
absolute expiry), ``client.json`` (the registration), ``server.json`` (the authorization
server's endpoints, for refresh and revocation) and ``dpop.json`` (the DPoP key the tokens
are bound to, and whether they are), each 0600. The key is a hash of the file
that defined the entry, the URL and the client, so another entry with the same name, another
project, or another client never reads these tokens.

:class:`TokenStore` implements the SDK's ``TokenStorage`` protocol.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from codebot_mcp.core import jsonutil
from codebot_mcp.core.config import paths
from codebot_mcp.core.config.servers import ServerConfig
from codebot_mcp.core.fsutil import atomic_write
from codebot_mcp.core.secrets.redact import SECRETS

STORE_DIR = "oauth"
EXPIRY_MARGIN_SECONDS = 30
"""A token this close to its expiry is refreshed rather than sent (clocks and latency)."""
MAX_FILE_BYTES = 256 * 1024
"""A token file larger than this is not ours: ignore it."""


def _scrub_everywhere(token: OAuthToken) -> None:
    """An access or refresh token is a secret of this run: the process-wide redactor masks
    it in tool results (a server that echoes it), messages, transcripts and sessions."""
    SECRETS.add(t for t in (token.access_token, token.refresh_token) if t)


def store_key(config: ServerConfig) -> str:
    """The folder name for this entry's tokens."""
    source = str(config.source.resolve()) if config.source.is_absolute() else str(config.source)
    text = json.dumps([source, config.url or "", config.oauth.client_key])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def store_root() -> Path:
    """``<state dir>/oauth``."""
    return paths.state_dir() / STORE_DIR


class TokenStore:
    """Tokens and client registration of one server entry, on disk."""

    def __init__(self, config: ServerConfig, *, hide_tokens: bool = False) -> None:
        self.config = config
        self.directory = store_root() / store_key(config)
        self.hide_tokens = hide_tokens
        """True during ``mcp login``: stored tokens are ignored (new ones are still saved)."""
        self.saved = False
        """True once new tokens were written in this run."""
        self.preset: OAuthClientInformationFull | None = None
        """A pre-registered client from settings: it wins over any stored registration."""
        self.on_saved: Callable[[], None] | None = None
        """Called right after new tokens are written (the flow saves its discovery then)."""

    # -- the SDK's TokenStorage protocol -----------------------------------------------

    async def get_tokens(self) -> OAuthToken | None:
        """The stored token; an expired access token is withheld so the SDK refreshes first."""
        if self.hide_tokens:
            return None
        data = self._read("tokens.json")
        if data is None:
            return None
        try:
            token = OAuthToken.model_validate(data.get("token"))
        except ValueError:
            return None
        _scrub_everywhere(token)
        expires_at = data.get("expires_at")
        if isinstance(expires_at, int | float):
            remaining = int(expires_at - time.time())
            if remaining <= EXPIRY_MARGIN_SECONDS:
                if not token.refresh_token:
                    return None
                # The provider refreshes a token it holds no valid access token for.
                return token.model_copy(update={"access_token": "", "expires_in": 0})
            token = token.model_copy(update={"expires_in": remaining})
        return token

    async def set_tokens(self, tokens: OAuthToken) -> None:
        """Save tokens with their absolute expiry; from now on they are scrubbed from every
        result, message and session of this process."""
        _scrub_everywhere(tokens)
        expires_at = time.time() + tokens.expires_in if tokens.expires_in is not None else None
        self._write(
            "tokens.json",
            {"token": tokens.model_dump(mode="json", exclude_none=True), "expires_at": expires_at},
        )
        self.hide_tokens = False
        self.saved = True
        if self.on_saved is not None:
            self.on_saved()

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        """The pre-registered client, else the stored registration, if any."""
        if self.preset is not None:
            return self.preset
        data = self._read("client.json")
        if data is None:
            return None
        try:
            client = OAuthClientInformationFull.model_validate(data)
        except ValueError:
            return None
        if client.client_secret:
            SECRETS.add([client.client_secret])
        return client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        """Save the registration (dynamic, CIMD or pre-registered)."""
        if client_info.client_secret:
            SECRETS.add([client_info.client_secret])
        self._write("client.json", client_info.model_dump(mode="json", exclude_none=True))

    # -- codebot's own --------------------------------------------------------------------

    def forget_client(self) -> None:
        """Drop the stored registration (its redirect port is gone): the SDK registers anew."""
        (self.directory / "client.json").unlink(missing_ok=True)

    def has_tokens(self) -> bool:
        """True when tokens are stored (valid or refreshable or not)."""
        return (self.directory / "tokens.json").is_file()

    def save_server(self, metadata: dict[str, Any]) -> None:
        """Remember the authorization server's endpoints (for logout's revocation)."""
        self._write("server.json", {**metadata, "server": self.config.name, "url": self.config.url})

    def load_server(self) -> dict[str, Any]:
        """What :meth:`save_server` wrote, or an empty dict."""
        return self._read("server.json") or {}

    def load_dpop(self) -> dict[str, Any]:
        """What :meth:`save_dpop` wrote (the DPoP key and binding), or an empty dict."""
        return self._read("dpop.json") or {}

    def save_dpop(self, data: dict[str, Any]) -> None:
        """Keep the DPoP key and binding beside the tokens (0600: the key is a secret)."""
        self._write("dpop.json", data)

    def read_tokens_raw(self) -> OAuthToken | None:
        """The stored token as it is (for revocation), expired or not."""
        data = self._read("tokens.json")
        try:
            return OAuthToken.model_validate(data.get("token")) if data else None
        except ValueError:
            return None

    def secrets(self) -> list[str]:
        """Every stored secret (tokens, client secret), for the redactor."""
        found: list[str] = []
        tokens = self._read("tokens.json")
        if tokens and isinstance(tokens.get("token"), dict):
            for key in ("access_token", "refresh_token"):
                value = tokens["token"].get(key)
                if isinstance(value, str) and value:
                    found.append(value)
        client = self._read("client.json")
        if client and isinstance(client.get("client_secret"), str):
            found.append(client["client_secret"])
        return found

    def delete(self) -> bool:
        """Remove everything stored for this entry; True when something was there."""
        if not self.directory.exists():
            return False
        shutil.rmtree(self.directory, ignore_errors=True)
        return True

    def _read(self, name: str) -> dict[str, Any] | None:
        path = self.directory / name
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                return None
            data = jsonutil.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def _write(self, name: str, data: dict[str, Any]) -> None:
        paths.private_dir(self.directory)
        target = self.directory / name
        atomic_write(target, json.dumps(data, indent=2), mode=0o600)
