"""Saved sessions: every conversation as JSON lines under the state directory.

One file per session, ``<state>/sessions/<project key>/<id>.jsonl`` (directories 0700, files
0600), appended as the conversation goes, so a crash loses at most the turn in flight:

- ``{"type": "session", ...}`` first: id, working directory, project, model, creation time;
- ``{"type": "message", "message": {...}}`` for each message added to the history;
- ``{"type": "reset", "messages": [...]}`` when the history was rewritten (compaction,
  ``/clear``): a reader starts over from it;
- ``{"type": "loaded", "tools": [...]}`` for MCP tools ``search_tools`` loaded (tool search),
  in load order: they stay loaded when the session is resumed;
- ``{"type": "todos", "todos": [...]}`` whenever ``todo_write`` changed the session's plan
  (and an empty list when ``/clear`` dropped it): the last one is resumed (:func:`todos`);
- ``{"type": "task", "event": "started", "server", "tool", "arguments", "task_id", "started"}``
  when a server turned a tool call into a task (SEP-2663), and ``{"type": "task", "event":
  "ended", "task_id", "status"}`` when it ended (or was cancelled, or is gone): a task that
  started and never ended is picked up again by ``--continue`` (:func:`pending_tasks`).

Images stay in their messages as base64 data URLs (``core.media.images``: each at most
``images.max_bytes``), so a resumed session shows the model the same images.

Every string is scrubbed (the ``scrub`` function the CLI passes knows every secret) before it
reaches the disk. Tools are never saved (only the names tool search loaded): a resumed session
gets the current tool set.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codebot_mcp.core import jsonutil
from codebot_mcp.core.config import paths
from codebot_mcp.core.errors import UsageError
from codebot_mcp.core.media import images

if TYPE_CHECKING:
    from codebot_mcp.core.agent.session import Message, Session

FORMAT_VERSION = 1
MAX_SESSION_BYTES = 64 * 1024 * 1024
"""A session file larger than this is not loaded (a resumed context could not hold it)."""

Scrub = Callable[[str], str]


def sessions_dir(project: Path) -> Path:
    """Where the sessions of ``project`` (its root, or the working directory) are kept."""
    key = hashlib.sha256(str(project.resolve()).encode()).hexdigest()[:16]
    return paths.state_dir() / "sessions" / key


def new_id() -> str:
    """A sortable, unique id: ``20261201-074012-3fa9``."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)


