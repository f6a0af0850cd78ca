"""``/rewind [N]``: the session's turns with the files each changed, and going back to before
turn N: the files, the conversation, or both (``core.checkpoints.turns``)."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from codebot_mcp.cli import render
from codebot_mcp.cli.rewindview import plan_lines, result_line, turn_lines
from codebot_mcp.core.errors import CodebotError

if TYPE_CHECKING:
    from codebot_mcp.cli.chat_runtime import ChatRuntime
    from codebot_mcp.core.checkpoints.turns import Checkpoints, Plan

Ask = Callable[[str, str], Awaitable[str]]
"""A question answered with one of the keys given (``Repl.ask_key``)."""

QUESTION = "  restore [f]iles, files and [c]onversation, conversation [o]nly, or [n]o? "
QUESTION_TALK = "  take the conversation back to before this turn? [y/N] "


async def rewind(runtime: ChatRuntime, argument: str, ask: Ask) -> None:
    """List the turns (no argument), or rewind to before turn ``argument`` after asking."""
    from codebot_mcp.core.checkpoints.turns import Checkpoints

    checkpoints = runtime.checkpoints  # the loop's part: this feature's, when checkpoints are on
    if not isinstance(checkpoints, Checkpoints):
        print("(checkpoints are off: 'checkpoints.enabled' is false in settings.json)")
        return
    await checkpoints.settle()  # the last turn's snapshot, if it is still being taken
    from codebot_mcp.core.checkpoints.shadow import StoreError
    from codebot_mcp.core.checkpoints.turns import describe_error

    try:
        turns = checkpoints.turns()
        if not turns:
            print("(no turns to rewind yet in this session)")
            return
        if not argument:
            for line in turn_lines(checkpoints, turns):
                print(line)
            print(
                "(/rewind N restores the files, and if you like the conversation, to before turn N)"
            )
            return
        if not argument.isdigit():
            render.error_line(f"/rewind {argument}: N must be a turn number, e.g. /rewind 2")
            return
        plan = checkpoints.plan(int(argument))
        await _carry_out(runtime, checkpoints, plan, ask)
    except StoreError as exc:
        render.error(describe_error(exc))
    except CodebotError as exc:
        render.error(exc)


async def _carry_out(runtime: ChatRuntime, checkpoints: Checkpoints, plan: Plan, ask: Ask) -> None:
    for line in plan_lines(plan):
        print(line)
    talk_possible = plan.turn.conversation is not None and runtime.log is not None
    try:
        if plan.actions:
            choice = await ask(QUESTION, "fcon")
        elif talk_possible:
            choice = "o" if await ask(QUESTION_TALK, "yn") == "y" else "n"
        else:
            choice = "n"
    except (KeyboardInterrupt, EOFError):
        choice = "n"
    if choice == "c" and not talk_possible:
        render.warn("the conversation's place before this turn was not recorded: files only")
        choice = "f"
    if choice not in ("f", "c", "o"):
        print("(nothing was changed)")
        return
    if choice in ("f", "c"):
        restored = checkpoints.restore(plan)
        print(result_line(restored))
        for path, why in restored.failed:
            render.error_line(f"cannot restore {path}: {why}")
    if choice in ("c", "o"):
        _rewind_conversation(runtime, plan)


def _rewind_conversation(runtime: ChatRuntime, plan: Plan) -> None:
    from codebot_mcp.core.agent import history

    log, offset = runtime.log, plan.turn.conversation
    assert log is not None and offset is not None
    try:
        messages = history.replay(log.path, offset) if log.path.exists() else []
    except (OSError, CodebotError) as exc:
        render.error_line(f"cannot read the conversation from {log.path}: {exc}")
        return
    runtime.session.replace_history(messages)
    runtime.session.checkpoint()  # saved as a reset: a later rewind can still go anywhere
    print(
        f"(conversation taken back to before turn {plan.turn.number}: {len(messages)} messages)",
        file=sys.stderr,
    )
