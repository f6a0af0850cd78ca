"""Claude model names in files written for Claude Code (an agent's or a command's ``model:``).

codebot talks to an OpenAI-compatible endpoint, where ``sonnet`` or ``claude-opus-4-1`` name
no model. Such a name resolves through the ``model_aliases`` setting (name → model, exact
name); a Claude name it does not list, and ``inherit``, mean the session's own model. Any
other name is a model at the same endpoint, as written.
"""

from __future__ import annotations

from collections.abc import Mapping

CLAUDE_ALIASES = frozenset(
    {"inherit", "default", "best", "sonnet", "opus", "haiku", "fable", "opusplan"}
)
"""Claude Code's model aliases (``sonnet[1m]`` and the like are these with a suffix)."""


def is_claude(name: str) -> bool:
    """Whether ``name`` is a Claude model id or alias (``claude-sonnet-4-0``, ``opus``)."""
    lowered = name.strip().lower()
    return lowered.split("[", 1)[0] in CLAUDE_ALIASES or lowered.startswith(("claude-", "claude."))


def resolve(name: str | None, aliases: Mapping[str, str]) -> str | None:
    """The model ``name`` means: the ``model_aliases`` entry, None for the session's model
    (no name, ``inherit``, or a Claude name not mapped), else ``name`` itself."""
    if not name:
        return None
    if name in aliases:
        return aliases[name]
    return None if is_claude(name) else name


def unmapped(name: str | None, aliases: Mapping[str, str]) -> bool:
    """Whether ``name`` is a Claude name (not ``inherit``) that falls back to the session's
    model for want of a ``model_aliases`` entry: the user is told once."""
    if not name or name in aliases:
        return False
    return is_claude(name) and name.strip().lower() not in ("inherit", "default")


def note(name: str, files: list[str]) -> str:
    """The one note for a Claude name used by ``files``."""
    where = files[0] if len(files) == 1 else f"{files[0]} and {len(files) - 1} more"
    return (
        f"model '{name}' ({where}) is a Claude model name: your model answers instead; "
        f'map it with the "model_aliases" setting (e.g. {{"{name}": "gpt-4o"}})'
    )


def notes(uses: list[tuple[str | None, str]], aliases: Mapping[str, str]) -> list[str]:
    """One note per unmapped Claude name among ``(model, file)`` uses."""
    by_name: dict[str, list[str]] = {}
    for name, path in uses:
        if name and unmapped(name, aliases):
            by_name.setdefault(name, []).append(path)
    return [note(name, files) for name, files in by_name.items()]
