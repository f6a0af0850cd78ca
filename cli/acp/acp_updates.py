"""The agent's events as ACP ``session/update`` notifications, and a saved conversation
replayed as them (``session/load``).

:class:`UpdateView` is one more renderer of :class:`core.agent.events.AgentEvents` (beside
the terminal's and stream-json's): text and reasoning stream as ``agent_message_chunk`` and
``agent_thought_chunk``; every call the model asks for is a ``tool_call`` (pending) as soon
as the reply is complete, so an approval the editor is asked for names a call it shows; the
call then goes ``in_progress`` and ``completed`` / ``failed`` with its result, a ``diff`` for
``edit`` and ``write``, the editor's terminal for a ``bash`` call run there, its ``kind``
and ``locations``; ``todo_write`` sends the ``plan``.
The events are synchronous, the notifications are not: they go through :class:`Outbox`, in
order, and a turn ends only once its updates are out.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import anyio
from acp import helpers
from acp.schema import ToolCallLocation

from codebot_mcp.cli import render
from codebot_mcp.cli.streamjson import RESULT_CAP_CHARS
from codebot_mcp.core.agent.context import Compaction
from codebot_mcp.core.agent.events import AgentEvents
from codebot_mcp.core.agent.permissions import Decision, denial_text
from codebot_mcp.core.model.client import Retry
from codebot_mcp.core.model.stream import Reply, ToolCall
from codebot_mcp.core.secrets.redact import scrub
from codebot_mcp.core.secrets.streamscrub import StreamScrubber
from codebot_mcp.core.tools.base import Capability, Tool, ToolResult
from codebot_mcp.core.tools.builtin._files import FileTool

DIFF_CAP_BYTES = 1_000_000
"""A file larger than this gets no diff (the call's result says what changed)."""
OUTBOX_CAP = 20_000
"""Updates waiting for the client; beyond, new ones are dropped (a client that stopped
reading) and counted, never held without bound."""
TITLE_CAP_CHARS = 200
RAW_INPUT_CAP_CHARS = 64_000
"""Arguments longer than this (a whole file in ``write``) are not repeated as ``rawInput``."""

Send = Callable[[Any], Awaitable[None]]
Edits = Callable[[str], "tuple[str | None, str] | None"]
_log = logging.getLogger("codebot_mcp.acp")


class Outbox:
    """Updates sent to the client in the order they were made, by one task (:meth:`run`)."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._writer, self._reader = anyio.create_memory_object_stream[Any](OUTBOX_CAP)
        self.put_count = 0
        self.sent_count = 0
        self.dropped = 0
        self._drained = anyio.Event()

    def put(self, update: Any) -> None:
        """Queue one update (never blocks)."""
        try:
            self._writer.send_nowait(update)
        except anyio.WouldBlock:
            self.dropped += 1
            return
        self.put_count += 1

    async def run(self) -> None:
        """Send until closed; a failed send (the client went away) is dropped."""
        async with self._reader:
            async for update in self._reader:
                try:
                    await self._send(update)
                except Exception as exc:  # boundary: the client hung up; the turn goes on
                    _log.debug("session/update not sent: %s", exc)
                self.sent_count += 1
                if self.sent_count >= self.put_count:
                    self._drained.set()

    async def drain(self, seconds: float = 10.0) -> None:
        """Wait (at most ``seconds``) until every queued update was sent."""
        with anyio.move_on_after(seconds):
            while self.sent_count < self.put_count:
                self._drained = anyio.Event()
                if self.sent_count >= self.put_count:
                    break
                await self._drained.wait()

    def close(self) -> None:
        self._writer.close()


def tool_kind(tool: Tool | None, name: str) -> str:
    """ACP's ``kind`` of a call: read, edit, search, execute, think, fetch or other."""
    kinds = {
        "read": "read",
        "edit": "edit",
        "write": "edit",
        "glob": "search",
        "grep": "search",
        "bash": "execute",
        "todo_write": "think",
        "tool_search": "search",
    }
    if name in kinds:
        return kinds[name]
    if tool is None:
        return "other"
    capability = tool.info.permission.capability
    return {
        Capability.READ: "read",
        Capability.NETWORK: "fetch",
        Capability.EXECUTE: "execute",
        Capability.WRITE: "edit",
    }.get(capability, "other")


def arguments_of(call: ToolCall) -> dict[str, Any]:
    """The call's arguments as an object ({} when they are not one)."""
    try:
        value = json.loads(call.arguments or "{}")
    except (json.JSONDecodeError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def tool_title(call: ToolCall, tool: Tool | None, arguments: Mapping[str, Any]) -> str:
    """What the editor shows for a call: the command, the path, or the tool's name."""
    info = tool.info if tool is not None else None
    if info is not None and info.server is not None and info.original_name is not None:
        title = f"{info.server}: {info.original_name}"
    elif call.name == "bash" and isinstance(arguments.get("command"), str):
        title = arguments["command"]
    elif isinstance(arguments.get("path"), str):
        title = f"{call.name} {arguments['path']}"
    elif isinstance(arguments.get("pattern"), str):
        title = f"{call.name} {arguments['pattern']}"
    else:
        title = call.name
    return render.safe(title, one_line=True)[:TITLE_CAP_CHARS]


def locations(cwd: Path, arguments: Mapping[str, Any]) -> list[ToolCallLocation] | None:
    """Where a file tool's call is (its ``path``, absolute; ``offset`` as the line)."""
    path = arguments.get("path")
    if not isinstance(path, str) or not path:
        return None
    line = arguments.get("offset")
    absolute = str((cwd / path) if not Path(path).is_absolute() else Path(path))
    return [ToolCallLocation(path=absolute, line=line if isinstance(line, int) else None)]


def _capped(text: str) -> str:
    if len(text) <= RESULT_CAP_CHARS:
        return text
    return text[:RESULT_CAP_CHARS] + f"\n[cut: {len(text)} characters in all]"


def _disk_text(path: Path) -> str | None:
    """The file's text for a diff (None: absent, large or binary)."""
    try:
        if path.stat().st_size > DIFF_CAP_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


class UpdateView(AgentEvents):
    """Renders one turn's events as ``session/update`` notifications into ``outbox``.

    Args:
        outbox: Where the updates go.
        find_tool: The session's tool lookup (kind, title).
        cwd: The session's working directory (locations are absolute).
        edits: The (old, new) text of a file the editor's ``fs`` last wrote (None: it did
            not; the disk is read before and after the call).
    """

    def __init__(
        self,
        outbox: Outbox,
        find_tool: Callable[[str], Tool | None],
        cwd: Path,
        edits: Edits | None = None,
    ) -> None:
        self.outbox = outbox
        self.edits = edits
        self.find_tool = find_tool
        self.cwd = cwd
        self.announced: dict[str, ToolCall] = {}
        """Calls shown as ``tool_call``, by id."""
        self.undecided: list[ToolCall] = []
        """Calls announced whose approval has not been decided (the approver picks from them)."""
        self.finished: set[str] = set()
        """Calls whose final status was sent."""
        self._before: dict[str, str | None] = {}
        self.running: ToolCall | None = None
        """The call that runs (calls that change something run one at a time)."""
        self._text = StreamScrubber(render.REDACTOR)
        self._thought = StreamScrubber(render.REDACTOR)

    # -- text ---------------------------------------------------------------------------------

    def text(self, delta: str) -> None:
        if shown := self._text.feed(delta):
            self.outbox.put(helpers.update_agent_message_text(shown))

    def reasoning(self, delta: str) -> None:
        if shown := self._thought.feed(delta):
            self.outbox.put(helpers.update_agent_thought_text(shown))

    def model_finished(self, reply: Reply) -> None:
        """The rest of the text; then every call of the reply, announced as pending."""
        if rest := self._thought.flush():
            self.outbox.put(helpers.update_agent_thought_text(rest))
        if rest := self._text.flush():
            self.outbox.put(helpers.update_agent_message_text(rest))
        for call in reply.tool_calls:
            self._announce(call)

    def model_retrying(self, retry: Retry) -> None:
        self.outbox.put(
            helpers.update_agent_thought_text(
                f"(retrying the model request in {retry.delay:g} s: {retry.reason})\n"
            )
        )

    def compacted(self, compaction: Compaction) -> None:
        self.outbox.put(
            helpers.update_agent_thought_text(
                f"(context compacted: {compaction.before} → {compaction.after} tokens)\n"
            )
        )

    def warning(self, text: str) -> None:
        self.outbox.put(helpers.update_agent_thought_text(f"warning: {render.REDACTOR(text)}\n"))

    def notice(self, text: str) -> None:
        _log.debug("%s", text)

    # -- tool calls -----------------------------------------------------------------------------

    def _announce(self, call: ToolCall) -> None:
        if call.id in self.announced:
            return
        tool = self.find_tool(call.name)
        arguments = arguments_of(call)
        self.announced[call.id] = call
        self.undecided.append(call)
        self.outbox.put(
            helpers.start_tool_call(
                call.id,
                tool_title(call, tool, arguments),
                kind=tool_kind(tool, call.name),  # type: ignore[arg-type]
                status="pending",
                locations=locations(self.cwd, arguments),
                raw_input=scrub(arguments, render.REDACTOR)
                if len(call.arguments) <= RAW_INPUT_CAP_CHARS
                else None,
            )
        )

    def pick(self, name: str, arguments: Mapping[str, Any]) -> ToolCall | None:
        """The announced, undecided call an approval is about (by name and arguments; by
        name alone when a hook changed the arguments)."""
        same = [c for c in self.undecided if c.name == name]
        exact = [c for c in same if arguments_of(c) == dict(arguments)]
        chosen = exact or same
        return chosen[0] if chosen else None

    def _decided(self, call: ToolCall) -> None:
        self._announce(call)
        if call in self.undecided:
            self.undecided.remove(call)

    def tool_approved(self, call: ToolCall, decision: Decision) -> None:
        self._decided(call)

    def tool_denied(self, call: ToolCall, decision: Decision) -> None:
        self._decided(call)
        text = denial_text(call.name, decision)
        self._finish(call, "failed", text)

    def tool_rejected(self, call: ToolCall, result: ToolResult) -> None:
        self._decided(call)
        self._finish(call, "failed", result.text)

    def tool_started(self, call: ToolCall, tool: Tool) -> None:
        if call.name in ("edit", "write") and (
            not isinstance(tool, FileTool) or tool.files is None
        ):
            self._before[call.id] = self._old_text(call)
        self.running = call
        self.outbox.put(helpers.update_tool_call(call.id, status="in_progress"))

    def terminal_started(self, terminal_id: str) -> None:
        """The running call (``bash``) runs in the editor's terminal: shown in its content."""
        if self.running is not None:
            self.outbox.put(
                helpers.update_tool_call(
                    self.running.id, content=[helpers.tool_terminal_ref(terminal_id)]
                )
            )

    def _old_text(self, call: ToolCall) -> str | None:
        location = locations(self.cwd, arguments_of(call))
        return _disk_text(Path(location[0].path)) if location else None

    def tool_finished(self, call: ToolCall, result: ToolResult, seconds: float) -> None:
        if self.running is call:
            self.running = None
        content: list[Any] = []
        terminal = result.data.get("terminal_id")
        if isinstance(terminal, str):  # the editor keeps showing the released terminal
            content.append(helpers.tool_terminal_ref(terminal))
        diff = None if result.is_error else self._diff(call, result)
        if diff is not None:
            content.append(diff)
        self._finish(call, "failed" if result.is_error else "completed", result.text, content)
        todos = result.data.get("todos") if call.name == "todo_write" else None
        if isinstance(todos, list):
            self.outbox.put(plan_update(todos))

    def _diff(self, call: ToolCall, result: ToolResult) -> Any:
        if call.name not in ("edit", "write"):
            return None
        path = result.data.get("path")
        if not isinstance(path, str):
            return None
        edited = self.edits(path) if self.edits is not None and result.data.get("editor") else None
        old: str | None
        new: str | None
        if edited is not None:
            old, new = edited
        else:
            old, new = self._before.pop(call.id, None), _disk_text(Path(path))
        if new is None:
            return None
        return helpers.tool_diff_content(path, new, old)

    def close_open(self, why: str) -> None:
        """Every call of the turn without a final status fails with ``why`` (the turn was
        cancelled or failed before it ran or finished)."""
        self.undecided.clear()
        for call in list(self.announced.values()):
            if call.id not in self.finished:
                self._finish(call, "failed", why)

    def _finish(self, call: ToolCall, status: str, text: str, extra: Iterable[Any] = ()) -> None:
        self.finished.add(call.id)
        shown = render.REDACTOR(_capped(text))
        content = [*extra, helpers.tool_content(helpers.text_block(shown))]
        self.outbox.put(
            helpers.update_tool_call(
                call.id,
                status=status,  # type: ignore[arg-type]
                content=content,
                raw_output={"text": shown},
            )
        )


def plan_update(todos: list[Any]) -> Any:
    """The todo list as ACP's ``plan`` (every entry; statuses map one to one)."""
    entries = []
    for todo in todos:
        if not isinstance(todo, dict):
            continue
        status = todo.get("status")
        entries.append(
            helpers.plan_entry(
                render.REDACTOR(str(todo.get("content", ""))),
                status=status if status in ("pending", "in_progress", "completed") else "pending",  # type: ignore[arg-type]
            )
        )
    return helpers.update_plan(entries)


def replay_updates(messages: Iterable[Mapping[str, Any]]) -> list[Any]:
    """A saved conversation as the updates ``session/load`` replays: user and assistant text,
    each call as a completed ``tool_call`` with its result."""
    updates: list[Any] = []
    names: dict[str, str] = {}
    for message in messages:
        role = message.get("role")
        content = _plain(message.get("content"))
        if role == "user" and content:
            updates.append(helpers.update_user_message_text(render.REDACTOR(content)))
        elif role == "assistant":
            if content:
                updates.append(helpers.update_agent_message_text(render.REDACTOR(content)))
            for raw in message.get("tool_calls") or []:
                function = raw.get("function") or {}
                call = ToolCall(
                    str(raw.get("id", "")),
                    str(function.get("name", "")),
                    str(function.get("arguments", "")),
                )
                names[call.id] = call.name
                arguments = arguments_of(call)
                updates.append(
                    helpers.start_tool_call(
                        call.id,
                        tool_title(call, None, arguments),
                        kind=tool_kind(None, call.name),  # type: ignore[arg-type]
                        status="completed",
                    )
                )
        elif role == "tool":
            call_id = str(message.get("tool_call_id", ""))
            shown = render.REDACTOR(_capped(content))
            updates.append(
                helpers.update_tool_call(
                    call_id,
                    status="completed",
                    content=[helpers.tool_content(helpers.text_block(shown))],
                )
            )
    return updates


def _plain(content: Any) -> str:
    """A message's text (a string, or the text parts of a list)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            str(p.get("text", ""))
            for p in content
            if isinstance(p, dict) and p.get("type") in ("text", "input_text")
        ]
        return "".join(parts)
    return ""
