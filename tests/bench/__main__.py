"""Run the benchmarks: ``python -m tests.bench [--json FILE] [--runs N] [--only 1,2,...]``."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from tests.bench import (
    acp_cases,
    cases,
    repl_cases,
    rewind_cases,
    speed,
    stream_cases,
    telemetry_cases,
)
from tests.bench.harness import REPO_ROOT, Row, machine, table, write_json
from tests.bench.workspace import Workspace, log_to_stderr


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench", description=__doc__)
    parser.add_argument("--json", type=Path, help="also write the results as JSON to FILE")
    parser.add_argument(
        "--runs", type=int, default=7, help="recorded runs per process case (default 7)"
    )
    parser.add_argument("--only", help="comma-separated target numbers, e.g. 2,7")
    args = parser.parse_args(argv)
    targets = {
        **cases.TARGETS,
        **speed.TARGETS,
        **rewind_cases.TARGETS,
        **stream_cases.TARGETS,
        **repl_cases.TARGETS,
        **acp_cases.TARGETS,
        **telemetry_cases.TARGETS,
    }
    wanted = args.only.split(",") if args.only else list(targets)
    meta = machine()
    _compile_bytecode()
    rows: list[Row] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="codebot-bench-") as tmp:
        for target in wanted:
            fn = targets[target]
            reason = cases.skip_reason(target)
            if reason:
                rows.append(
                    Row(target, f"target {target} skipped", "s", float("nan"), failed=reason)
                )
                continue
            n = cases.runs_for(target, args.runs)
            log_to_stderr(f"target {target}: {n} runs")
            workspace = Workspace(Path(tmp) / f"t{target}")
            try:
                rows.extend(fn(workspace, n, log_to_stderr))
            except Exception as exc:  # a benchmark reports, it does not stop
                rows.append(
                    Row(
                        target,
                        f"target {target} crashed",
                        "s",
                        float("nan"),
                        failed=f"{type(exc).__name__}: {exc}",
                    )
                )
    meta["seconds"] = round(time.perf_counter() - started, 1)
    meta["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    print(table(rows))
    print()
    for row in rows:
        if row.note:
            print(f"[{row.target or 'i'}] {row.case}: {row.note}")
    print(
        f"\n{meta['cpus']} CPUs, load average {meta['loadavg_start']} at start, "
        f"{meta['loadavg_end']} at the end; took {meta['seconds']} s"
    )
    if args.json:
        write_json(args.json, rows, meta)
    return 0


def _compile_bytecode() -> None:
    """Write the bytecode of codebot's own modules first, as an installed package has it.

    With ``PYTHONDONTWRITEBYTECODE`` set (as on CI machines and in some shells) an editable
    checkout would compile every module on every start, while the libraries it is compared
    with (typer, the SDK) were compiled by pip at install: that measures the environment.
    """
    import compileall

    for package in ("cli", "core", "mcpbridge"):
        compileall.compile_dir(str(REPO_ROOT / package), quiet=1)


if __name__ == "__main__":
    sys.exit(main())
