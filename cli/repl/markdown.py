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


class _Blocks:
    """Splits streamed text into complete blocks (``(complete blocks, open rest)``: the cut
    is after the last blank line or closing fence that is outside a code fence). Each line is
    scanned once as text arrives, so a long open block (a big code fence) costs linear time,
    not quadratic."""

    def __init__(self) -> None:
        self.text = ""
        self._scanned = 0
        """Complete lines before this index are scanned."""
        self._fence: str | None = None
        self._cut = 0

    def add(self, delta: str) -> str:
        """Append ``delta``; returns the blocks it completed (and drops them from ``text``)."""
        self.text += delta
        text = self.text
        while (end := text.find("\n", self._scanned)) != -1:
            line = text[self._scanned : end + 1]
            self._scanned = end + 1
            match = FENCE.match(line)
            if self._fence is None and match:
                self._fence = match.group(1)[0] * 3
            elif self._fence is not None and match and match.group(1).startswith(self._fence):
                self._fence = None
                self._cut = self._scanned
            elif self._fence is None and not line.strip():
                self._cut = self._scanned
        done = text[: self._cut]
        if self._cut:
            self.text = text[self._cut :]
            self._scanned -= self._cut
            self._cut = 0
        return done

    def take(self) -> str:
        """Everything left (the answer ended)."""
        rest, self.text, self._scanned, self._fence, self._cut = self.text, "", 0, None, 0
        return rest


def last_lines(text: str, count: int) -> str:
    """The last ``count`` lines of ``text`` (without scanning the rest of it)."""
    end = len(text.rstrip("\n")) if text.endswith("\n") else len(text)
    start = end
    for _ in range(count):
        start = text.rfind("\n", 0, start)
        if start == -1:
            return text[:end]
    return text[start + 1 : end]


class MarkdownStream:
    """Feeds streamed text to a rich console as Markdown."""

    def __init__(self, console: Any | None = None) -> None:
        from rich.console import Console

        self.console = console or Console(highlight=False, soft_wrap=False)
        self._blocks = _Blocks()
        self._live: Any = None

    @property
    def _pending(self) -> str:
        return self._blocks.text

    def feed(self, delta: str) -> None:
        """Add text; render what became complete, show the rest live."""
        done = self._blocks.add(delta)
        if done.strip():
            self._stop_live()
            self._print(done)
        self._show(self._pending)

    def close(self) -> None:
        """Render whatever is left (the answer ended)."""
        self._stop_live()
        rest = self._blocks.take()
        if rest.strip():
            self._print(rest)

    def _print(self, text: str) -> None:
        from rich.markdown import Markdown

        self.console.print(Markdown(text.strip("\n"), code_theme="monokai"))

    def _show(self, text: str) -> None:
        from rich.text import Text

        if not text:
            return
        height = max(3, self.console.size.height - 4)
        tail = last_lines(text, height)
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