def scrubbed(value: Any, scrub: Scrub) -> Any:
    """``value`` (JSON-like) with ``scrub`` applied to every string in it."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, list):
        return [scrubbed(v, scrub) for v in value]
    if isinstance(value, dict):
        return {k: scrubbed(v, scrub) for k, v in value.items()}
    return value


class SessionLog:
    """Appends one session's records; attach it as ``session.recorder``.

    Args:
        project: The project root (or working directory) the session belongs to.
        session_id: Continue this session's file (resume), else a new id.
        scrub: Removes secrets from every string written.
        meta: Extra fields of the first record (``cwd``, ``model``).
    """

    def __init__(
        self,
        project: Path,
        *,
        session_id: str | None = None,
        scrub: Scrub = lambda text: text,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.id = session_id or new_id()
        self.path = sessions_dir(project) / f"{self.id}.jsonl"
        self.scrub = scrub
        self._meta = {"project": str(project), **(meta or {})}
        self._written = 0
        self._version = -1
        self._loaded = 0
        self._todos = 0
        self.error: str | None = None
        """Why saving stopped (disk full, permissions); the conversation goes on."""

    def size(self) -> int | None:
        """Bytes saved so far (None once saving failed): the file is only appended to, so
        this marks the conversation as it is now (``replay(path, until=size)``)."""
        if self.error is not None:
            return None
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0
        except OSError:
            return None

    def adopt(self, session: Session) -> None:
        """The session already holds what the file holds (after a resume)."""
        self._written = len(session.history)
        self._version = session.history_version
        self._loaded = len(session.search.loaded)
        self._todos = session.todos.version

    def sync(self, session: Session) -> None:
        """Append the messages added since the last call, or a reset after a rewrite."""
        if self.error is not None:
            return
        history = session.history
        records: list[dict[str, Any]] = []
        if not self.path.exists():
            records.append(self._header())
            if self._version == -1:
                self._version = session.history_version
        if session.history_version != self._version or self._written > len(history):
            records.append({"type": "reset", "messages": history})
        else:
            records += [{"type": "message", "message": m} for m in history[self._written :]]
        loaded = list(session.search.loaded)
        if len(loaded) > self._loaded:
            records.append({"type": "loaded", "tools": loaded[self._loaded :]})
        todos = session.todos.version
        if todos != self._todos:
            records.append({"type": "todos", "todos": session.todos.as_json()})
        if not records:
            return
        try:
            self._append(records)
        except OSError as exc:
            self.error = f"cannot save the session to {self.path}: {exc.strerror or exc}"
            return
        self._written = len(history)
        self._version = session.history_version
        self._loaded = len(loaded)
        self._todos = todos

    def task_started(self, record: Mapping[str, Any]) -> None:
        """A tool call became a server-side task: remember it until it ends."""
        self._journal({"type": "task", "event": "started", **record})

    def task_ended(self, task_id: str, status: str) -> None:
        """The task ended (``completed``, ``failed``, ``cancelled``, ``lost``)."""
        self._journal({"type": "task", "event": "ended", "task_id": task_id, "status": status})

    def _journal(self, record: dict[str, Any]) -> None:
        if self.error is not None:
            return
        records = [record] if self.path.exists() else [self._header(), record]
        try:
            self._append(records)
        except OSError as exc:
            self.error = f"cannot save the session to {self.path}: {exc.strerror or exc}"

    def _header(self) -> dict[str, Any]:
        created = datetime.now(UTC).isoformat(timespec="seconds")
        return {
            "type": "session",
            "version": FORMAT_VERSION,
            "id": self.id,
            "created": created,
        } | self._meta

    def _append(self, records: list[dict[str, Any]]) -> None:
        paths.private_dir(self.path.parent)
        lines = "".join(
            json.dumps(scrubbed(r, self.scrub), ensure_ascii=False) + "\n" for r in records
        )
        fd = os.open(self.path, os.O_CREAT | os.O_APPEND | os.O_WRONLY, 0o600)
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, lines.encode("utf-8"))
        finally:
            os.close(fd)


@dataclass(frozen=True, slots=True)
class SavedSession:
    """A session on disk, as listed by ``--resume`` and ``/resume``."""

    id: str
    path: Path
    updated: float
    messages: int
    title: str
    """The first line of the first prompt."""


def _records(path: Path, until: int | None = None) -> Iterator[dict[str, Any]]:
    if path.stat().st_size > MAX_SESSION_BYTES:
        raise UsageError(
            f"session file {path} is larger than {MAX_SESSION_BYTES // 2**20} MiB",
            hint="Start a new session; the old file can be removed.",
        )
    with path.open("rb") as fh:
        data = fh.read() if until is None else fh.read(until)
    for raw in data.splitlines():
        line = raw.decode("utf-8", errors="replace")
        if line:
            try:
                record = jsonutil.loads(line)
            except json.JSONDecodeError:  # a line cut by a crash: skip it
                continue
            if isinstance(record, dict):
                yield record


def replay(path: Path, until: int | None = None) -> list[Message]:
    """The history a session file ends with, or had at byte ``until`` (the file is only
    appended to, so every earlier size is an earlier state: see ``core.checkpoints.turns``)."""
    messages: list[Message] = []
    for record in _records(path, until):
        kind = record.get("type")
        if kind == "message" and isinstance(record.get("message"), dict):
            messages.append(record["message"])
        elif kind == "reset" and isinstance(record.get("messages"), list):
            messages = [m for m in record["messages"] if isinstance(m, dict)]
    return _complete(messages)


def rewind(path: Path, until: int) -> list[Message]:
    """Take a session file back to the conversation it held at byte ``until``: a reset record
    is appended (nothing is removed, so a later rewind can still reach any earlier state).
    Returns that conversation.

    Raises:
        OSError: the file cannot be written.
    """
    messages = replay(path, until)
    line = json.dumps({"type": "reset", "messages": messages}, ensure_ascii=False) + "\n"
    fd = os.open(path, os.O_APPEND | os.O_WRONLY)
    try:
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)
    return messages


def loaded_tools(path: Path) -> list[str]:
    """The MCP tools tool search had loaded in a session file, in load order."""
    names: list[str] = []
    for record in _records(path):
        tools: Any = record.get("tools") if record.get("type") == "loaded" else None
        if isinstance(tools, list):
            names += [n for n in tools if isinstance(n, str) and n not in names]
    return names


def header(path: Path) -> dict[str, Any]:
    """The session file's first record (id, created, project, cwd, model), or {}."""
    for record in _records(path):
        return record if record.get("type") == "session" else {}
    return {}


