"""``/memory``: the project notes in the prompt, with their sizes; ``/init``: write a first
``AGENTS.md`` for the project from a look at the repository (asking before overwriting).
:data:`NOTES_AND_SKILLS` maps these and ``/skills`` to their handlers for the REPL loop."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from codebot_mcp.cli import render
from codebot_mcp.cli.repl.repl_skills import show_skills
from codebot_mcp.core.config.notes import display

if TYPE_CHECKING:
    from codebot_mcp.cli.chat_runtime import ChatRuntime
    from codebot_mcp.cli.repl.mcp import ReplHost


def memory_report(runtime: ChatRuntime) -> str:
    """Every note loaded (path, bytes on disk, characters in the prompt), then what was
    skipped and why."""
    notes = runtime.session.notes
    if not notes.files:
        lines = [f"no project notes (project root: {notes.root}); /init writes a first AGENTS.md"]
    else:
        rows = [["NOTE", "BYTES", "IN PROMPT", "FROM"]]
        for note in notes.files:
            origin: str = note.kind
            if note.imported_by is not None:
                origin = "imported by " + display(note.imported_by, notes.root)
            shown = f"{len(note.text)} chars" + (" (cut)" if note.truncated else "")
            rows.append([notes.label(note), str(note.size), shown, origin])
        lines = [
            f"project notes in the prompt (project root: {notes.root}):",
            render.table(rows, indent="  "),
            f"  total: {notes.chars} characters (about {notes.chars // 4} tokens)",
        ]
    lines += [f"skipped: {display(path, notes.root)}: {why}" for path, why in notes.skipped]
    return "\n".join(render.safe(line) for line in lines)


async def init_notes(runtime: ChatRuntime, ask: Callable[[str], Awaitable[str]]) -> None:
    """``/init``: draft ``AGENTS.md`` at the project root; ask before replacing one."""
    from codebot_mcp.core.config import initnotes

    root = runtime.session.notes.root
    path = root / initnotes.FILE_NAME
    if path.exists():
        size = path.stat().st_size if path.is_file() else 0
        try:
            answer = await ask(f"{path} exists ({size} bytes); overwrite it? [y/N] ")
        except (KeyboardInterrupt, EOFError):
            answer = ""
        if answer.strip().lower() not in ("y", "yes"):
            print("(kept the existing AGENTS.md)")
            return
    text = initnotes.draft(root)
    try:
        initnotes.write(root, text)
    except OSError as exc:
        render.error_line(f"cannot write {path}: {exc.strerror or exc}")
        return
    from codebot_mcp.core.config import trustwatch

    if runtime.session.project_notes:  # trusted: the note you wrote stays trusted
        trustwatch.accept_note(runtime.settings, path)
    runtime.session.reload_notes()
    print(
        render.safe(
            f"(wrote {path}: {len(text.encode())} bytes; it is in the prompt from now on; "
            "edit it to say what every session should know)"
        )
    )


async def _memory(host: ReplHost, rest: str) -> None:
    assert host.runtime is not None
    print(memory_report(host.runtime))


async def _init(host: ReplHost, rest: str) -> None:
    assert host.runtime is not None
    await init_notes(host.runtime, host.ask)


async def _skills(host: ReplHost, rest: str) -> None:
    assert host.runtime is not None
    await show_skills(host.runtime, rest)


NOTES_AND_SKILLS: dict[str, Callable[[ReplHost, str], Awaitable[None]]] = {
    "/memory": _memory,
    "/init": _init,
    "/skills": _skills,
}
"""The REPL's commands for project notes and skills: name → handler(host, argument)."""
