"""Timing tools for ``make bench``: timed child processes, medians, the results table."""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
EVERYTHING_BIN = REPO_ROOT / "tests" / "node" / "node_modules" / ".bin" / "mcp-server-everything"


def codebot_argv() -> list[str]:
    """The installed console script next to this interpreter (what users run)."""
    script = Path(PYTHON).parent / "codebot"
    return [str(script)] if script.exists() else [PYTHON, "-m", "codebot_mcp.cli"]


@dataclass
class Run:
    """One finished child process."""

    argv: list[str]
    wall: float
    """Seconds from just before the spawn to the child's exit (reaped)."""
    returncode: int
    cpu: float
    """User + system CPU seconds of the child and every descendant it reaped."""
    started: float
    ended: float
    stdout: str
    stderr: str
    peak_rss_kb: int | None = None
    """Peak RSS of the child itself (VmHWM, polled), when asked for."""


def run(
    argv: Sequence[str],
    *,
    env: dict[str, str],
    cwd: Path | None = None,
    stdin_text: str | None = None,
    poll_rss: bool = False,
) -> Run:
    """Run ``argv`` to completion; wall time by ``perf_counter`` around spawn and reap.

    stdout/stderr go to temporary files (no reader threads competing for the CPU); stdin is a
    file too, or /dev/null.
    """
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.TemporaryFile() as inp,
    ):
        if stdin_text is not None:
            inp.write(stdin_text.encode())
            inp.seek(0)
        stdin: Any = inp if stdin_text is not None else subprocess.DEVNULL
        peak = [0]
        stop = threading.Event()
        started = time.perf_counter()
        process = subprocess.Popen(
            list(argv), stdin=stdin, stdout=out, stderr=err, env=env, cwd=cwd, close_fds=True
        )
        poller = None
        if poll_rss:
            poller = threading.Thread(target=_poll_hwm, args=(process.pid, stop, peak))
            poller.start()
        _, status, usage = os.wait4(process.pid, 0)
        ended = time.perf_counter()
        process.returncode = os.waitstatus_to_exitcode(status)
        stop.set()
        if poller is not None:
            poller.join()
        out.seek(0)
        err.seek(0)
        return Run(
            argv=list(argv),
            wall=ended - started,
            returncode=process.returncode,
            cpu=usage.ru_utime + usage.ru_stime,
            started=started,
            ended=ended,
            stdout=out.read().decode(errors="replace"),
            stderr=err.read().decode(errors="replace"),
            peak_rss_kb=peak[0] if poll_rss else None,
        )


_HWM = re.compile(rb"VmHWM:\s+(\d+)")


def _poll_hwm(pid: int, stop: threading.Event, peak: list[int]) -> None:
    """Track the child's own peak RSS (VmHWM never decreases) until it exits.

    ``wait4``'s ``ru_maxrss`` (and ``/usr/bin/time -f %M``) would report the largest process
    of the whole tree, i.e. the ~70 MB node server, for codebot and the SDK script alike.
    """
    path = f"/proc/{pid}/status"
    while not stop.is_set():
        try:
            with open(path, "rb") as fh:
                match = _HWM.search(fh.read())
        except OSError:
            return
        if match is None:  # a zombie: its memory is gone, the last reading stands
            return
        peak[0] = max(peak[0], int(match.group(1)))
        stop.wait(0.001)


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


@dataclass
class Row:
    """One line of the table."""

    target: str
    """"1".."7", or "" for an information row."""
    case: str
    unit: str
    """"s", "ms", "us" or "MB": how values are shown (they are stored in that unit)."""
    codebot: float
    baseline: float | None = None
    limit: float | None = None
    """For a ratio target the largest allowed ratio; for an absolute target the largest value."""
    absolute: bool = False
    note: str = ""
    codebot_samples: list[float] = field(default_factory=list[float])
    baseline_samples: list[float] = field(default_factory=list[float])
    failed: str = ""
    """Why the measurement is not valid (a child failed), empty when fine."""

    @property
    def ratio(self) -> float | None:
        if self.baseline is None or not self.baseline:
            return None
        return self.codebot / self.baseline

    @property
    def met(self) -> bool | None:
        if self.failed:
            return False
        if self.limit is None:
            return None
        value = self.codebot if self.absolute else self.ratio
        return value is not None and value <= self.limit

    def target_text(self) -> str:
        if self.limit is None:
            return "info"
        if self.absolute:
            return f"<= {fmt(self.limit, self.unit)}"
        return f"<= {self.limit:.2f}x"

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(ratio=self.ratio, met=self.met, target_text=self.target_text())
        return data


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "s":
        return f"{value:.3f} s"
    if unit == "ms":
        return f"{value:.2f} ms" if value < 100 else f"{value:.0f} ms"
    if unit == "us":
        return f"{value:.2f} us"
    if unit == "MB":
        return f"{value:.1f} MB"
    return f"{value:g} {unit}"


def table(rows: Sequence[Row]) -> str:
    header = ["#", "case", "codebot", "baseline", "ratio", "target", "met"]
    lines = []
    for r in rows:
        met = r.met
        lines.append(
            [
                r.target,
                r.case,
                fmt(r.codebot, r.unit),
                fmt(r.baseline, r.unit),
                f"{r.ratio:.2f}x" if r.ratio is not None else "-",
                r.target_text(),
                ("FAILED: " + r.failed)
                if r.failed
                else ("-" if met is None else ("yes" if met else "NO")),
            ]
        )
    widths = [max(len(str(x)) for x in col) for col in zip(header, *lines, strict=False)]
    right = {2, 3, 4}

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    out = [line(header), line(["-" * w for w in widths])]
    out += [line(cells) for cells in lines]
    return "\n".join(out)


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    try:
        load = os.getloadavg()
    except OSError:
        load = (float("nan"),) * 3
    return {
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "loadavg_start": [round(x, 2) for x in load],
        "time": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def write_json(path: Path, rows: Sequence[Row], meta: dict[str, Any]) -> None:
    path.write_text(json.dumps({"machine": meta, "rows": [r.as_json() for r in rows]}, indent=2))