def todos(path: Path) -> list[dict[str, Any]]:
    """The todo list a session file ends with (``todo_write``'s last list), or []."""
    found: list[Any] = []
    for record in _records(path):
        items: Any = record.get("todos") if record.get("type") == "todos" else None
        if isinstance(items, list):
            found = [i for i in items if isinstance(i, dict)]
    return found


def pending_tasks(path: Path) -> list[dict[str, Any]]:
    """The tasks a session file shows started and never ended, oldest first."""
    started: dict[str, dict[str, Any]] = {}
    for record in _records(path):
        if record.get("type") != "task" or not isinstance(record.get("task_id"), str):
            continue
        if record.get("event") == "started" and isinstance(record.get("server"), str):
            started[record["task_id"]] = record
        elif record.get("event") == "ended":
            started.pop(record["task_id"], None)
    return list(started.values())


def _complete(messages: list[Message]) -> list[Message]:
    """Drop a trailing assistant turn whose tool calls have no results (a crash mid-turn)."""
    while messages:
        last = messages[-1]
        if last.get("role") == "assistant" and last.get("tool_calls"):
            messages.pop()
            continue
        break
    return messages


def _title(messages: list[Message]) -> str:
    for message in messages:
        content = images.text_of(message.get("content"))
        if (
            message.get("role") == "user"
            and images.TOOL_IMAGES_KEY not in message
            and content.strip()
        ):
            line = content.strip().splitlines()[0]
            return line if len(line) <= 60 else line[:59] + "…"
    return "(empty)"


def list_sessions(project: Path) -> list[SavedSession]:
    """The project's sessions, the most recently updated first."""
    directory = sessions_dir(project)
    if not directory.is_dir():
        return []
    found: list[SavedSession] = []
    for path in directory.glob("*.jsonl"):
        try:
            messages = replay(path)
            updated = path.stat().st_mtime
        except (OSError, UsageError):  # boundary: an unreadable file is simply not listed
            continue
        found.append(SavedSession(path.stem, path, updated, len(messages), _title(messages)))
    found.sort(key=lambda s: (s.updated, s.id), reverse=True)
    return found


def find(project: Path, session_id: str | None) -> SavedSession:
    """The session ``session_id`` (a unique prefix works), or the latest when None.

    Raises:
        UsageError: there is no such session (the hint lists the recent ones).
    """
    saved = list_sessions(project)
    if not saved:
        raise UsageError(
            f"no saved sessions for {project}",
            hint="Sessions are saved as you chat; start one with `codebot chat`.",
        )
    if session_id is None:
        return saved[0]
    matches = [s for s in saved if s.id == session_id] or [
        s for s in saved if s.id.startswith(session_id)
    ]
    if len(matches) == 1:
        return matches[0]
    recent = ", ".join(s.id for s in saved[:5])
    what = "matches several sessions" if matches else "is not a saved session of this project"
    raise UsageError(
        f"'{session_id}' {what}",
        hint=f"Recent sessions: {recent} (`codebot chat --resume` lists them).",
    )


def describe(saved: SavedSession) -> str:
    """One line for a list: id, age, size, title."""
    when = datetime.fromtimestamp(saved.updated).strftime("%Y-%m-%d %H:%M")
    return f"{saved.id}  {when}  {saved.messages:>4} messages  {saved.title}"
