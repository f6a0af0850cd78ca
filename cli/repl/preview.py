"""Tool results under their call: a few dimmed lines, secrets masked, control characters
escaped (``render.safe``), and how many more lines ``/expand`` (or Ctrl-O) shows; while
``bash`` runs, its output streams into the same place (:class:`LiveOutput`).

Only the lines shown are scanned and escaped, so a 10,000-line result costs what four do
(``make bench`` measures it).
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable

from codebot_mcp.cli import render

PREVIEW_LINES = 4
"""Lines of a result shown under its call."""
BAR = "    │ "
EXPAND_HINT = "Ctrl-O or /expand shows all"
MAX_PARTIAL_BYTES = 4096
"""The longest unfinished line kept while output streams (the rest of it is dropped)."""


def _width() -> int:
    return max(shutil.get_terminal_size().columns - len(BAR) - 1, 20)


def cut_line(line: str, width: int) -> str:
    """One line made safe (secrets masked, controls escaped) and cut to ``width``."""
    text = render.safe(line[: width * 2], one_line=True)
    return text if len(text) <= width else text[: width - 1] + "…"


def head(text: str, count: int) -> tuple[list[str], int]:
    """The first ``count`` lines of ``text`` and how many lines follow them, without
    splitting the whole text."""
    text = text.rstrip("\n")
    lines: list[str] = []
    start = 0
    while len(lines) < count:
        end = text.find("\n", start)
        if end < 0:
            lines.append(text[start:])
            return lines, 0
        lines.append(text[start:end])
        start = end + 1
    return lines, text.count("\n", start) + 1


def preview(text: str, *, lines: int = PREVIEW_LINES, skip: int = 0, width: int = 0) -> list[str]:
    """What to print under a call for ``text`` (unstyled): ``lines`` lines (the first ``skip``
    already shown while it streamed), then ``… +N lines (...)`` when there are more."""
    if not text.strip():
        return []
    width = width or _width()
    shown, more = head(text, lines)
    out = [BAR + cut_line(line, width) for line in shown[skip:]]
    if more:
        out.append(f"    … +{render.count(more, 'line')} ({EXPAND_HINT})")
    return out


def whole(text: str) -> str:
    """A result in full for ``/expand``: every line, secrets masked, controls escaped."""
    return render.safe(text)


class LiveOutput:
    """``bash`` output while it runs: the first :data:`PREVIEW_LINES` complete lines are
    printed as they arrive (through ``show``), and the latest line after them goes to
    ``tail`` (the status line). Bounded: one partial line of at most
    :data:`MAX_PARTIAL_BYTES` is kept."""

    def __init__(self, show: Callable[[str], None], tail: Callable[[str], None]) -> None:
        self.show = show
        self.tail = tail
        self.shown: list[str] = []
        self._partial = b""
        self._width = _width()

    def feed(self, data: bytes) -> None:
        """One chunk of output."""
        data = self._partial + data
        *complete, self._partial = data.split(b"\n")
        self._partial = self._partial[-MAX_PARTIAL_BYTES:]
        while complete and len(self.shown) < PREVIEW_LINES:
            line = complete.pop(0).decode("utf-8", errors="replace")
            self.shown.append(line)
            self.show(BAR + cut_line(line, self._width))
        for raw in reversed(complete):  # past the preview: only the latest line is shown
            if raw.strip():
                line = raw[-MAX_PARTIAL_BYTES:].decode("utf-8", errors="replace").strip()
                self.tail(cut_line(line, self._width))
                break

    def matches(self, text: str) -> int:
        """How many lines already shown start ``text`` too (these are not printed again)."""
        first, _ = head(text, len(self.shown))
        n = 0
        for a, b in zip(self.shown, first, strict=False):
            if a != b:
                break
            n += 1
        return n


def print_lines(lines: list[str], *, dim: bool = True) -> None:
    """Preview lines on stderr, dimmed on a terminal."""
    for line in lines:
        print(render.style(line, "2", sys.stderr) if dim else line, file=sys.stderr)
