"""A server whose re-list fails after it announces a change (server "relist_fail").

On the raw two-era base (:mod:`tests.servers._era`), like ``mutating``: ``tools.listChanged``
true in both eras. Tools: ``change(fails)`` adds a tool ``added_<n>`` (calling it answers
``added_<n> called``), makes the next ``fails`` ``tools/list`` requests (default 1) fail with
an internal error ("the tool registry is reloading"), and tells the client the tool list
changed; ``ping()`` answers ``pong``. The first listing, at the handshake, always succeeds.

Run: ``python -m tests.servers.relist_fail``
"""

from __future__ import annotations

from typing import Any, ClassVar

from tests.servers._era import Call, EraServer, MethodNotFound, RpcError, text_result

FAILS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"fails": {"type": "integer", "minimum": 0}},
}
EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
RELOADING = "the tool registry is reloading (test server)"


def _tool(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "inputSchema": schema, "name": name}


class RelistFail(EraServer):
    name = "relist_fail"
    capabilities: ClassVar[dict[str, Any]] = {"tools": {"listChanged": True}}
    modern_capabilities = capabilities

    def __init__(self) -> None:
        super().__init__()
        self._tools = {
            "change": _tool("change", "Add a tool; fail the next re-lists.", FAILS_SCHEMA),
            "ping": _tool("ping", "Answer pong.", EMPTY_SCHEMA),
        }
        self._fails = 0
        self._added = 0

    def list_tools(self, call: Call) -> dict[str, Any]:
        if self._fails > 0:
            self._fails -= 1
            raise RpcError(-32603, RELOADING)
        return {"tools": list(self._tools.values())}

    def handle(self, method: str, call: Call) -> dict[str, Any]:
        raise MethodNotFound(method)

    def known_tool(self, name: str) -> bool:
        return name in self._tools

    def call_tool(self, name: str, arguments: dict[str, Any], call: Call) -> dict[str, Any]:
        if name == "ping":
            return text_result("pong")
        if name != "change":
            return text_result(f"{name} called")
        fails = arguments.get("fails", 1)
        self._fails = fails if isinstance(fails, int) and fails >= 0 else 1
        self._added += 1
        new = f"added_{self._added}"
        self._tools[new] = _tool(new, f"Added by change #{self._added}.", EMPTY_SCHEMA)
        self.tools_changed(call)
        return text_result(f"added {new}; the next {self._fails} listings fail")


def main() -> None:
    RelistFail().serve()


if __name__ == "__main__":
    main()
