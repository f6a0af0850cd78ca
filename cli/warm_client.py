"""The client half of the warm path, without Typer: asking the holder (``mcp list``, ``mcp call``)
and :func:`fast_call`, a warm ``mcp call SERVER TOOL [key=value ...]`` that skips building the
command line parser (Typer's import and command tree are most of a warm call's time).

Everything here is the standard library and ``core``; the answers are rendered by the same code
as the cold path's, so output and exit codes are identical. Whatever :func:`fast_call` does not
recognise, or any doubt before the holder accepted the call, goes to the ordinary path, with what
it did: the settings it read (:func:`effective_settings`) and whether it asked the holder
(:func:`ask_holder` then does not ask again). One invocation reads the settings once and asks
the holder at most once.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codebot_mcp.core.errors import CodebotError, ExitCode, ServerError, UsageError

if TYPE_CHECKING:
    from collections.abc import Callable

    from codebot_mcp.cli.runtime import Globals
    from codebot_mcp.core.config import trust
    from codebot_mcp.core.config.effective import Effective
    from codebot_mcp.core.config.settings import Settings
    from codebot_mcp.core.tools.base import ToolResult

__all__ = [
    "ask_holder",
    "effective_settings",
    "fast_call",
    "plain",
    "print_outcome",
    "raise_answer_error",
]


@dataclass(frozen=True, slots=True)
class _Handover:
    """What :func:`fast_call` did before it handed over to the ordinary path, so that one
    invocation reads the settings once and asks the holder once."""

    globals: Globals
    loaded: Effective
    holder_asked: bool


_handover: _Handover | None = None
"""Set while the ordinary path runs after :func:`fast_call` handed over (one invocation)."""


def effective_settings(globals_: Globals, *, warn: bool = True) -> Effective:
    """``load_effective``, or the settings this invocation's warm attempt read already (the
    same ``Globals``; its warnings were printed once: ``keep_warnings``)."""
    from codebot_mcp.cli.runtime import load_effective

    if _handover is not None and _handover.globals == globals_:
        return _handover.loaded
    return load_effective(globals_, warn=warn)


def plain(requests: tuple[Settings, str | None, list[str] | None], login: bool) -> bool:
    """True when a call needs nothing the holder and the SDK-free hot path cannot give: the
    default answers (``--elicit decline``, no ``--allow-sampling``), no ``--login``, and no
    progress line (stderr is not a terminal; the SDK path asks for progress only then)."""
    _, elicit, allow_sampling = requests
    return (
        not login and elicit in (None, "decline") and not allow_sampling and not sys.stderr.isatty()
    )


def roots(settings: Settings) -> list[Path]:
    from codebot_mcp.core.config.settings import root_dirs

    return root_dirs(settings.project_root, settings.cwd, settings.roots)


def location(settings: Settings) -> Path:
    from codebot_mcp.mcpbridge.warm import holder_client as warm

    return warm.socket_path(settings.project_file, settings.cwd)


def ask_holder(
    settings: Settings, check: trust.TrustCheck, payload: dict[str, Any]
) -> dict[str, Any] | None:
    """The holder's answer for these settings (trust applied: ``load_effective``), or None:
    take the cold path (silently)."""
    from codebot_mcp.mcpbridge.warm import holder_client as warm

    if _handover is not None and _handover.holder_asked:
        return None  # asked once this invocation already: it could not take the call
    path = location(settings)
    if not path.exists():
        return None
    try:
        return warm.request(path, settings_digest(settings, check), payload)
    except warm.WarmError as exc:
        raise ServerError(
            str(exc), hint="Run the command again with --no-warm, or restart `codebot mcp warm`."
        ) from None


def settings_digest(settings: Settings, check: trust.TrustCheck) -> str:
    """The digest a holder for these settings answers to: the servers, trust, roots and the
    lock it checks them against (``Pins.digest``), as ``mcpbridge.warm.holder`` takes it."""
    from codebot_mcp.cli.runtime import session_pins
    from codebot_mcp.mcpbridge.warm import holder_client as warm

    pins = session_pins(settings)
    servers = dict(settings.servers)
    return warm.fingerprint(servers, check.trusted, roots(settings), pins.digest() if pins else "")


def raise_answer_error(answer: dict[str, Any]) -> None:
    """Re-raise an error the holder reported as the cold path would have raised it."""
    error = answer.get("error")
    if not isinstance(error, dict):
        return
    classes = {int(c.exit_code): c for c in (UsageError, ServerError, CodebotError)}
    cls = classes.get(int(error.get("exit_code", 1)), CodebotError)
    raise cls(str(error.get("message", "")), hint=error.get("hint"))


def print_outcome(outcome: ToolResult, server: str, tool: str, *, as_json: bool) -> int:
    """Print a call's result as ``mcp call`` does; its exit code."""
    from codebot_mcp.cli import render

    if as_json:
        render.print_json(outcome.data)
    elif outcome.text:
        text = render.safe(outcome.text)
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    if outcome.is_error:
        render.error_line(f"tool '{tool}' on server '{server}' reported an error")
        return ExitCode.TOOL_ERROR
    return ExitCode.OK


