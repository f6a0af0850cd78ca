"""A server that asks things of the client, server name "asker", without the MCP SDK.

It answers as the same server on the SDK's ``MCPServer`` did (resolver-based tools, one
``Elicit``/``Sample``/``ListRoots`` resolver each), in both protocol eras: on a 2026-07-28
connection (its default in auto mode) the resolver-based tools answer with an
``InputRequiredResult`` and resume from the sealed ``requestState`` (SEP-2322); on a
handshake-era connection (``"protocol": "legacy"``) the same tools send
``elicitation/create``, ``sampling/createMessage`` and ``roots/list`` mid-call. The SDK's
resolver keys (``__main__:_ask_person``, ...), schemas, pydantic messages and error codes are
kept; ``tests/test_servers_asker.py`` holds it to them in both eras. It starts in a twentieth
of the SDK version's CPU time: the suite starts it about sixty times.

Tools:
- ``ask_name()``: elicits ``{name (required), color (default "blue")}``; returns
  ``hello <name> (<color>)``, or ``declined``/``cancelled``;
- ``ask_color()``: elicits ``{color (default "blue"), count (default 3)}``; returns
  ``<count> x <color>``, or the action;
- ``visit(url?)``: URL-mode elicitation of ``url`` (default ``https://example.com/connect``;
  legacy only: at 2026-07-28 there is no back-channel, -32600); returns the action;
- ``roots()``: the client's root URIs, one per line (``(none)``);
- ``summarize(text)``: samples the client's model (50 tokens); returns ``model said: <text>``;
- ``progress(steps, delay?)``: reports ``steps`` progress notifications (``delay`` seconds
  apart, 0.05 by default) with messages, logs ``progress finished`` at info and ``a debug
  line`` at debug (at 2026-07-28 only at the level the request's ``_meta`` asks for), returns
  ``done``;
- ``wait(seconds, marker)``: writes ``started`` to ``marker`` and sleeps; if cancelled (or
  the client goes away), writes ``cancelled`` to it;
- ``touch(uri)``: says ``uri`` was updated (a listen-stream event at 2026-07-28,
  ``notifications/resources/updated`` before).

Every tool returns its text also as ``structuredContent`` ``{"result": ...}`` (output schema
``<name>Output``); a failure is an ``isError`` result ``Error executing tool <name>: ...``.
Resources: ``note://hello`` (text), ``bin://blob`` (bytes 0..255), template
``note://{name}`` (``name`` completes to alpha, beta). Prompts: ``greet(name, style?)`` with
completion of ``style``. At end of input every open request is answered ``Connection
closed`` (-32000) and running calls are cancelled, as the SDK does.

Run: ``python -m tests.servers.asker``
"""

from __future__ import annotations

import base64
import threading
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import unquote

from tests.servers import _mcpserver as sdk
from tests.servers._era import (
    CAPABILITIES_KEY,
    PROTOCOL_KEY,
    UNCACHEABLE,
    Call,
    EraServer,
    RpcError,
    schema_of,
    text_block,
)

NAME = "asker"
VISIT_URL = "https://example.com/connect"
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"
NO_BACK_CHANNEL = (
    "Cannot send 'elicitation/create': this transport context has no back-channel for "
    "server-initiated requests."
)


def _listed(
    name: str, description: str, params: dict[str, str] | None = None, **defaults: Any
) -> dict[str, Any]:
    """A tool as ``MCPServer`` lists a function returning ``str``."""
    return {
        "description": description,
        "inputSchema": schema_of(name, params or {}, defaults=defaults),
        "name": name,
        "outputSchema": {
            "properties": {"result": {"title": "Result", "type": "string"}},
            "required": ["result"],
            "title": f"{name}Output",
            "type": "object",
        },
    }


