"""An MCP Apps server (SEP-1865) on the SDK's ``MCPServer`` and ``Apps`` extension: "apps".

Tools:

- ``show_chart(data)``: bound to ``ui://chart/app.html``, no visibility (both model and app);
  returns the text ``chart of <data>`` (the spec's text fallback);
- ``refresh_chart()``: bound to the same page, ``visibility: ["app"]``: only the app may call
  it; returns ``refreshed`` (and ``refresh_chart was called`` on stderr, so a test can tell
  whether it ran);
- ``pick_colour(colour)``: ``visibility: ["model", "app"]``; returns ``picked <colour>``;
- ``plain(text)``: no ``_meta.ui`` at all; returns ``plain <text>``; with ``--record FILE``
  it appends the client's declared capabilities (one JSON line) to ``FILE``.

With ``--only-app`` only ``refresh_chart`` is served (a server whose every tool is app-only,
for doctor's warning). Resources: the app page ``ui://chart/app.html``
(``text/html;profile=mcp-app``) and a plain ``note://hello``.

Run: ``python -m tests.servers.apps [--only-app] [--record FILE]``
"""

from __future__ import annotations

import json
import sys

from mcp.server.apps import Apps
from mcp.server.mcpserver import Context, MCPServer

ONLY_APP = "--only-app" in sys.argv[1:]
RECORD = sys.argv[sys.argv.index("--record") + 1] if "--record" in sys.argv else None
PAGE = "ui://chart/app.html"

apps = Apps()
apps.add_html_resource(PAGE, "<!doctype html><title>chart</title><div id=chart></div>")


@apps.tool(resource_uri=PAGE, visibility=["app"], description="Redraw the chart (app only).")
def refresh_chart() -> str:
    print("refresh_chart was called", file=sys.stderr, flush=True)
    return "refreshed"


if not ONLY_APP:

    @apps.tool(resource_uri=PAGE, description="Draw a chart of the data.")
    def show_chart(data: str) -> str:
        return f"chart of {data}"

    @apps.tool(
        resource_uri=PAGE, visibility=["model", "app"], description="Pick a colour for the chart."
    )
    def pick_colour(colour: str) -> str:
        return f"picked {colour}"


mcp = MCPServer("apps", version="0.1.0", extensions=[apps])

if not ONLY_APP:

    @mcp.tool(description="A tool with no UI at all.")
    def plain(text: str, ctx: Context) -> str:
        if RECORD:
            caps = ctx.client_capabilities
            seen = caps.model_dump(by_alias=True, exclude_none=True) if caps else None
            with open(RECORD, "a", encoding="utf-8") as out:
                out.write(json.dumps({"protocol": ctx.protocol_version, "caps": seen}) + "\n")
        return f"plain {text}"

    @mcp.resource("note://hello", name="hello", description="A plain note.")
    def hello() -> str:
        return "hello"


if __name__ == "__main__":
    mcp.run()
