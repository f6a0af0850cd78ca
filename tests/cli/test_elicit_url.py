"""What the REPL shows of a URL-mode elicitation's URL before asking, and what it declines."""

from __future__ import annotations

import pytest

from codebot_mcp.cli.repl.elicit_url import describe


def test_a_plain_url_shows_its_host() -> None:
    shown = describe("https://example.com/connect?x=1")
    assert (shown.url, shown.host, shown.notes, shown.problem) == (
        "https://example.com/connect?x=1",
        "example.com",
        (),
        None,
    )


def test_look_alikes_and_user_names_are_called_out() -> None:
    shown = describe("https://pаypal.com/login")  # a Cyrillic "а"
    assert shown.host == "xn--pypal-4ve.com" and shown.problem is None
    assert shown.notes == ("the host has non-ASCII letters: it is xn--pypal-4ve.com",)
    shown = describe("https://bank.example@evil.example/")
    assert shown.host == "evil.example"
    assert shown.notes == ("'bank.example' before the '@' is not the host",)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("file:///etc/passwd", "codebot opens only http(s) URLs, not 'file:'"),
        ("javascript:alert(1)", "codebot opens only http(s) URLs, not 'javascript:'"),
        ("example.com/x", "it has no scheme; codebot opens only http(s) URLs"),
        ("https:///path", "it has no host"),
        ("http://[::1", "it is not a valid URL (Invalid IPv6 URL)"),
        ("https://ex\x07ample.com/", "its host has characters no host name has"),
        ("https://" + "a" * 3000, "the URL is 3,008 characters long, over 2,048"),
    ],
)
def test_what_is_never_opened(url: str, problem: str) -> None:
    shown = describe(url)
    assert shown.problem == problem
    assert "\x07" not in shown.url + shown.host and len(shown.url) < 2100
