"""The ``checkpoints`` setting: parsed, merged key by key, shown to the trust review.

``{"checkpoints": {"enabled": true, "max_files": 50000, "max_size_mb": 500}}`` drives the
snapshots ``core.checkpoints.turns`` takes before each prompt's changes. It is trust-gated
(the key table, ``core.config.keys``): a project file's value applies only once it is trusted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codebot_mcp.core.config.sections import Key, Section, register
from codebot_mcp.core.errors import SettingsError
from codebot_mcp.core.jsonutil import json_type

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["CHECKPOINT_KEYS", "CheckpointSettings", "merge_checkpoints", "parse_checkpoints"]


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


def parse_checkpoints(path: Path, value: Any) -> dict[str, Any]:
    """The keys the ``checkpoints`` object of ``path`` sets (unknown keys warn, through the
    key table).

    Raises:
        SettingsError: it is not an object, or a value has the wrong type.
    """
    example = '"checkpoints": {"enabled": true, "max_files": 50000, "max_size_mb": 500}'
    if not isinstance(value, dict):
        raise SettingsError(
            f"'checkpoints' in {path} must be an object, found {json_type(value)}",
            hint=f"Write it as {example}.",
        )
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key == "enabled":
            if not isinstance(item, bool):
                raise SettingsError(
                    f"'checkpoints.enabled' in {path} must be true or false, "
                    f"found {json.dumps(item)}",
                    hint=f"Write it as {example}.",
                )
            out[key] = item
        elif key in ("max_files", "max_size_mb"):
            if not isinstance(item, int) or isinstance(item, bool) or item < 1:
                raise SettingsError(
                    f"'checkpoints.{key}' in {path} must be a positive integer, "
                    f"found {json.dumps(item)}",
                    hint=f"Write it as {example}.",
                )
            out[key] = item
    return out


def merge_checkpoints(
    global_scalars: dict[str, Any], project_scalars: dict[str, Any]
) -> dict[str, str]:
    """A project's ``checkpoints`` keys go over the global ones, one by one; returns what the
    trust review shows of them (the keys the project set, as JSON), or nothing."""
    global_scalars["checkpoints"] = CheckpointSettings(**global_scalars.get("checkpoints", {}))
    keys = project_scalars.get("checkpoints")
    if keys is None:
        return {}
    project_scalars["checkpoints"] = replace(global_scalars["checkpoints"], **keys)
    return {"checkpoints": json.dumps(keys, sort_keys=True)}


CHECKPOINT_KEYS: tuple[str, ...] = tuple(f.name for f in fields(CheckpointSettings))


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
            examples=[{"enabled": False}],
        )

    return CheckpointsSection


register(
    Section(
        "checkpoints",
        (Key("checkpoints", trust="own", keys=CHECKPOINT_KEYS),),
        section_model,
        order=40,
    )
)
