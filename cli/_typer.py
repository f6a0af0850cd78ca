"""The only module that uses Typer's private API (``typer._click``, ``typer._coercion``).

Typer 0.29 vendors Click as ``typer._click``; its exception classes are what ``run`` catches,
and its option coercion is what :func:`light_option_parsing` replaces on the light paths.
``pyproject.toml`` pins Typer below its next minor version, and ``tests/test_imports.py``
fails if the fast path stops applying (pydantic loaded by ``codebot mcp --help``).
"""

from __future__ import annotations

import typer
from typer._click import exceptions as click_exceptions  # noqa: TID251

__all__ = ["HELP_OPTIONS", "click_exceptions", "light_option_parsing"]

HELP_OPTIONS = ["-h", "--help"]


def light_option_parsing(command: typer.core.TyperGroup) -> int:
    """Keep pydantic out of parsing plain text and flag options.

    Typer 0.29 coerces option values through a pydantic ``TypeAdapter`` built on first use:
    about 60 ms of imports that `codebot mcp --help` would pay for ``--cwd`` or an unset
    flag alone. Text and flag options need no more than ``str`` and ``bool``, so those get a
    coercion of exactly that, across the command tree. Should Typer's internals change, this
    does nothing and Typer's own coercion applies; ``tests/test_imports.py`` notices that.

    Returns:
        How many options got the plain coercion (0 when the fast path does not apply).
    """
    try:
        from typer._click.core import Command, Context  # noqa: TID251
        from typer._coercion import RuntimeParam  # noqa: TID251
    except ImportError:  # pragma: no cover - a Typer without this layer
        return 0

    class Plain(RuntimeParam):
        def _coerce_value(self, value: object, param: object, ctx: object) -> object:
            return self.annotation(value)  # type: ignore[operator]

    adapted = 0
    stack: list[Command] = [command]
    while stack:
        node = stack.pop()
        stack.extend(getattr(node, "commands", {}).values())
        # The help option is made per command on first use; make it now to include it.
        help_option = node.get_help_option(Context(node, help_option_names=HELP_OPTIONS))
        for param in [*node.params, help_option]:
            descriptor = getattr(param, "type_descriptor", None)
            if descriptor is None or descriptor.annotation not in (str, bool):
                continue
            if getattr(param, "multiple", False) or getattr(param, "nargs", 1) != 1:
                continue
            plain = Plain(
                parameter_info=descriptor.parameter_info, annotation=descriptor.annotation
            )
            param._runtime_param = plain  # type: ignore[union-attr]
            adapted += 1
    return adapted
