"""Driving the real REPL in-process: prompt-toolkit's pipe input for the keys, the test's own
stdout (capsys) for what it prints, and each run in an app session of its own.

The app session matters: prompt-toolkit's default session caches the first ``sys.stdout`` it
sees, so without one a later test's ``patch_stdout`` proxy would write to an earlier test's
closed capture (exceptions in the flush thread, then a "Press ENTER" loop on the real stdin).
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio

from codebot_mcp.cli.chat_runtime import ChatOptions
from codebot_mcp.cli.repl.repl_loop import Repl
from codebot_mcp.cli.runtime import Globals

NEXT = "next question"
"""A step's wait: until a question opens after the step before it was typed (a form answered
field by field; what is typed before a question opens is dropped as type-ahead). The step
before must be the one that leads to the question (the prompt, or the previous answer)."""
Step = tuple[Callable[[], bool] | float | str, str]
"""Wait for the condition (or that many seconds), then type the text."""
Script = list[Step] | Callable[[Repl, Any], Awaitable[None]]
"""Steps to type, or a coroutine function given the REPL and the pipe input."""


async def until(condition: Callable[[], bool], seconds: float = 30) -> None:
    """Wait until ``condition()`` holds, polling; fail after ``seconds``."""
    with anyio.fail_after(seconds):
        while not condition():  # noqa: ASYNC110 - polling state another task changes
            await anyio.sleep(0.05)


@contextmanager
def piped_repl() -> Iterator[tuple[Any, Repl]]:
    """A REPL reading a pipe, in its own prompt-toolkit app session bound to this stdout."""
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput, create_output

    with (
        create_pipe_input() as inp,
        create_app_session(input=inp, output=create_output(stdout=sys.stdout)),
    ):
        yield inp, Repl(inp, DummyOutput())


async def drive(
    cwd: Path,
    script: Script,
    *,
    servers: int = 0,
    options: ChatOptions | None = None,
    during: Callable[[Repl], Awaitable[None]] | None = None,
    seconds: float = 90,
) -> tuple[int, Repl]:
    """Run the REPL in ``cwd``; wait for ``servers`` connections (0: do not wait), then play
    ``script``. Returns the exit code and the REPL."""
    with piped_repl() as (inp, repl):
        code = -1

        async def main() -> None:
            nonlocal code
            code = await repl.main(Globals(cwd=cwd), options or ChatOptions())

        with anyio.fail_after(seconds):
            async with anyio.create_task_group() as tg:
                tg.start_soon(main)
                if servers:
                    await until(lambda: connected_count(repl) >= servers)
                if during is not None:
                    await during(repl)
                if callable(script):
                    await script(repl, inp)
                else:
                    await play(inp, script)
    return code, repl


ANSWER_KEYS = frozenset("yanfcoYANFCO\x1b")
"""A step of one of these keys (Enter after it allowed) answers a one-key question."""


async def question_open(seconds: float = 30) -> str:
    """Wait until a question waits for its answer (``cli.repl.repl_keys.OPEN``): what is sent
    earlier is dropped as typed ahead, and the question would wait forever. Returns its
    kind: ``key`` (one key answers it) or ``line``; fails after ``seconds``."""
    from codebot_mcp.cli.repl import repl_keys

    await until(lambda: repl_keys.OPEN["key"] + repl_keys.OPEN["line"] > 0, seconds)
    return "key" if repl_keys.OPEN["key"] else "line"


QUESTION_WAIT_SECONDS = 8.0
"""How long a step that looks like an answer (``y``, ``n\\r``) waits for a question before
it is typed at the main prompt instead (a sandboxed bash asks nothing, say)."""


async def maybe_question() -> str | None:
    """:func:`question_open`, or None when none opened within the wait."""
    with anyio.move_on_after(QUESTION_WAIT_SECONDS):
        return await question_open(QUESTION_WAIT_SECONDS + 1)
    return None


async def play(inp: Any, steps: list[Step]) -> None:
    from codebot_mcp.cli.repl.repl_keys import ASKED

    asked = ASKED["questions"]
    for wait, text in steps:
        if wait == NEXT:
            await until(lambda seen=asked: ASKED["questions"] > seen, QUESTION_WAIT_SECONDS)
        elif callable(wait):
            await until(wait)
            await anyio.sleep(0.3)  # the question is on screen
        else:
            assert isinstance(wait, float | int)
            await anyio.sleep(wait)
        key = text.removesuffix("\r")
        if len(key) == 1 and key in ANSWER_KEYS and await maybe_question() == "key":
            inp.send_text(key)  # one key answers; an Enter after it would be typed ahead
        else:
            inp.send_text(text)
        asked = ASKED["questions"]  # what a NEXT step waits to see grow


def connected_count(repl: Repl) -> int:
    runtime = repl.runtime
    if runtime is None:
        return 0
    return len([c for c in runtime.manager.connected() if c.connected])


def connected(repl: Repl) -> list[str]:
    """The names of the servers the REPL has connected so far."""
    runtime = repl.runtime
    return [c.name for c in runtime.manager.connected()] if runtime else []
