"""MCP Apps (SEP-1865), degraded for a terminal: what is app-only, what is a ``ui://`` page.

codebot renders no HTML and does not advertise ``io.modelcontextprotocol/ui``. A server may
still list tools bound to a ``ui://`` page; such a tool works as a plain tool (the spec asks
servers to return text for clients without Apps), *except* one whose ``_meta.ui.visibility``
leaves out ``"model"``: the spec says the host MUST NOT put it in the agent's tool list. So
those tools never reach the model, and ``mcp list`` hides them unless ``--all``.

SDK-free: the hot path (:mod:`mcpbridge.calls.lite`) reads raw JSON with it, the SDK path the
``meta`` of ``mcp_types.Tool``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from codebot_mcp.core.tools.sources import UI_SCHEME, is_app_page
from codebot_mcp.mcpbridge.tools.extensions import UI as UI_EXTENSION

__all__ = ["UI_EXTENSION", "UI_SCHEME", "app_only", "is_app_page", "visibility"]


def visibility(meta: Mapping[str, Any] | None) -> tuple[str, ...] | None:
    """``_meta.ui.visibility`` as a tuple of strings; None when the tool sets none.

    A lone string is read as a one-item list (``"app"`` is as app-only as ``["app"]``);
    anything else that is not a list reads as unset: the spec's default, visible to both.
    """
    if not isinstance(meta, Mapping):
        return None
    ui = meta.get("ui")
    if not isinstance(ui, Mapping):
        return None
    value = ui.get("visibility")  # pyright: ignore[reportUnknownMemberType]
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, str))  # pyright: ignore[reportUnknownVariableType]
    return None


def app_only(meta: Mapping[str, Any] | None) -> bool:
    """True when the tool's visibility leaves out ``"model"`` (``["app"]``, or ``[]``)."""
    seen = visibility(meta)
    return seen is not None and "model" not in seen
