"""Every place codebot works around Typer, each with why; the rest of cli/ uses its public API.

The workarounds, one line each:
- :func:`light_option_parsing`: Typer coerces every option through pydantic (60-250 ms of
  imports on ``--help`` and warm calls); plain types need only the builtins.
- :func:`pruned`: building the whole Click tree costs ~50 ms; a run builds what it can reach.
- :func:`plain_metavars`: Typer prints Python types in help (``SERVER <str>``); users read names.
- :func:`optional_values`: a Typer option cannot take an optional value (``chat --resume``).
- :func:`hoist_global_options`: Click reads group options only before the subcommand; users
  write ``codebot mcp list --cwd X``.
- ``click_exceptions`` and the completion helpers: Typer 0.29 vendors Click as
  ``typer._click`` and keeps its completion scripts private.

``pyproject.toml`` pins Typer below its next minor version, and ``tests/test_imports.py``
fails if the fast path stops applying (pydantic loaded by ``codebot mcp --help``).
"""

from __future__ import annotations

import typing
from enum import Enum
from pathlib import Path
from typing import Any

import typer
from typer._click import exceptions as click_exceptions  # noqa: TID251

__all__ = [
    "HELP_OPTIONS",
    "click_exceptions",
    "completion_init",
    "completion_script",
    "hoist_global_options",
    "install_completion",
    "light_option_parsing",
    "optional_values",
    "plain_metavars",
    "pruned",
]

HELP_OPTIONS = ["-h", "--help"]


def light_option_parsing(command: typer.core.TyperGroup) -> int:
    """Keep pydantic out of parsing text, flag, number, choice and list options.

    Typer 0.29 coerces option values through a pydantic ``TypeAdapter`` built on first use:
    60-250 ms of imports that `codebot mcp --help` would pay for ``--cwd`` or an unset flag,
    and a warm `mcp call` for its ARGS. ``str``, ``bool``, ``float`` and ``list[str]`` need no
    more than the builtins, so those get a coercion of exactly that, across the command tree
    (a bad number gets pydantic's own message); enum options (``--scope``, ``--from``) get
    Click's words for a bad choice, not pydantic's "Value error, ...". Should Typer's
    internals change, this does nothing and Typer's own coercion applies;
    ``tests/test_imports.py`` notices that.

    Returns:
        How many options got the plain coercion (0 when the fast path does not apply).
    """
    try:
        from typer._click.core import Command, Context  # noqa: TID251
    except ImportError:  # pragma: no cover - a Typer without this layer
        return 0
    choose = _coercions()
    if choose is None:  # pragma: no cover - a Typer without this layer
        return 0
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
            kind = choose(descriptor.annotation, many)
            if kind is None:
                continue
            light = kind(parameter_info=descriptor.parameter_info, annotation=descriptor.annotation)
            param._runtime_param = light  # type: ignore[union-attr]
            adapted += 1
    return adapted


def _choice(kind: type[Enum], value: object, param: Any, ctx: Any) -> Enum:
    """One of an enum's values, or Click's own words for a bad one (pydantic's would start
    "Value error, ")."""
    try:
        return kind(value)
    except ValueError:
        import difflib

        from typer._click.exceptions import BadParameter  # noqa: TID251

        names = [str(m.value) for m in kind]
        close = difflib.get_close_matches(str(value), names, n=1)
        guess = f" (did you mean '{close[0]}'?)" if close else ""
        shown = ", ".join(f"'{n}'" for n in names)
        raise BadParameter(
            f"{value!r} is not one of {shown}{guess}.", ctx=ctx, param=param
        ) from None


