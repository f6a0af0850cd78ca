"""Checkpoints: the project's files as each turn found them, and rewinding to them.

Each prompt of a session is a *turn*. Before a turn's first call that may change something
(a tool whose capability is not read: ``edit``, ``write``, ``bash``, an MCP tool that writes),
the whole project is snapshotted into the shadow store (:mod:`core.checkpoints.shadow`); when the
turn ends, once more. The changes of a turn are the difference between its two snapshots, so
what ``bash`` did is in them as much as what ``edit`` did.

Rewinding to before turn N puts back, for every path a turn from N on changed, what it held
before turn N: changed files get their bytes and mode back, files the turns created are
removed (and the directories they left empty), files they deleted come back. Paths no turn
touched are left alone, so what a person edited between turns stays, unless a later turn
touched the same file (the plan says so before anything is written). Gitignored files are
never snapshotted, so never touched.

The turns of a session are JSON lines in ``<store>/<session id>.jsonl`` (0600), beside the
shared store of the project (:func:`store_dir`)::

    {"type": "begin", "turn": 3, "prompt": "fix the tests", "time": 1764600000.0,
     "conversation": 5120}
    {"type": "before", "turn": 3, "tree": "<sha256>", "files": 5001, "bytes": 24139975}
    {"type": "skipped", "turn": 3, "reason": "the project has more than 50,000 files ..."}
    {"type": "after", "turn": 3, "tree": "<sha256>"}
    {"type": "rewind", "to": 3, "time": 1764600100.0}

``conversation`` is the size of the session's file when the turn began: the file is only
appended to, so the conversation before the turn is that prefix (``history.replay``). A
``rewind`` record undoes turns ``to`` and later; numbering then continues from ``to``.

Size: one class, the session's checkpoints, records turns and plans and carries out their
rewind against the same records and store, with the few functions around it (which
checkpoints a chat uses, pruning, reading the records); the store (``shadow``, ``pack``)
and the writes of a single path (``restore``) live apart.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio

from codebot_mcp.core.checkpoints import restore
from codebot_mcp.core.checkpoints.checkpointing import CheckpointSettings
from codebot_mcp.core.checkpoints.shadow import (
    Entry,
    ShadowStore,
    Snapshot,
    SnapshotSkipped,
    StoreError,
)
from codebot_mcp.core.errors import CodebotError, UsageError
from codebot_mcp.core.model.stream import ToolCall
from codebot_mcp.core.tools.base import Capability, Tool

__all__ = [
    "ORPHAN_AFTER_SECONDS",
    "Action",
    "Change",
    "Checkpoints",
    "Plan",
    "Restored",
    "RewindError",
    "SubagentCheckpoints",
    "Turn",
    "follow",
    "prune",
    "read_turns",
    "store_dir",
]

PROMPT_CHARS = 200
"""How much of a turn's prompt is kept to name it in lists."""
ORPHAN_AFTER_SECONDS = 3600
"""Checkpoints whose session file is gone are pruned once untouched this long."""


class RewindError(CodebotError):
    """A rewind cannot be done: no turns, nothing to undo, a turn without a checkpoint
    (exit 1; a turn out of range is a :class:`UsageError`, exit 2)."""


def store_dir(project: Path) -> Path:
    """Where the checkpoints of ``project`` live: beside its saved sessions."""
    from codebot_mcp.core.agent.history import sessions_dir

    return sessions_dir(project) / "checkpoints"


@dataclass(slots=True)
class Turn:
    """One prompt of a session, as the checkpoints recorded it."""

    number: int
    prompt: str
    started: float
    conversation: int | None = None
    """Size of the session file when the turn began (None: the session was not saved)."""
    before: str | None = None
    """The snapshot before the turn's first change (None: it changed nothing, or skipped)."""
    after: str | None = None
    skipped: str | None = None
    """Why the turn has no snapshot although it may have changed files."""


Status = Literal["added", "modified", "deleted"]


@dataclass(frozen=True, slots=True)
class Change:
    """A path a turn changed."""

    path: str
    status: Status