TOOLS = [
    _listed("ask_name", "Ask the user for a name."),
    _listed("ask_color", "Ask the user for a colour (every field has a default)."),
    _listed("visit", "Ask the user to open a URL.", {"url": "string"}, url=VISIT_URL),
    _listed("roots", "The client's roots."),
    _listed("summarize", "Sample the client's model.", {"text": "string"}),
    _listed("progress", "Report progress.", {"steps": "integer", "delay": "number"}, delay=0.05),
    _listed(
        "wait",
        "Sleep; ``marker`` says ``started`` once the call runs, ``cancelled`` if it is.",
        {"seconds": "number", "marker": "string"},
    ),
    _listed("touch", "Tell the client that ``uri`` changed.", {"uri": "string"}),
]
_SCHEMAS = {t["name"]: t["inputSchema"] for t in TOOLS}
_TEXT = "text/plain"
RESOURCES = [
    {"description": "A greeting.", "mimeType": _TEXT, "name": "hello", "uri": "note://hello"},
    {
        "description": "Every byte once.",
        "mimeType": "application/octet-stream",
        "name": "blob",
        "uri": "bin://blob",
    },
]
TEMPLATES = [
    {
        "description": "A note by name.",
        "mimeType": _TEXT,
        "name": "note",
        "uriTemplate": "note://{name}",
    }
]
PROMPTS = [
    {
        "arguments": [{"name": "name", "required": True}, {"name": "style", "required": False}],
        "description": "Greet someone.",
        "name": "greet",
    }
]
LISTS = {
    "resources/list": ("resources", RESOURCES),
    "resources/templates/list": ("resourceTemplates", TEMPLATES),
    "prompts/list": ("prompts", PROMPTS),
}


def _field(title: str, description: str, kind: str = "string", **default: Any) -> dict[str, Any]:
    return {**default, "description": description, "title": title, "type": kind}


# The resolvers' questions: (wire key, message, model title, the model's schema).
FORMS: dict[str, tuple[str, str, str, dict[str, Any]]] = {
    "ask_name": (
        "__main__:_ask_person",
        "Who are you?",
        "Person",
        {
            "properties": {
                "name": _field("Name", "Your name"),
                "color": _field("Color", "A favourite colour", default="blue"),
            },
            "required": ["name"],
        },
    ),
    "ask_color": (
        "__main__:_ask_colour",
        "Which colour?",
        "Colour",
        {
            "properties": {
                "color": _field("Color", "A colour", default="blue"),
                "count": _field("Count", "How many", "integer", default=3),
            }
        },
    ),
}
ROOTS_KEY = "__main__:_roots"
SAMPLE_KEY = "__main__:_sample"


def _form(tool: str, modern: bool) -> dict[str, Any]:
    """``elicitation/create`` params as the SDK renders the form (no ``title`` at 2026-07-28;
    the keys in the order each era's models write them)."""
    _, message, title, schema = FORMS[tool]
    requested = {**schema, **({} if modern else {"title": title}), "type": "object"}
    said = {"message": message, "mode": "form"} if modern else {"mode": "form", "message": message}
    return {**said, "requestedSchema": requested}


def _sample(text: str, modern: bool) -> dict[str, Any]:
    """``sampling/createMessage`` params: ``text`` as the user's, 50 tokens at most."""
    if modern:
        said = {"content": {"text": text, "type": "text"}, "role": "user"}
        return {"maxTokens": 50, "messages": [said]}
    said = {"role": "user", "content": {"type": "text", "text": text}}
    return {"messages": [said], "maxTokens": 50}


def _said(content: dict[str, Any]) -> str:
    """A sampled block as the SDK's tool printed it: the text, or pydantic's ``str()``."""
    if content["type"] == "text":
        return str(content["text"])
    kind, data, mime = content["type"], content["data"], content["mimeType"]
    extra = f"annotations={content.get('annotations')!r} meta={content.get('_meta')!r}"
    return f"type={kind!r} data={data!r} mime_type={mime!r} {extra}"


