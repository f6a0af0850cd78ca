"""``todo_write``: the session's visible plan, a checklist the model keeps up to date.

As Claude Code's TodoWrite, Codex's ``update_plan`` and Gemini's ``write_todos``: each call
replaces the whole list (``todos: [{content, status, activeForm?}]``). The tool changes only
session state, so it has the read capability (no approval, offered in plan mode). The REPL
shows the list when it changes, ``/todos`` shows it, the session log keeps it
(``core.agent.history``) so ``--continue``/``--resume`` bring it back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from codebot_mcp.core.tools.base import Capability, Origin, Permission, ToolInfo, ToolResult
from codebot_mcp.core.tools.builtin._common import BadArgumentError

STATUSES = ("pending", "in_progress", "completed")
MAX_TODOS = 100
"""More items than anyone can follow; a longer list is refused (the model is told)."""
MAX_CONTENT_CHARS = 500
"""One item is one line of a checklist, not a document."""
MARKS = {"pending": "☐", "in_progress": "◐", "completed": "☑"}
ASCII_MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}


@dataclass(frozen=True, slots=True)
class Todo:
    """One item of the plan."""

    content: str
    status: str = "pending"
    active_form: str = ""
    """What is being done, in the present (Claude Code's ``activeForm``); optional."""

    def as_json(self) -> dict[str, str]:
        """As the tool takes it and the session log keeps it."""
        data = {"content": self.content, "status": self.status}
        if self.active_form:
            data["activeForm"] = self.active_form
        return data


class TodoList:
    """The session's plan: replaced whole by each ``todo_write``; ``version`` counts changes."""

    def __init__(self) -> None:
        self.items: list[Todo] = []
        self.version = 0

    def replace(self, items: Sequence[Todo]) -> bool:
        """Take ``items``; True when the list changed."""
        new = list(items)
        if new == self.items:
            return False
        self.items = new
        self.version += 1
        return True

    def as_json(self) -> list[dict[str, str]]:
        """The items as JSON objects, in order."""
        return [t.as_json() for t in self.items]

    def restore(self, data: Sequence[Any]) -> None:
        """The list a saved session ended with (entries that do not parse are skipped)."""
        items: list[Todo] = []
        for entry in data:
            try:
                items.append(_item(entry, 0))
            except BadArgumentError:
                continue
        self.replace(items)


def _item(entry: Any, index: int) -> Todo:
    where = f"todos[{index}]"
    if not isinstance(entry, Mapping):
        raise BadArgumentError(f"{where} must be an object with 'content' and 'status'")
    content: Any = entry.get("content")
    status: Any = entry.get("status", "pending")
    active: Any = entry.get("activeForm", "")
    if not isinstance(content, str) or not content.strip():
        raise BadArgumentError(f"{where}.content must be a non-empty string")
    if len(content) > MAX_CONTENT_CHARS:
        raise BadArgumentError(f"{where}.content is longer than {MAX_CONTENT_CHARS} characters")
    if status not in STATUSES:
        raise BadArgumentError(
            f"{where}.status must be one of {', '.join(STATUSES)}; got {status!r}"
        )
    if active is None:
        active = ""
    if not isinstance(active, str):
        raise BadArgumentError(f"{where}.activeForm must be a string")
    return Todo(content.strip(), status, active.strip()[:MAX_CONTENT_CHARS])


def parse(arguments: Mapping[str, Any]) -> list[Todo]:
    """The ``todos`` argument as items.

    Raises:
        BadArgument: not a list of ``{content, status}`` objects.
    """
    todos = arguments.get("todos")
    if not isinstance(todos, list):
        raise BadArgumentError("'todos' is required: a list of {content, status} objects")
    entries: list[Any] = todos
    if len(entries) > MAX_TODOS:
        raise BadArgumentError(f"'todos' holds {len(entries)} items; keep it to {MAX_TODOS}")
    return [_item(entry, n) for n, entry in enumerate(entries)]


def checklist(items: Sequence[Todo], *, ascii_marks: bool = False) -> list[str]:
    """One line per item: ``☐ content`` (``[ ]``, ``[~]``, ``[x]`` with ``ascii_marks``).
    The content is as the model wrote it: escape it before printing."""
    marks = ASCII_MARKS if ascii_marks else MARKS
    return [f"{marks[t.status]} {t.content}" for t in items]


class TodoWriteTool:
    """Replace the session's todo list."""

    name = "todo_write"
    description = (
        "Create or update the plan for the current task: a checklist the user sees. Use it "
        "for work of three steps or more: write the steps, mark one 'in_progress' before "
        "starting it and 'completed' as soon as it is done, add steps you discover. Each "
        "call replaces the whole list. Skip it for a single simple step."
    )

    def __init__(self, todos: TodoList) -> None:
        self.todos = todos

    def schema(self) -> dict[str, Any]:
        """Arguments: ``todos``, the whole list."""
        return {
            "type": "object",
            "properties": {
                "todos": {
                    "type": "array",
                    "description": "The whole list, in order; it replaces the previous one.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "content": {"type": "string", "description": "The step, briefly."},
                            "status": {"type": "string", "enum": list(STATUSES)},
                            "activeForm": {
                                "type": "string",
                                "description": "The step in the present ('Running tests').",
                            },
                        },
                        "required": ["content", "status"],
                    },
                }
            },
            "required": ["todos"],
        }

    @property
    def info(self) -> ToolInfo:
        """It changes only the session's own list: nothing outside the session."""
        return ToolInfo(
            Origin.BUILTIN,
            Permission(Capability.READ, "built-in todo_write: updates the session's plan"),
        )

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        """Replace the list; the result repeats it for the model."""
        try:
            items = parse(arguments)
        except BadArgumentError as exc:
            return ToolResult(f"todo_write: {exc}", is_error=True)
        changed = self.todos.replace(items)
        done = sum(t.status == "completed" for t in items)
        head = f"Todo list {'updated' if changed else 'unchanged'}: {done}/{len(items)} completed."
        text = "\n".join([head, *checklist(items, ascii_marks=True)])
        return ToolResult(text, data={"todos": self.todos.as_json(), "changed": changed})
