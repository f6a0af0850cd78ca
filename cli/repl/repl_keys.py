"""One-key answers: approvals, trust and rewind questions take a single key, without Enter.

Before a question is shown, whatever was typed ahead (during a turn, in the kernel's terminal
buffer or in prompt-toolkit's own type-ahead store) is thrown away, so a key pressed before
the question existed never answers it. Esc answers no; Ctrl-C and Ctrl-D raise
``KeyboardInterrupt`` and ``EOFError`` as a line prompt does. The key pressed is echoed after
the question, so the scrollback keeps the answer.
"""

from __future__ import annotations

import os
import select
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

NO = "n"
"""What Esc answers."""
MAX_DRAIN_BYTES = 1 << 16
"""The most typed-ahead bytes thrown away from a pipe before a question (bounded)."""
OPEN = {"key": 0, "line": 0}
"""Questions waiting for their answer now, by kind, counted once the type-ahead was dropped:
what is typed from then on answers them (what drivers of the REPL, and its tests, wait for)."""
ASKED = {"questions": 0}
"""Questions opened so far in this process: a driver that answers a form field by field waits
for the next one to open (the count grows), not for one to be open (the last may still be)."""


@contextmanager
def question_open(kind: str) -> Iterator[None]:
    """Count a question of ``kind`` (``key`` or ``line``) in :data:`OPEN` while it waits."""
    OPEN[kind] += 1
    ASKED["questions"] += 1
    try:
        yield
    finally:
        OPEN[kind] -= 1


def flush_typeahead(pt_input: Any) -> None:
    """Forget keys typed before now: prompt-toolkit's type-ahead store, then the terminal's
    input queue (``tcflush``) or, for a pipe (the tests' pipe input), what is waiting in it."""
    from prompt_toolkit.input.typeahead import clear_typeahead

    if pt_input is None:
        return
    clear_typeahead(pt_input)
    try:
        fd = pt_input.fileno()
    except (AttributeError, NotImplementedError, ValueError, OSError):
        return
    if os.isatty(fd):
        import termios

        termios.tcflush(fd, termios.TCIFLUSH)
        return
    drained = 0
    while drained < MAX_DRAIN_BYTES and select.select([fd], [], [], 0)[0]:
        try:
            chunk = os.read(fd, 4096)
        except (BlockingIOError, OSError):
            return
        if not chunk:
            return
        drained += len(chunk)


async def ask_key(
    question: str,
    keys: str,
    *,
    pt_input: Any = None,
    pt_output: Any = None,
    enter: str | None = None,
) -> str:
    """Show ``question`` and return the first of ``keys`` pressed (lower case); Esc is
    :data:`NO`, Enter is ``enter`` when given (a default), other keys are ignored.

    Raises:
        KeyboardInterrupt: Ctrl-C.
        EOFError: Ctrl-D.
    """
    from prompt_toolkit import PromptSession
    from prompt_toolkit.application.current import get_app_session
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

    bindings = KeyBindings()

    def answer(key: str) -> None:
        @bindings.add(key)
        @bindings.add(key.upper())
        def _(event: KeyPressEvent) -> None:
            event.current_buffer.text = key  # echoed on the question's line
            event.app.exit(result=key)

    for key in keys.lower():
        answer(key)

    @bindings.add("escape", eager=True)
    def _no(event: KeyPressEvent) -> None:
        event.current_buffer.text = "no"
        event.app.exit(result=NO)

    @bindings.add("enter")
    def _enter(event: KeyPressEvent) -> None:
        if enter is not None:
            event.current_buffer.text = enter
            event.app.exit(result=enter)

    @bindings.add("c-c")
    def _interrupt(event: KeyPressEvent) -> None:
        event.app.exit(exception=KeyboardInterrupt())

    @bindings.add("c-d")
    def _eof(event: KeyPressEvent) -> None:
        event.app.exit(exception=EOFError())

    @bindings.add("<any>")
    def _ignore(event: KeyPressEvent) -> None:
        """Any other key (and pasted text) does nothing."""

    flush_typeahead(pt_input if pt_input is not None else get_app_session().input)
    session: PromptSession[str] = PromptSession(
        input=pt_input, output=pt_output, key_bindings=bindings
    )
    with question_open("key"):
        # handle_sigint=False: prompt-toolkit would otherwise remove the turn's SIGINT
        # handler on return, and a later Ctrl-C during the approved call would be lost.
        return await session.prompt_async(question, handle_sigint=False)


ESCAPE_SEQUENCE_SECONDS = 0.05
"""After Esc, how long to wait for the rest of an escape sequence (an arrow key is not Esc)."""


def read_key(question: str, keys: str, *, enter: str | None = None) -> str:
    """:func:`ask_key` for the shell commands (``codebot rewind``, ``codebot trust``), on the
    terminal that is stdin: type-ahead flushed, one key read in cbreak mode, echoed.

    Raises:
        KeyboardInterrupt: Ctrl-C.
        EOFError: Ctrl-D.
    """
    import sys
    import termios
    import tty

    fd = sys.stdin.fileno()
    sys.stdout.write(question)
    sys.stdout.flush()
    before = termios.tcgetattr(fd)
    try:
        termios.tcflush(fd, termios.TCIFLUSH)
        tty.setcbreak(fd)  # keys one by one, no echo; Ctrl-C still signals
        while True:
            char = os.read(fd, 1).decode("latin-1").lower()
            if char in keys.lower():
                break
            if char == "\x1b":
                if select.select([fd], [], [], ESCAPE_SEQUENCE_SECONDS)[0]:
                    os.read(fd, 64)  # an arrow or function key: ignored
                    continue
                char = NO
                break
            if char in ("\r", "\n") and enter is not None:
                char = enter
                break
            if char in ("\x04", ""):
                raise EOFError
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, before)
    print(char)
    return char
