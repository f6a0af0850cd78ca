"""The one list of the features that own a settings section: importing this module registers
them all (:mod:`.sections` imports it, by name, the first time the key table is read).

A feature that adds a section adds its module here; the loader itself never names one.
"""

from __future__ import annotations

from codebot_mcp.core.config import (
    checkpointing,
    claudefiles,
    hooks,
    imagelimits,
    keys,
    managed,
    mcpsection,
    modelsection,
    sandboxing,
    telemetry,
)

FEATURES = (
    mcpsection,
    modelsection,
    imagelimits,
    keys,
    checkpointing,
    hooks,
    sandboxing,
    claudefiles,
    managed,
    telemetry,
)
"""In the order the docs list their keys."""
