"""The one list of the modules that register a feature's tools: importing this module
registers them all (``core.tools.featuretools`` imports it, by name, the first time a
session's feature tools are asked for).

It sits at the top of ``core``'s stack with :mod:`.sectionlist`, above the features, so it may
name them. A feature that brings tools adds its module here; neither the kernel nor the
composition root names one.
"""

from __future__ import annotations

from codebot_mcp.core.jobs import jobtools
from codebot_mcp.core.skills import skilltool
from codebot_mcp.core.subagents import delegation

FEATURES = (delegation, jobtools, skilltool)
"""In the order their tools stand within a place (``core.tools.featuretools.Place``)."""
