"""The bench targets of issue 6 by number, and how many runs and what prerequisites each needs.

The targets live beside this module by what they time: ``cli_cases`` (codebot's commands as
processes), ``session_cases`` (a chat session's own work), ``agent_cases`` (issue 13); issue 15's
are in ``speed``; issue 21's sandbox cost in ``sandbox_cases``. Every target is measured against
a baseline run in the same invocation.
"""

from __future__ import annotations

from collections.abc import Callable

from tests.bench import agent_cases, cli_cases, sandbox_cases, session_cases
from tests.bench.harness import EVERYTHING_BIN, Row
from tests.bench.workspace import Log, Workspace

TARGETS: dict[str, Callable[[Workspace, int, Log], list[Row]]] = {
    "1": cli_cases.target_1,
    "2": cli_cases.target_2,
    "3": cli_cases.target_3,
    "4": cli_cases.target_4,
    "5": session_cases.target_5,
    "6": session_cases.target_6,
    "7": cli_cases.target_7,
    "8": agent_cases.target_8,
    "9": agent_cases.target_9,
    "10": agent_cases.target_10,
    "15": sandbox_cases.target_15,
    "20": sandbox_cases.target_20,
}


def runs_for(target: str, base: int) -> int:
    """Cheap targets get more runs; none gets fewer than 5 (unless ``--runs`` asks).

    1 and 13 time starts of about 0.1 s, where a shared machine's speed swings by a third
    within a minute: 29 and 21 samples (0.2 s a round) keep their medians steady."""
    if target == "1":
        return 4 * base + 1
    if target == "13":
        return 3 * base
    if target == "2":  # the closest race, and the noisiest on a shared machine
        return base + 2
    if target in ("4", "5", "7", "11", "14"):
        return max(min(base, 5), base - 2)
    return base


def skip_reason(target: str) -> str:
    if target in ("2", "4", "7", "11", "12", "13", "14") and not EVERYTHING_BIN.exists():
        return f"{EVERYTHING_BIN} is missing (run `make install`)"
    return ""