@dataclass(frozen=True, slots=True)
class Action:
    """One step of a rewind."""

    path: str
    do: Literal["restore", "remove", "recreate"]
    entry: Entry | None
    """What the path held before the turn (None for ``remove``)."""
    changed_since: bool = False
    """The path changed after the last turn that touched it: that change is lost too."""


@dataclass(slots=True)
class Plan:
    """What rewinding to before turn ``turn`` does."""

    turn: Turn
    actions: list[Action] = field(default_factory=list[Action])
    conflicts: list[str] = field(default_factory=list[str])
    """Paths that cannot be restored, each with why (left as they are)."""
    undone: list[Turn] = field(default_factory=list[Turn])
    """The turns from ``turn`` on."""


@dataclass(slots=True)
class Restored:
    """What a rewind did."""

    done: list[Action] = field(default_factory=list[Action])
    failed: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])


def may_change(calls: Sequence[ToolCall], find_tool: Callable[[str], Tool | None]) -> bool:
    """Whether any of the calls may change files (a tool whose capability is not read)."""
    for call in calls:
        tool = find_tool(call.name)
        if tool is not None and tool.info.permission.capability is not Capability.READ:
            return True
    return False


class Checkpoints:
    """The checkpoints of one session in one project.

    Args:
        root: The project root (everything under it is snapshotted).
        session_id: The session the turns belong to.
        max_files: A snapshot of more files is skipped, with a warning.
        max_bytes: A snapshot of more bytes is skipped, with a warning.
        scrub: Removes secrets from the prompts kept to name turns.
        conversation: The session file's size now (None: not saved).
    """

    def __init__(
        self,
        root: Path,
        session_id: str,
        *,
        max_files: int = 50_000,
        max_bytes: int = 500_000_000,
        scrub: Callable[[str], str] = lambda text: text,
        conversation: Callable[[], int | None] = lambda: None,
    ) -> None:
        self.root = root
        self.session_id = session_id
        self.directory = store_dir(root)
        self.store = ShadowStore(self.directory, root, max_files=max_files, max_bytes=max_bytes)
        self.scrub = scrub
        self.conversation = conversation
        self.current: Turn | None = None
        self._after: threading.Thread | None = None
        self._problem: str | None = None
        """A failure of the background snapshot, told at the next turn."""
        self.last: Snapshot | SnapshotSkipped | None = None
        """The latest snapshot taken (for the bench and ``--debug``)."""

    @property
    def path(self) -> Path:
        """The session's turn records."""
        return self.directory / f"{self.session_id}.jsonl"

    # -- recording ------------------------------------------------------------------------

    async def begin(self, prompt: str) -> str | None:
        """A turn starts; returns a warning about the previous turn's snapshot, if any."""
        problem = await self.settle()
        turns = self.turns()
        number = turns[-1].number + 1 if turns else 1
        line = " ".join(self.scrub(prompt).split())
        turn = Turn(number, line[:PROMPT_CHARS], time.time(), self.conversation())
        self.current = turn
        record = {"type": "begin", "turn": number, "prompt": turn.prompt, "time": turn.started}
        self._write(record | {"conversation": turn.conversation})
        return problem

    async def before_calls(
        self, calls: Sequence[ToolCall], find_tool: Callable[[str], Tool | None]
    ) -> str | None:
        """Snapshot before the turn's first call that may change files; a warning when the
        snapshot was skipped or failed (the turn goes on either way)."""
        turn = self.current
        if turn is None or turn.before or turn.skipped or not may_change(calls, find_tool):
            return None
        try:
            taken = await anyio.to_thread.run_sync(self.store.snapshot)
        except StoreError as exc:
            taken = SnapshotSkipped(str(exc))
        self.last = taken
        if isinstance(taken, SnapshotSkipped):
            turn.skipped = taken.reason
            self._write({"type": "skipped", "turn": turn.number, "reason": taken.reason})
            return (
                f"no checkpoint for this turn: {taken.reason}; its changes cannot be rewound "
                "(raise the limit in 'checkpoints', or ignore big files in .gitignore)"
            )
        turn.before = taken.tree
        record = {"files": taken.files, "bytes": taken.size}
        self._write({"type": "before", "turn": turn.number, "tree": taken.tree} | record)
        return None

    def for_subagent(self) -> SubagentCheckpoints:
        """What a subagent started in this session's turns uses (see the class)."""
        return SubagentCheckpoints(self)

    def end(self) -> None:
        """The turn ended: snapshot what it left, in the background (:meth:`settle` waits)."""
        turn, self.current = self.current, None
        if turn is None or turn.before is None:
            return
        self._after = threading.Thread(target=self._snapshot_after, args=(turn,), daemon=False)
        self._after.start()

    def _snapshot_after(self, turn: Turn) -> None:
        try:
            taken = self.store.snapshot()
        except StoreError as exc:
            self._problem = f"the checkpoint after turn {turn.number} failed: {exc}"
            return
        if isinstance(taken, SnapshotSkipped):
            self._problem = f"no checkpoint after turn {turn.number}: {taken.reason}"
            return
        turn.after = taken.tree
        self._write({"type": "after", "turn": turn.number, "tree": taken.tree})

    async def settle(self) -> str | None:
        """Wait for the background snapshot of the last turn; its failure, if any."""
        thread, self._after = self._after, None
        if thread is not None:
            await anyio.to_thread.run_sync(thread.join)
        problem, self._problem = self._problem, None
        return problem

    def _write(self, record: dict[str, Any]) -> None:
        """Append one record; a full disk loses a checkpoint, never the turn."""
        try:
            self.store.create()
            fd = os.open(self.path, os.O_CREAT | os.O_APPEND | os.O_WRONLY, 0o600)
            try:
                os.fchmod(fd, 0o600)
                os.write(fd, (json.dumps(record, ensure_ascii=False) + "\n").encode())
            finally:
                os.close(fd)
        except OSError as exc:
            self._problem = f"cannot record checkpoints in {self.path}: {exc}"

    # -- reading --------------------------------------------------------------------------

    def turns(self) -> list[Turn]:
        """The session's turns that are not undone, oldest first."""
        return read_turns(self.path)

    def changes(self, turn: Turn, turns: Sequence[Turn] | None = None) -> list[Change] | None:
        """What ``turn`` changed (None: unknown, its snapshot was skipped).

        Raises:
            StoreError: the store cannot be read.
        """
        if turn.skipped:
            return None
        if turn.before is None:
            return []
        after = turn.after or self._next_before(turn, turns or self.turns()) or self._now()
        with self.store.locked(write=False):  # after _now(): it takes the lock to write
            return [_change(p, a, b) for p, a, b in self.store.changed(turn.before, after)]

    def _next_before(self, turn: Turn, turns: Sequence[Turn]) -> str | None:
        later = [t for t in turns if t.number > turn.number and t.before]
        return later[0].before if later else None

    def _now(self) -> str:
        taken = self.store.snapshot()
        if isinstance(taken, SnapshotSkipped):
            raise StoreError(f"the project cannot be compared with the checkpoint: {taken.reason}")
        return taken.tree

    # -- rewinding ------------------------------------------------------------------------

    def plan(self, number: int) -> Plan:
        """What rewinding the files to before turn ``number`` would do (nothing is written).

        Raises:
            UsageError: there is no turn ``number``.
            RewindError: no turns at all, or a turn from it on has no checkpoint.
            StoreError: the store cannot be read.
        """
        turns = self.turns()
        if not turns:
            raise RewindError(
                f"session {self.session_id} has no turns to rewind",
                hint="Turns are recorded as you chat; `codebot rewind --list` shows them.",
            )
        by_number = {t.number: t for t in turns}
        if number not in by_number:
            raise UsageError(
                f"turn {number} is out of range: session {self.session_id} has turns "
                f"{turns[0].number} to {turns[-1].number}",
                hint="`codebot rewind --list` (or /rewind) lists them.",
            )
        undone = [t for t in turns if t.number >= number]
        blocked = [t for t in undone if t.skipped]
        if blocked:
            last = blocked[-1]
            later = f"turn {last.number + 1} or later" if last is not turns[-1] else "no turn"
            raise RewindError(
                f"turn {last.number} has no checkpoint ({last.skipped}), so its changes "
                f"cannot be undone",
                hint=f"Files can be rewound to before {later}; raise the limits in "
                "'checkpoints' for later turns.",
            )
        plan = Plan(by_number[number], undone=undone)
        taken = [t for t in undone if t.before]
        if not taken:
            return plan
        base = taken[0].before
        assert base is not None
        # The last turn never finished (no snapshot after it): compare with the files now.
        now = self._now() if taken[-1].after is None else None
        touched: dict[str, Entry | None] = {}
        """Each path the turns changed, with what the last turn that changed it left."""
        with self.store.locked(write=False):
            for index, turn in enumerate(taken):
                following = taken[index + 1].before if index + 1 < len(taken) else now
                after = turn.after or following
                assert turn.before is not None and after is not None
                for path, _old, new in self.store.changed(turn.before, after):
                    touched[path] = new
            for path in sorted(touched):
                self._plan_path(plan, path, self.store.entry(base, path), touched[path])
        return plan

    def _plan_path(self, plan: Plan, path: str, wanted: Entry | None, left: Entry | None) -> None:
        try:
            current = restore.current(self.root, path)
        except OSError as exc:
            plan.conflicts.append(f"{path}: cannot be read ({exc.strerror or exc})")
            return
        if current == "dir":
            plan.conflicts.append(f"{path}: is a directory now; left as it is")
            return
        if current == wanted:
            return
        since = current != left
        if wanted is None:
            plan.actions.append(Action(path, "remove", None, since))
        elif current is None:
            plan.actions.append(Action(path, "recreate", wanted, since))
        else:
            plan.actions.append(Action(path, "restore", wanted, since))

    def restore(self, plan: Plan) -> Restored:
        """Carry out a plan, then mark its turns undone. A path that cannot be written is
        reported and the rest go on.

        Raises:
            StoreError: the store cannot be read.
        """
        done = Restored()
        removed: list[str] = []
        with self.store.locked(write=False):
            for action in plan.actions:
                try:
                    self._apply(action)
                except OSError as exc:
                    done.failed.append((action.path, exc.strerror or str(exc)))
                    continue
                done.done.append(action)
                if action.do == "remove":
                    removed.append(action.path)
            base = next((t.before for t in plan.undone if t.before), None)
            if base is not None:
                self._remove_empty_dirs(removed, base)
        self._write({"type": "rewind", "to": plan.turn.number, "time": time.time()})
        return done

    def _apply(self, action: Action) -> None:
        if action.do == "remove":
            restore.remove(self.root, action.path)
            return
        entry = action.entry
        assert entry is not None
        restore.put_back(self.root, action.path, entry, self.store.pack.get(entry.digest))

    def _remove_empty_dirs(self, removed: Iterable[str], base: str) -> None:
        """Directories the turns created and a rewind emptied go too."""
        for path in removed:
            parts = path.split("/")[:-1]
            while parts:
                relative = "/".join(parts)
                if self._in_tree(base, relative):
                    break
                try:
                    os.rmdir(self.root / relative)  # only when empty
                except OSError:
                    break
                parts.pop()

    def _in_tree(self, tree: str, directory: str) -> bool:
        for part in directory.split("/"):
            found = self.store.tree(tree).get(part)
            if found is None or found[0] != "d":
                return False
            tree = found[1]
        return True


