"""Background jobs: ``bash`` commands started with ``run_in_background`` that outlive the call.

A job is a shell in its own process group, started (confined or not, after the same approval)
by :class:`core.tools.builtin.bash.BashTool` through the kernel's protocol
(:class:`core.tools.background.BackgroundJobs`, which :class:`JobTable` implements);
:class:`JobTable` follows it from then on in a task group of its own, entered for the whole
chat (``cli.chat_runtime.open_runtime``), so a job outlives the turn that started it and a
Ctrl-C of a turn. ``bash_output`` reads what a job printed since the last look, ``bash_kill``
ends it (:mod:`.jobtools`), ``/jobs`` lists them.

Bounds: at most :data:`MAX_RUNNING` jobs run at once; each keeps its last
:data:`OUTPUT_BYTES` of output (older output is dropped and the next read says how much);
finished jobs stay listed up to :data:`KEEP_FINISHED`.

Jobs belong to the top session: a subagent's ``bash`` starts them in the same table (they
outlive the subagent, are listed in ``/jobs`` and die with the session). When the table
closes (the chat ends, whatever ended it: ``/exit``, the end of ``-p``, Ctrl-C, SIGTERM,
SIGHUP) every running job's whole tree gets SIGTERM, then SIGKILL after
:data:`KILL_GRACE_SECONDS`; a job is also *mortal* for the console script's exit sweep
(:func:`core.proc.descendants.mortal`), the net under that.

A confined job's new files among the sandbox's watched names (``.git``, ``.codebot`` ...)
are moved out of the project (:meth:`core.sandbox.confinement.Sandbox.quarantine`) when the
job ends and at the end of every turn while it runs (:meth:`JobTable.turn_ended`, called by
the agent before the turn's checkpoint), so nothing unconfined reads them meanwhile; the next
``bash_output`` of that job says so.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from codebot_mcp.core.proc import descendants
from codebot_mcp.core.tools.base import ToolResult

if TYPE_CHECKING:
    from codebot_mcp.core.sandbox.confinement import Sandbox
    from codebot_mcp.core.sandbox.guarded import Watch

MAX_RUNNING = 8
"""Jobs running at once; one more is refused (the model is told to end one first)."""
OUTPUT_BYTES = 1_000_000
"""Per job: the last megabyte is kept; a dev server's log would otherwise grow forever."""
READ_BYTES = 30_000
"""At most this much per ``bash_output`` (the newest part; the rest is said to be skipped)."""
KEEP_FINISHED = 32
"""Finished jobs still listed (``/jobs``, ``bash_output``); older ones are forgotten."""
KILL_GRACE_SECONDS = 2.0
"""After SIGTERM, a job's processes get this long before SIGKILL."""
EXIT_GRACE_SECONDS = 0.5
"""After the shell exits, leftovers holding the output pipe get this long, then SIGKILL."""
PEEK_SECONDS = 1.0
"""How long ``bash`` waits for a new job's first output before returning its id."""
MAX_WAIT_SECONDS = 60
"""The longest ``bash_output`` waits for new output (``wait``)."""


class Ring:
    """The last ``limit`` bytes of a stream, with absolute offsets for readers."""

    def __init__(self, limit: int = OUTPUT_BYTES) -> None:
        self.limit = limit
        self.data = bytearray()
        self.start = 0
        """The offset (in the whole stream) of ``data[0]``."""

    @property
    def total(self) -> int:
        """Bytes written so far, kept or not."""
        return self.start + len(self.data)

    def add(self, chunk: bytes) -> None:
        """Append ``chunk``, dropping the oldest bytes beyond the limit."""
        self.data += chunk
        extra = len(self.data) - self.limit
        if extra > 0:
            del self.data[:extra]
            self.start += extra

    def since(self, offset: int) -> tuple[bytes, int]:
        """What was written from ``offset`` on, and how many of those bytes were dropped."""
        dropped = max(0, self.start - offset)
        return bytes(self.data[max(0, offset - self.start) :]), dropped


