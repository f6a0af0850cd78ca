"""StreamScrubber: live streaming of plain words, and URLs split anywhere still masked."""

from __future__ import annotations

import pytest

from codebot_mcp.core.secrets.redact import Redactor
from codebot_mcp.core.secrets.streamscrub import StreamScrubber

URL = "see https://bob:hunter2@example.com/x now"


def test_a_plain_last_word_is_given_out_at_once() -> None:
    scrub = StreamScrubber(Redactor())
    assert scrub.feed("Still typ") == "Still typ"
    assert scrub.feed("ing.") == "ing."  # no '://', '=' or '@': nothing secret can follow
    assert scrub.feed(" x=ab") == " "  # '=' : the value waits until the word ends
    assert scrub.flush() == "x=ab"


@pytest.mark.parametrize("cut", range(1, len(URL)))
def test_a_url_split_at_any_point_is_masked(cut: int) -> None:
    scrub = StreamScrubber(Redactor())
    out = scrub.feed(URL[:cut]) + scrub.feed(URL[cut:]) + scrub.flush()
    assert out == "see https://***@example.com/x now"


def test_a_known_secret_split_in_three_is_masked() -> None:
    redactor = Redactor()
    redactor.add(["sk-abcdef123456"])
    scrub = StreamScrubber(redactor)
    out = scrub.feed("key sk-abc") + scrub.feed("def12") + scrub.feed("3456 end") + scrub.flush()
    assert "sk-" not in out and "123456" not in out and out.endswith(" end")
