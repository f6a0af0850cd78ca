"""``grep``: regex search over files, with context lines and a cap on the output.

ripgrep does the work when ``rg`` is on PATH; otherwise our Python search
(:mod:`.pygrep`: ``.gitignore`` respected, ``.git`` and binary files skipped, paths sorted)
does, in a child process of its own. Both speak ripgrep's ``--json`` lines, read here as they
come: the search stops (the child is killed) once the output cap is reached, after
:data:`SEARCH_TIMEOUT_SECONDS`, or when codebot is interrupted or terminated. So neither a
search with a million matches (ripgrep once held 1.5 GB for a 19 MB file) nor a regex that
backtracks without end (``(a+)+$`` in Python's ``re``) can hold memory or the CPU: the
Python search also limits its own CPU time (``RLIMIT_CPU``), should codebot die first.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import AsyncGenerator, Iterator, Mapping
from contextlib import aclosing
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import anyio

from codebot_mcp.core import jsonutil
from codebot_mcp.core.proc.lookup import child_environment
from codebot_mcp.core.tools.base import Capability, Origin, Permission, ToolInfo, ToolResult
from codebot_mcp.core.tools.boundary import BoundaryError, refuse_special
from codebot_mcp.core.tools.builtin._common import BadArgumentError, integer, string
from codebot_mcp.core.tools.builtin._files import FileTool, glob_match, walk
from codebot_mcp.core.tools.builtin.glob import shown
from codebot_mcp.core.tools.globmatch import PatternError, compiled

MAX_LINES = 250
"""Output lines (matches plus context) before the result is cut."""
MAX_LINE_CHARS = 400
MAX_CONTEXT = 10
MAX_FILE_BYTES = 20 * 1024 * 1024
"""Larger files are skipped (ripgrep's ``--max-filesize`` and the Python search alike)."""
SEARCH_TIMEOUT_SECONDS = 30.0
"""A whole search, ripgrep's or Python's: past it the child is killed and the call fails."""
MAX_EVENT_BYTES = 1024 * 1024
"""One ``--json`` line longer than this (a giant minified line) is skipped, not held."""


class SearchTimeoutError(Exception):
    """The search took longer than :data:`SEARCH_TIMEOUT_SECONDS` (its child was killed)."""


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


def _rg_argv(rg: str, query: Query) -> list[str]:
    argv = [
        rg, "--json", "--no-config", "--hidden", "--no-require-git", "--no-ignore-dot",
        "--no-ignore-global", "--no-ignore-exclude", "--no-ignore-parent", "--sort", "path",
        "--max-filesize", str(MAX_FILE_BYTES), "--glob", "!.git",
        "--max-columns", str(MAX_EVENT_BYTES // 4), "--max-columns-preview",
    ]  # fmt: skip
    if query.ignore_case:
        argv.append("--ignore-case")
    if query.context:
        argv += ["--context", str(query.context)]
    # The file filter is applied below, not with --glob: ripgrep's globs override .gitignore.
    return [*argv, "--regexp", query.regex, "--", str(query.target)]


def _python_argv(query: Query) -> list[str]:
    data = {k: str(v) if isinstance(v, Path) else v for k, v in asdict(query).items()}
    return [sys.executable, "-m", "codebot_mcp.core.tools.builtin.pygrep", json.dumps(data)]


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


def _line(event: dict[str, Any], query: Query) -> Line | None:
    """One ``--json`` event as an output line (None: not a line, or filtered out)."""
    kind = event.get("type")
    if kind not in ("match", "context"):
        return None
    data = event["data"]
    text = data["lines"].get("text")
    if text is None:  # not UTF-8: ripgrep sends base64; show it as the Python search does
        import base64

        text = base64.b64decode(data["lines"]["bytes"]).decode("utf-8", "replace")
    path = Path(data["path"].get("text") or "")
    if query.glob and query.target.is_dir():
        relative = path.relative_to(query.target).as_posix()
        if not _glob_ok(query.glob, relative):
            return None
    return Line(path, int(data["line_number"]), text.rstrip("\r\n"), kind == "match")


async def _events(argv: list[str]) -> AsyncGenerator[dict[str, Any], None]:
    """The JSON lines a search child prints, as they come; the child is killed when the
    reader stops (the cap reached, a timeout, a cancellation)."""
    import subprocess
    import tempfile

    from codebot_mcp.core.proc.spawn import open_process

    with tempfile.TemporaryFile() as errors:  # a file: a chatty stderr never blocks the child
        process = await open_process(
            argv,
            stdin=subprocess.DEVNULL,
            stderr=errors,
            env=child_environment({}),  # no secrets of ours in the search's environment
        )
        produced = False
        try:
            assert process.stdout is not None
            buffer = b""
            skipping = False
            async for chunk in process.stdout:
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if skipping:
                        skipping = False
                        continue
                    if line.strip():
                        event = jsonutil.loads(line)
                        if isinstance(event, dict):
                            produced = True
                            yield event
                if len(buffer) > MAX_EVENT_BYTES:
                    buffer, skipping = b"", True  # one giant line: dropped, not held
            code = await process.wait()
            if code == 2 and not produced:
                errors.seek(0)
                message = errors.read(4096).decode("utf-8", "replace").strip()
                raise BadArgumentError(message or "the search failed")
        finally:
            with anyio.CancelScope(shield=True):
                if process.returncode is None:
                    process.kill()
                    await process.wait()
                await process.aclose()


async def search_lines(query: Query, *, use_rg: bool | None = None) -> list[Line]:
    """At most ``MAX_LINES + 1`` output lines, from ripgrep when available (or ``use_rg``),
    else from the Python search; each in a child that is killed as soon as they are in.

    Raises:
        BadArgument: the regex is invalid.
        SearchTimeoutError: the search took longer than :data:`SEARCH_TIMEOUT_SECONDS`.
    """
    rg = rg_path() if use_rg is not False else None
    if use_rg and rg is None:
        raise BadArgumentError("ripgrep is not installed")
    argv = _rg_argv(rg, query) if rg else _python_argv(query)
    out: list[Line] = []
    with anyio.move_on_after(SEARCH_TIMEOUT_SECONDS) as scope:
        # aclosing: the child is killed the moment the cap is reached, not when the
        # generator is collected (a bare break leaves it running until then)
        async with aclosing(_events(argv)) as events:
            async for event in events:
                line = _line(event, query)
                if line is not None:
                    out.append(line)
                    if len(out) > MAX_LINES:
                        break
    if scope.cancelled_caught:
        raise SearchTimeoutError
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

    @property
    def info(self) -> ToolInfo:
        """Searching changes nothing."""
        return ToolInfo(
            Origin.BUILTIN,
            Permission(Capability.READ, "built-in grep: only reads files"),
            reach=self.reach,
        )

    def query(self, arguments: Mapping[str, Any]) -> Query:
        """Check the arguments.

        Raises:
            BadArgument: one is missing or has the wrong type.
        """
        regex = string(arguments, "pattern")
        where = arguments.get("path")
        glob = arguments.get("glob")
        if where is not None and not isinstance(where, str):
            raise BadArgumentError("'path' must be a string")
        if glob is not None and not isinstance(glob, str):
            raise BadArgumentError("'glob' must be a string")
        context = min(integer(arguments, "context", 0, minimum=0), MAX_CONTEXT)
        ignore_case = arguments.get("ignore_case", False)
        if not isinstance(ignore_case, bool):
            raise BadArgumentError("'ignore_case' must be true or false")
        target = self.boundary.reach(where).resolved if where else self.cwd
        return Query(regex, target, glob or None, context, ignore_case, self.boundary.root)

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        """Run the search."""
        try:
            query = self.query(arguments)
            if not query.target.exists():
                raise BadArgumentError(f"{query.target} does not exist")
            refuse_special(query.target, query.target.stat().st_mode)  # /dev/zero, a FIFO
            if query.glob:
                compiled(query.glob.removeprefix("!"))
            lines = await search_lines(query)
        except (BadArgumentError, BoundaryError, PatternError) as exc:
            return ToolResult(f"grep: {exc}", is_error=True)
        except SearchTimeoutError:
            return ToolResult(
                f"grep: the search took longer than {SEARCH_TIMEOUT_SECONDS:g} s and was "
                "stopped; narrow the path or the pattern (a pattern like (a+)+ can take "
                "forever in the Python search)",
                is_error=True,
            )
        hidden = self.hidden_under(query.target)
        kept = [x for x in lines if not any(x.path.is_relative_to(h) for h in hidden)]
        note = ""
        if len(kept) < len(lines):  # what the sandbox hides is not shown by grep either
            names = ", ".join(str(h) for h in hidden[:3]) + (" …" if len(hidden) > 3 else "")
            note = f"\n[matches in paths hidden from the sandbox (credentials) left out: {names}]"
        lines = kept
        if not lines:
            return ToolResult(f"No matches for {query.regex!r}{note}", data={"matches": 0})
        matches = sum(1 for line in lines if line.match)
        return ToolResult(render(lines, self.cwd) + note, data={"matches": matches})