@dataclass
class Job:
    """One background command."""

    id: str
    command: str
    process: anyio.abc.Process
    sandbox_label: str
    """The sandbox mode it runs under, or "off"."""
    sandbox: Sandbox | None = None
    watch: Watch | None = None
    cwd: Path | None = None
    """Where it runs (the sandbox's notes name paths relative to it)."""
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    state: str = "running"
    """``running``, ``exited`` (see :attr:`exit_code`) or ``killed``."""
    exit_code: int | None = None
    output: Ring = field(default_factory=Ring)
    cursor: int = 0
    """How far ``bash_output`` has read."""
    notes: list[str] = field(default_factory=list[str])
    """What the next read must say (files the sandbox moved away)."""
    changed: anyio.Event = field(default_factory=anyio.Event)
    """Set when output arrives or the job ends (``bash_output``'s ``wait``)."""
    eof: anyio.Event = field(default_factory=anyio.Event)
    finished: anyio.Event = field(default_factory=anyio.Event)

    @property
    def pid(self) -> int:
        """The shell's pid, which leads the job's process group."""
        return self.process.pid

    @property
    def running(self) -> bool:
        """Not ended yet."""
        return self.state == "running"

    def runtime(self) -> float:
        """Seconds it ran (so far)."""
        return (self.ended if self.ended is not None else time.monotonic()) - self.started

    def status(self) -> str:
        """``running``, ``exited 0``, ``exited 2`` or ``killed``."""
        if self.state == "exited":
            return f"exited {self.exit_code}"
        return self.state

    def wake(self) -> None:
        """Tell waiters something changed (output, or the end)."""
        self.changed.set()
        self.changed = anyio.Event()

    def read(self, pattern: re.Pattern[str] | None = None, limit: int = READ_BYTES) -> str:
        """What it printed since the last read (only lines matching ``pattern``, if given);
        the read moves on to the end, also past what was skipped or filtered out."""
        data, dropped = self.output.since(self.cursor)
        self.cursor = self.output.total
        parts: list[str] = []
        if dropped:
            parts.append(
                f"[... {dropped} bytes of older output dropped: a job keeps its last "
                f"{self.output.limit} bytes ...]"
            )
        text = data.decode("utf-8", errors="replace")
        if pattern is not None:
            text = "".join(line for line in text.splitlines(True) if pattern.search(line))
        encoded = text.encode()
        if len(encoded) > limit:
            cut = len(encoded) - limit
            text = encoded[cut:].decode("utf-8", errors="replace")
            parts.append(f"[... {cut} bytes skipped: one read returns the last {limit} ...]")
        parts.append(text.rstrip("\n"))
        return "\n".join(p for p in parts if p)

    def summary(self) -> dict[str, Any]:
        """As ``--json`` and stream-json show it."""
        return {
            "id": self.id,
            "command": self.command,
            "state": self.state,
            "exit_code": self.exit_code,
            "seconds": round(self.runtime(), 3),
            "output_bytes": self.output.total,
            "sandbox": self.sandbox_label,
        }


def _refusal_note(job: Job) -> None:
    """A confined job that failed the way the sandbox refuses things: the note ``bash`` adds
    to such a result, for the next read (it says how to run it outside)."""
    sandbox = job.sandbox
    if sandbox is None or job.state != "exited" or not job.exit_code:
        return
    text = job.output.data[-READ_BYTES:].decode("utf-8", errors="replace")
    note = sandbox.refusal_note(text, job.command, job.cwd)
    if note is not None:
        job.notes.append(note)


def _created_note(job: Job) -> None:
    """Move what the confined job created of the watched names out of the project."""
    sandbox, watch = job.sandbox, job.watch
    if sandbox is None or watch is None:
        return
    created = [p for p in watch.created() if p.exists() or p.is_symlink()]
    if created:
        job.notes.append(sandbox.created_note(sandbox.quarantine(created)))


