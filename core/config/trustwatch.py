"""What a prompt changed among the project files that need trust (:mod:`.trust`).

A confined ``bash`` may edit a trusted server's script, a hook's script or ``AGENTS.md``: the
next start asks for trust again, and the prompt that did it says so at its end. The agent loop
(:class:`core.agent.loop.Agent`) calls :meth:`TurnWatch.begin` before a prompt's first tool
call and :meth:`TurnWatch.end` when the prompt ends.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from codebot_mcp.core.config import discovery, paths, trust
from codebot_mcp.core.config.runfiles import signature
from codebot_mcp.core.config.settings import Settings
from codebot_mcp.core.config.trust import project_files, project_notes, relative


class TurnWatch:
    """Which project files that need trust a turn changed (:class:`core.agent.loop.Agent`
    asks before its first tool call and at the end): the files :func:`check` hashes, the
    notes and the project's settings files, compared by inode, size and times, so a turn
    that ran tools pays a few ``stat`` calls and one walk of the definition folders.

    Args:
        settings: The settings as the files write them (``load_unfiltered``): what would run
            once trusted, so an untrusted project's files are watched too.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.before: dict[Path, Any] | None = None

    def files(self) -> tuple[Path | None, tuple[Path, ...]]:
        """The project root and every watched file."""
        root, files = project_files(self.settings)
        root, notes = project_notes(self.settings, root)
        sources = self.settings.project_sources or (
            (self.settings.project_file,) if self.settings.project_file else ()
        )
        if root is not None:  # where a project file could appear
            sources = (*sources, root / paths.PROJECT_DIR / paths.SETTINGS_FILE, root / ".mcp.json")
            claude = root / discovery.CLAUDE_DIR  # Claude Code's settings (core.config.claudefiles)
            sources = (*sources, claude / "settings.json", claude / "settings.local.json")
        return root, tuple(dict.fromkeys((*files, *notes, *sources)))

    def begin(self) -> None:
        """Before a prompt's first tool call: the watched files' signatures (once a prompt)."""
        if self.before is None:
            try:
                self.before = signature(self.files()[1])
            except OSError:  # boundary: a folder vanished mid-walk; nothing to compare with
                self.before = None

    def end(self) -> list[str]:
        """At the end of a prompt: the watched files (relative to the root) that differ from
        :meth:`begin`'s, changed, new or gone; none when no tool ran."""
        before, self.before = self.before, None
        if before is None:
            return []
        try:
            root, now = self.files()
            after = signature((*before, *(p for p in now if p not in before)))
        except OSError:  # boundary: as in begin
            return []
        return [relative(p, root) for p, sig in after.items() if before.get(p) != sig]

    @staticmethod
    def message(names: list[str]) -> str:
        """What the end of a prompt says about ``names``."""
        return turn_message(names)


def turn_message(names: list[str]) -> str:
    """What the end of a turn says when it changed files that need trust."""
    from codebot_mcp.core.secrets.redact import printable

    shown = ", ".join(printable(n, one_line=True) for n in names[:10])
    more = f" and {len(names) - 10} more" if len(names) > 10 else ""
    return (
        f"this turn changed project files that codebot runs or reads outside the sandbox: "
        f"{shown}{more}; they need trust again before the next session uses them "
        "(`codebot trust` shows what changed)"
    )


def accept_note(settings: Settings, path: Path) -> bool:
    """Record ``path``, a project note the user just wrote (``/init``), as trusted, when the
    project's trust is recorded: only that note, nothing else that changed. False when there
    is no record to add it to (the next start asks, as for any new note)."""
    root, _ = project_files(settings)
    root, notes = project_notes(settings, root)
    key = trust.store_key(settings, root)
    real = path.resolve()
    if key is None or real not in {p.resolve() for p in notes}:
        return False
    return trust.record_note(
        key, relative(real, root), trust.file_digests((real,), None)[str(real)]
    )
