"""A call's arguments against the tool's input schema, for the SDK path and the hot path alike.

Free of ``mcp`` imports on purpose: :mod:`mcpbridge.lite` uses it without loading the SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from codebot_mcp.core.arguments import typed
from codebot_mcp.core.errors import UsageError


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
    arguments = typed(arguments, tool.schema())
    problem = tool.check_arguments(arguments)
    if problem:
        raise UsageError(
            f"arguments for '{tool.original_name}' do not match its schema: {problem}",
            hint=f"See the schema with: codebot mcp list --server {server} --schemas",
        )
    return arguments
