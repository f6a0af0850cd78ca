"""The only module of the bridge that imports private parts of the MCP SDK.

Everything else imports from public paths (``mcp``, ``mcp.client``, ``mcp_types``) or from
here. ``pyproject.toml`` pins ``mcp`` below its next major; when the SDK moves these names,
this file is the one to change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mcp.client import Transport

# private: the (read stream, write stream) pair a Transport yields; the SDK exports the
# Transport protocol but not this alias of its value (mcp 2.3).
from mcp.client._transport import TransportStreams  # noqa: TID251

if TYPE_CHECKING:
    from mcp.client.extension import ResultClaim

__all__ = ["Transport", "TransportStreams", "read_call_result"]


def read_call_result(
    raw: Mapping[str, Any], version: str, claims: Sequence[ResultClaim[Any]]
) -> Any:
    """A ``tools/call`` answer read as the SDK's session reads it at ``version`` (mcp 2.3,
    ``ClientSession.send_request``): the version's own schema first, a later revision's fields
    dropped, then the result shapes of the era (at 2026-07-28 one arm per result claim). The
    hot path reads the rare answer it cannot read itself with it, so a result the SDK rejects
    is rejected in the same words. Private: ``ClientSession`` builds these; nothing public
    returns them.

    Raises:
        pydantic.ValidationError: the SDK path would reject the answer.
    """
    from mcp.client.session import (
        _build_call_tool_adapter,  # pyright: ignore[reportPrivateUsage]
        _CallToolResultAdapter,  # pyright: ignore[reportPrivateUsage]
        _later_revision_fields,  # pyright: ignore[reportPrivateUsage]
    )
    from mcp_types import methods
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    method = "tools/call"
    try:
        methods.validate_server_result(method, version, raw)
    except KeyError:
        pass
    foreign = _later_revision_fields(method, version)
    if not foreign.isdisjoint(raw):
        raw = {key: value for key, value in raw.items() if key not in foreign}
    if version not in MODERN_PROTOCOL_VERSIONS:
        return _CallToolResultAdapter.validate_python(raw, by_name=False)
    adapter = _build_call_tool_adapter({claim.result_type: claim for claim in claims})
    return adapter.validate_python(raw, by_name=False)
