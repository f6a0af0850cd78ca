"""What the kernel knows of background jobs: the :class:`BackgroundJobs` protocol.

``bash`` starts a job with ``"run_in_background": true`` and the loop tells the jobs when a
turn ends; both go through this protocol only. The jobs feature implements it
(``core.jobs.jobtable.JobTable``) and brings its own tools over it (``bash_output``,
``bash_kill``: ``core.jobs.jobtools``), registered with the kernel (:mod:`.featuretools`), so
the kernel's tools sit below the feature and never import it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import anyio.abc

    from codebot_mcp.core.sandbox.confinement import Sandbox
    from codebot_mcp.core.sandbox.guarded import Watch
    from codebot_mcp.core.tools.base import ToolResult

__all__ = ["BackgroundJobs"]


class BackgroundJobs(Protocol):
    """A session's background jobs, as ``bash`` and the loop use them."""

    def refusal(self) -> str | None:
        """Why no job can start now (None: one can)."""
        ...

    async def start(
        self,
        process: anyio.abc.Process,
        command: str,
        label: str,
        sandbox: Sandbox | None,
        watch: Watch | None,
        cwd: Path,
    ) -> ToolResult:
        """Follow a started shell as a new job (the caller checked :meth:`refusal`); the
        result ``bash`` returns: the job's id and its first output."""
        ...

    def turn_ended(self) -> None:
        """A turn ended: what running confined jobs created among the sandbox's watched
        names leaves the project now."""
        ...
