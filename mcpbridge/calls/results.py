"""Results of a call, shared by the SDK path and the hot path (argument checks:
:mod:`mcpbridge.tools.call_arguments`; a failed call's record and every wording of it,
an unknown tool's too: :mod:`mcpbridge.connection.failures`).

Free of ``mcp`` imports on purpose: :mod:`mcpbridge.lite` uses them without loading the SDK.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from codebot_mcp.core.config.servers import ServerConfig
from codebot_mcp.core.secrets.redact import SECRETS, scrub
from codebot_mcp.core.tools.base import ToolResult
from codebot_mcp.mcpbridge.connection.failures import invalid_result, no_result


class OtherShapeError(Exception):
    """An answer of another shape before the call: the SDK path reads it, on the process the
    hot path launched (nothing was called yet)."""


def plain_result(result: Mapping[str, Any]) -> ToolResult | None:
    """A ``tools/call`` result of text blocks only, as ``to_tool_result`` renders it; None for
    anything else (the caller then reads it through the SDK's model).
    """
    if not set(result) <= {"content", "structuredContent", "isError", "_meta", "resultType"}:
        return None
    content = result.get("content")
    is_error = result.get("isError", False)
    structured = result.get("structuredContent")
    if not isinstance(content, list) or not isinstance(is_error, bool):
        return None
    if structured is not None and not isinstance(structured, dict):
        return None
    texts: list[str] = []
    for block in content:
        if not isinstance(block, dict) or set(block) != {"type", "text"}:
            return None
        if block["type"] != "text" or not isinstance(block["text"], str):
            return None
        texts.append(block["text"])
    data: dict[str, Any] = {"content": [{"type": "text", "text": t} for t in texts]}
    if structured is not None:
        data["structuredContent"] = structured
    data["isError"] = is_error
    if not texts and structured is not None:
        texts.append(json.dumps(structured, ensure_ascii=False))
    text, data = SECRETS("\n".join(texts)), scrub(data, SECRETS)
    return ToolResult(text, is_error=is_error, data=data, scrubbed=True)


def validate_output(name: str, schema: Any, result: dict[str, Any]) -> None:
    """The SDK's check of structured content against the tool's output schema, same words."""
    if not isinstance(schema, dict) or result.get("isError"):
        return
    from jsonschema import exceptions as jsonschema_exceptions
    from jsonschema import validators

    if result.get("structuredContent") is None and "structuredContent" not in result:
        raise RuntimeError(
            f"Tool {name} has an output schema but did not return structured content"
        )
    validator = validators.validator_for(schema)(schema)
    error = jsonschema_exceptions.best_match(validator.iter_errors(result.get("structuredContent")))
    if error is not None:
        raise RuntimeError(f"Invalid structured content returned by tool {name}: {error}")


def read_by_sdk(result: dict[str, Any], config: ServerConfig, tool: str, *, version: str) -> Any:
    """A ``tools/call`` answer read as the SDK path's session reads it at that protocol
    ``version``: its model, or the error the SDK path reports for it (same words)."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS
    from pydantic import ValidationError

    from codebot_mcp.mcpbridge.connection.explain import first_problem
    from codebot_mcp.mcpbridge.connection.tasks import TaskHooks, TasksExtension

    modern = version in MODERN_PROTOCOL_VERSIONS
    claims = TasksExtension(TaskHooks(config.name)).claims() if modern else ()
    if modern and "resultType" not in result:  # the spec's default (transport.resulttype)
        result = {**result, "resultType": "complete"}
    try:
        return read_call_result(result, version, claims)
    except ValidationError as exc:  # the SDK path's record (explain_call)
        raise invalid_result(config.name, tool, first_problem(exc)).error() from None


def read_call_result(raw: Mapping[str, Any], version: str, claims: Sequence[Any]) -> Any:
    """A ``tools/call`` answer read with the SDK's public models as its session reads it at
    ``version`` (mcp 2.3, ``Client.call_tool``): the version's own schema first
    (``mcp_types.methods``), a later revision's fields dropped, then the era's result shapes:
    ``CallToolResult | InputRequiredResult``, at 2026-07-28 one more arm per result claim
    (``mcp.client.extension.ResultClaim``), routed on ``resultType``. No private SDK name is
    used; ``tests/mcpbridge/test_lite.py`` holds the two paths to the same words.

    Raises:
        pydantic.ValidationError: the SDK path would reject the answer.
    """
    from mcp_types import methods

    method = "tools/call"
    try:
        methods.validate_server_result(method, version, raw)
    except KeyError:
        pass
    foreign = _later_revision_fields(method, version)
    if not foreign.isdisjoint(raw):
        raw = {key: value for key, value in raw.items() if key not in foreign}
    active = {c.result_type: c.model for c in claims if _claim_active(c, version)}
    return _call_result_adapter(tuple(active.items())).validate_python(raw, by_name=False)


def _claim_active(claim: Any, version: str) -> bool:
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    versions = claim.protocol_versions
    return version in MODERN_PROTOCOL_VERSIONS and (versions is None or version in versions)


@functools.cache
def _wire_fields(target: Any) -> frozenset[str]:
    """The top-level wire keys a result model (or each member of a union) declares."""
    from types import UnionType
    from typing import get_args

    from pydantic import BaseModel

    members: tuple[Any, ...] = get_args(target) if isinstance(target, UnionType) else (target,)
    fields: set[str] = set()
    for model in members:
        if isinstance(model, type) and issubclass(model, BaseModel):
            fields.update(f.alias or name for name, f in model.model_fields.items())
    return frozenset(fields)


@functools.cache
def _later_revision_fields(method: str, version: str) -> frozenset[str]:
    """Result keys a revision newer than ``version`` declares for ``method`` and ``version``
    does not: outside the negotiated contract, dropped before reading (as the SDK does)."""
    from mcp_types.methods import SERVER_RESULTS
    from mcp_types.version import KNOWN_PROTOCOL_VERSIONS

    current = SERVER_RESULTS.get((method, version))
    if current is None or version not in KNOWN_PROTOCOL_VERSIONS:
        return frozenset()
    later: set[str] = set()
    for revision in KNOWN_PROTOCOL_VERSIONS[KNOWN_PROTOCOL_VERSIONS.index(version) + 1 :]:
        row = SERVER_RESULTS.get((method, revision))
        if row is not None:
            later |= _wire_fields(row)
    return frozenset(later) - _wire_fields(current)


@functools.cache
def _call_result_adapter(active: tuple[tuple[str, Any], ...]) -> Any:
    """``CallToolResult | InputRequiredResult``, with one arm per claimed ``resultType``
    (``active``: the tag and the model of each claim)."""
    from functools import reduce
    from operator import or_
    from typing import Annotated

    import mcp_types as types
    from pydantic import Discriminator, Tag, TypeAdapter

    core: Any = types.CallToolResult | types.InputRequiredResult
    if not active:
        return TypeAdapter(core)
    tags = frozenset(tag for tag, _ in active)
    core_arm = "core"
    while core_arm in tags:
        core_arm += "-"

    def route(value: Any) -> str:
        if isinstance(value, dict):
            tag = value.get("resultType")
        else:
            tag = getattr(value, "result_type", None)
        return tag if isinstance(tag, str) and tag in tags else core_arm

    arms: list[Any] = [Annotated[core, Tag(core_arm)]]
    arms += [Annotated[model, Tag(tag)] for tag, model in active]
    routed: Any = Annotated[reduce(or_, arms), Discriminator(route)]
    return TypeAdapter(routed)


def through_sdk(
    result: dict[str, Any], config: ServerConfig, tool: str, *, version: str
) -> ToolResult:
    """Anything but plain text: read by :func:`read_by_sdk`, rendered by ``to_tool_result``."""
    import mcp_types as types

    from codebot_mcp.mcpbridge.connection.tool import to_tool_result

    model = read_by_sdk(result, config, tool, version=version)
    if not isinstance(model, types.CallToolResult):  # another shape, read (not seen yet)
        raise no_result(config.name, tool).error()
    return to_tool_result(model)


def checked_tool(tool: Any) -> dict[str, Any]:
    """A listed tool as the SDK's model would accept it, or :class:`OtherShapeError`."""

    if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
        raise OtherShapeError
    schema = tool.get("inputSchema")
    if not isinstance(schema, dict):
        raise OtherShapeError
    for key in ("description", "title"):
        if tool.get(key) is not None and not isinstance(tool[key], str):
            raise OtherShapeError
    annotations = tool.get("annotations")
    if annotations is not None and not isinstance(annotations, dict):
        raise OtherShapeError
    for key in ("readOnlyHint", "destructiveHint", "openWorldHint"):
        if annotations and annotations.get(key) is not None:
            if not isinstance(annotations[key], bool):
                raise OtherShapeError
    output = tool.get("outputSchema")
    if output is not None and not isinstance(output, dict):
        raise OtherShapeError
    return tool
