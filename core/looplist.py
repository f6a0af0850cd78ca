"""The one list of the modules that register a feature's loop part: importing this module
registers them all (``core.agent.loopparts`` imports it, by name, the first time a chat asks
for its parts).

It sits at the top of ``core``'s stack with :mod:`.sectionlist` and :mod:`.toollist`, above
the features, so it may name them. A feature that brings a part of the loop (a kernel
protocol of ``core.agent.protocols``) adds its module here; neither the kernel nor the
composition root names one.
"""

from __future__ import annotations

from codebot_mcp.core.checkpoints import loopcheckpoints
from codebot_mcp.core.hooks import loophooks

FEATURES = (loopcheckpoints, loophooks)
"""Each fills one slot (``core.agent.loopparts``)."""