def follow(
    current: Checkpoints | None,
    config: CheckpointSettings,
    project: Path,
    session_id: str | None,
    *,
    scrub: Callable[[str], str],
    conversation: Callable[[], int | None],
    warn: Callable[[str], None],
) -> Checkpoints | None:
    """The checkpoints a chat should use now: None when they are off (or nothing is saved),
    ``current`` with the settings' limits when it is this session's, else a new one (old
    sessions' checkpoints pruned first)."""
    if not config.enabled or session_id is None:
        return None
    if current is not None and current.session_id == session_id:
        current.store.max_files, current.store.max_bytes = config.max_files, config.max_bytes
        return current
    try:
        prune(project)  # checkpoints go with their sessions
    except StoreError as exc:
        warn(f"cannot prune old checkpoints: {exc}")
    return Checkpoints(
        project,
        session_id,
        max_files=config.max_files,
        max_bytes=config.max_bytes,
        scrub=scrub,
        conversation=conversation,
    )


def prune(project: Path) -> int:
    """Drop the checkpoints of the project's sessions that are gone (their session file was
    removed), then the objects no remaining turn needs; returns how many sessions went.

    A record file touched within :data:`ORPHAN_AFTER_SECONDS` is kept: a new session's
    file is written only after its first answer.

    Raises:
        StoreError: the store cannot be rewritten.
    """
    from codebot_mcp.core.agent.history import sessions_dir

    directory = store_dir(project)
    if not directory.is_dir():
        return 0
    sessions = sessions_dir(project)
    now = time.time()
    gone = 0
    for path in directory.glob("*.jsonl"):
        with contextlib.suppress(OSError):
            if (sessions / path.name).exists() or now - path.stat().st_mtime < ORPHAN_AFTER_SECONDS:
                continue
            path.unlink()
            gone += 1
    if gone:
        live = {
            tree
            for path in directory.glob("*.jsonl")
            for turn in read_turns(path)
            for tree in (turn.before, turn.after)
            if tree
        }
        ShadowStore(directory, project).collect(live)
    return gone


