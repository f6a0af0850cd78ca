"""The error hierarchy and the exit codes it maps to.

Every error a user can see is a :class:`CodebotError`: a one-line message that says what
failed and why, plus an optional hint that says how to fix it. ``cli.app.main`` is the only
place that turns one into text on stderr and a process exit code.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes: documented in the README and docs/exit-codes.md; a CLI contract."""

    OK = 0
    TOOL_ERROR = 1  # a tool reported an error, or a check failed
    DECLINED = 1  # the user answered no to a question the command needs a yes to
    USAGE = 2
    SETTINGS = 3
    SERVER = 4  # an MCP server failed: connect, handshake, transport
    MODEL = 5
    TURN_LIMIT = 6
    EMPTY_ANSWER = 7  # the model finished its turn without a word
    INTERRUPTED = 130


class CodebotError(Exception):
    """Base class for errors shown to the user as ``error: <message>`` plus ``hint: <hint>``."""

    exit_code: ExitCode = ExitCode.TOOL_ERROR

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class UsageError(CodebotError):
    """The command line was wrong: bad arguments, unknown server or tool."""

    exit_code = ExitCode.USAGE


class SettingsError(CodebotError):
    """A settings file cannot be read or parsed at all."""

    exit_code = ExitCode.SETTINGS


class ServerError(CodebotError):
    """An MCP server could not be reached: launch, handshake or transport failed."""

    exit_code = ExitCode.SERVER


class ModelError(CodebotError):
    """The model API failed: authentication, not found, rate limit, connection."""

    exit_code = ExitCode.MODEL


class InterruptionError(CodebotError):
    """Ctrl-C, SIGTERM or SIGHUP ended the command after an orderly unwind (exit 130)."""

    exit_code = ExitCode.INTERRUPTED

    def __init__(self) -> None:
        super().__init__("interrupted")


class TurnLimitError(CodebotError):
    """The agent ran ``max_turns`` model turns without finishing."""

    exit_code = ExitCode.TURN_LIMIT
