"""Capability inference: annotations first, then keywords, with the reason kept."""

from __future__ import annotations

import pytest

from codebot_mcp.core.tools.base import Capability
from codebot_mcp.mcpbridge.tools.capability import classify


def test_destructive_annotation_wins_over_read_only_keywords() -> None:
    p = classify("get_thing", "Reads a thing", destructive=True, read_only=True)
    assert p.capability is Capability.WRITE
    assert "destructiveHint" in p.reason


def test_open_world_annotation_means_network() -> None:
    p = classify("lookup", None, open_world=True, read_only=True)
    assert p.capability is Capability.NETWORK
    assert "openWorldHint" in p.reason


def test_read_only_annotation() -> None:
    p = classify("mystery", None, read_only=True)
    assert (p.capability, p.reason) == (Capability.READ, "annotation readOnlyHint=true")


def test_false_hints_are_not_evidence() -> None:
    p = classify("mystery", "Does a thing.", read_only=False, destructive=False, open_world=False)
    assert p.capability is Capability.UNKNOWN


@pytest.mark.parametrize(
    ("name", "capability", "word"),
    [
        ("deleteFile", Capability.WRITE, "delete"),
        ("read_file", Capability.READ, "read"),
        ("run-command", Capability.EXECUTE, "command"),
        ("fetch_url", Capability.NETWORK, "fetch"),
        ("get_and_remove", Capability.WRITE, "remove"),
    ],
)
def test_keywords_in_the_name(name: str, capability: Capability, word: str) -> None:
    p = classify(name, None)
    assert p.capability is capability
    assert p.reason.startswith(f'keyword "{word}" in the tool name')


def test_keywords_in_the_description_when_the_name_says_nothing() -> None:
    p = classify("frobnicate", "Deletes the frob permanently.")
    assert p.capability is Capability.WRITE
    assert p.reason == 'keyword "delete" in the tool description'
    assert classify("frobnicate", "Shows the frob.").capability is Capability.READ
    assert classify("frobnicate", "Frobs it.").capability is Capability.UNKNOWN


@pytest.mark.parametrize(
    ("name", "description"),
    [
        ("list_notes", "Show every note saved so far, numbered."),
        ("get_updates", "Returns the latest updates."),
        ("wait_for_job", "Waits, sending progress updates."),
        ("list_saved_searches", "Lists saved searches."),
        ("list_files", "Lists files, deleted ones included, in ISO date format."),
        ("settings", "Shows the current settings."),
    ],
)
def test_nouns_and_participles_do_not_outrank_read_only(name: str, description: str) -> None:
    p = classify(name, description, read_only=True)
    assert (p.capability, p.reason) == (Capability.READ, "annotation readOnlyHint=true")


@pytest.mark.parametrize(
    ("name", "description", "word"),
    [
        ("wipe_everything", "Deletes every file in the project.", "wipe"),
        ("read_file", "Reads a file, then deletes it.", "delete"),
        ("show", "Shows the table. Also runs DROP TABLE users.", "drop"),
        ("list_and_save", "Lists.", "save"),
        ("save_note", "Keeps a note.", "save"),
        ("sendReport", "Reports.", "send"),
    ],
)
def test_acting_verbs_still_outrank_a_lying_read_only(
    name: str, description: str, word: str
) -> None:
    p = classify(name, description, read_only=True)
    assert p.capability is Capability.WRITE
    assert (
        p.reason.startswith(f'keyword "{word}"') and "outranks annotation readOnlyHint" in p.reason
    )
