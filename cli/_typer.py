"""The only module that uses Typer's private API (``typer._click``, ``typer._coercion``).

Typer 0.29 vendors Click as ``typer._click``; its exception classes are what ``run`` catches,
and its option coercion is what :func:`light_option_parsing` replaces on the light paths.
``pyproject.toml`` pins Typer below its next minor version, and ``tests/test_imports.py``
fails if the fast path stops applying (pydantic loaded by ``codebot mcp --help``).
"""

from __future__ import annotations

from typing import Any

import typer
from typer._click import exceptions as click_exceptions  # noqa: TID251

__all__ = ["HELP_OPTIONS", "click_exceptions", "light_option_parsing"]

HELP_OPTIONS = ["-h", "--help"]


def light_option_parsing(command: typer.core.TyperGroup) -> int:
    """Keep pydantic out of parsing text, flag, number and list-of-text options.

    Typer 0.29 coerces option values through a pydantic ``TypeAdapter`` built on first use:
    60-250 ms of imports that `codebot mcp --help` would pay for ``--cwd`` or an unset flag,
    and a warm `mcp call` for its ARGS. ``str``, ``bool``, ``float`` and ``list[str]`` need no
    more than the builtins, so those get a coercion of exactly that, across the command tree
    (a bad number gets pydantic's own message). Should Typer's internals change, this does
    nothing and Typer's own coercion applies; ``tests/test_imports.py`` notices that.

    Returns:
        How many options got the plain coercion (0 when the fast path does not apply).
    """
    try:
        from typer._click.core import Command, Context  # noqa: TID251
        from typer._click.exceptions import BadParameter  # noqa: TID251
        from typer._coercion import RuntimeParam  # noqa: TID251
    except ImportError:  # pragma: no cover - a Typer without this layer
        return 0

    class Plain(RuntimeParam):
        def _coerce_value(self, value: object, param: object, ctx: object) -> object:
            return self.annotation(value)  # type: ignore[operator]

    class Number(RuntimeParam):
        """``float`` options (``--timeout``), with pydantic's message for a bad value."""

        def _coerce_value(self, value: object, param: Any, ctx: Any) -> object:
            try:
                return float(value)  # type: ignore[arg-type]
            except (TypeError, ValueError):
                raise BadParameter(
                    "Input should be a valid number, unable to parse string as a number",
                    ctx=ctx,
                    param=param,
                ) from None

    class Strings(RuntimeParam):
        """``list[str]`` options and arguments (``--server``, ``mcp call``'s ARGS)."""

        def _coerce_value(self, value: object, param: object, ctx: object) -> object:
            return [str(item) for item in value]  # type: ignore[attr-defined]

    kinds: dict[object, type[RuntimeParam]] = {str: Plain, bool: Plain, float: Number}
    adapted = 0
    stack: list[Command] = [command]
    while stack:
        node = stack.pop()
        stack.extend(getattr(node, "commands", {}).values())
        # The help option is made per command on first use; make it now to include it.
        help_option = node.get_help_option(Context(node, help_option_names=HELP_OPTIONS))
        for param in [*node.params, help_option]:
            descriptor = getattr(param, "type_descriptor", None)
            if descriptor is None:
                continue
            many = getattr(param, "multiple", False) or getattr(param, "nargs", 1) != 1
            kind = (
                (Strings if descriptor.annotation == list[str] else None)
                if many
                else kinds.get(descriptor.annotation)
            )
            if kind is None:
                continue
            light = kind(parameter_info=descriptor.parameter_info, annotation=descriptor.annotation)
            param._runtime_param = light  # type: ignore[union-attr]
            adapted += 1
    return adapted
