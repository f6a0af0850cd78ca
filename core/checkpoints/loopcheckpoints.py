"""The session's checkpoints as the loop calls them: the kernel's
``core.agent.protocols.TurnCheckpoints``, registered at import with the kernel's loop parts
(``core.agent.loopparts``): :func:`core.checkpoints.turns.follow` over the settings' section
and the chat's session log the composition root provides (off, or no log: no part).
"""

from __future__ import annotations

from codebot_mcp.core.agent.history import SessionLog
from codebot_mcp.core.agent.loopparts import PartContext, register_loop_part
from codebot_mcp.core.agent.protocols import TurnCheckpoints
from codebot_mcp.core.checkpoints import checkpointing
from codebot_mcp.core.checkpoints.turns import Checkpoints, follow

__all__: list[str] = []


def _checkpoints(context: PartContext) -> Checkpoints | None:
    """The checkpoints of the chat's session as the settings say (the current ones kept when
    they still fit)."""
    log = context.get(SessionLog)
    if log is None:
        return None
    current = context.current if isinstance(context.current, Checkpoints) else None
    return follow(
        current,
        checkpointing.of(context.settings),
        context.project,
        log.id,
        scrub=context.scrub,
        conversation=log.size,
        warn=context.warn,
    )


register_loop_part("checkpoints", TurnCheckpoints, _checkpoints)
