"""A server that answers with images (server "pictures"): a screenshot tool and an image
resource, as a browser or chart server would.

On the raw two-era base (:mod:`tests.servers._era`); the images are real PNG files built with
the standard library (:mod:`tests.fakes.pngs`). Tools:

- ``screenshot(width, height)``: a text block, then an ``image/png`` block of that size;
- ``two_charts()``: two image blocks (8×6 and 4×4);
- ``fake_image()``: an ``image/png`` block whose bytes are not an image (text).

Resources: ``chart://latest`` (a 16×10 PNG blob) and ``notes://readme`` (text).

Run: ``python -m tests.servers.pictures``
"""

from __future__ import annotations

import base64
from typing import Any

from tests.fakes.pngs import png
from tests.servers._era import Call, EraServer, RpcError, text_block, text_result, tool, tool_error
from tests.servers._mcpserver import ToolFailure, check_arguments

TOOLS = [
    tool("screenshot", "Take a screenshot of the page.", {"width": "integer", "height": "integer"}),
    tool("two_charts", "Draw two charts."),
    tool("fake_image", "Return an image block that is not an image."),
]
_BY_NAME = {t["name"]: t for t in TOOLS}
RESOURCES = [
    {"uri": "chart://latest", "name": "latest chart", "mimeType": "image/png"},
    {"uri": "notes://readme", "name": "readme", "mimeType": "text/plain"},
]


def image_block(data: bytes, mime: str = "image/png") -> dict[str, Any]:
    return {"type": "image", "data": base64.b64encode(data).decode("ascii"), "mimeType": mime}


class Pictures(EraServer):
    name = "pictures"
    tools = TOOLS

    def call_tool(self, name: str, arguments: dict[str, Any], call: Call) -> dict[str, Any]:
        try:
            args = check_arguments(name, _BY_NAME[name]["inputSchema"], arguments)
        except ToolFailure as exc:
            return tool_error(name, str(exc))
        if name == "screenshot":
            shot = png(args["width"], args["height"])
            return {"content": [text_block("the page"), image_block(shot)], "isError": False}
        if name == "two_charts":
            return {"content": [image_block(png(8, 6)), image_block(png(4, 4))], "isError": False}
        if name == "fake_image":
            return {"content": [image_block(b"just some text")], "isError": False}
        return text_result("?")

    def handle(self, method: str, call: Call) -> dict[str, Any]:
        if method == "resources/list":
            return {"resources": RESOURCES}
        if method == "resources/read":
            uri = call.params.get("uri")
            if uri == "chart://latest":
                blob = base64.b64encode(png(16, 10)).decode("ascii")
                return {"contents": [{"uri": uri, "mimeType": "image/png", "blob": blob}]}
            if uri == "notes://readme":
                return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": "hello"}]}
            raise RpcError(-32602, f"Unknown resource: {uri}", {"uri": uri})
        return super().handle(method, call)


def main() -> None:
    Pictures().serve()


if __name__ == "__main__":
    main()
