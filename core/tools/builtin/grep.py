"""``grep``: regex search over files, with context lines and a cap on the output.

ripgrep does the work when ``rg`` is on PATH; otherwise a Python walk over the same files
(``.gitignore`` respected, ``.git`` and binary files skipped, paths sorted) does. Both feed one
formatter (ripgrep through ``--json``), so the output is the same either way.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from codebot_mcp.core.proc.lookup import child_environment
from codebot_mcp.core.security.boundary import BoundaryError, refuse_special
from codebot_mcp.core.tools.base import Capability, Permission, ToolResult
from codebot_mcp.core.tools.builtin._common import BadArgument, integer, string
from codebot_mcp.core.tools.builtin._files import FileTool, glob_match, walk
from codebot_mcp.core.tools.builtin.glob import shown

MAX_LINES = 250
"""Output lines (matches plus context) before the result is cut."""
MAX_LINE_CHARS = 400
MAX_CONTEXT = 10
MAX_FILE_BYTES = 20 * 1024 * 1024
"""Larger files are skipped by the Python search (ripgrep's own limits apply to it)."""
RG_TIMEOUT_SECONDS = 60


@dataclass(frozen=True, slots=True)
class Line:
    """One output line: a match or a context line."""

    path: Path
    number: int
    text: str
    match: bool


@dataclass(frozen=True, slots=True)
class Query:
    """A search, as the model asked for it."""

    regex: str
    target: Path
    glob: str | None
    context: int
    ignore_case: bool
    root: Path | None = None
    """Symlinked files whose target leaves the root (and the target) are not searched."""


def rg_path() -> str | None:
    """The ripgrep executable, if installed."""
    return shutil.which("rg")


def _rg_lines(rg: str, query: Query) -> Iterator[Line]:
    argv = [
        rg, "--json", "--no-config", "--hidden", "--no-require-git", "--no-ignore-dot",
        "--no-ignore-global", "--no-ignore-exclude", "--no-ignore-parent", "--sort", "path",
        "--max-filesize", str(MAX_FILE_BYTES), "--glob", "!.git",
    ]  # fmt: skip
    if query.ignore_case:
        argv.append("--ignore-case")
    if query.context:
        argv += ["--context", str(query.context)]
    # The file filter is applied below, not with --glob: ripgrep's globs override .gitignore.
    argv += ["--regexp", query.regex, "--", str(query.target)]
    done = subprocess.run(
        argv,
        capture_output=True,
        timeout=RG_TIMEOUT_SECONDS,
        check=False,
        env=child_environment({}),  # no secrets of ours in ripgrep's environment
    )
    if done.returncode == 2 and not done.stdout:
        raise BadArgument(done.stderr.decode("utf-8", "replace").strip() or "ripgrep failed")
    for raw in done.stdout.splitlines():
        event = json.loads(raw)
        kind = event.get("type")
        if kind not in ("match", "context"):
            continue
        data = event["data"]
        text = data["lines"].get("text")
        if text is None:  # not UTF-8: ripgrep sends base64; show it as the fallback does
            import base64

            text = base64.b64decode(data["lines"]["bytes"]).decode("utf-8", "replace")
        path = Path(data["path"].get("text") or "")
        if query.glob and query.target.is_dir():
            relative = path.relative_to(query.target).as_posix()
            if not _glob_ok(query.glob, relative):
                continue
        yield Line(path, int(data["line_number"]), text.rstrip("\r\n"), kind == "match")


def _files(query: Query) -> Iterator[Path]:
    if query.target.is_file():
        yield query.target
        return
    for path in walk(query.target, query.root):
        relative = path.relative_to(query.target).as_posix()
        if query.glob and not _glob_ok(query.glob, relative):
            continue
        yield path


def _glob_ok(pattern: str, relative: str) -> bool:
    if pattern.startswith("!"):
        return not glob_match(pattern[1:], relative)
    return glob_match(pattern, relative)


def _python_lines(query: Query) -> Iterator[Line]:
    try:
        regex = re.compile(query.regex, re.IGNORECASE if query.ignore_case else 0)
    except re.error as exc:
        raise BadArgument(f"invalid regex {query.regex!r}: {exc}") from None
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
            yield Line(path, j + 1, lines[j], wanted[j])


def search(query: Query, *, use_rg: bool | None = None) -> list[Line]:
    """All output lines, from ripgrep when available (or ``use_rg``), else from Python.

    Raises:
        BadArgument: the regex is invalid.
    """
    rg = rg_path() if use_rg is not False else None
    if use_rg and rg is None:
        raise BadArgument("ripgrep is not installed")
    source = _rg_lines(rg, query) if rg else _python_lines(query)
    out: list[Line] = []
    for line in source:
        out.append(line)
        if len(out) > MAX_LINES:
            break
    return out


def render(lines: list[Line], cwd: Path) -> str:
    """``path:12:text`` for matches, ``path-13-text`` for context, ``--`` between groups."""
    out: list[str] = []
    previous: Line | None = None
    for line in lines[:MAX_LINES]:
        if previous is not None and (
            previous.path != line.path or line.number != previous.number + 1
        ):
            out.append("--")
        text = line.text
        if len(text) > MAX_LINE_CHARS:
            text = text[:MAX_LINE_CHARS] + " [line cut]"
        mark = ":" if line.match else "-"
        out.append(f"{shown(line.path, cwd)}{mark}{line.number}{mark}{text}")
        previous = line
    if len(lines) > MAX_LINES:
        out.append(f"[output cut at {MAX_LINES} lines; narrow the pattern, path or glob]")
    return "\n".join(out)


class GrepTool(FileTool):
    """Search file contents by regex."""

    name = "grep"
    description = (
        "Search file contents with a regular expression (ripgrep syntax). path is a file or "
        "directory (default: the working directory); glob filters file names (e.g. '*.py'); "
        "context: lines shown around each match; ignore_case. Files ignored by .gitignore are "
        f"skipped. Output: path:line:text, at most {MAX_LINES} lines."
    )

    def schema(self) -> dict[str, Any]:
        """Arguments: ``pattern``; optional ``path``, ``glob``, ``context``, ``ignore_case``."""
        return {
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression."},
                "path": {"type": "string", "description": "File or directory (default cwd)."},
                "glob": {"type": "string", "description": "File filter, e.g. '*.py'."},
                "context": {"type": "integer", "minimum": 0, "maximum": MAX_CONTEXT},
                "ignore_case": {"type": "boolean"},
            },
            "required": ["pattern"],
        }

    def permission(self) -> Permission:
        """Searching changes nothing."""
        return Permission(Capability.READ, "built-in grep: only reads files")

    def query(self, arguments: Mapping[str, Any]) -> Query:
        """Check the arguments.

        Raises:
            BadArgument: one is missing or has the wrong type.
        """
        regex = string(arguments, "pattern")
        where = arguments.get("path")
        glob = arguments.get("glob")
        if where is not None and not isinstance(where, str):
            raise BadArgument("'path' must be a string")
        if glob is not None and not isinstance(glob, str):
            raise BadArgument("'glob' must be a string")
        context = min(integer(arguments, "context", 0, minimum=0), MAX_CONTEXT)
        ignore_case = arguments.get("ignore_case", False)
        if not isinstance(ignore_case, bool):
            raise BadArgument("'ignore_case' must be true or false")
        target = self.boundary.reach(where).resolved if where else self.cwd
        return Query(regex, target, glob or None, context, ignore_case, self.boundary.root)

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        """Run the search."""
        try:
            query = self.query(arguments)
            if not query.target.exists():
                raise BadArgument(f"{query.target} does not exist")
            refuse_special(query.target, query.target.stat().st_mode)  # /dev/zero, a FIFO
            lines = await anyio.to_thread.run_sync(search, query)
        except (BadArgument, BoundaryError) as exc:
            return ToolResult(f"grep: {exc}", is_error=True)
        except subprocess.TimeoutExpired:
            return ToolResult(
                f"grep: the search took longer than {RG_TIMEOUT_SECONDS}s; narrow the path",
                is_error=True,
            )
        if not lines:
            return ToolResult(f"No matches for {query.regex!r}", data={"matches": 0})
        matches = sum(1 for line in lines if line.match)
        return ToolResult(render(lines, self.cwd), data={"matches": matches})
