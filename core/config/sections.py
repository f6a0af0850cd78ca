"""The registry of settings sections: what each top-level key of ``settings.json`` is, declared
by the feature that owns it.

A feature declares its **section**: a pydantic model whose fields are the top-level keys it
owns (their types, constraints, defaults, help and an example: the docs' key reference and
``docs/settings.schema.json`` are generated from them, :mod:`.keys`), and one :class:`Key` row
per field with what the loader needs at run time beyond the model (the parser that words the
errors users see, trust, the ``Settings`` attribute, how a project's value merges with yours).
A row is made by :func:`row`, which reads the key's default and the keys of an object-valued
section (for the "did you mean" hints) from the table generated from the models
(:mod:`.keytable`, one ``Spec`` per field), so the row repeats nothing of its model. It
calls :func:`register`; the loader asks :func:`sections`. The kernel names no feature:
:data:`FEATURES` is the one module that imports them all (``core/sectionlist.py``, the top of
``core``'s stack), found by name the first time the table is read, so imports run from the
features to the kernel.

**Where a value is held.** The kernel's own keys are typed fields of ``Settings``; a key a
feature package owns (``checkpoints``, ``telemetry``) is held in ``Settings.sections`` by its
name, and the feature reads it through its own typed accessor (``core.checkpoints.
checkpointing.of(settings)``): the kernel's ``Settings`` names no feature's type.

**Why the models are built on demand.** ``mcp list`` and a warm ``mcp call`` read every
settings file and must not import pydantic (about 60 ms, as much as the whole warm call;
``tests/test_imports.py``). So a section hands the registry a function that builds its model
(:attr:`Section.model`), called by the schema, docs and table generators and by the tests that
hold each row to its model (``tests/core/test_config_sections.py``): a row whose parser accepts
what the model refuses, or a table older than the models, fails there. What the run time needs
of a model (JSON types, the values of an enum, bounds, the default, an object's keys) it reads
from :mod:`.keytable`, plain Python written by ``python -m
codebot_mcp.core.config.tablegen``.

**Trust.** A key of a project file is ``"gated"`` unless its row says otherwise: it applies
only once the project is trusted. The default is deliberate: a key added later cannot forget
to be gated. A row may say ``"free"`` only when the key can make codebot *more* careful or
does nothing at all (``$schema``, ``permissions.ask``, ``permissions.deny``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from codebot_mcp.core.config.keytable import KEYS

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "FEATURES",
    "NOT_SET",
    "Key",
    "Section",
    "Trust",
    "by_name",
    "register",
    "row",
    "sections",
]

NOT_SET: Any = None
"""A model field's default when its key is left out and has no value of its own (``null`` is
not a value it takes: the field's type says which are)."""

Trust = Literal["gated", "free", "own"]
"""``gated``: a project file's value applies only once the project is trusted; ``free``: it
applies at once (it can only make codebot more careful, or does nothing); ``own``: the key's
module decides, value by value (``sandbox``: tightening applies at once, widening is gated;
``checkpoints``: gated part by part, through its row's ``merge``; ``hooks``: gated as
written, merged with yours)."""

FEATURES = "codebot_mcp.core.sectionlist"
"""The module that imports every feature owning a section (each registers on import)."""


