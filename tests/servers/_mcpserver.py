"""What the SDK's ``MCPServer`` adds around a tool, on the wire, for the raw test servers.

:mod:`tests.servers._era` speaks the protocol; this module answers as ``MCPServer`` answers
for a tool written with resolvers (a parameter ``Annotated[T, Resolve(fn)]`` whose resolver
returns ``Elicit``, ``Sample`` or ``ListRoots``), so a raw server stands in for an SDK-built
one (``tests/test_servers_asker.py`` holds :mod:`tests.servers.asker` to that):

- :func:`check_arguments`: pydantic's lax validation of a tool's arguments (defaults,
  coercion, its error text, an input over 50 bytes cut as pydantic cuts it), a
  :class:`ToolFailure` otherwise; :func:`run_tool` turns a tool
  body's outcome into the result (``structuredContent`` ``{"result": ...}`` for a ``str``
  tool, ``Error executing tool <name>[: why]`` for a failure);
- :func:`ask`: a resolver's question: sent mid-call before 2026-07-28 (``Call.request``);
  from 2026-07-28 an ``InputRequiredResult`` round (:class:`InputRound`) until the client
  sends the call again with ``inputResponses`` and the ``requestState`` this process sealed
  (SEP-2322); -32021 when the client did not declare the capability the question needs;
- :func:`seal`/:func:`unseal`: a ``requestState`` bound to the method, target, arguments
  and server. The SDK encrypts it (AES-GCM); an HMAC under a key of this process is enough
  here, since the client only echoes it: a token not minted for the request is refused
  with the same -32602 either way;
- :func:`answer_kind`, :func:`elicited`, :func:`sampled`, :func:`rooted`,
  :func:`form_values`: which answers the SDK's models accept, and how a form's values are
  coerced.

Standard library only.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import time
from collections.abc import Callable
from typing import Any

from tests.servers._era import Call, RpcError, text_result, tool_error

STATE_TTL = 600.0
"""Seconds a ``requestState`` stays good (the SDK's ephemeral policy)."""
ASK_TIMEOUT = 86400.0
"""The SDK waits for the client's answer without a limit; a day stands in for that."""
PYDANTIC_DOCS = "    For further information visit https://errors.pydantic.dev/2.14/v/"
_SEAL_KEY = os.urandom(32)


# -- pydantic's lax checks, as MCPServer makes them -----------------------------------------


def _kind(value: Any) -> str:
    return {bool: "bool", int: "int", float: "float", str: "str", list: "list", dict: "dict"}.get(
        type(value), type(value).__name__
    )


def _coerce(value: Any, kind: str) -> tuple[Any, str | None]:
    """(value, None) or (None, pydantic's error line) for one argument."""
    if kind == "string":
        if isinstance(value, str):
            return value, None
        return None, "Input should be a valid string [type=string_type"
    if kind == "integer":
        if isinstance(value, bool) or isinstance(value, int):
            return int(value), None
        if isinstance(value, float) and value.is_integer():
            return int(value), None
        if isinstance(value, float):
            return None, (
                "Input should be a valid integer, got a number with a fractional part "
                "[type=int_from_float"
            )
        if isinstance(value, str):
            try:
                return int(value.strip()), None
            except ValueError:
                return None, (
                    "Input should be a valid integer, unable to parse string as an integer "
                    "[type=int_parsing"
                )
        return None, "Input should be a valid integer [type=int_type"
    if isinstance(value, bool) or isinstance(value, int | float):
        return float(value), None
    if isinstance(value, str):
        try:
            return float(value.strip()), None
        except ValueError:
            return None, (
                "Input should be a valid number, unable to parse string as a number "
                "[type=float_parsing"
            )
    return None, "Input should be a valid number [type=float_type"


def _shown(value: Any) -> str:
    """``repr(value)`` as pydantic shows an input: over 50 bytes, its first 25 and last 24
    bytes (whole characters only) around ``...``."""
    text = repr(value)
    data = text.encode("utf-8")
    if len(data) <= 50:
        return text
    return data[:25].decode("utf-8", "ignore") + "..." + data[-24:].decode("utf-8", "ignore")


class ToolFailure(Exception):
    """``Error executing tool <name>: <message>``: what ``MCPServer`` makes of a ``ToolError``
    (a resolver's complaint, arguments that fail validation)."""


class Crash(Exception):
    """``Error executing tool <name>`` without the reason: anything else that raised."""


class InputRound(Exception):
    """This round's ``InputRequiredResult`` (2026-07-28): the tool body does not run yet."""

    def __init__(self, result: dict[str, Any]) -> None:
        super().__init__("input required")
        self.result = result


def run_tool(name: str, body: Callable[[], str]) -> dict[str, Any]:
    """The ``tools/call`` result of a tool returning ``str``; an ``RpcError`` stays one (a
    JSON-RPC error, as ``MCPError`` is for the SDK)."""
    try:
        text = body()
    except InputRound as exc:
        return exc.result
    except ToolFailure as exc:
        return tool_error(name, str(exc))
    except RpcError:
        raise
    except Exception:  # a crash: its text stays on the server, as MCPServer keeps it
        return text_result(f"Error executing tool {name}", is_error=True)
    return {**text_result(text), "structuredContent": {"result": text}}


def check_arguments(name: str, schema: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` as pydantic's lax mode validates them against the listed ``schema``
    (defaults filled in, unknown arguments ignored); :class:`ToolFailure` with its message."""
    out: dict[str, Any] = {}
    problems: list[str] = []
    for field, spec in schema["properties"].items():
        if field not in arguments:
            if "default" in spec:
                out[field] = spec["default"]
                continue
            where = f"input_value={_shown(arguments)}, input_type=dict]"
            problems.append(
                f"{field}\n  Field required [type=missing, {where}\n{PYDANTIC_DOCS}missing"
            )
            continue
        value = arguments[field]
        if spec["type"] == "integer" and isinstance(value, float) and abs(value) >= 2**63:
            coerced: Any = None
            problem: str | None = (
                "Unable to parse input string as an integer, exceeded maximum size "
                "[type=int_parsing_size"
            )
        else:
            coerced, problem = _coerce(value, spec["type"])
        if problem is None:
            out[field] = coerced
            continue
        where = f"input_value={_shown(value)}, input_type={_kind(value)}]"
        code = problem.rsplit("[type=", 1)[1]
        problems.append(f"{field}\n  {problem}, {where}\n{PYDANTIC_DOCS}{code}")
    if problems:
        count = f"{len(problems)} validation error" + ("s" if len(problems) > 1 else "")
        raise ToolFailure(f"{count} for {name}Arguments\n" + "\n".join(problems))
    return out


# -- a resolver's question ------------------------------------------------------------------


def require(call: Call, method: str, key: str) -> None:
    """-32021 unless the client declared what ``method`` needs (a bare ``elicitation: {}``
    counts as form support, a URL-only one does not)."""
    caps = call.client_capabilities
    needed: dict[str, Any]
    if method == "elicitation/create":
        elicitation = caps.get("elicitation")
        if isinstance(elicitation, dict) and ("form" in elicitation or "url" not in elicitation):
            return
        name, needed = "form elicitation", {"elicitation": {"form": {}}}
    elif method == "sampling/createMessage":
        if isinstance(caps.get("sampling"), dict):
            return
        name, needed = "sampling", {"sampling": {}}
    else:
        if isinstance(caps.get("roots"), dict):
            return
        name, needed = "roots", {"roots": {}}
    message = f"Client did not declare the {name} capability required by resolver {key!r}"
    raise RpcError(-32021, message, {"requiredCapabilities": needed})


def ask(call: Call, key: str, method: str, params: dict[str, Any] | None) -> Any:
    """The client's answer to resolver ``key``'s question (``method`` with ``params``).

    Before 2026-07-28 it is asked mid-call (an error answer is the call's error). From
    2026-07-28 it is the call's ``inputResponses[key]``, taken only when the unsealed
    ``requestState`` (see :func:`unseal`) says this very question was asked; otherwise
    :class:`InputRound` carries the question and a fresh ``requestState``."""
    if not call.modern:
        require(call, method, key)
        return call.request(method, params, ASK_TIMEOUT)
    question = _digest(params)
    responses = call.params.get("inputResponses")
    answer = responses.get(key) if isinstance(responses, dict) else None
    if answer is not None and _asked(call.params.get("requestState")).get(key) == question:
        return answer
    require(call, method, key)
    request = {"method": method} | ({} if params is None else {"params": params})
    state = _compact({"v": 3, "outcomes": {}, "asked": {key: question}})
    sealed = seal("tools/call", call.params, state, call.server.name)
    raise InputRound(
        {"inputRequests": {key: request}, "requestState": sealed, "resultType": "input_required"}
    )


# -- what a client may answer (the shapes the SDK's models accept) --------------------------


def _block(value: Any, *, tools: bool) -> bool:
    if not isinstance(value, dict):
        return False
    kind = value.get("type")
    if kind == "text":
        return isinstance(value.get("text"), str)
    if kind in ("image", "audio"):
        return isinstance(value.get("data"), str) and isinstance(value.get("mimeType"), str)
    if tools and kind == "tool_use":
        fields = (("id", str), ("name", str), ("input", dict))
        return all(isinstance(value.get(k), t) for k, t in fields)
    return tools and kind == "tool_result" and isinstance(value.get("toolUseId"), str)


def sampled(value: Any, *, single: bool = True) -> bool:
    """A ``CreateMessageResult`` with one text, image or audio block (what ``Sample`` takes);
    with ``single=False`` any the 2026-07-28 wire carries (tool blocks, a list of blocks)."""
    if not isinstance(value, dict):
        return False
    content, stop = value.get("content"), value.get("stopReason")
    if single:
        fits = _block(content, tools=False)
    else:
        many = isinstance(content, list) and all(_block(b, tools=True) for b in content)
        fits = many or _block(content, tools=True)
    return (
        fits
        and value.get("role") in ("user", "assistant")
        and isinstance(value.get("model"), str)
        and (stop is None or isinstance(stop, str))
    )


def rooted(value: Any) -> bool:
    """A ``ListRootsResult`` (every root a ``file://`` URI)."""
    roots = value.get("roots") if isinstance(value, dict) else None
    return isinstance(roots, list) and all(
        isinstance(r, dict)
        and isinstance(r.get("uri"), str)
        and r["uri"].startswith("file://")
        and isinstance(r.get("name"), str | None)
        for r in roots
    )


def elicited(value: Any) -> bool:
    """An ``ElicitResult`` (form values: strings, numbers, booleans, lists of strings)."""
    if not isinstance(value, dict) or value.get("action") not in ("accept", "decline", "cancel"):
        return False
    content = value.get("content")
    if content is None:
        return True
    plain = (str, int, float, type(None))

    def fits(v: Any) -> bool:
        return isinstance(v, plain) or (isinstance(v, list) and all(isinstance(i, str) for i in v))

    return isinstance(content, dict) and all(fits(v) for v in content.values())


def answer_kind(value: Any) -> str | None:
    """What an ``inputResponses`` entry is (``sample``, ``roots``, ``elicit``), or ``None``
    for none of them (the SDK refuses the request: -32602)."""
    if sampled(value, single=False):
        return "sample"
    if rooted(value):
        return "roots"
    return "elicit" if elicited(value) else None


def form_values(schema: dict[str, Any], content: dict[str, Any]) -> dict[str, Any] | None:
    """An accepted form's values as pydantic's lax mode makes them for the requested
    ``schema`` (defaults filled in), or ``None`` when they do not fit it."""
    out: dict[str, Any] = {}
    for name, spec in schema["properties"].items():
        if name not in content:
            if "default" not in spec:
                return None
            out[name] = spec["default"]
            continue
        out[name], problem = _coerce(content[name], spec["type"])
        if problem is not None:
            return None
    return out


# -- requestState ---------------------------------------------------------------------------


def _b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _compact(value: Any, *, sort_keys: bool = False) -> str:
    return json.dumps(value, sort_keys=sort_keys, separators=(",", ":"))


def _digest(value: Any) -> str:
    return _b64u(hashlib.sha256(_compact(value, sort_keys=True).encode()).digest()[:16])


def _binding(method: str, params: dict[str, Any]) -> tuple[str, str]:
    """(target, digest of the arguments) that a token is bound to."""
    if method == "resources/read":
        return str(params.get("uri", "")), _digest({})
    return str(params.get("name", "")), _digest(params.get("arguments") or {})


def _mac(payload: bytes) -> bytes:
    return hmac.new(_SEAL_KEY, payload, hashlib.sha256).digest()[:16]


def seal(method: str, params: dict[str, Any], state: str, audience: str) -> str:
    """A ``requestState`` carrying ``state`` for this request only, for ten minutes."""
    target, digest = _binding(method, params)
    now = time.time()
    claims = {"v": 1, "iat": now, "exp": now + STATE_TTL, "m": method, "t": target, "a": digest}
    payload = _compact({**claims, "s": state, "aud": audience}).encode()
    return "v1." + _b64u(_mac(payload) + payload)


def unseal(method: str, params: dict[str, Any], token: Any, audience: str) -> str:
    """The state inside a token that :func:`seal` minted for this very request; -32602
    ``Invalid or expired requestState`` for anything else (as the SDK refuses it)."""
    refused = RpcError(
        -32602, "Invalid or expired requestState", {"reason": "invalid_request_state"}
    )
    if not isinstance(token, str) or not token.startswith("v1."):
        raise refused
    try:
        raw = base64.urlsafe_b64decode(token[3:] + "=" * (-len(token[3:]) % 4))
        good = hmac.compare_digest(raw[:16], _mac(raw[16:]))
        claims = json.loads(raw[16:]) if good else None
    except ValueError:
        raise refused from None
    if not isinstance(claims, dict) or not isinstance(claims.get("s"), str):
        raise refused
    bound = (claims.get("m"), claims.get("t"), claims.get("a"), claims.get("aud"))
    expires = claims.get("exp")
    if bound != (method, *_binding(method, params), audience) or not (
        isinstance(expires, int | float) and time.time() < expires
    ):
        raise refused
    return str(claims["s"])


def _asked(state: Any) -> dict[str, str]:
    """The questions asked last round (resolver key -> digest), from an unsealed state."""
    try:
        decoded = json.loads(state) if isinstance(state, str) else None
    except ValueError:
        return {}
    asked = decoded.get("asked") if isinstance(decoded, dict) and decoded.get("v") == 3 else None
    return asked if isinstance(asked, dict) else {}