def _coercions() -> Any:
    """A function (annotation, many) → the light coercion class for it, or None; None when
    Typer's private layer is not there."""
    try:
        from typer._click.exceptions import BadParameter  # noqa: TID251
        from typer._coercion import RuntimeParam  # noqa: TID251
    except ImportError:  # pragma: no cover - a Typer without this layer
        return None

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

    class Choice(RuntimeParam):
        """Enum options (``--scope``, ``--transport``)."""

        def _coerce_value(self, value: object, param: Any, ctx: Any) -> object:
            return _choice(self.annotation, value, param, ctx)  # type: ignore[arg-type]

    class Choices(RuntimeParam):
        """``list[Enum]`` options (``--from``)."""

        def _coerce_value(self, value: object, param: Any, ctx: Any) -> object:
            (kind,) = typing.get_args(self.annotation)
            return [_choice(kind, item, param, ctx) for item in value]  # type: ignore[attr-defined]

    def is_enum(annotation: object) -> bool:
        return isinstance(annotation, type) and issubclass(annotation, Enum)

    plain: dict[object, type[RuntimeParam]] = {str: Plain, bool: Plain, float: Number}

    def choose(annotation: object, many: bool) -> type[RuntimeParam] | None:
        if not many:
            return Choice if is_enum(annotation) else plain.get(annotation)
        if annotation == list[str]:
            return Strings
        args = typing.get_args(annotation)
        if typing.get_origin(annotation) is list and len(args) == 1 and is_enum(args[0]):
            return Choices
        return None

    return choose


PRUNE = True
"""Off in a test that checks the pruned tree's output against the whole tree's."""


def pruned(app: typer.Typer, argv: list[str]) -> typer.Typer:
    """``app`` with every command that ``argv`` cannot run replaced by a stub.

    Building Typer's Click tree reads the signature and type hints of every command's callback:
    about 50 ms for codebot's 57 commands, which ``--version`` or ``mcp list`` would pay for
    commands they never run. A command whose name is not among the tokens of ``argv`` cannot
    run (Click dispatches on exact names), so it gets a callback without parameters that keeps
    its name and docstring: listings, help and "No such command" suggestions stay the same. A
    name that appears as an argument value only costs a real build. Completion (which reads its
    words from the environment) builds the whole tree.
    """
    import copy
    import os

    if not PRUNE or any(key.endswith("_COMPLETE") for key in os.environ):
        return app
    tokens = set(argv)

    def stub(info: Any) -> Any:
        real = info.callback

        def callback() -> None:  # pragma: no cover - never dispatched to
            raise AssertionError(f"pruned command {info.name!r} was invoked")

        callback.__name__ = getattr(real, "__name__", "command")
        callback.__doc__ = getattr(real, "__doc__", None)
        clone = copy.copy(info)
        clone.callback = callback
        return clone

    def name_of(info: Any) -> str:
        name = info.name if isinstance(info.name, str) else None
        return name or info.callback.__name__.lower().replace("_", "-")

    def prune(node: typer.Typer) -> typer.Typer:
        clone = copy.copy(node)
        clone.registered_commands = [
            c if name_of(c) in tokens else stub(c) for c in node.registered_commands
        ]
        groups = []
        for group in node.registered_groups:
            child = copy.copy(group)
            child.typer_instance = prune(group.typer_instance)  # type: ignore[arg-type]
            if isinstance(group.name, str) and group.name not in tokens:
                child.typer_instance.registered_commands = []
                child.typer_instance.registered_groups = []
            groups.append(child)
        clone.registered_groups = groups
        return clone

    return prune(app)


def plain_metavars(command: typer.core.TyperGroup) -> None:
    """Help shows metavars (``NAME``, ``SECONDS``, ``GLOB``), never Python types.

    Typer 0.29 prints an argument as ``NAME <str>`` and an option without a metavar as
    ``--x <float>``: arguments lose the type, options get their choices or their name in
    capitals. Should Typer's internals change, this does nothing (a test checks the help).
    """
    stack: list[typer.core.TyperGroup] = [command]
    while stack:
        node = stack.pop()
        stack.extend(getattr(node, "commands", {}).values())
        for param in node.params:
            if isinstance(param, typer.core.TyperArgument):
                label = param.metavar or (param.name or "ARG").upper()
                many = "..." if param.nargs != 1 and not label.endswith("...") else ""
                usage = f"{label}{many}" if param.required else f"[{label}]{many}"
                if label.startswith("["):  # already written as usage, e.g. "[-- COMMAND ...]"
                    usage = label
                param.display_type_rich = lambda ctx: None  # type: ignore[method-assign]
                param._usage_display_name = lambda usage=usage: usage  # type: ignore[method-assign,misc]
            elif getattr(param, "metavar", "") is None and not getattr(param, "is_flag", True):
                choices = getattr(param.type_descriptor, "choices", None)  # type: ignore[attr-defined]
                param.metavar = (
                    "|".join(str(getattr(c, "value", c)) for c in choices)
                    if choices
                    else (param.name or "VALUE").upper()
                )


