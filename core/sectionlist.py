"""The one list of the modules that declare a settings section: importing this module
registers them all (``core.config.sections`` imports it, by name, the first time the key table
is read).

It sits at the top of ``core``'s stack, above the features, so it may name them: the kernel's
own sections (``core/config``) and the packages' (``core.checkpoints.checkpointing``,
``core.telemetry.exportsettings``, ``core.media.imagelimits``, ``core.hooks.hooksection``,
``core.sandbox.sandboxsettings``, which also registers how its files combine:
``core.config.combining``). A feature that adds a section adds its module here; the loader
itself never names one."""

from __future__ import annotations

from codebot_mcp.core.checkpoints import checkpointing
from codebot_mcp.core.config import (
    claudefiles,
    keys,
    managed,
    mcpsection,
    modelsection,
)
from codebot_mcp.core.hooks import hooksection
from codebot_mcp.core.media import imagelimits
from codebot_mcp.core.sandbox import sandboxsettings
from codebot_mcp.core.telemetry import exportsettings

FEATURES = (
    mcpsection,
    modelsection,
    imagelimits,
    keys,
    checkpointing,
    hooksection,
    sandboxsettings,
    claudefiles,
    managed,
    exportsettings,
)
"""In the order the docs list their keys."""
