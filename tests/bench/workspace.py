"""What every bench target shares: the temp workspace, server entries, interleaved runs."""

from __future__ import annotations

import json
import os
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.bench.harness import EVERYTHING_BIN, PYTHON, REPO_ROOT, Run

Log = Callable[[str], None]


def mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


class Workspace:
    """Temp dirs: ``CODEBOT_HOME``, one project directory per scenario, the child env."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.home.mkdir(parents=True)
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("OPENAI_", "CODEBOT_")) and k not in ("PYTHONPATH",)
        }
        env.update(
            CODEBOT_HOME=str(self.home),
            CODEBOT_TRUST_PROJECT="1",
            NO_PROXY="127.0.0.1,localhost",
            no_proxy="127.0.0.1,localhost",
        )
        self.env = env

    def project(self, name: str, settings: dict[str, Any]) -> Path:
        directory = self.root / name
        (directory / ".codebot").mkdir(parents=True)
        (directory / ".codebot" / "settings.json").write_text(json.dumps(settings, indent=2))
        return directory


def everything_entry() -> dict[str, Any]:
    return {"command": str(EVERYTHING_BIN), "args": ["stdio"]}


def sleepy_entry(name: str, delay: float, *extra: str) -> dict[str, Any]:
    args = ["-m", "tests.servers.sleepy_raw", "--delay", f"{delay:g}", "--name", name, *extra]
    return {"command": PYTHON, "args": args, "cwd": str(REPO_ROOT)}


def run_failures(runs: list[Run], expect: int = 0) -> str:
    bad = [r for r in runs if r.returncode != expect]
    if not bad:
        return ""
    r = bad[0]
    tail = (r.stderr.strip().splitlines() or [""])[-1][:120]
    return f"{len(bad)}/{len(runs)} runs exited {r.returncode}: {tail}"


def interleave(
    n: int, variants: dict[str, Callable[[], Run]], log: Log, label: str
) -> dict[str, list[Run]]:
    """Run every variant once unrecorded, then ``n`` recorded rounds, variants in turn."""
    for fn in variants.values():
        fn()
    out: dict[str, list[Run]] = {k: [] for k in variants}
    for i in range(n):
        for key, fn in variants.items():
            out[key].append(fn())
        log(f"  {label}: round {i + 1}/{n}")
    return out


def walls(runs: list[Run]) -> list[float]:
    return [r.wall for r in runs]


def log_to_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
