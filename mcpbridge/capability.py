"""Classify an MCP tool's capability for the permission gate, keeping the reason.

Annotations come first (``destructiveHint`` → write, ``openWorldHint`` → network,
``readOnlyHint`` → read); they are hints from the server, so only ``true`` counts. Then
keywords in the tool's name, then in its description; else unknown (which asks).
"""

from __future__ import annotations

import re

from core.tools import Capability, Permission

# Most dangerous first: when a name says both "get" and "delete", it is a write.
_KEYWORDS: tuple[tuple[Capability, frozenset[str]], ...] = (
    (
        Capability.WRITE,
        frozenset(
            "write create update edit modify delete remove rm move rename insert upsert drop "
            "truncate set put post patch add append replace save upload commit push merge "
            "kill terminate destroy purge reset clear overwrite mkdir chmod send publish "
            "deploy revert close archive".split()
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


def classify(
    name: str,
    description: str | None,
    *,
    read_only: bool | None = None,
    destructive: bool | None = None,
    open_world: bool | None = None,
) -> Permission:
    """Capability and reason for one tool."""
    if destructive is True:
        return Permission(Capability.WRITE, "annotation destructiveHint=true")
    if open_world is True:
        return Permission(Capability.NETWORK, "annotation openWorldHint=true")
    if read_only is True:
        return Permission(Capability.READ, "annotation readOnlyHint=true")
    for where, text in (("name", name), ("description", description or "")):
        found = {stem for word in words(text) for stem in _stems(word)}
        for capability, keywords in _KEYWORDS:
            hit = sorted(found & keywords)
            if hit:
                return Permission(capability, f'keyword "{hit[0]}" in the tool {where}')
    return Permission(Capability.UNKNOWN, "no annotations and no telling keywords")
