"""An MCP Apps server (SEP-1865): "apps".

It answers as the SDK's ``MCPServer`` with the ``Apps`` extension did, in both protocol eras,
on the raw two-era base (:mod:`tests.servers._era`, standard library only: it starts in a
twentieth of the CPU). ``server/discover`` declares ``io.modelcontextprotocol/ui``
(``initialize`` does not, as the SDK's does not). Tools (each returns its text as one block
and as ``structuredContent.result``; arguments are checked as pydantic checks them):

- ``show_chart(data)``: bound to ``ui://chart/app.html``, no visibility (both model and app);
  returns the text ``chart of <data>`` (the spec's text fallback);
- ``refresh_chart()``: bound to the same page, ``visibility: ["app"]``: only the app may call
  it; returns ``refreshed`` (and ``refresh_chart was called`` on stderr, so a test can tell
  whether it ran);
- ``pick_colour(colour)``: ``visibility: ["model", "app"]``; returns ``picked <colour>``;
- ``plain(text)``: no ``_meta.ui`` at all; returns ``plain <text>``; with ``--record FILE``
  it appends the protocol version and the client's declared capabilities (one JSON line,
  ``{"protocol": ..., "caps": ...}``, the capabilities as the SDK's model keeps them) to
  ``FILE``.

With ``--only-app`` only ``refresh_chart`` is served (a server whose every tool is app-only,
for doctor's warning), and only the page. Resources: the app page ``ui://chart/app.html``
(``text/html;profile=mcp-app``) and a plain ``note://hello``.

Run: ``python -m tests.servers.apps [--only-app] [--record FILE]``
"""

from __future__ import annotations

import json
import sys
from typing import Any, ClassVar

from tests.servers._era import (
    MODERN,
    Call,
    EraServer,
    RpcError,
    text_result,
    tool,
    tool_error,
)

PAGE = "ui://chart/app.html"
APP_MIME_TYPE = "text/html;profile=mcp-app"
HTML = "<!doctype html><title>chart</title><div id=chart></div>"


def _tool(
    name: str, description: str, params: list[str], ui: dict[str, Any] | None
) -> dict[str, Any]:
    """A tool as ``MCPServer`` lists a function of string ``params`` returning ``str``."""
    output = {
        "properties": {"result": {"title": "Result", "type": "string"}},
        "required": ["result"],
        "title": f"{name}Output",
        "type": "object",
    }
    listed = tool(name, description, dict.fromkeys(params, "string"), outputSchema=output)
    return {**listed, "_meta": {"ui": ui}} if ui is not None else listed


REFRESH = _tool(
    "refresh_chart",
    "Redraw the chart (app only).",
    [],
    {"resourceUri": PAGE, "visibility": ["app"]},
)
TOOLS = [
    REFRESH,
    _tool("show_chart", "Draw a chart of the data.", ["data"], {"resourceUri": PAGE}),
    _tool(
        "pick_colour",
        "Pick a colour for the chart.",
        ["colour"],
        {"resourceUri": PAGE, "visibility": ["model", "app"]},
    ),
    _tool("plain", "A tool with no UI at all.", ["text"], None),
]
PARAMS = {t["name"]: list(t["inputSchema"]["properties"]) for t in TOOLS}
PAGE_RESOURCE = {"mimeType": APP_MIME_TYPE, "name": PAGE, "uri": PAGE}
NOTE_RESOURCE = {
    "description": "A plain note.",
    "mimeType": "text/plain",
    "name": "hello",
    "uri": "note://hello",
}
CONTENTS = {PAGE: (APP_MIME_TYPE, HTML), "note://hello": ("text/plain", "hello")}

ANY = None
CAPABILITIES_MODEL: dict[str, Any] = {
    "experimental": ANY,
    "sampling": {"context": {}, "tools": {}},
    "elicitation": {"form": {}, "url": {}},
    "roots": {"listChanged": ANY},
    "extensions": ANY,
    "tasks": {
        "list": {},
        "cancel": {},
        "requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}},
    },
}
"""The fields of the SDK's ``ClientCapabilities`` (nested, in its order); ``ANY`` is kept
whole. ``model_dump(by_alias=True, exclude_none=True)`` keeps these and drops the rest."""


