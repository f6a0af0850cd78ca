"""Streaming Markdown on a terminal: finished blocks rendered by rich, the open one live.

Text arrives in small pieces. A block (a paragraph, a list, a fenced code block) is rendered
as Markdown once it is complete: at a blank line outside a code fence, or at the closing
fence. Until then the open block's raw text shows in a small transient ``rich.live`` region
(only its last lines, so a long code block cannot overflow the screen), which the rendered
block replaces. Rendering each block once keeps streaming smooth for long answers.
"""

from __future__ import annotations

import re
from typing import Any

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.MULTILINE)
REFRESH_PER_SECOND = 12


def split_complete(text: str) -> tuple[str, str]:
    """``(complete blocks, open rest)``: the cut is after the last blank line or closing fence
    that is outside a code fence."""
    cut = 0
    fence: str | None = None
    position = 0
    for line in text.splitlines(keepends=True):
        position += len(line)
        if not line.endswith("\n"):
            break  # an unfinished line is never complete
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)[0] * 3
        elif fence is not None and match and match.group(1).startswith(fence):
            fence = None
            cut = position
        elif fence is None and not line.strip():
            cut = position
    return text[:cut], text[cut:]


class MarkdownStream:
    """Feeds streamed text to a rich console as Markdown."""

    def __init__(self, console: Any | None = None) -> None:
        from rich.console import Console

        self.console = console or Console(highlight=False, soft_wrap=False)
        self._pending = ""
        self._live: Any = None

    def feed(self, delta: str) -> None:
        """Add text; render what became complete, show the rest live."""
        self._pending += delta
        done, rest = split_complete(self._pending)
        if done.strip():
            self._stop_live()
            self._print(done)
            self._pending = rest
        elif done:
            self._pending = rest
        self._show(self._pending)

    def close(self) -> None:
        """Render whatever is left (the answer ended)."""
        self._stop_live()
        if self._pending.strip():
            self._print(self._pending)
        self._pending = ""

    def _print(self, text: str) -> None:
        from rich.markdown import Markdown

        self.console.print(Markdown(text.strip("\n"), code_theme="monokai"))

    def _show(self, text: str) -> None:
        from rich.text import Text

        if not text:
            return
        height = max(3, self.console.size.height - 4)
        tail = "\n".join(text.splitlines()[-height:])
        if self._live is None:
            from rich.live import Live

            self._live = Live(
                Text(tail),
                console=self.console,
                transient=True,
                auto_refresh=True,
                refresh_per_second=REFRESH_PER_SECOND,
                vertical_overflow="crop",
            )
            self._live.start()
        else:
            self._live.update(Text(tail))

    def _stop_live(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
