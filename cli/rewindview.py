"""What ``/rewind`` and ``codebot rewind`` print: the turns with their changed files, the plan
of a rewind, its outcome. Paths and prompts are strangers' text: all of it goes through
``render.safe``."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from codebot_mcp.cli.render import safe

if TYPE_CHECKING:
    from codebot_mcp.core.checkpoints.turns import Checkpoints, Plan, Restored, Turn

MARKS = {"added": "A", "modified": "M", "deleted": "D"}
DOES = {"restore": "restore", "remove": "remove", "recreate": "recreate"}
MAX_LISTED = 50
"""Changed files listed per turn; the rest are counted."""


def turn_title(turn: Turn) -> str:
    """``3  21:35  fix the failing tests``."""
    when = time.strftime("%H:%M", time.localtime(turn.started)) if turn.started else "--:--"
    return f"{turn.number:>3}  {when}  {safe(turn.prompt, one_line=True) or '(empty prompt)'}"


def turn_lines(checkpoints: Checkpoints, turns: list[Turn]) -> list[str]:
    """Each turn, then the files it changed (``A``dded, ``M``odified, ``D``eleted).

    Raises:
        StoreError: the store cannot be read.
    """
    lines: list[str] = []
    for turn in turns:
        changes = checkpoints.changes(turn, turns)
        if changes is None:
            lines.append(f"{turn_title(turn)}  (no checkpoint: {safe(turn.skipped)})")
            continue
        if not changes:
            lines.append(f"{turn_title(turn)}  (no file changes)")
            continue
        count = f"{len(changes)} file{'s' if len(changes) != 1 else ''}"
        lines.append(f"{turn_title(turn)}  ({count})")
        for change in changes[:MAX_LISTED]:
            lines.append(f"         {MARKS[change.status]} {safe(change.path, one_line=True)}")
        if len(changes) > MAX_LISTED:
            lines.append(f"         ... and {len(changes) - MAX_LISTED} more")
    return lines


def plan_lines(plan: Plan) -> list[str]:
    """What a rewind would do, one path a line, and what it cannot."""
    turn = plan.turn
    prompt = safe(turn.prompt, one_line=True) or "(empty prompt)"
    lines = [f"Rewind to before turn {turn.number} ({prompt}):"]
    for action in plan.actions:
        note = "  (changed after the turn: that change is lost too)" if action.changed_since else ""
        lines.append(f"  {DOES[action.do]:<9} {safe(action.path, one_line=True)}{note}")
    for conflict in plan.conflicts:
        lines.append(f"  cannot    {safe(conflict, one_line=True)}")
    if not plan.actions and not plan.conflicts:
        lines.append("  (the files are as they were before this turn)")
    return lines


def result_line(restored: Restored) -> str:
    """``restored 3 files`` (and how many failed)."""
    done = len(restored.done)
    line = f"restored {done} file{'s' if done != 1 else ''}"
    if restored.failed:
        line += f"; {len(restored.failed)} could not be restored"
    return line
