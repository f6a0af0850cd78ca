"""The features' tools: each feature registers a factory with the kernel, and a session's
tools come from here, so neither the kernel nor the composition root names a feature's tool.

A feature calls :func:`register_tools` once, at import of the module that defines its tools
(``core.jobs.jobtools``: ``bash_output`` and ``bash_kill``; ``core.subagents.delegation``:
``task``; ``core.skills.skilltool``: ``skill``). The composition root (``cli.chat_runtime``)
builds the feature objects a chat needs (the job table, the subagents, the skill catalog),
hands them over in a :class:`ToolContext`, and asks :func:`feature_tools` for the tools of
each :class:`Place`. A factory takes what it needs from the context by type
(:meth:`ToolContext.get`) and returns no tool when it is not there (a session without jobs
has no job tools).

The kernel names no feature: :data:`FEATURES` is the one module that imports them all
(``core/toollist.py``, the top of ``core``'s stack), found by name on first use, as the
settings sections are (``core.config.sections``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TypeVar

from codebot_mcp.core.tools.base import Tool

__all__ = [
    "FEATURES",
    "Place",
    "ToolContext",
    "ToolFactory",
    "feature_tools",
    "register_tools",
]

T = TypeVar("T")

FEATURES = "codebot_mcp.core.toollist"
"""The module that imports every feature bringing tools (each registers on import)."""


class Place(Enum):
    """Where a feature's tools stand among a session's tools (the order is part of the cached
    prompt, so it is fixed): the built-ins, ``AFTER_BUILTINS``, the servers' resource tools,
    the session's own (``todo_write``), ``AFTER_SESSION``, then ``WHILE_SKILLS``, then the MCP
    tools."""

    AFTER_BUILTINS = "after the built-ins"
    """``task``."""
    AFTER_SESSION = "after the session's own tools"
    """``bash_output``, ``bash_kill``."""
    WHILE_SKILLS = "after the local layer, offered while the session has skills"
    """``skill`` (the session's ``skill_tool``)."""


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What a feature's tool factory is given: where the session works, and the objects the
    composition root made for this session, which factories find by type."""

    cwd: Path
    project_root: Path | None = None
    provided: tuple[object, ...] = ()

    def get(self, kind: type[T]) -> T | None:
        """The provided object of type ``kind`` (None: there is none)."""
        for item in self.provided:
            if isinstance(item, kind):
                return item
        return None


ToolFactory = Callable[[ToolContext], Sequence[Tool]]
"""A feature's tools for one session (none when what they need was not provided)."""


@dataclass(frozen=True, slots=True)
class _Registration:
    feature: str
    place: Place
    factory: ToolFactory


_REGISTRY: dict[str, _Registration] = {}
_LOADED: list[bool] = []


def register_tools(feature: str, factory: ToolFactory, *, place: Place) -> None:
    """Register ``feature``'s tool factory; called once, at import of the feature's module
    (again, it replaces the first: the module run twice). Features of one place give their
    tools in the order they registered (:data:`FEATURES` imports them in a fixed order)."""
    _REGISTRY[feature] = _Registration(feature, place, factory)


def feature_tools(context: ToolContext, place: Place) -> list[Tool]:
    """Every registered feature's tools for ``place`` (the features are imported on first
    use)."""
    if not _LOADED:
        importlib.import_module(FEATURES)
        _LOADED.append(True)
    return [
        tool
        for registration in _REGISTRY.values()
        if registration.place is place
        for tool in registration.factory(context)
    ]
