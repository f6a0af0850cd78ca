"""The features' loop parts: the objects the loop calls through its protocols
(:class:`.protocols.TurnHooks`, :class:`.protocols.TurnCheckpoints`) come from here, so
neither the kernel nor the composition root names the feature that implements one.

A feature calls :func:`register_loop_part` once, at import of the module that makes its part
(``core.hooks.loophooks``: the user's hooks as ``TurnHooks``; ``core.checkpoints.
loopcheckpoints``: the session's checkpoints as ``TurnCheckpoints``). One feature fills a
protocol's slot: a second feature registering for a taken slot is an error
(:class:`LoopPartError`). The composition root (``cli.chat_runtime``) hands what it made for
the chat in a :class:`PartContext` and asks :func:`loop_part` for each slot, again when the
settings or the session change (the part it holds is the context's ``current``: a feature may
keep it). A subagent's parts are its parent's ``for_subagent()``, not asked here.

The kernel names no feature: :data:`FEATURES` is the one module that imports them all
(``core/looplist.py``, the top of ``core``'s stack), found by name on first use, as the
features' tools are (``core.tools.featuretools``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from codebot_mcp.core.errors import CodebotError

if TYPE_CHECKING:
    from codebot_mcp.core.agent.protocols import TurnCheckpoints, TurnHooks
    from codebot_mcp.core.config.settings import Settings

__all__ = [
    "FEATURES",
    "LoopPartError",
    "PartContext",
    "PartFactory",
    "loop_part",
    "register_loop_part",
    "turn_checkpoints",
    "turn_hooks",
]

T = TypeVar("T")

FEATURES = "codebot_mcp.core.looplist"
"""The module that imports every feature bringing a loop part (each registers on import)."""


class LoopPartError(CodebotError):
    """Two features registered for one protocol's slot (a bug of the features, not the
    user's)."""


@dataclass(frozen=True, slots=True)
class PartContext:
    """What a feature's part factory is given: the chat's settings and project, the objects
    the composition root made for it (found by type), the part the slot holds now (a factory
    may keep it), and how the chat warns and scrubs what it keeps."""

    settings: Settings
    project: Path
    provided: tuple[object, ...] = ()
    current: object | None = None
    """The part this slot holds now (None: none yet, or a new session's)."""
    warn: Callable[[str], None] = lambda text: None
    scrub: Callable[[str], str] = lambda text: text

    def get(self, kind: type[T]) -> T | None:
        """The provided object of type ``kind`` (None: there is none)."""
        for item in self.provided:
            if isinstance(item, kind):
                return item
        return None


PartFactory = Callable[[PartContext], object | None]
"""A feature's part for one chat (None: the feature is off, or what it needs was not
provided)."""


@dataclass(frozen=True, slots=True)
class _Registration:
    feature: str
    factory: PartFactory


_REGISTRY: dict[object, _Registration] = {}
_LOADED: list[bool] = []


def register_loop_part(feature: str, protocol: object, factory: PartFactory) -> None:
    """Register ``feature``'s factory for ``protocol``'s slot (a kernel protocol of
    :mod:`.protocols`); called once, at import of the feature's module (again by the same
    feature, it replaces the first: the module run twice).

    Raises:
        LoopPartError: another feature holds the slot.
    """
    taken = _REGISTRY.get(protocol)
    if taken is not None and taken.feature != feature:
        name = getattr(protocol, "__name__", repr(protocol))
        raise LoopPartError(
            f"the loop part {name} is registered twice: by '{taken.feature}' and '{feature}'"
        )
    _REGISTRY[protocol] = _Registration(feature, factory)


def loop_part(protocol: object, context: PartContext) -> object | None:
    """The part for ``protocol``'s slot from the feature registered for it (None: no feature
    is, or it made none); the features are imported on first use."""
    if not _LOADED:
        importlib.import_module(FEATURES)
        _LOADED.append(True)
    registration = _REGISTRY.get(protocol)
    return None if registration is None else registration.factory(context)


def turn_hooks(context: PartContext) -> TurnHooks | None:
    """The loop's hooks for this chat (:func:`loop_part` for ``TurnHooks``).

    Raises:
        LoopPartError: the registered feature made something else.
    """
    from codebot_mcp.core.agent.protocols import TurnHooks

    part: TurnHooks | None = _checked(TurnHooks, loop_part(TurnHooks, context))
    return part


def turn_checkpoints(context: PartContext) -> TurnCheckpoints | None:
    """The loop's checkpoints for this chat (:func:`loop_part` for ``TurnCheckpoints``).

    Raises:
        LoopPartError: the registered feature made something else.
    """
    from codebot_mcp.core.agent.protocols import TurnCheckpoints

    part: TurnCheckpoints | None = _checked(TurnCheckpoints, loop_part(TurnCheckpoints, context))
    return part


def _checked(protocol: type[Any], part: object) -> Any:
    """``part`` when it is None or implements ``protocol``; else the error naming its feature."""
    if part is None or isinstance(part, protocol):
        return part
    raise _not_a(protocol, part)


def _not_a(protocol: type[Any], part: object) -> LoopPartError:
    feature = _REGISTRY[protocol].feature
    return LoopPartError(
        f"the loop part '{feature}' registered for {protocol.__name__} is a "
        f"{type(part).__name__}, which is not one"
    )
