"""A call's arguments against the tool's input schema, for the SDK path and the hot path alike.

Free of ``mcp`` imports on purpose: :mod:`mcpbridge.calls.lite` uses it without loading the SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from codebot_mcp.core.errors import UsageError
from codebot_mcp.core.tools.arguments import typed


def validator_for(schema: dict[str, Any]) -> Any:
    """A jsonschema validator, or False when the schema itself is invalid (not enforced)."""
    import jsonschema  # deferred: only calls from the shell validate up front

    cls = jsonschema.validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError:
        return False
    return cls(schema)


def first_problem(
    validator: Any, arguments: Mapping[str, Any], schema: Mapping[str, Any]
) -> str | None:
    """The first way ``arguments`` break the schema (``validator_for``), or None: what both
    paths' ``check_arguments`` return.

    ``null`` for a property the schema does not require counts as leaving it out, and a schema
    that cannot be evaluated here is not enforced.
    """
    if validator is False:
        return None
    required = schema.get("required")
    keep = set(required) if isinstance(required, list) else set()
    checked = {k: v for k, v in arguments.items() if v is not None or k in keep}
    try:
        errors = sorted(validator.iter_errors(checked), key=lambda e: list(e.path))
    except Exception:  # boundary: jsonschema cannot evaluate this schema (unresolvable $ref)
        return None
    if not errors:
        return None
    first = errors[0]
    where = "/".join(str(p) for p in first.absolute_path)
    return f"{where + ': ' if where else ''}{first.message}"


class Checked(Protocol):
    """A tool of either path that checks its arguments (``MCPTool``, the hot path's tool)."""

    @property
    def original_name(self) -> str: ...

    def schema(self) -> dict[str, Any]: ...

    def check_arguments(self, arguments: Mapping[str, Any]) -> str | None: ...


def checked_arguments(tool: Checked, arguments: dict[str, Any], server: str) -> dict[str, Any]:
    """``arguments`` typed by the tool's schema (``key=value`` pairs); a usage error naming the
    first way they break it."""
    schema = tool.schema()
    arguments = typed(arguments, schema)
    problem = tool.check_arguments(arguments)
    if problem:
        raise UsageError(
            f"arguments for '{tool.original_name}' do not match its schema: {problem}"
            + "".join(f"; {m}" for m in unknown_names(arguments, schema)),
            hint=f"See the schema with: codebot mcp list --server {server} --schemas",
        )
    return arguments


def unknown_names(arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    """ "unknown argument 'mesage' (did you mean 'message'?)" for each name the schema's
    properties do not have (said only beside a failure: a schema may allow extra names)."""
    import difflib

    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        return []
    names = [str(n) for n in properties]
    said = []
    for name in arguments:
        if name in properties:
            continue
        close = difflib.get_close_matches(str(name), names, n=1, cutoff=0.6)
        takes = ", ".join(names[:10]) + (", ..." if len(names) > 10 else "")
        guess = f" (did you mean '{close[0]}'?)" if close else f" (it takes {takes})"
        said.append(f"unknown argument '{name}'{guess}")
    return said
