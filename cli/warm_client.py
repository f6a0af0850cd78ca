"""The client half of the warm path, without Typer: asking the holder (``mcp list``, ``mcp call``)
and :func:`fast_call`, a warm ``mcp call SERVER TOOL [key=value ...]`` that skips building the
command line parser and reading the settings (Typer's import and command tree, and the settings
modules, are most of a warm call's time).

:func:`fast_call` sends the holder its working directory, its environment and its words (a
``"call_here"`` request); the holder reads the settings as this process would
(:mod:`mcpbridge.warm.callhere`) and either takes the call or leaves it to the ordinary path,
which then does not ask it again. Only a holder started in this process's environment is asked
so (:func:`~mcpbridge.warm.holder_client.serves_this_environment`); any other goes through the
ordinary path, which asks it by settings digest. The answers are rendered by the same code as
the cold path's, so output and exit codes are identical. One invocation reads the settings at
most once and asks the holder at most once.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from codebot_mcp.core.errors import CodebotError, ExitCode, ServerError, SettingsError, UsageError

if TYPE_CHECKING:
    from collections.abc import Callable

    from codebot_mcp.core.config import trust
    from codebot_mcp.core.config.settings import Settings

__all__ = [
    "ask_holder",
    "fast_call",
    "plain",
    "print_outcome",
    "raise_answer_error",
]

_holder_asked = False
"""Set while the ordinary path runs after :func:`fast_call` asked the holder (one invocation):
it is not asked again."""


class Outcome(Protocol):
    """What ``mcp call`` prints: a ``core.tools.base.ToolResult``, or a holder's answer."""

    @property
    def text(self) -> str: ...
    @property
    def is_error(self) -> bool: ...
    @property
    def data(self) -> Any: ...


class _Answered:
    """A holder's ``call_here`` result (the class ``ToolResult`` is not imported for it)."""

    __slots__ = ("data", "is_error", "text")

    def __init__(self, text: str, is_error: bool) -> None:
        self.text, self.is_error, self.data = text, is_error, None


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

    if _holder_asked:
        return None  # asked once this invocation already: it could not take the call
    path = location(settings)
    if not path.exists():
        return None
    try:
        return warm.request(path, settings_digest(settings, check), payload)
    except warm.WarmError as exc:
        raise _lost(exc) from None


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
    classes = {int(c.exit_code): c for c in (UsageError, SettingsError, ServerError, CodebotError)}
    cls = classes.get(int(error.get("exit_code", 1)), CodebotError)
    raise cls(str(error.get("message", "")), hint=error.get("hint"))


def print_outcome(outcome: Outcome, server: str, tool: str, *, as_json: bool) -> int:
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
    from codebot_mcp.mcpbridge.warm.holder_client import plain_pair

    if not all(plain_pair(w) for w in pairs):
        return None  # options, files, stdin and JSON objects: the ordinary parser
    if not cwd.is_dir():
        return None
    return cwd.resolve(), server, tool, pairs


def fast_call(argv: list[str], ordinary: Callable[[list[str]], int]) -> int | None:
    """A warm ``mcp call`` without the command-line parser or the settings; None when it does
    not apply (no holder for this environment, other options, completion). A holder that
    leaves the call to the client (or is gone) hands over to ``ordinary`` (the full command
    line, in this process, without asking it again); an error after it accepted is the call's.
    """
    parsed = _parse(argv)
    if parsed is None or "_CODEBOT_COMPLETE" in os.environ or sys.stderr.isatty():
        return None
    cwd, server, tool, words = parsed
    from codebot_mcp.core.config.discovery import project_sources
    from codebot_mcp.mcpbridge.warm import holder_client as warm

    project, mcp_json, _ = project_sources(cwd)
    path = warm.socket_path(project or mcp_json, cwd)  # Settings.project_file, not read
    if not warm.serves_this_environment(path):
        return None
    payload = {
        "op": "call_here",
        "cwd": str(cwd),
        "environ": dict(os.environ),
        "server": server,
        "tool": tool,
        "words": words,
    }
    try:
        answer = warm.request(path, None, payload, on_accept=_print_warnings)
    except warm.WarmError as exc:
        return _failed(_lost(exc))
    if answer is None:
        return _hand_over(argv, ordinary)
    try:
        raise_answer_error(answer)
    except CodebotError as exc:
        return _failed(exc)
    result = answer.get("result")
    if not isinstance(result, dict):
        return _failed(_lost(warm.WarmError("the warm holder answered without a result")))
    outcome = _Answered(str(result.get("text", "")), bool(result.get("is_error")))
    return print_outcome(outcome, server, tool, as_json=False)


def _print_warnings(accepted: dict[str, Any]) -> None:
    """The warnings the settings load printed, as it prints them (the holder read them)."""
    warnings = accepted.get("warnings") or []
    if warnings:
        from codebot_mcp.cli import render

        for warning in warnings:
            render.warn_once(str(warning))


def _lost(exc: Exception) -> ServerError:
    """The holder accepted a request, then went away or answered nonsense."""
    return ServerError(
        str(exc), hint="Run the command again with --no-warm, or restart `codebot mcp warm`."
    )


def _failed(error: CodebotError) -> int:
    """Say ``error`` as the cold path does; its exit code."""
    from codebot_mcp.cli import render

    render.error(error)
    return error.exit_code


def _hand_over(argv: list[str], ordinary: Callable[[list[str]], int]) -> int:
    """Run the ordinary path, which does not ask the holder again."""
    global _holder_asked
    _holder_asked = True
    try:
        return ordinary(argv)
    finally:
        _holder_asked = False