class SubagentCheckpoints:
    """A subagent's view of its parent's checkpoints. A subagent's prompt is not a turn of
    its own (``begin`` and ``end`` do nothing); its first call that may change files takes
    the snapshot of the parent's current turn, so what a subagent changed is rewound with
    the prompt that started it."""

    def __init__(self, parent: Checkpoints | SubagentCheckpoints) -> None:
        self.parent = parent

    async def begin(self, prompt: str) -> str | None:
        """Nothing: the parent's turn goes on."""
        return None

    async def before_calls(
        self, calls: Sequence[ToolCall], find_tool: Callable[[str], Tool | None]
    ) -> str | None:
        """The parent turn's snapshot, if this is its first change."""
        return await self.parent.before_calls(calls, find_tool)

    def end(self) -> None:
        """Nothing: the parent's turn has not ended."""

    async def settle(self) -> str | None:
        """Nothing: the parent settles its own turn."""
        return None

    def for_subagent(self) -> SubagentCheckpoints:
        """A nested subagent's view: the same turn."""
        return SubagentCheckpoints(self)


def read_turns(path: Path) -> list[Turn]:
    """The turns a record file holds, undone ones left out (a damaged line is skipped)."""
    turns: dict[int, Turn] = {}
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict):
            _apply_record(turns, record)
    return [turns[n] for n in sorted(turns)]


