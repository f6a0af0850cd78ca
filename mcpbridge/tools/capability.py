"""Classify an MCP tool's capability for the permission gate, keeping the reason.

A server's annotations are hints, and a hostile server lies. So the signal that makes
codebot more careful wins: ``destructiveHint``, or a write or destructive word in the name or
the description, makes the tool a write tool, whatever a read word says; when such signals
conflict, the reason names both. Otherwise: ``openWorldHint`` → network, ``readOnlyHint`` →
read, then keywords in the name, then in the description; else unknown (which asks). Only
``true`` annotations count.

Against ``readOnlyHint``, a word must be a verb that acts, not a noun that names: a
destructive verb (delete, drop, wipe...) anywhere in the name or the description outranks
the hint; any other write verb (save, update, send...) does so only as the name's verb (its
first word, or one after "and"/"then"/"or": ``save_note``, ``list_and_save``), so
``list_notes`` "Show every note saved so far" and ``get_updates`` stay read-only. A past
participle ("deleted", "saved") describes a state, and never outranks the hint.
"""

from __future__ import annotations

import re

from codebot_mcp.core.tools.base import Capability, Permission

# Most dangerous first: when a name says both "get" and "delete", it is a write.
_KEYWORDS: tuple[tuple[Capability, frozenset[str]], ...] = (
    (
        Capability.WRITE,
        frozenset(
            "write create update edit modify delete remove rm move rename insert upsert drop "
            "truncate set put post patch add append replace save upload commit push merge "
            "kill terminate destroy purge reset clear overwrite mkdir chmod send publish "
            "deploy revert close archive erase wipe clean cleanup nuke shred unlink rmdir "
            "uninstall format".split()
        ),
    ),
    (
        Capability.EXECUTE,
        frozenset("run exec execute shell command eval evaluate script spawn invoke".split()),
    ),
    (
        Capability.NETWORK,
        frozenset("fetch http https url download browse web crawl scrape request curl".split()),
    ),
    (
        Capability.READ,
        frozenset(
            "read get list search find query show describe view lookup inspect status info "
            "count stat head tail cat grep ls diff log print echo ping time now".split()
        ),
    ),
)
_DESTRUCTIVE = frozenset(
    "delete remove rm drop truncate kill terminate destroy purge reset overwrite erase wipe "
    "nuke shred unlink rmdir uninstall revert".split()
)
"""Write words that destroy: they outrank ``readOnlyHint`` anywhere, as verbs."""
_JOINERS = frozenset({"and", "then", "or"})
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPLIT = re.compile(r"[^A-Za-z0-9]+")


def words(text: str) -> list[str]:
    """Lower-case words of a name or sentence: ``readFile`` and ``read_file`` give read, file."""
    return [w.lower() for w in _SPLIT.split(_CAMEL.sub(" ", text)) if w]


def _stems(word: str) -> set[str]:
    """The word and its plain forms: deletes/deleted/deleting → delete."""
    out = {word}
    for suffix in ("ing", "es", "ed", "s", "d"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            out.update((base, base + "e"))
    return out


def _participle(word: str) -> bool:
    return word.endswith("ed") and len(word) > 4


def _acting(text: str, *, name: bool) -> set[str]:
    """The write keywords of ``text`` that act as verbs (see the module's docstring)."""
    writes = dict(_KEYWORDS)[Capability.WRITE]
    out: set[str] = set()
    tokens = words(text)
    for i, word in enumerate(tokens):
        if _participle(word):
            continue
        hit = _stems(word) & writes
        if not hit:
            continue
        verb_position = i == 0 or tokens[i - 1] in _JOINERS
        if hit & _DESTRUCTIVE or (name and verb_position):
            out |= hit
    return out


def classify(
    name: str,
    description: str | None,
    *,
    read_only: bool | None = None,
    destructive: bool | None = None,
    open_world: bool | None = None,
) -> Permission:
    """Capability and reason for one tool."""
    places = (("name", name), ("description", description or ""))
    found = {where: {stem for w in words(text) for stem in _stems(w)} for where, text in places}

    def hits(capability: Capability) -> list[str]:
        keywords = dict(_KEYWORDS)[capability]
        return [
            f'keyword "{sorted(found[where] & keywords)[0]}" in the tool {where}'
            for where, _ in places
            if found[where] & keywords
        ]

    writes = (["annotation destructiveHint=true"] if destructive is True else []) + hits(
        Capability.WRITE
    )
    if read_only is True and destructive is not True:  # only verbs that act outrank the hint
        acting = {where: _acting(text, name=where == "name") for where, text in places}
        writes = [
            f'keyword "{sorted(acting[where])[0]}" in the tool {where}'
            for where, _ in places
            if acting[where]
        ]
    if writes:
        calm = (["annotation readOnlyHint=true"] if read_only is True else []) + hits(
            Capability.READ
        )
        reason = writes[0]
        if calm:
            reason += f", which outranks {calm[0]} (the signals conflict, so codebot asks)"
        return Permission(Capability.WRITE, reason)
    if open_world is True:
        return Permission(Capability.NETWORK, "annotation openWorldHint=true")
    if read_only is True:
        return Permission(Capability.READ, "annotation readOnlyHint=true")
    for where, _ in places:
        for capability, keywords in _KEYWORDS:
            hit = sorted(found[where] & keywords)
            if hit:
                return Permission(capability, f'keyword "{hit[0]}" in the tool {where}')
    return Permission(Capability.UNKNOWN, "no annotations and no telling keywords")
