"""A server whose tool list changes at runtime (server "mutating").

On the raw two-era base (:mod:`tests.servers._era`), answering as the same server on the SDK's
low-level ``Server`` did (only tools, ``tools.listChanged`` true in both eras).

Initial tools: ``add_tool(name)``, ``remove_tool(name)``, ``ping_tool()``
(returns ``pong``), ``listeners()``, ``drop_listen(abrupt)``. ``add_tool`` registers a new
tool ``name`` (calling it returns ``<name> called``) and answers ``added <name>``;
``remove_tool`` removes one and answers ``removed <name>``. Both tell the client that the
tool list changed, in whichever protocol era the connection speaks
(:meth:`~tests.servers._era.EraServer.tools_changed`):

- handshake era (``initialize``, <= 2025-11-25; ``Client(mode="legacy")``):
  ``notifications/tools/list_changed`` (the SDK client's ``message_handler`` receives a
  ``ToolListChangedNotification``);
- 2026-07-28 (``Client(mode="auto")``): change notifications only travel on
  ``subscriptions/listen`` streams: each open stream that asked for ``toolsListChanged``
  (``client.listen(tools_list_changed=True)``) gets ``notifications/tools/list_changed``
  tagged with its subscription id.

``drop_listen(abrupt)`` ends every open listen stream (2026-07-28): gracefully (the stream's
final result) or, with ``abrupt: true``, with an error answer to the listen request (the
client sees the subscription lost), each after the call's own answer. A client that reopens
its stream hears the next change; one that does not never does. It answers ``dropped N``
(streams open then); ``listeners()`` answers how many are open.

Run: ``python -m tests.servers.mutating``
"""

from __future__ import annotations

from typing import Any, ClassVar

from tests.servers._era import Call, EraServer, MethodNotFound, RpcError, text_result

NAME_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string", "description": "Tool name"}},
    "required": ["name"],
}
EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
DROPPED = RpcError(-32603, "the listen stream dropped (test server)")


def _tool(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "inputSchema": schema, "name": name}


class Mutating(EraServer):
    name = "mutating"
    capabilities: ClassVar[dict[str, Any]] = {"tools": {"listChanged": True}}
    modern_capabilities = capabilities

    def __init__(self) -> None:
        super().__init__()
        drop_schema = {"type": "object", "properties": {"abrupt": {"type": "boolean"}}}
        self._tools = {
            t["name"]: t
            for t in (
                _tool("add_tool", "Register a new tool at runtime.", NAME_SCHEMA),
                _tool("remove_tool", "Unregister a tool at runtime.", NAME_SCHEMA),
                _tool("ping_tool", "Answer pong.", EMPTY_SCHEMA),
                _tool("listeners", "How many listen streams are open.", EMPTY_SCHEMA),
                _tool(
                    "drop_listen",
                    "End every open listen stream (abrupt: with an error).",
                    drop_schema,
                ),
            )
        }

    def list_tools(self, call: Call) -> dict[str, Any]:
        return {"tools": list(self._tools.values())}

    def handle(self, method: str, call: Call) -> dict[str, Any]:
        raise MethodNotFound(method)  # the low-level Server serves tools only

    def known_tool(self, name: str) -> bool:
        return name in self._tools

    def call_tool(self, name: str, arguments: dict[str, Any], call: Call) -> dict[str, Any]:
        if name == "ping_tool":
            return text_result("pong")
        if name == "listeners":
            return text_result(str(self.listening()))
        if name == "drop_listen":
            error = DROPPED if arguments.get("abrupt") else None
            call.after.append(lambda: self.end_listens(error))
            return text_result(f"dropped {self.listening()}")
        if name not in ("add_tool", "remove_tool"):
            return text_result(f"{name} called")
        new = arguments.get("name")
        if not isinstance(new, str) or not new:
            return text_result("argument 'name' (non-empty string) is required", is_error=True)
        if name == "add_tool":
            if new in self._tools:
                return text_result(f"tool {new} already exists", is_error=True)
            self._tools[new] = _tool(new, f"Dynamically added tool {new}.", EMPTY_SCHEMA)
            self.tools_changed(call)
            return text_result(f"added {new}")
        if new not in self._tools:
            return text_result(f"no tool named {new}", is_error=True)
        del self._tools[new]
        self.tools_changed(call)
        return text_result(f"removed {new}")


def main() -> None:
    Mutating().serve()


if __name__ == "__main__":
    main()
