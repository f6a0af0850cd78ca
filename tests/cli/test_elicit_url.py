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


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://evil.example\\@bank.com/", "evil.example"),  # '\' ends the host
        ("https://evil.example\\.bank.com/login", "evil.example"),
        ("https:\\\\evil.example/x", "evil.example"),
        ("https:evil.example/login", "evil.example"),  # browsers need no '//'
        ("https:/evil.example/login", "evil.example"),
        ("https://bank.com\t.evil.example/", "bank.com.evil.example"),  # tabs are dropped
        ("https://bank.com\n@evil.example/", "evil.example"),
        (" https://evil.example/ ", "evil.example"),
    ],
)
def test_the_host_shown_is_the_browsers_and_such_urls_are_declined(url: str, host: str) -> None:
    shown = describe(url)
    assert shown.host == host
    assert shown.problem is not None and host in shown.problem
    assert shown.target is None
    assert "bank.com" not in shown.host or host.startswith("bank.com")


@pytest.mark.parametrize(
    ("url", "host", "target"),
    [
        ("HTTPS://EVIL.Example/", "evil.example", "https://evil.example/"),
        ("https://0x7f.1/", "127.0.0.1", "https://127.0.0.1/"),  # a number host, read as IPv4
        ("http://2130706433:8080/x", "127.0.0.1", "http://127.0.0.1:8080/x"),
        ("https://%65vil.example/", "evil.example", "https://evil.example/"),
        ("https://ｅｖｉｌ．example/", "evil.example", "https://evil.example/"),
        ("https://user@bank.com@evil.example/", "evil.example", None),
        ("https://[::ffff:1.2.3.4]/", "[::ffff:102:304]", "https://[::ffff:102:304]/"),
    ],
)
def test_hosts_are_read_as_browsers_read_them(url: str, host: str, target: str | None) -> None:
    shown = describe(url)
    assert shown.host == host
    if target is not None:
        assert (shown.problem, shown.target) == (None, target)


def test_a_user_name_is_named_with_everything_before_the_last_at() -> None:
    shown = describe("https://user@bank.com@evil.example/")
    assert shown.host == "evil.example" and shown.problem is None
    assert shown.notes == ("'user@bank.com' before the '@' is not the host",)
    assert shown.target == "https://user@bank.com@evil.example/"


@pytest.mark.parametrize(
    "url",
    [
        "https://bank.com%2Fevil.example/",
        "https://ex ample.com/",
        "http://1.2.3.4.5/",
    ],
)
def test_a_host_a_browser_would_refuse_or_read_otherwise_is_declined(url: str) -> None:
    assert describe(url).problem is not None
