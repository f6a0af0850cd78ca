"""The built-in tools, all relative to the working directory: :mod:`.read`, :mod:`.write`,
:mod:`.edit`, :mod:`.glob`, :mod:`.grep` (with :mod:`.pygrep` when ripgrep is missing),
:mod:`.bash` and :mod:`.todo` (``todo_write``); what they share: :mod:`._common` (argument
checks), :mod:`._files` (the file tools' base), :mod:`._text` (encodings) and :mod:`._diff`
(diffs for approvals).

The features' tools live in their packages and reach a session through the kernel's registry
(``core.tools.featuretools``): ``skill`` in ``core.skills.skilltool``, ``task`` in
``core.subagents.tasktool``, ``bash_output`` and ``bash_kill`` in ``core.jobs.jobtools``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from codebot_mcp.core.tools.base import Tool
from codebot_mcp.core.tools.builtin.bash import BashTool
from codebot_mcp.core.tools.builtin.edit import EditTool
from codebot_mcp.core.tools.builtin.glob import GlobTool
from codebot_mcp.core.tools.builtin.grep import GrepTool
from codebot_mcp.core.tools.builtin.read import ReadTool
from codebot_mcp.core.tools.builtin.write import WriteTool

if TYPE_CHECKING:
    from codebot_mcp.core.sandbox.confinement import Sandbox
    from codebot_mcp.core.tools.background import BackgroundJobs
    from codebot_mcp.core.tools.builtin._files import TextFiles
    from codebot_mcp.core.tools.builtin.bash import Terminals

__all__ = [
    "BUILTIN_TOOLS",
    "BashTool",
    "EditTool",
    "GlobTool",
    "GrepTool",
    "ReadTool",
    "WriteTool",
    "builtin_tools",
]

BUILTIN_TOOLS: tuple[Callable[[Path, Path | None], Tool], ...] = (
    ReadTool,
    EditTool,
    WriteTool,
    GlobTool,
    GrepTool,
    BashTool,
)
"""The local tool layer, in a fixed order (it is part of the cached prompt)."""


def builtin_tools(
    cwd: Path,
    root: Path | None = None,
    *,
    sandbox: Sandbox | None = None,
    jobs: BackgroundJobs | None = None,
    files: TextFiles | None = None,
    terminals: Terminals | None = None,
) -> list[Tool]:
    """The built-in tools, working relative to ``cwd``, in :data:`BUILTIN_TOOLS`' order; the
    file tools stay inside ``root`` (the project root; default ``cwd``) unless the user
    approves (see ``core.boundary``).

    Args:
        sandbox: Where ``bash`` runs confined; the file tools ask before they open what it
            hides from confined commands (credentials, ``sandbox.deny_read``).
        jobs: ``bash``'s background jobs (None: no ``run_in_background``).
        files: Where ``read``, ``edit`` and ``write`` read and write (an ACP editor's
            buffers; None: the disk).
        terminals: Where ``bash`` runs its foreground calls (an ACP editor's; None: here).
    """
    hidden = sandbox.hidden_reals if sandbox is not None else None
    return [
        ReadTool(cwd, root, hidden=hidden, files=files),
        EditTool(cwd, root, hidden=hidden, files=files),
        WriteTool(cwd, root, hidden=hidden, files=files),
        GlobTool(cwd, root, hidden=hidden),
        GrepTool(cwd, root, hidden=hidden),
        BashTool(cwd, root, sandbox, jobs, terminals),
    ]
