"""``bash_output`` and ``bash_kill``: follow and end the background jobs ``bash`` started.

Both act only on the session's own jobs (:class:`core.jobs.jobtable.JobTable`), so neither asks
for approval: reading a job's output is a read; ending a job the session started touches
nothing else (the capability is read, so plan mode keeps them too). They reach a session
through the kernel's registry (:func:`core.tools.featuretools.register_tools`): offered after
the session's own tools whenever the session has a job table.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from codebot_mcp.core.jobs.jobtable import MAX_WAIT_SECONDS, Job, JobTable
from codebot_mcp.core.tools.base import (
    Capability,
    Origin,
    Permission,
    Tool,
    ToolInfo,
    ToolResult,
)
from codebot_mcp.core.tools.featuretools import Place, ToolContext, register_tools

_JOB_ID = {"type": "string"}


def _job(jobs: JobTable, tool: str, arguments: Mapping[str, Any]) -> Job | ToolResult:
    """The job ``job_id`` names, or the error result saying which ids exist."""
    job_id = arguments.get("job_id")
    if job_id is None:  # Claude Code's names for it
        job_id = arguments.get("bash_id", arguments.get("shell_id"))
    if not isinstance(job_id, (str, int)) or isinstance(job_id, bool) or str(job_id) == "":
        return ToolResult(f"{tool}: 'job_id' is required (the id bash returned)", is_error=True)
    job = jobs.find(job_id)
    if job is None:
        known = ", ".join(jobs.jobs) or "none"
        return ToolResult(
            f"{tool}: no background job {str(job_id)[:40]!r} in this session (jobs: {known})",
            is_error=True,
        )
    return job


def _state_line(job: Job) -> str:
    seconds = f"{job.runtime():.1f}s"
    if job.state == "running":
        return f"[job {job.id} is running ({seconds})]"
    if job.state == "killed":
        return f"[job {job.id} was killed after {seconds}]"
    return f"[job {job.id} exited with code {job.exit_code} after {seconds}]"


class BashOutputTool:
    """What a background job printed since the last look, and whether it ended."""

    name = "bash_output"
    description = "A background job's output since the last call, and whether it ended (exit code)."
    """Kept short (every request carries it); the result says the rest (limits, state)."""

    def __init__(self, jobs: JobTable) -> None:
        self.jobs = jobs

    def schema(self) -> dict[str, Any]:
        """Arguments: ``job_id``, optional ``filter`` and ``wait``."""
        return {
            "type": "object",
            "properties": {
                "job_id": _JOB_ID,
                "filter": {"type": "string", "description": "Regex: only matching lines."},
                "wait": {
                    "type": "integer",
                    "maximum": MAX_WAIT_SECONDS,
                    "description": "Seconds to wait for new output.",
                },
            },
            "required": ["job_id"],
        }

    @property
    def info(self) -> ToolInfo:
        """It reads what the session's own job printed."""
        return ToolInfo(
            Origin.BUILTIN,
            Permission(Capability.READ, "built-in bash_output: reads a background job's output"),
        )

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        """The new output, then a line with the job's state."""
        job = _job(self.jobs, self.name, arguments)
        if isinstance(job, ToolResult):
            return job
        pattern = None
        raw = arguments.get("filter")
        if raw not in (None, ""):
            try:
                pattern = re.compile(str(raw))
            except re.error as exc:
                return ToolResult(
                    f"bash_output: 'filter' is not a regular expression: {exc}", is_error=True
                )
        wait = arguments.get("wait", 0)
        if isinstance(wait, bool) or not isinstance(wait, (int, float)) or wait < 0:
            return ToolResult("bash_output: 'wait' must be a number of seconds >= 0", is_error=True)
        await self.jobs.wait(job, min(float(wait), MAX_WAIT_SECONDS))
        text = job.read(pattern)
        notes = job.notes[:]
        job.notes.clear()
        parts = [text or "[no new output]", *notes, _state_line(job)]
        return ToolResult("\n".join(parts), data={"job": job.summary()})


class BashKillTool:
    """End a background job and everything it started."""

    name = "bash_kill"
    description = "End a background job and every process it started."

    def __init__(self, jobs: JobTable) -> None:
        self.jobs = jobs

    def schema(self) -> dict[str, Any]:
        """Arguments: ``job_id``."""
        return {"type": "object", "properties": {"job_id": _JOB_ID}, "required": ["job_id"]}

    @property
    def info(self) -> ToolInfo:
        """It ends only a job this session started."""
        return ToolInfo(
            Origin.BUILTIN,
            Permission(
                Capability.READ, "built-in bash_kill: ends a background job this session started"
            ),
        )

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        """Kill it; the result says what it printed last and how it ended."""
        job = _job(self.jobs, self.name, arguments)
        if isinstance(job, ToolResult):
            return job
        killed = await self.jobs.kill(job)
        tail = job.read()
        head = f"Killed background job {job.id}." if killed else f"Job {job.id} had ended."
        parts = [head, tail, _state_line(job)]
        return ToolResult("\n".join(p for p in parts if p), data={"job": job.summary()})


def job_tools(context: ToolContext) -> list[Tool]:
    """``bash_output`` and ``bash_kill`` over the session's job table (none without one)."""
    jobs = context.get(JobTable)
    return [] if jobs is None else [BashOutputTool(jobs), BashKillTool(jobs)]


register_tools("jobs", job_tools, place=Place.AFTER_SESSION)
