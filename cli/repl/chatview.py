"""How a chat turn looks: streamed text on stdout, tool activity and a status line on stderr."""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TextIO

import anyio

from codebot_mcp.cli import render
from codebot_mcp.cli.repl.preview import LiveOutput, preview, print_lines
from codebot_mcp.core.agent.context import Compaction
from codebot_mcp.core.agent.loop import AgentEvents
from codebot_mcp.core.agent.permissions import Decision
from codebot_mcp.core.model.client import Retry
from codebot_mcp.core.model.stream import Reply, ToolCall
from codebot_mcp.core.secrets.redact import printable
from codebot_mcp.core.secrets.streamscrub import StreamScrubber
from codebot_mcp.core.tools.base import Tool, ToolResult

if TYPE_CHECKING:
    from codebot_mcp.mcpbridge.connection.manager import Manager

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
TICK = 0.1


def short_args(arguments: Mapping[str, Any] | str, limit: int = 100) -> str:
    """``k=v`` pairs on one line, cut at ``limit`` characters."""
    value: Any = arguments
    if isinstance(arguments, str):
        from codebot_mcp.core import jsonutil

        try:
            value = jsonutil.loads(arguments or "{}")
        except json.JSONDecodeError:
            return render.safe(arguments, one_line=True)[:limit]
    if not isinstance(value, Mapping):
        return render.safe(value, one_line=True)[:limit]
    pairs: Mapping[str, Any] = value
    text = " ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in pairs.items())
    text = render.safe(text, one_line=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def full_args(arguments: Mapping[str, Any], width: int = 100) -> str:
    """Every argument of a call, nothing cut: one line when it fits in 160 characters, else
    one block per argument, wrapped at ``width`` (an approval must show all that will run)."""
    import textwrap

    line = short_args(arguments, limit=10**9)
    if len(line) <= 160:
        return " " + line if line else ""
    lines: list[str] = []
    for key, value in arguments.items():
        text = render.safe(json.dumps(value, ensure_ascii=False), one_line=True)
        lines.append(f"    {render.safe(key, one_line=True)} ({len(text)} characters):")
        lines += textwrap.wrap(
            text,
            width=max(width - 6, 20),
            initial_indent="      ",
            subsequent_indent="      ",
            break_long_words=True,
            break_on_hyphens=False,
            drop_whitespace=False,
            replace_whitespace=False,
        )
    return "\n" + "\n".join(lines)


class Status:
    """What is being waited for, and for how long: a one-line spinner on a terminal
    (``thinking… 12 s``, ``generating… 40 s · 480 tokens``); elsewhere (a script reading
    stderr) a line every :data:`PROGRESS_SECONDS` while a wait lasts, so a slow local model
    is never a silent ten minutes."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.label = ""
        self.detail = ""
        """Shown after the label: the latest line of a running command's output."""
        self._shown = False
        self._frame = 0
        self._since = time.monotonic()
        self._tokens = 0
        self._reported = 0.0

    def set(self, label: str) -> None:
        """Show ``label`` with the spinner (from the next tick); its clock starts now."""
        self.label = label
        self.detail = ""
        self._since = time.monotonic()
        self._tokens = 0
        self._reported = 0.0

    def generating(self, tokens: int) -> None:
        """The answer streams: ``tokens`` pieces so far (the clock keeps running)."""
        self._tokens = tokens
        if self.label and not self.label.startswith("generating"):
            self.label = "generating…"

    def clear(self) -> None:
        """Remove the line before anything else is written."""
        self.label = ""
        if self._shown:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
            self._shown = False

    def line(self) -> str:
        """The label with how long it has lasted, and the tokens so far when generating."""
        elapsed = time.monotonic() - self._since
        text = self.label
        if elapsed >= SHOW_ELAPSED_AFTER:
            text += f" {elapsed:.0f} s"
        if self._tokens:
            text += f" · {self._tokens} tokens"
        if self.detail:
            text += f" │ {self.detail}"
        return text

    async def run(self) -> None:
        """Animate until cancelled."""
        if not self.enabled:
            await self._report()
            return
        try:
            while True:
                await anyio.sleep(TICK)
                if self.label:
                    self._frame = (self._frame + 1) % len(SPINNER)
                    # never wider than the terminal: a wrapped line would not be cleared
                    line = self.line()[: max(shutil.get_terminal_size().columns - 3, 10)]
                    self.stream.write(f"\r\x1b[2K{SPINNER[self._frame]} {line}")
                    self.stream.flush()
                    self._shown = True
        finally:
            self.clear()

    async def _report(self) -> None:
        """Without a terminal: ``(still generating… 60 s · 720 tokens)`` now and then."""
        every = progress_seconds()
        while True:
            await anyio.sleep(min(every, 1.0))
            elapsed = time.monotonic() - self._since
            if self.label and elapsed >= every and elapsed - self._reported >= every:
                self._reported = elapsed
                print(render.style(f"(still {self.line()})", "2", self.stream), file=self.stream)


SHOW_ELAPSED_AFTER = 2.0
"""A wait shorter than this shows no clock."""
PROGRESS_SECONDS = 30.0
"""Without a terminal, how often a long wait says it is still going
(``CODEBOT_PROGRESS_SECONDS`` changes it)."""


def progress_seconds() -> float:
    """:data:`PROGRESS_SECONDS`, or ``CODEBOT_PROGRESS_SECONDS`` when it is a positive number."""
    import os

    try:
        value = float(os.environ.get("CODEBOT_PROGRESS_SECONDS", ""))
    except ValueError:
        return PROGRESS_SECONDS
    return value if 0 < value < float("inf") else PROGRESS_SECONDS


class TurnView(AgentEvents):
    """Renders agent events. ``stream_text=False`` (one-shot) keeps stdout for the answer."""

    def __init__(
        self,
        status: Status | None = None,
        *,
        stream_text: bool = True,
        markdown: bool = False,
        previews: bool = True,
        on_result: Callable[[ToolCall, ToolResult], None] | None = None,
    ) -> None:
        self.status = status or Status()
        self.stream_text = stream_text
        self.previews = previews
        """Show a few lines of each result under its call (errors show theirs always)."""
        self.on_result = on_result
        """Told of every finished call (the REPL keeps the last for ``/expand``)."""
        self._running = 0
        self._live: LiveOutput | None = None
        self._open_line = False
        self._turn_text: list[str] = []
        self._markdown: Any = None
        self._scrub = StreamScrubber(render.REDACTOR)
        self._thinking = StreamScrubber(render.REDACTOR)
        self._reasoning_open = False
        """A dimmed reasoning summary is streaming on stdout (closed before the text)."""
        if stream_text and markdown and render.use_color(sys.stdout):
            from codebot_mcp.cli.repl.markdown import MarkdownStream

            self._markdown = MarkdownStream()

    def model_started(self, turn: int) -> None:
        """Waiting for the model."""
        self._turn_text = []
        self.status.set("thinking…" if turn == 1 else f"thinking… (turn {turn})")

    def text(self, delta: str) -> None:
        """Print text as it streams (REPL); a secret split across deltas is still masked."""
        self._turn_text.append(delta)
        if self.stream_text:
            self.status.clear()
            self._end_reasoning()
            self._show(self._scrub.feed(delta))

    def reasoning(self, delta: str) -> None:
        """The summary of the model's reasoning, dimmed, as it streams (REPL); in one-shot
        mode it goes to stderr once the turn is complete (:meth:`model_finished`)."""
        if not self.stream_text:
            return
        self.status.clear()
        self._reasoning_open = True
        self._dim(self._thinking.feed(delta))

    def _dim(self, text: str) -> None:
        if text:
            sys.stdout.write(render.style(printable(text), "2", sys.stdout))
            sys.stdout.flush()

    def _end_reasoning(self) -> None:
        """Close a streamed reasoning summary: the rest of it, then a blank line."""
        if self._reasoning_open:
            self._reasoning_open = False
            self._dim(self._thinking.flush())
            sys.stdout.write("\n\n")
            sys.stdout.flush()

    def _show(self, text: str) -> None:
        if not text:
            return
        text = printable(text)
        if self._markdown is not None:
            self._markdown.feed(text)
            return
        sys.stdout.write(text)
        sys.stdout.flush()
        self._open_line = not text.endswith("\n")

    def model_progress(self, generated: int) -> None:
        """Still generating: the status says for how long and how much (not over text that
        is streaming on the same terminal line)."""
        if self.stream_text and self._turn_text:
            return
        self.status.generating(generated)

    def model_finished(self, reply: Reply) -> None:
        """End the streamed line; in one-shot mode, the reasoning summary and text beside tool
        calls go to stderr, dimmed."""
        self.end_line()
        summary = reply.reasoning_summary.strip()
        if not self.stream_text and summary:
            print(render.style(render.safe(summary), "2", sys.stderr), file=sys.stderr)
        if not self.stream_text and reply.tool_calls and reply.text.strip():
            print(render.style(render.safe(reply.text.strip()), "2", sys.stderr), file=sys.stderr)

    def tools_changed(self) -> None:
        """Quietly note that MCP tools changed."""

    def end_line(self) -> None:
        """Finish a streamed line (before an error is printed below the partial answer)."""
        self.status.clear()
        self._end_reasoning()
        if self.stream_text:
            self._show(self._scrub.flush())
        if self._markdown is not None:
            self._markdown.close()
        if self.stream_text and self._open_line:
            sys.stdout.write("\n")
            sys.stdout.flush()
            self._open_line = False

    def model_retrying(self, retry: Retry) -> None:
        """``↻ retry 1/2 in 1.0s: reason``: retries are never silent."""
        self.end_line()
        mark = render.style("↻", "33", sys.stderr)
        print(
            f"{mark} retry {retry.attempt}/{retry.of} in {retry.delay:.1f}s: "
            f"{render.safe(retry.reason)}",
            file=sys.stderr,
        )

    def watch(self, data: bytes) -> None:
        """A chunk of a running ``bash`` call's output (``core.tools.live``): streamed into
        its preview while exactly one call runs, else the latest line on the status line."""
        if self._live is not None:
            self._live.feed(data)

    def _live_line(self, line: str) -> None:
        self.status.clear()
        print_lines([line])

    def _tail(self, line: str) -> None:
        self.status.detail = line

    def tool_rejected(self, call: ToolCall, result: ToolResult) -> None:
        """A call that could not run still shows: ``→ name args`` and ``✗ name: why``."""
        if self.on_result is not None:
            self.on_result(call, result)
        self.status.clear()
        name = render.safe(call.name, one_line=True)
        head = render.style(f"→ {name}", "36", sys.stderr)
        print(f"{head} {short_args(call.arguments)}".rstrip(), file=sys.stderr)
        mark = render.style("✗", "31", sys.stderr)
        print(f"  {mark} {name}: {render.first_line(result.text, 160)}", file=sys.stderr)

    def compacted(self, compaction: Compaction) -> None:
        """``(context compacted: 90k → 20k tokens ...)``."""
        self.end_line()
        print(render.style(describe_compaction(compaction), "2", sys.stderr), file=sys.stderr)

    def notice(self, text: str) -> None:
        """A dim note on stderr."""
        self.end_line()
        print(render.style(f"note: {render.safe(text)}", "2", sys.stderr), file=sys.stderr)

    def warning(self, text: str) -> None:
        """``warning: ...`` on stderr."""
        self.end_line()
        self.status.clear()
        render.warn(text)

    def tool_started(self, call: ToolCall, tool: Tool) -> None:
        """``→ name args``."""
        self.status.clear()
        name = render.safe(call.name, one_line=True)
        head = render.style(f"→ {name}", "36", sys.stderr)
        print(f"{head} {short_args(call.arguments)}".rstrip(), file=sys.stderr)
        self.status.set(f"running {name}…")
        self._running += 1
        streams = self.previews and self._running == 1 and call.name == "bash"
        self._live = LiveOutput(self._live_line, self._tail) if streams else None

    def tool_finished(self, call: ToolCall, result: ToolResult, seconds: float) -> None:
        """``✓ name (0.1s)`` or ``✗ name: first line``, then a preview of the result."""
        self.status.clear()
        self._running = max(self._running - 1, 0)
        live, self._live = self._live, None
        if self.on_result is not None:
            self.on_result(call, result)
        sandbox = result.data.get("sandbox")
        refused = result.data.get("sandbox_refused_hosts")  # the network proxy's refusals
        if sandbox and isinstance(refused, list) and refused:
            sandbox = f"{sandbox}; refused connection to {', '.join(map(str, refused))}"
        where = f", sandbox: {render.safe(sandbox, one_line=True)}" if sandbox else ""
        if result.is_error:
            mark = render.style("✗", "31", sys.stderr)
            name = render.safe(call.name, one_line=True)
            name += f" [sandbox: {render.safe(sandbox, one_line=True)}]" if sandbox else ""
            why = result.text.removeprefix(f"{call.name}: ")  # built-ins start with their name
            print(f"  {mark} {name}: {render.first_line(why)}", file=sys.stderr)
            rest = why.lstrip("\n").partition("\n")[2]  # the first line is on the mark's line
            print_lines(preview(rest), dim=False)  # errors show their text, previews or not
        else:
            mark = render.style("✓", "32", sys.stderr)
            name = render.safe(call.name, one_line=True)
            print(f"  {mark} {name} ({seconds:.1f}s{where})", file=sys.stderr)
            todos = result.data.get("todos") if call.name == "todo_write" else None
            if isinstance(todos, list):  # the plan changed: shown as a checklist
                from codebot_mcp.cli.repl.reports import todo_checklist

                if result.data.get("changed", True):
                    print(todo_checklist(todos, sys.stderr), file=sys.stderr)
            elif self.previews:
                done = live.matches(result.text) if live is not None else 0
                print_lines(preview(result.text, skip=done))
        created = result.data.get("sandbox_created")
        if created:  # moved out of the project (what could not be moved: check it)
            moved = result.data.get("sandbox_quarantined") or {}
            name = render.safe(call.name, one_line=True)
            for path in created:
                moved_to = moved.get(path)
                shown = render.safe(path, one_line=True)
                if moved_to:
                    render.warn(
                        f"sandbox: this {name} call created {shown}, which git and codebot read "
                        f"outside the sandbox; it was moved to {render.safe(moved_to)}"
                    )
                else:
                    render.warn(
                        f"sandbox: this {name} call created {shown}, which git and codebot read "
                        "outside the sandbox, and it could not be moved: check it before you "
                        "use git or codebot there"
                    )

    def tool_denied(self, call: ToolCall, decision: Decision) -> None:
        """``⊘ name denied: reason``."""
        self.status.clear()
        mark = render.style("⊘", "33", sys.stderr)
        name = render.safe(call.name, one_line=True)
        print(f"  {mark} {name} denied: {render.safe(decision.reason)}", file=sys.stderr)


def describe_compaction(c: Compaction) -> str:
    """One line about a compaction."""
    parts = []
    if c.cut_results:
        parts.append(f"{c.cut_results} old tool result(s) cut")
    if c.summarised_messages:
        parts.append(f"{c.summarised_messages} older message(s) summarised")
    if c.shortened_results:
        parts.append(f"{c.shortened_results} newest result(s) shortened to fit")
    what = ", ".join(parts) or "nothing to compact"
    if c.in_turn:
        what += "; this prompt's own steps included"
    return f"(context compacted: ~{c.before:,} → ~{c.after:,} tokens; {what})"


def report_mcp(manager: Manager) -> None:
    """One line on stderr: which servers are ready, which failed."""
    ready = manager.connected()
    failures = manager.failures
    if not ready and not failures:
        return
    tools = len(manager.tools())
    parts = [f"{len(ready)} MCP server{'s' if len(ready) != 1 else ''} ready ({tools} tools)"]
    held = {n: f for n, f in failures.items() if f.stage == "lock"}
    parts += [
        f"'{render.safe(name)}' needs login (/mcp login {render.safe(name)})"
        if f.needs_login
        else f"'{render.safe(name)}' held back by its pinned tools (below)"
        if name in held
        else f"'{render.safe(name)}' failed: {render.safe(f.message)}"
        for name, f in failures.items()
    ]
    line = "; ".join(parts)
    if failures:
        render.warn(line + " (/mcp or `codebot mcp doctor` for details)")
        for name, f in held.items():  # the diff and how to accept it
            render.warn(f"server '{name}' {f.message}")
            if f.hint:
                render.hint(f.hint)
    else:
        print(render.style(line, "2", sys.stderr), file=sys.stderr)


def empty_answer_message(result: Any) -> str:
    """What to say when the model finished without a word."""
    why = f" (finish reason: {result.finish_reason})" if result.finish_reason else ""
    hint = (
        "; the answer hit the output cap: raise 'max_tokens' in settings.json"
        if result.finish_reason == "length"
        else "; ask again, or try a larger model"
    )
    return f"the model ended its turn with an empty answer{why}{hint}"
