"""Raw JSON-RPC stdio server (no SDK) whose results do not follow the MCP schema.

A 2025-11-25 server ("malformed") with tools, resources and prompts, each answered wrongly:

- ``tools/call`` of ``bad_content``: a content block of unknown type ``"bogus"``;
  ``tools/call`` of ``no_content``: a result without ``content``; ``good``: a valid text result;
- ``resources/list``: ``note://a`` (valid) and a ``resources/templates/list`` with none;
  ``resources/read``: ``contents`` is a string, not a list;
- ``prompts/list``: one prompt ``broken``; ``prompts/get``: messages of unknown role.
- ``resources/list`` pages: with ``--pages N`` it serves N pages of one resource each,
  ``page://1`` … ``page://N``, linked by cursors.

Run: ``python -m tests.servers.malformed [--pages N]``
"""

from __future__ import annotations

import argparse
from typing import Any

from tests.servers._raw import initialize_result, serve, text_result


def _tool(name: str) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object", "properties": {}}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=0)
    pages = parser.parse_args().pages

    def initialize(params: dict[str, Any]) -> dict[str, Any]:
        result = initialize_result(params, name="malformed")
        result["capabilities"] = {"tools": {}, "resources": {}, "prompts": {}}
        return result

    def call(params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        if name == "bad_content":
            return {"content": [{"type": "bogus", "stuff": 1}]}
        if name == "no_content":
            return {"isError": False}
        return text_result("fine")

    def list_resources(params: dict[str, Any]) -> dict[str, Any]:
        if not pages:
            return {"resources": [{"uri": "note://a", "name": "a"}]}
        cursor = int(params.get("cursor") or 1)
        result: dict[str, Any] = {"resources": [{"uri": f"page://{cursor}", "name": f"p{cursor}"}]}
        if cursor < pages:
            result["nextCursor"] = str(cursor + 1)
        return result

    serve(
        {
            "initialize": initialize,
            "ping": lambda _p: {},
            "tools/list": lambda _p: {
                "tools": [_tool("bad_content"), _tool("no_content"), _tool("good")]
            },
            "tools/call": call,
            "resources/list": list_resources,
            "resources/templates/list": lambda _p: {"resourceTemplates": []},
            "resources/read": lambda _p: {"contents": "not a list"},
            "prompts/list": lambda _p: {"prompts": [{"name": "broken"}]},
            "prompts/get": lambda _p: {
                "messages": [{"role": "robot", "content": {"type": "text", "text": "x"}}]
            },
        }
    )


if __name__ == "__main__":
    main()
