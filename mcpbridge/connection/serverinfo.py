"""What codebot tells a server about itself, and what the handshake told us about it (as
:class:`.contract.ServerInfo`, the record the hot path makes too)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import mcp_types as types
from mcp.client.extension import ClientExtension, advertise

if TYPE_CHECKING:
    from mcp import Client as SDKClient

from codebot_mcp.mcpbridge.connection.contract import ServerInfo
from codebot_mcp.mcpbridge.transport import wire


def client_info() -> types.Implementation:
    """What codebot tells servers about itself (:func:`.wire.client_info`, as the SDK's model)."""
    info = wire.client_info()
    return types.Implementation(name=info["name"], version=info["version"])


def client_extensions() -> list[ClientExtension]:
    """The extensions codebot declares under ``capabilities.extensions`` on every wire
    (:data:`.wire.CLIENT_CAPABILITIES`; tasks, modern wires only, come with ``TasksExtension``)."""
    return [advertise(identifier) for identifier in wire.CLIENT_CAPABILITIES["extensions"]]


def server_info(session: SDKClient, started: float) -> ServerInfo:
    """The handshake's facts, with how long it took since ``started`` (perf_counter)."""
    impl = session.server_info
    caps = session.server_capabilities.model_dump(by_alias=True, mode="json", exclude_none=True)
    return ServerInfo(
        protocol_version=session.protocol_version,
        name=impl.name if impl else None,
        version=impl.version if impl else None,
        capabilities=caps,
        instructions=session.instructions,
        handshake_ms=(time.perf_counter() - started) * 1000,
    )