def _parse(argv: list[str]) -> tuple[Path, str, str, list[str]] | None:
    """``[--cwd DIR] mcp call SERVER TOOL [key=value ...]``, or None for anything else."""
    words = list(argv)
    cwd = Path.cwd()
    if words[:1] == ["--cwd"] and len(words) > 1:
        cwd, words = Path(words[1]).expanduser(), words[2:]
    elif words[:1] and words[0].startswith("--cwd="):
        cwd, words = Path(words[0].partition("=")[2]).expanduser(), words[1:]
    if words[:2] != ["mcp", "call"] or len(words) < 4:
        return None
    server, tool, pairs = words[2], words[3], words[4:]
    if any(w.startswith("-") for w in (server, tool)):
        return None
    if any(w.startswith(("-", "@", "{")) or "=" not in w for w in pairs):
        return None  # options, files, stdin and JSON objects: the ordinary parser
    if not cwd.is_dir():
        return None
    return cwd.resolve(), server, tool, pairs


def _holder_exists(cwd: Path) -> bool:
    """A holder socket for the settings at ``cwd`` exists (read before any settings file, so
    the ordinary path, when taken, prints each settings warning once)."""
    from codebot_mcp.core.config.settings import project_sources
    from codebot_mcp.mcpbridge.warm import holder_client as warm

    project, mcp_json, _ = project_sources(cwd)
    return warm.socket_path(project or mcp_json, cwd).exists()  # Settings.project_file


def fast_call(argv: list[str], ordinary: Callable[[list[str]], int]) -> int | None:
    """A warm ``mcp call`` without the command-line parser; None when it does not apply (no
    holder, other options, completion). Once the settings are read, a holder that cannot take
    the call (stale, gone) hands over to ``ordinary`` (the full command line, in this process:
    the same result, the warnings not repeated); an error after it accepted is the call's own.
    """
    parsed = _parse(argv)
    if parsed is None or "_CODEBOT_COMPLETE" in os.environ or sys.stderr.isatty():
        return None
    cwd, server, tool, pairs = parsed
    if not _holder_exists(cwd):
        return None
    from codebot_mcp.cli import render
    from codebot_mcp.cli.runtime import Globals, load_effective, require_trusted
    from codebot_mcp.core.config.servers import require_usable
    from codebot_mcp.core.tools import arguments
    from codebot_mcp.core.tools.base import ToolResult

    globals_ = Globals(cwd=cwd)
    try:
        loaded = load_effective(globals_, warn=False)
    except CodebotError:
        return ordinary(argv)  # the ordinary path says it, exactly as it always does
    settings, check = loaded.settings, loaded.trust
    if server not in settings.servers or server in settings.shadowed:
        return _hand_over(argv, ordinary, globals_, loaded)  # unknown: as the parser does
    try:
        require_trusted(server, check, settings)
        require_usable(settings.servers[server])
        parsed_args = arguments.parse(pairs, cwd=cwd)
    except CodebotError:
        return _hand_over(argv, ordinary, globals_, loaded)  # it says it, as it always does
    payload = {
        "op": "call",
        "server": server,
        "tool": tool,
        "arguments": parsed_args,
        "pairs": isinstance(parsed_args, arguments.Pairs),
    }
    try:
        answer = ask_holder(settings, check, payload)
        if answer is None:
            return _hand_over(argv, ordinary, globals_, loaded, holder_asked=True)
        raise_answer_error(answer)
        outcome = ToolResult(**answer["result"])
    except CodebotError as exc:
        render.error(exc)
        return exc.exit_code
    return print_outcome(outcome, server, tool, as_json=False)


def _hand_over(
    argv: list[str],
    ordinary: Callable[[list[str]], int],
    globals_: Globals,
    loaded: Effective,
    *,
    holder_asked: bool = False,
) -> int:
    """Run the ordinary path with what this attempt did: the settings it read, and whether
    the holder was asked (it is not asked again)."""
    global _handover
    _handover = _Handover(globals_, loaded, holder_asked)
    try:
        return ordinary(argv)
    finally:
        _handover = None
