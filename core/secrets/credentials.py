"""The one credential heuristic: is a value, under its name, a secret?

:func:`is_secret` decides for every caller: redaction (:mod:`.redact`: what is masked in tool
results, messages and logs), the views of an entry (``mcp get``, ``mcp list --json``,
doctor's JSON) and the settings scan (:mod:`.scan`: what ``mcp add`` refuses to write in
clear). A secret is what a credential-named variable, header or argument holds (unless it is
plain configuration: a boolean, a small number, a path, a URL without credentials), plus any
value that looks like a key or token (a known prefix, ``Bearer …``, a JWT, a long run mixing
letters and digits). A URL without userinfo, a region, a mode, a boolean, a number or a word
under a plain name is configuration, shown and never masked.

A hand-written heuristic: no library we use ships one.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping

CREDENTIAL_NAME = re.compile(
    r"key(?![a-rt-z])|token|secret|passw(or)?d|(?:^|[_-])pass(?:phrase)?(?:$|[_-])|credential|"
    r"cookie|auth(?!or(?!iz))|session",
    re.IGNORECASE,
)
"""A variable, env key, header or argument whose name holds one of these is a credential's
(``GITHUB_TOKEN``, ``DB_PASSWORD``, ``SMTP_PASS``, ``AWS_SECRET_ACCESS_KEY``, ``--api-key``,
``apikey``, ``Authorization``, ``Cookie``); ``KEYCLOAK_URL``, ``AUTHOR`` and ``BYPASS`` are
not."""
TOKEN_PREFIX = re.compile(
    r"^(sk-|sk_live_|rk_live_|ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[abprs]-|AKIA|ASIA|"
    r"AIza|ya29\.|hf_|npm_|pypi-|dop_v1_|sq0atp-|shpat_|glsa_|sntrys_|lin_api_)",
)
"""Prefixes of well-known token formats (OpenAI, Stripe, GitHub, GitLab, Slack, AWS, Google,
Hugging Face, npm, PyPI, DigitalOcean, Square, Shopify, Grafana, Sentry, Linear)."""
AUTH_SCHEME = re.compile(r"^(bearer|basic|token)\s+\S{8,}$", re.IGNORECASE)
"""``Bearer <token>``: an ``Authorization`` value, under whatever name it is written."""
_JWT = re.compile(r"^eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*$")
_RUN = re.compile(r"[A-Za-z0-9_\-+/=.~:]+")
_SEGMENTS = re.compile(r"[-_./:+=~]+")
RANDOM_SEGMENT_LENGTH = 16
"""A token without a known prefix has a run this long (between separators) mixing letters and
digits; words, numbers, regions (``eu-west-1``), versions and host names have none."""
_PLAIN_WORDS = frozenset("true false yes no on off none null".split())
PLAIN_ENV = frozenset(
    "PATH HOME PYTHONPATH NODE_PATH NODE_ENV LANG LANGUAGE TERM USER LOGNAME SHELL TMPDIR TZ "
    "PWD DEBUG LOG_LEVEL".split()
)
"""Env keys whose values are configuration whatever they look like."""
CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "x-api-key"})
"""Headers whose every value is a credential, even a plain-looking word."""
_WEAK_NAME = re.compile(r"auth(?!or(?!iz))|session", re.IGNORECASE)
_STRONG_NAME = re.compile(
    r"key(?![a-rt-z])|token|secret|passw|(?:^|[_-])pass|credential|cookie", re.IGNORECASE
)


def is_credential_name(name: str) -> bool:
    """True for names like ``GITHUB_TOKEN``, ``DB_PASSWORD``, ``x-api-key``, ``client_secret``."""
    return CREDENTIAL_NAME.search(name) is not None


def looks_like_token(value: str) -> bool:
    """A value that looks like a key or token whatever its name: a known prefix (``sk-``,
    ``ghp_``, ``AKIA`` …), ``Bearer <token>``, a JWT, or a run of at least
    ``RANDOM_SEGMENT_LENGTH`` characters between separators that mixes letters and digits.

    A URL, a path, a region, a version, a host name, a number or a word is not one (their
    parts are words or numbers): ``http://127.0.0.1:9``, ``eu-west-1``, ``server``.
    """
    value = value.strip()
    if TOKEN_PREFIX.match(value) or AUTH_SCHEME.match(value) or _JWT.match(value):
        return True
    if len(value) < RANDOM_SEGMENT_LENGTH or not _RUN.fullmatch(value):
        return False
    if value.startswith(("/", "./", "../", "~/")):  # a path: a digest in it names a folder
        return False
    return any(
        len(part) >= RANDOM_SEGMENT_LENGTH
        and any(c.isdigit() for c in part)
        and any(c.isalpha() for c in part)
        for part in _SEGMENTS.split(value)
    )


_PASSWORD_NAME = re.compile(r"passw|(?:^|[_-])(?:pass|pin)(?:$|[_-])|secret", re.IGNORECASE)
"""Names whose number is a secret too (``DB_PASSWORD=123456``, ``PIN=1234``), unlike a count
or a time under a token's or a key's name (``MAX_TOKENS=4096``, ``TOKEN_TTL=3600``)."""


def plain_value(value: str, name: str = "") -> bool:
    """Configuration even under a credential's name: a boolean word, a number of at most six
    digits (a port, a TTL, a count; not under a password's name), a path, a URL without
    credentials."""
    value = value.strip()
    if value.lower() in _PLAIN_WORDS:
        return True
    if re.fullmatch(r"\d{1,6}", value):
        return not _PASSWORD_NAME.search(name)
    if value.startswith(("/", "./", "../", "~/")) and " " not in value:
        return True
    return "://" in value and not url_has_credentials(value)


def url_has_credentials(value: str) -> bool:
    """``user:pass@`` or a secret-looking query value (``?token=``) in ``value``."""
    userinfo, query = url_patterns()
    return bool(userinfo.search(value) or query.search(value))


@functools.cache
def url_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """``user:pass@`` in a URL, and a secret-looking query value; compiled on first use (about
    1.5 ms, which ``codebot --help`` and a warm call would otherwise pay at every start).

    Bounded repeats: unbounded ones make a long run of letters (a hostile tool result) take
    quadratic time, 40 kB in half a minute. A ``${VAR}`` reference in place of the secret is
    not one: it stays readable."""
    credentials = re.compile(
        r"(?P<scheme>(?<![a-z0-9+.-])[a-z][a-z0-9+.-]{0,31}://)"
        r"(?![^/@\s]{0,1024}:\$\{[A-Za-z_][A-Za-z0-9_]{0,127}\}@)[^/@\s]{1,1024}@",
        re.IGNORECASE,
    )
    query = re.compile(
        r"(?P<key>[?&](?=[a-z0-9_-]{0,128}=)(?:[a-z0-9_-]{0,64}(?:token|key|secret|password|"
        r"passwd|auth|sig|signature|credential)[a-z0-9_-]{0,64})=)"
        r"(?!\$\{[A-Za-z_][A-Za-z0-9_]{0,127}\}(?:[&#\s]|$))[^&#\s]+",
        re.IGNORECASE,
    )
    return credentials, query


def is_secret(name: str, value: str, *, sources: Iterable[str] = ()) -> bool:
    """Whether ``value``, written under ``name`` (an env key, a header, an option), is a secret.

    ``sources`` are the variables ``value`` was expanded from (``${GITHUB_TOKEN}``): a value
    expanded from a credential-named variable is one, as if it were written under that name.
    """
    value = value.strip()
    if not value:
        return False
    if looks_like_token(value) or ("://" in value and url_has_credentials(value)):
        return True
    names = [name, *sources]
    if name.lower() in CREDENTIAL_HEADERS:
        return True
    if name.upper() in PLAIN_ENV and not any(is_credential_name(s) for s in sources):
        return False
    if not any(is_credential_name(n) for n in names):
        return False
    if all(plain_value(value, n) for n in names):
        return False
    if any(_STRONG_NAME.search(n) for n in names):
        return True
    # "auth" and "session" name modes and stores as often as secrets: AUTH_TYPE=oauth.
    weak = any(_WEAK_NAME.search(n) for n in names)
    return weak and not re.fullmatch(r"[A-Za-z][a-z]*(?:[-_][a-z]+)*", value)


SHELL_CREDENTIAL_NAME = re.compile(r"(key|secret|token|passw(or)?d|credential)", re.IGNORECASE)
"""The variables a model-driven shell does not inherit (Codex CLI's default excludes, plus
passwords and credentials); narrower than :data:`CREDENTIAL_NAME`, so ``SSH_AUTH_SOCK`` or
``XDG_SESSION_ID`` still reach ``git`` and friends."""


def shell_environment(environ: Mapping[str, str], secrets: Iterable[str] = ()) -> dict[str, str]:
    """``environ`` for a command the model runs: without credential-named variables, nor any
    whose value is one of ``secrets`` (the model API key under whatever name it was read)."""
    known = {s for s in secrets if s}
    return {
        name: value
        for name, value in environ.items()
        if not SHELL_CREDENTIAL_NAME.search(name) and value not in known
    }
