"""Claude model names in agent and command files, and ``model_aliases``."""

from __future__ import annotations

import pytest

from codebot_mcp.core.config import modelnames


@pytest.mark.parametrize(
    ("name", "aliases", "model"),
    [
        ("claude-sonnet-4-0", {}, None),
        ("claude-opus-4-1", {}, None),
        ("sonnet", {}, None),
        ("opus[1m]", {}, None),
        ("haiku", {}, None),
        ("inherit", {}, None),
        (None, {}, None),
        ("gpt-4o-mini", {}, "gpt-4o-mini"),  # a model at the endpoint, as written
        ("sonnet", {"sonnet": "gpt-4o"}, "gpt-4o"),
        ("claude-opus-4-1", {"claude-opus-4-1": "o3"}, "o3"),
        ("Sonnet", {"sonnet": "gpt-4o"}, None),  # exact names only
    ],
)
def test_resolve(name: str | None, aliases: dict[str, str], model: str | None) -> None:
    assert modelnames.resolve(name, aliases) == model


def test_one_note_per_unmapped_claude_name() -> None:
    uses = [
        ("sonnet", "a.md"),
        ("sonnet", "b.md"),
        ("inherit", "c.md"),
        ("claude-opus-4-1", "d.md"),
        ("gpt-4o", "e.md"),
        ("haiku", "f.md"),
    ]
    notes = modelnames.notes(uses, {"haiku": "small"})
    assert len(notes) == 2
    assert notes[0].startswith("model 'sonnet' (a.md and 1 more) is a Claude model name")
    assert notes[1].startswith("model 'claude-opus-4-1' (d.md) is a Claude model name")
    assert '"model_aliases"' in notes[0]
