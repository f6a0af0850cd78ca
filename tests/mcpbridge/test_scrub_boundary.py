"""An MCP result is scrubbed of every known secret once, where it enters codebot: the SDK path
(``to_tool_result``) and the SDK-free one (``plain_result``) alike, and marked so the loop
does not scrub it again."""

from __future__ import annotations

import json

import mcp_types as types

from codebot_mcp.core.secrets.redact import SECRETS
from codebot_mcp.mcpbridge.calls.results import plain_result
from codebot_mcp.mcpbridge.connection.tool import to_tool_result

TOKEN = "tok-boundary-7c1e0b5d9a"


def test_both_readers_scrub_a_result_once_at_the_boundary() -> None:
    SECRETS.add([TOKEN])
    raw = {
        "content": [{"type": "text", "text": f"you sent {TOKEN}"}],
        "structuredContent": {"header": f"Bearer {TOKEN}"},
        "isError": False,
    }
    lite = plain_result(raw)
    sdk = to_tool_result(types.CallToolResult.model_validate(raw))
    assert lite is not None
    for result in (lite, sdk):
        assert result.scrubbed
        assert result.text == "you sent ***"
        assert TOKEN not in json.dumps(result.data)
    assert lite.data == sdk.data
