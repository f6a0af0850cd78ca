"""What the tasks (SEP-2663) of a whole run report to and how they end: the policy the CLI
fills in, the journal that remembers running tasks, and the status a user is shown.

On the standard library alone, so a manager with no server to start never loads the SDK;
following a task on the wire is :mod:`.tasks`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol


class TaskJournal(Protocol):
    """Where running tasks are remembered (the session log, ``core.agent.history``)."""

    def task_started(self, record: Mapping[str, Any]) -> None:
        """A task began: ``server``, ``tool``, ``arguments``, ``task_id``, ``started``."""
        ...

    def task_ended(self, task_id: str, status: str) -> None:
        """A task reached ``status`` (or was cancelled, or is gone): no need to resume it."""
        ...


StatusHook = Callable[[str, "TaskStatus"], None]
"""Called with (server, status) whenever a task's status or message changes."""


@dataclass(frozen=True, slots=True)
class TaskStatus:
    """What a user is shown about a running task."""

    task_id: str
    tool: str
    status: str
    message: str | None
    seconds: float

    def describe(self) -> str:
        """``task 3fa9c2: working for 4 s: step 2 of 4``."""
        text = f"task {self.task_id[:8]} ({self.tool}): {self.status}, {self.seconds:.0f} s"
        return f"{text}: {self.message}" if self.message else text


@dataclass
class TaskPolicy:
    """What the tasks of a whole run report to and how they end: one per ``Manager``, shared
    by its connections; the CLI fills it in."""

    on_status: StatusHook | None = None
    """Told each change of a running task's status (``mcp call``'s stderr lines)."""
    journal: TaskJournal | None = None
    """Where running tasks are remembered (the session log): ``--continue`` resumes them."""
    cancel_on_interrupt: Callable[[], bool] = lambda: True
    """Whether a cancelled call also cancels its task (``tasks/cancel``): yes for Ctrl-C; the
    CLI says no while the process is terminated, leaving the task to resume."""
