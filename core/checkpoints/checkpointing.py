"""The ``checkpoints`` setting, owned by the feature: its model, parsing, merging, defaults.

``{"checkpoints": {"enabled": true, "max_files": 50000, "max_size_mb": 500}}`` drives the
snapshots :mod:`.turns` takes before each prompt's changes. It is trust-gated (the key table,
``core.config.keys``): a project file's value applies only once it is trusted. Its section is
registered with the kernel's registry (``core.config.sections``); the loaded value is held in
``Settings.sections`` and read with :func:`of`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codebot_mcp.core.config.fieldcheck import check_section
from codebot_mcp.core.config.sections import Section, register, row

if TYPE_CHECKING:
    from pydantic import BaseModel

    from codebot_mcp.core.config.settings import Settings

__all__ = ["CheckpointSettings", "merge_checkpoints", "of", "parse_checkpoints"]


@dataclass(frozen=True, slots=True)
class CheckpointSettings:
    """``checkpoints``: snapshots of the project before each turn's changes, for ``/rewind``
    and ``codebot rewind`` (``core.checkpoints.turns``). A project file sets it only once
    trusted."""

    enabled: bool = True
    max_files: int = 50_000
    """A project with more files (not counting what .gitignore excludes) is not snapshotted."""
    max_size_mb: int = 500
    """Nor one whose files add up to more megabytes (10^6 bytes)."""

    @property
    def max_bytes(self) -> int:
        """``max_size_mb`` in bytes."""
        return self.max_size_mb * 1_000_000


def of(settings: Settings) -> CheckpointSettings:
    """The ``checkpoints`` of loaded settings (the defaults where none were loaded)."""
    return settings.section("checkpoints", CheckpointSettings)


def parse_checkpoints(path: Path, key: str, value: Any) -> dict[str, Any]:
    """The keys the ``checkpoints`` object of ``path`` sets, checked by its model's fields
    (unknown keys warn, through the key table).

    Raises:
        SettingsError: it is not an object, or a value has the wrong type.
    """
    return check_section(path, key, value)


def merge_checkpoints(
    base: CheckpointSettings | None, parts: dict[str, Any] | None
) -> CheckpointSettings:
    """``base`` (the defaults when None) with the keys one file sets (:func:`parse_checkpoints`)
    over it: a project's go over yours one by one."""
    return replace(base or CheckpointSettings(), **(parts or {}))


@cache
def section_model() -> type[BaseModel]:
    """The ``checkpoints`` section as a pydantic model (built on demand: see
    :mod:`.sections`)."""
    from pydantic import BaseModel, ConfigDict, Field

    defaults = CheckpointSettings()

    class Checkpoints(BaseModel):
        model_config = ConfigDict(extra="forbid")
        enabled: bool = defaults.enabled
        max_files: int = Field(default=defaults.max_files, ge=1)
        max_size_mb: int = Field(default=defaults.max_size_mb, ge=1)

    class CheckpointsSection(BaseModel):
        model_config = ConfigDict(extra="forbid")
        checkpoints: Checkpoints = Field(
            default=Checkpoints(),
            description="Snapshots before the agent changes files, for codebot rewind: "
            "enabled, max_files, max_size_mb.",
            examples=[{"enabled": True, "max_files": 20_000, "max_size_mb": 200}],
        )

    return CheckpointsSection


register(
    Section(
        "checkpoints",
        (
            row(
                "checkpoints",
                parse_checkpoints,  # its default as parsed: the keys a file sets
                trust="own",
                hints=True,
                merge=merge_checkpoints,
            ),
        ),
        section_model,
        order=40,
    )
)