@dataclass(frozen=True, slots=True)
class Key:
    """One top-level settings key, as the loader needs it at run time (its help, schema and
    example are its model field's). Made by :func:`row`, which takes ``default`` and ``keys``
    from the model through the generated table (every section's rows are)."""

    name: str
    default: Any = None
    parse: Callable[[Path, str, Any], Any] | None = None
    """Checks a value (raising ``SettingsError`` naming file and key) and returns it as
    ``Settings`` holds it; None for keys parsed elsewhere (servers, permissions)."""
    trust: Trust = "gated"
    """Whether a project file's value waits for trust; see the module docstring."""
    field: str | None = None
    """The ``Settings`` attribute it fills (its name by default when ``parse`` is set); a
    name that is not a field of ``Settings`` is held in ``Settings.sections``."""
    managed_only: bool = False
    """Only the managed settings file may set it (``core.config.managed``); in a user or
    project file it warns and does nothing."""
    keys: tuple[str, ...] | None = None
    """An object-valued key whose own keys are checked too (unknown ones warn, with a "did
    you mean"): its keys, as its model declares them."""
    merge: Callable[[Any, Any], Any] | None = None
    """For a key whose project value goes over yours part by part (``checkpoints``):
    ``merge(base, parts)`` is ``base`` (None: the defaults) with a file's parsed ``parts``
    (None: none). The trust review then shows the parts the project sets, as JSON. None: a
    project's value replaces yours whole."""

    @property
    def attribute(self) -> str | None:
        return self.field or (self.name if self.parse is not None else None)


@dataclass(frozen=True, slots=True)
class Section:
    """A feature's part of ``settings.json``: its keys and the model that declares them."""

    name: str
    """The feature, for messages and the docs (``checkpoints``, ``model``...)."""
    keys: tuple[Key, ...]
    model: Callable[[], type[BaseModel]]
    """Builds the section's pydantic model (cached by the feature): one field per key, by
    its JSON name (``alias``), with its help (``description``) and an example."""
    order: int
    """Where its keys stand in the docs and the schema (the order users read them in)."""


def row(
    name: str,
    parse: Callable[[Path, str, Any], Any] | None = None,
    *,
    hints: bool = False,
    held: Callable[[Any], Any] | None = None,
    trust: Trust = "gated",
    field: str | None = None,
    managed_only: bool = False,
    merge: Callable[[Any, Any], Any] | None = None,
) -> Key:
    """The :class:`Key` of ``name``, its default and keys from the generated table.

    The default is the model's, as ``Settings`` holds it: through ``parse`` (or ``held``, for a
    key parsed elsewhere). ``hints``: the object's keys are checked for the "did you mean"
    warnings (a key whose parser refuses an unknown field itself leaves it False). A key
    missing from the table (a field added to a model, the table not yet written again) has no
    default: ``tests/core/test_config_sections.py`` says to regenerate.
    """
    spec = KEYS.get(name)
    default = None if spec is None else spec.default
    if default is not None and parse is not None:
        default = parse(Path("settings.json"), name, default)
    elif default is not None and held is not None:
        default = held(default)
    return Key(
        name,
        default,
        parse,
        trust=trust,
        field=field,
        managed_only=managed_only,
        keys=spec.keys if hints and spec is not None else None,
        merge=merge,
    )


_REGISTRY: dict[str, Section] = {}
_LOADED: list[bool] = []
_TABLE: dict[str, Key] = {}
"""Every key by name, in order: filled on first use, emptied by :func:`register`."""


def register(section: Section) -> Section:
    """Add a feature's section; called once, at import of the feature's module.

    Raises:
        ValueError: another section already declares one of its keys.
    """
    taken = {k.name for s in _REGISTRY.values() if s.name != section.name for k in s.keys}
    clash = sorted(taken & {k.name for k in section.keys})
    if clash:  # the same section again is its module run twice (``python -m``): replaced
        raise ValueError(f"settings section '{section.name}' declares keys of another: {clash}")
    _REGISTRY[section.name] = section
    _TABLE.clear()
    return section


def sections() -> tuple[Section, ...]:
    """Every registered section, in the docs' order (the features are imported on first use)."""
    if not _LOADED:
        importlib.import_module(FEATURES)
        _LOADED.append(True)
    return tuple(sorted(_REGISTRY.values(), key=lambda s: s.order))


def by_name() -> Mapping[str, Key]:
    """Every key by its name, in the docs' order."""
    if not _TABLE:
        _TABLE.update((k.name, k) for s in sections() for k in s.keys)
    return _TABLE
