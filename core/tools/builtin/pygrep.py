"""The Python search of ``grep`` (when ripgrep is not installed), run as a child process:
``python -m codebot_mcp.core.tools.builtin.pygrep QUERY_JSON`` prints ripgrep's ``--json``
events (``match`` and ``context`` lines), one per line, flushed per file.

It runs apart from codebot because Python's ``re`` backtracks: a pattern like ``(a+)+$``
against a long line can take hours, holding the GIL so that even a signal handler of the
process doing it cannot run. As a child it is killed when ``grep`` stops reading (the cap, its
timeout, an interrupt), and it limits its own CPU time (``RLIMIT_CPU``) should codebot die
without killing it.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

CPU_SECONDS = 60
"""The kernel stops this process after this much CPU time, whatever else happens."""


def _limit_cpu() -> None:
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS + 5))
    except (ImportError, ValueError, OSError):  # pragma: no cover - not Unix, or not allowed
        pass


def _event(kind: str, path: Path, number: int, text: str) -> str:
    data = {"path": {"text": str(path)}, "lines": {"text": text + "\n"}, "line_number": number}
    return json.dumps({"type": kind, "data": data})


def main(argv: list[str]) -> int:
    _limit_cpu()
    from codebot_mcp.core.tools.builtin.grep import MAX_FILE_BYTES, Query, _files

    raw: dict[str, Any] = json.loads(argv[0])
    query = Query(
        raw["regex"],
        Path(raw["target"]),
        raw["glob"],
        int(raw["context"]),
        bool(raw["ignore_case"]),
        Path(raw["root"]) if raw.get("root") else None,
    )
    try:
        regex = re.compile(query.regex, re.IGNORECASE if query.ignore_case else 0)
    except re.error as exc:
        sys.stderr.write(f"invalid regex {query.regex!r}: {exc}\n")
        return 2
    out = sys.stdout
    for path in _files(query):
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                continue
            data = path.read_bytes()
        except OSError:  # boundary: unreadable files are skipped, as ripgrep does
            continue
        if b"\0" in data:
            continue
        lines = data.decode("utf-8", "replace").splitlines()
        hits = [i for i, line in enumerate(lines) if regex.search(line)]
        if not hits:
            continue
        wanted: dict[int, bool] = {}
        for i in hits:
            for j in range(max(0, i - query.context), min(len(lines), i + query.context + 1)):
                wanted.setdefault(j, False)
            wanted[i] = True
        for j in sorted(wanted):
            out.write(_event("match" if wanted[j] else "context", path, j + 1, lines[j]) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
