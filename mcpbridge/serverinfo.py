"""What codebot tells a server about itself, and what the handshake told us about it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mcp_types as types

from core import __version__


def client_info() -> types.Implementation:
    """What codebot tells servers about itself."""
    return types.Implementation(name="codebot", version=__version__)


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """What the handshake told us."""

    protocol_version: str
    name: str | None
    version: str | None
    capabilities: dict[str, Any]
    instructions: str | None
    handshake_ms: float