def completion_init() -> None:
    """Register Typer's shell classes (the answers its completion scripts expect)."""
    from typer._completion_classes import completion_init as init

    init()


def completion_script(prog_name: str, complete_var: str, shell: str) -> str:
    """Typer's completion script for ``shell``."""
    from typer._completion_shared import get_completion_script

    return get_completion_script(prog_name=prog_name, complete_var=complete_var, shell=shell)


def install_completion(prog_name: str, complete_var: str, shell: str) -> Path:
    """Install Typer's completion script where ``shell`` finds it; the path written."""
    from typer._completion_shared import install

    _, path = install(shell=shell, prog_name=prog_name, complete_var=complete_var)
    return path


OPTIONAL_VALUE_OPTIONS = ("--resume",)
"""Options whose value may be left out (``chat --resume`` lists the sessions to pick from)."""


def optional_values(argv: list[str]) -> list[str]:
    """Give a bare ``--resume`` the empty value: Typer options cannot take an optional value."""
    out: list[str] = []
    for i, arg in enumerate(argv):
        out.append(arg)
        following = argv[i + 1] if i + 1 < len(argv) else None
        if arg in OPTIONAL_VALUE_OPTIONS and (following is None or following.startswith("-")):
            out.append("")
        if arg == "--":
            out.extend(argv[i + 1 :])
            break
    return out


GLOBAL_VALUE_OPTIONS = ("--cwd", "--model", "--base-url")
GLOBAL_FLAGS = ("--debug", "--trust-project")


def hoist_global_options(argv: list[str], root: typer.core.TyperGroup) -> list[str]:
    """Move global options written after the command to before it.

    ``codebot mcp list --cwd X`` becomes ``codebot --cwd X mcp list``. An option the command
    defines itself (``chat --model``) stays its own; the values of the command's options and
    everything after ``--`` are never touched.
    """
    root_part: list[str] = []
    i = 0
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "--":
        root_part.append(argv[i])
        if argv[i] in (*GLOBAL_VALUE_OPTIONS, "--show-completion") and i + 1 < len(argv):
            root_part.append(argv[i + 1])
            i += 1
        i += 1
    node: Any = root
    hoisted: list[str] = []
    rest: list[str] = []
    while i < len(argv):
        token = argv[i]
        if token == "--":
            rest.extend(argv[i:])
            break
        sub = getattr(node, "commands", {}).get(token) if not token.startswith("-") else None
        if sub is not None:
            node = sub
            rest.append(token)
            i += 1
            continue
        own = {
            o: not p.is_flag
            for p in node.params
            for o in (*p.opts, *p.secondary_opts)
            if isinstance(p, typer.core.TyperOption)
        }
        name = token.split("=", 1)[0]
        if name in own:
            rest.append(token)
            if own[name] and "=" not in token and i + 1 < len(argv):
                rest.append(argv[i + 1])
                i += 1
        elif name in GLOBAL_FLAGS and "=" not in token:
            hoisted.append(token)
        elif name in GLOBAL_VALUE_OPTIONS:
            hoisted.append(token)
            if "=" not in token and i + 1 < len(argv):
                hoisted.append(argv[i + 1])
                i += 1
        else:
            rest.append(token)
        i += 1
    return root_part + hoisted + rest