def _note_name(uri: str) -> str | None:
    """``name`` of ``note://{name}`` as the SDK's RFC 6570 match decodes it, or ``None`` if the
    URI does not match or the name fails its path-safety check (traversal, absolute, NUL)."""
    raw = uri[len("note://") :]
    if not uri.startswith("note://") or len(uri) > 65_536 or any(c in raw for c in "#&,/?"):
        return None
    name = unquote(raw)
    depth = 0
    for part in name.replace("\\", "/").split("/"):
        depth += -1 if part == ".." else int(part not in ("", "."))
        if depth < 0:
            return None
    drive = len(name) >= 2 and name[1] == ":" and name[0].isascii() and name[0].isalpha()
    if "\0" in name or name[:1] in ("/", "\\") or drive:
        return None
    return name


class Asker(EraServer):
    """The asker server on the raw two-era base (:mod:`tests.servers._era`)."""

    name = NAME
    tools = TOOLS
    capabilities: ClassVar[dict[str, Any]] = {
        "completions": {},
        "prompts": {"listChanged": False},
        "resources": {"listChanged": False, "subscribe": False},
        "tools": {"listChanged": False},
    }
    modern_capabilities: ClassVar[dict[str, Any]] = {
        "completions": {},
        "prompts": {"listChanged": True},
        "resources": {"listChanged": True, "subscribe": True},
        "tools": {"listChanged": True},
    }

    def __init__(self) -> None:
        super().__init__()
        self._sleepers: list[threading.Event] = []

    # -- the wire ----------------------------------------------------------------------------

    def dispatch(self, message: dict[str, Any]) -> None:
        """Refuse what the SDK's models refuse (-32602) and unseal ``requestState`` before
        the base class answers."""
        params, method = message.get("params"), message["method"]
        if "id" in message and isinstance(params, dict) and method != "initialize":
            meta = params.get("_meta")
            modern = isinstance(meta, dict) and PROTOCOL_KEY in meta and CAPABILITIES_KEY in meta
            if modern or (self.initialized and method != "server/discover"):
                try:
                    self._surface(method, params, modern)
                except RpcError as exc:
                    self.error(message["id"], exc.code, exc.message, exc.data)
                    return
        super().dispatch(message)

    def _surface(self, method: str, params: dict[str, Any], modern: bool) -> None:
        meta = params.get("_meta")
        level = meta.get(LOG_LEVEL_KEY, "info") if modern and isinstance(meta, dict) else "info"
        fine = level in LOG_LEVELS
        if method == "tools/call":
            responses = params.get("inputResponses")
            fine = fine and isinstance(params.get("name"), str)
            fine = fine and isinstance(params.get("arguments"), dict | None)
            fine = fine and isinstance(responses, dict | None)
            fine = fine and all(sdk.answer_kind(v) for v in (responses or {}).values())
        elif method == "resources/read":
            fine = fine and isinstance(params.get("uri"), str)
        elif method == "prompts/get":
            arguments = params.get("arguments") or {}
            fine = fine and isinstance(params.get("name"), str) and isinstance(arguments, dict)
            fine = fine and all(isinstance(v, str) for v in arguments.values())
        elif method == "completion/complete":
            ref, argument = params.get("ref"), params.get("argument")
            ref, argument = (r if isinstance(r, dict) else {} for r in (ref, argument))
            target = {"ref/prompt": "name", "ref/resource": "uri"}.get(str(ref.get("type")), "")
            fine = fine and isinstance(ref.get(target), str)
            fine = fine and all(isinstance(argument.get(k), str) for k in ("name", "value"))
        if not fine:
            raise RpcError(-32602, "Invalid request parameters", "")
        state = params.get("requestState")
        if method in ("tools/call", "resources/read", "prompts/get") and state is not None:
            params["requestState"] = sdk.unseal(method, params, state, self.name)

    def serve(self) -> None:
        """Answer stdin until it ends (then every open request is ``Connection closed`` and
        running calls are cancelled, as the SDK ends); ``wait`` writes its marker first."""
        super().serve()
        for finished in list(self._sleepers):
            finished.wait(2.0)

    # -- resources, prompts, completions -----------------------------------------------------

    def handle(self, method: str, call: Call) -> dict[str, Any]:
        params = call.params
        if method in LISTS:
            key, listed = LISTS[method]
            return {key: listed}
        if method == "resources/read":
            contents = {"contents": [self._read(params["uri"])]}
            return {**UNCACHEABLE, **contents} if call.modern else contents
        if method == "prompts/get":
            return self._prompt(params["name"], params.get("arguments") or {}, call.modern)
        if method == "completion/complete":
            ref, argument = params["ref"], params["argument"]
            choices: tuple[str, ...] = ()
            if ref["type"] == "ref/prompt" and argument["name"] == "style":
                choices = ("plain", "pirate", "poem")
            elif ref["type"] == "ref/resource" and argument["name"] == "name":
                choices = ("alpha", "beta")
            values = [c for c in choices if c.startswith(argument["value"])]
            return {"completion": {"values": values}}
        return super().handle(method, call)

    @staticmethod
    def _read(uri: str) -> dict[str, Any]:
        if uri == "note://hello":
            return {"mimeType": _TEXT, "text": "hello resource", "uri": uri}
        if uri == "bin://blob":
            blob = base64.b64encode(bytes(range(256))).decode()
            return {"blob": blob, "mimeType": "application/octet-stream", "uri": uri}
        name = _note_name(uri)
        if name is None:
            raise RpcError(-32602, f"Unknown resource: {uri}", {"uri": uri})
        return {"mimeType": _TEXT, "text": f"note {name}", "uri": uri}

    @staticmethod
    def _prompt(name: str, arguments: dict[str, str], modern: bool) -> dict[str, Any]:
        """``greet``; a failure is -32603 at 2026-07-28 and code 0 with the reason before.
        (An unknown argument wedged the SDK's handshake-era server; here it is refused.)"""
        if name != "greet":
            problem = f"Unknown prompt: {name}"
        elif "name" not in arguments:
            problem = "Missing required arguments: {'name'}"
        elif set(arguments) - {"name", "style"}:
            problem = "Error rendering prompt greet"
        else:
            text = f"Greet {arguments['name']} in a {arguments.get('style', 'plain')} style."
            message = {"content": text_block(text), "role": "user"}
            return {"description": "Greet someone.", "messages": [message]}
        raise RpcError(-32603, "Internal server error") if modern else RpcError(0, problem)

    # -- the tools ---------------------------------------------------------------------------

    def call_tool(self, name: str, arguments: dict[str, Any], call: Call) -> dict[str, Any]:
        def body() -> str:
            args = sdk.check_arguments(name, _SCHEMAS[name], arguments)
            return str(getattr(self, f"_tool_{name}")(call, args))

        return sdk.run_tool(name, body)

    @staticmethod
    def _ask_form(call: Call, tool: str) -> tuple[str, dict[str, Any] | None]:
        """(action, the form's values when accepted) for ``ask_name``/``ask_color``, with
        the SDK's words for an answer that does not fit."""
        key, _, _, schema = FORMS[tool]
        answer = sdk.ask(call, key, "elicitation/create", _form(tool, call.modern))
        if call.modern:
            if sdk.answer_kind(answer) != "elicit":
                raise sdk.ToolFailure(f"Resolver {key!r} received a non-elicitation response")
            said = f"Resolver {key!r} received an accepted elicitation"
        else:
            if not sdk.elicited(answer):
                problem = "received an invalid elicitation response"
                raise sdk.ToolFailure(f"Resolver {key!r}: {problem}")
            said = f"Resolver {key!r}: Received an accepted elicitation"
        if answer["action"] != "accept":
            return str(answer["action"]), None
        if answer.get("content") is None:
            raise sdk.ToolFailure(f"{said} with no content")
        values = sdk.form_values(schema, answer["content"])
        if values is None:
            raise sdk.ToolFailure(f"{said} whose content does not match the requested schema")
        return "accept", values

    def _tool_ask_name(self, call: Call, args: dict[str, Any]) -> str:
        action, person = self._ask_form(call, "ask_name")
        if person is not None:
            return f"hello {person['name']} ({person['color']})"
        return "declined" if action == "decline" else "cancelled"

    def _tool_ask_color(self, call: Call, args: dict[str, Any]) -> str:
        action, colour = self._ask_form(call, "ask_color")
        return action if colour is None else f"{colour['count']} x {colour['color']}"

    def _tool_visit(self, call: Call, args: dict[str, Any]) -> str:
        if call.modern:
            raise RpcError(-32600, NO_BACK_CHANNEL)
        asked = {"mode": "url", "message": "Connect your account", "url": args["url"]}
        answer = call.request(
            "elicitation/create", {**asked, "elicitationId": "e-1"}, sdk.ASK_TIMEOUT
        )
        if not sdk.elicited(answer):
            raise sdk.Crash
        return str(answer["action"])

    def _tool_roots(self, call: Call, args: dict[str, Any]) -> str:
        answer = sdk.ask(call, ROOTS_KEY, "roots/list", None)
        if call.modern and sdk.answer_kind(answer) != "roots":
            raise sdk.ToolFailure(f"Resolver {ROOTS_KEY!r} received a response of the wrong kind")
        if not sdk.rooted(answer):
            raise sdk.Crash
        return "\n".join(str(r["uri"]) for r in answer["roots"]) or "(none)"

    def _tool_summarize(self, call: Call, args: dict[str, Any]) -> str:
        params = _sample(args["text"], call.modern)
        answer = sdk.ask(call, SAMPLE_KEY, "sampling/createMessage", params)
        if not sdk.sampled(answer):
            if call.modern:
                wrong = "received a response of the wrong kind"
                raise sdk.ToolFailure(f"Resolver {SAMPLE_KEY!r} {wrong}")
            raise sdk.Crash
        return f"model said: {_said(answer['content'])}"

    def _tool_progress(self, call: Call, args: dict[str, Any]) -> str:
        steps, delay = args["steps"], min(max(0.0, args["delay"]), 1e7)
        token = call.meta.get("progressToken")
        for i in range(1, steps + 1):
            if token is not None:
                report = {"progressToken": token, "progress": i, "total": steps}
                call.notify("notifications/progress", {**report, "message": f"step {i}"})
            if call.cancelled.wait(delay):
                return "cancelled"
        self._log(call, "info", "progress finished")
        self._log(call, "debug", "a debug line")
        return "done"

    @staticmethod
    def _log(call: Call, level: str, data: str) -> None:
        """``notifications/message``: always before 2026-07-28; from 2026-07-28 only at or
        above the level the request's ``_meta`` asks for (none when it asks for none)."""
        wanted = call.meta.get(LOG_LEVEL_KEY)
        if call.modern and (
            wanted not in LOG_LEVELS or LOG_LEVELS.index(level) < LOG_LEVELS.index(wanted)
        ):
            return
        call.notify("notifications/message", {"level": level, "data": data})

    def _tool_wait(self, call: Call, args: dict[str, Any]) -> str:
        finished = threading.Event()
        self._sleepers.append(finished)
        try:
            marker = Path(args["marker"])
            marker.write_text("started")
            if call.cancelled.wait(min(max(0.0, args["seconds"]), 1e7)):
                marker.write_text("cancelled")
                return "cancelled"
            return "waited"
        finally:
            finished.set()
            self._sleepers.remove(finished)

    def _tool_touch(self, call: Call, args: dict[str, Any]) -> str:
        uri = args["uri"]
        if not call.modern:
            call.notify("notifications/resources/updated", {"uri": uri})
        for stream, honored in self.streams():
            if uri in honored.get("resourceSubscriptions", ()):
                updated = {"_meta": {SUBSCRIPTION_KEY: stream.id}, "uri": uri}
                call.notify("notifications/resources/updated", updated)
        return "touched"


def main() -> None:
    Asker().serve()


if __name__ == "__main__":
    main()