def _apply_record(turns: dict[int, Turn], record: dict[str, Any]) -> None:
    kind = record.get("type")
    number = record.get("turn")
    if kind == "rewind" and isinstance(record.get("to"), int):
        for n in [n for n in turns if n >= record["to"]]:
            del turns[n]
        return
    if not isinstance(number, int):
        return
    if kind == "begin":
        conversation = record.get("conversation")
        turns[number] = Turn(
            number,
            str(record.get("prompt") or ""),
            float(record.get("time") or 0),
            conversation if isinstance(conversation, int) else None,
        )
        return
    turn = turns.get(number)
    tree = record.get("tree")
    if turn is None:
        return
    if kind == "before" and _is_digest(tree):
        turn.before = tree
    elif kind == "after" and _is_digest(tree):
        turn.after = tree
    elif kind == "skipped":
        turn.skipped = str(record.get("reason") or "skipped")


def _is_digest(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64


def _change(path: str, old: Entry | None, new: Entry | None) -> Change:
    status: Status = "added" if old is None else "deleted" if new is None else "modified"
    return Change(path, status)


def describe_error(exc: StoreError) -> CodebotError:
    """A store failure as the user sees it."""
    return CodebotError(
        f"the checkpoints cannot be read: {exc}",
        hint="The store is rebuilt as new turns run; remove it to start over.",
    )