def dumped(value: Any, model: dict[str, Any] | None) -> Any:
    """``value`` as the SDK's model keeps it: unknown keys and ``None`` values dropped."""
    if model is ANY or not isinstance(value, dict):
        return value
    return {
        key: dumped(value[key], inner) for key, inner in model.items() if value.get(key) is not None
    }


def shown(value: Any) -> str:
    """pydantic's ``input_value``: the repr, cut to its first 25 and last 24 bytes past 50."""
    text = repr(value)
    raw = text.encode()
    if len(raw) <= 50:
        return text
    return raw[:25].decode(errors="ignore") + "..." + raw[-24:].decode(errors="ignore")


def checked(name: str, params: list[str], arguments: dict[str, Any]) -> str | None:
    """pydantic's message for string ``params`` it would refuse, or ``None``."""
    problems = []
    for field in params:
        if field not in arguments:
            kind, line = "missing", "Field required"
            value = f"{shown(arguments)}, input_type=dict"
        elif not isinstance(arguments[field], str):
            kind, line = "string_type", "Input should be a valid string"
            value = f"{shown(arguments[field])}, input_type={type(arguments[field]).__name__}"
        else:
            continue
        problems.append(
            f"{field}\n  {line} [type={kind}, input_value={value}]\n"
            f"    For further information visit https://errors.pydantic.dev/2.14/v/{kind}"
        )
    if not problems:
        return None
    count = f"{len(problems)} validation error" + ("s" if len(problems) > 1 else "")
    return f"{count} for {name}Arguments\n" + "\n".join(problems)


class Apps(EraServer):
    """The tools and resources above, on the raw two-era base."""

    name = "apps"
    version = "0.1.0"
    modern_capabilities: ClassVar[dict[str, Any]] = {
        **EraServer.modern_capabilities,
        "extensions": {"io.modelcontextprotocol/ui": {}},
    }

    def __init__(self, only_app: bool, record: str | None) -> None:
        super().__init__()
        self.served = [REFRESH] if only_app else TOOLS
        self.resources = [PAGE_RESOURCE] if only_app else [PAGE_RESOURCE, NOTE_RESOURCE]
        self.record = record

    def list_tools(self, call: Call) -> dict[str, Any]:
        return {"tools": self.served}

    def known_tool(self, name: str) -> bool:
        return any(t["name"] == name for t in self.served)

    def handle(self, method: str, call: Call) -> dict[str, Any]:
        if method == "resources/list":
            return {"resources": self.resources}
        if method == "resources/read":
            uri = call.params.get("uri")
            if not isinstance(uri, str):
                raise RpcError(-32602, "Invalid request parameters", "")
            if not any(r["uri"] == uri for r in self.resources):
                raise RpcError(-32602, f"Unknown resource: {uri}", {"uri": uri})
            mime, text = CONTENTS[uri]
            contents = [{"mimeType": mime, "text": text, "uri": uri}]
            return self._cacheable(call, {"contents": contents})
        return super().handle(method, call)

    def call_tool(self, name: str, arguments: dict[str, Any], call: Call) -> dict[str, Any]:
        problem = checked(name, PARAMS[name], arguments)
        if problem is not None:
            return tool_error(name, problem)
        if name == "refresh_chart":
            print("refresh_chart was called", file=sys.stderr, flush=True)
            text = "refreshed"
        elif name == "show_chart":
            text = f"chart of {arguments['data']}"
        elif name == "pick_colour":
            text = f"picked {arguments['colour']}"
        else:
            self.remember(call)
            text = f"plain {arguments['text']}"
        return {**text_result(text), "structuredContent": {"result": text}}

    def remember(self, call: Call) -> None:
        """``--record``: the protocol version and the client's capabilities, one JSON line."""
        if not self.record:
            return
        protocol = MODERN if call.modern else self.protocol_version
        caps = dumped(call.client_capabilities, CAPABILITIES_MODEL)
        with open(self.record, "a", encoding="utf-8") as out:
            out.write(json.dumps({"protocol": protocol, "caps": caps}) + "\n")


def main() -> None:
    argv = sys.argv[1:]
    record = argv[argv.index("--record") + 1] if "--record" in argv else None
    Apps("--only-app" in argv, record).serve()


if __name__ == "__main__":
    main()