class JobTable:
    """The session's background jobs (see the module docstring). An async context manager:
    jobs can start only while it is entered, and leaving it kills every running job."""

    def __init__(self, max_running: int = MAX_RUNNING) -> None:
        self.max_running = max_running
        self.jobs: dict[str, Job] = {}
        self._next = 1
        self._group: anyio.abc.TaskGroup | None = None

    @property
    def open(self) -> bool:
        """Jobs can start (the table is entered)."""
        return self._group is not None

    async def __aenter__(self) -> JobTable:
        group = anyio.create_task_group()
        await group.__aenter__()
        self._group = group
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        group, self._group = self._group, None
        with anyio.CancelScope(shield=True):
            await self.kill_all()
        if group is not None:
            group.cancel_scope.cancel()
            await group.__aexit__(None, None, None)
        return None

    def running(self) -> list[Job]:
        """The jobs still running, oldest first."""
        return [j for j in self.jobs.values() if j.running]

    def refusal(self) -> str | None:
        """Why no job can start now (None: one can)."""
        if self._group is None:
            return "background jobs run only in a chat session (codebot chat)"
        if len(self.running()) >= self.max_running:
            ids = ", ".join(j.id for j in self.running())
            return (
                f"{self.max_running} background jobs are running already ({ids}); end one "
                "with bash_kill first"
            )
        return None

    def find(self, job_id: Any) -> Job | None:
        """The job with that id (``"3"``, ``3`` or ``"job 3"``), if any."""
        key = str(job_id).strip().removeprefix("job").strip()
        return self.jobs.get(key)

    def adopt(
        self,
        process: anyio.abc.Process,
        command: str,
        label: str,
        sandbox: Sandbox | None = None,
        watch: Watch | None = None,
        cwd: Path | None = None,
    ) -> Job:
        """Follow a started shell as a new job (the caller checked :meth:`refusal`)."""
        assert self._group is not None
        job = Job(str(self._next), command, process, label, sandbox, watch, cwd)
        self._next += 1
        self.jobs[job.id] = job
        descendants.mortal(process.pid)
        self._forget_old()
        self._group.start_soon(self._follow, job)
        return job

    async def start(
        self,
        process: anyio.abc.Process,
        command: str,
        label: str,
        sandbox: Sandbox | None,
        watch: Watch | None,
        cwd: Path,
    ) -> ToolResult:
        """Follow a started shell as a new job (:meth:`adopt`); what ``bash`` returns: the
        job's id and its first output (if any comes soon)."""
        job = self.adopt(process, command, label, sandbox, watch, cwd)
        await self.peek(job)
        first = job.read()
        state = "is running" if job.running else f"ended already ({job.status()})"
        head = (
            f"Started background job {job.id}; it {state}. Read its output with "
            f'bash_output {{"job_id": "{job.id}"}}, end it with bash_kill.'
        )
        text = f"{head}\n{first}" if first else f"{head}\n[no output yet]"
        if not job.running and job.notes:  # ended at once: what the sandbox says about it
            text = "\n".join([text, *job.notes])
            job.notes.clear()
        data = {"sandbox": job.sandbox_label, "job_id": job.id, "state": job.state}
        return ToolResult(text, data=data)

    async def peek(self, job: Job, seconds: float = PEEK_SECONDS) -> None:
        """Wait until the job printed something or ended, at most ``seconds``."""
        with anyio.move_on_after(seconds):
            while job.running and job.output.total == job.cursor:
                await job.changed.wait()

    async def wait(self, job: Job, seconds: float) -> None:
        """Wait until new output arrives or the job ends, at most ``seconds``."""
        if seconds <= 0 or not job.running or job.output.total > job.cursor:
            return
        with anyio.move_on_after(seconds):
            await job.changed.wait()

    async def kill(self, job: Job, grace: float = KILL_GRACE_SECONDS) -> bool:
        """End ``job``'s whole tree: SIGTERM, then SIGKILL after ``grace``. False: it had
        ended already."""
        if not job.running:
            return False
        await self._stop([job], grace)
        return True

    async def kill_all(self, grace: float = KILL_GRACE_SECONDS) -> list[Job]:
        """End every running job (together: one grace for all); the jobs that were running."""
        jobs = self.running()
        if jobs:
            await self._stop(jobs, grace)
        return jobs

    async def _stop(self, jobs: list[Job], grace: float) -> None:
        import signal

        trees = {job.id: descendants.tree(job.pid) for job in jobs}
        for job in jobs:
            job.state = "killed"
            descendants.signal_tree(job.pid, trees[job.id], signal.SIGTERM)
        with anyio.move_on_after(grace):
            for job in jobs:
                await job.process.wait()
        for job in jobs:  # what ignored SIGTERM, and what it started meanwhile
            descendants.signal_tree(
                job.pid, trees[job.id] + descendants.tree(job.pid), signal.SIGKILL
            )
        with anyio.move_on_after(grace):
            for job in jobs:
                await job.finished.wait()

    def turn_ended(self) -> None:
        """A turn ended: what running confined jobs created of the watched names is moved
        out of the project now, before the turn's checkpoint and anything unconfined."""
        for job in self.running():
            _created_note(job)

    def _forget_old(self) -> None:
        done = [j for j in self.jobs.values() if not j.running]
        for job in done[: max(0, len(done) - KEEP_FINISHED)]:
            del self.jobs[job.id]

    async def _pump(self, job: Job) -> None:
        stdout = job.process.stdout
        assert stdout is not None
        try:
            async for data in stdout:
                job.output.add(data)
                job.wake()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass
        finally:
            job.eof.set()

    async def _follow(self, job: Job) -> None:
        """Read the job's output until it ends; then reap it and tidy up after it."""
        import signal

        process = job.process
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._pump, job)
                await process.wait()
                with anyio.move_on_after(EXIT_GRACE_SECONDS):
                    await job.eof.wait()
                # Leftovers (`cmd &`) that hold the pipe end with the shell, as for bash.
                descendants.signal_tree(job.pid, descendants.tree(job.pid), signal.SIGKILL)
                with anyio.move_on_after(EXIT_GRACE_SECONDS):
                    await job.eof.wait()
                tg.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                with anyio.move_on_after(5):
                    await process.aclose()
                job.ended = time.monotonic()
                if job.state == "running":
                    job.state = "exited"
                job.exit_code = process.returncode
                descendants.forget_mortal(job.pid)
                descendants.reap_adopted()
                _refusal_note(job)
                _created_note(job)
                job.wake()
                job.finished.set()
