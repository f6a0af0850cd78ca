"""The one credential heuristic: does a name, or a value, look like a secret?

Two callers ask it, with different costs of a mistake, so the value test has two strictness
levels over the same signs:
- redaction (:mod:`.redact`) masks what *might* be a secret (``loose``): a known token prefix,
  or eight or more characters mixing letters and digits with no space;
- the settings scan (:mod:`.scan`) refuses a value written in clear only when it is very
  likely one (``strict``): a known token prefix, or a long mixed-case alphanumeric run.

A hand-written heuristic: no library we use ships one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

CREDENTIAL_NAME = re.compile(
    r"(key|token|secret|passw(or)?d|credential|auth|session)",
    re.IGNORECASE,
)
"""A variable, env key, header or argument whose name holds one of these is a credential's
(``GITHUB_TOKEN``, ``DB_PASSWORD``, ``AWS_SECRET_ACCESS_KEY``, ``--api-key``, ``apikey``)."""
TOKEN_PREFIX = re.compile(
    r"^(sk-|sk_live_|rk_live_|ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[abprs]-|AKIA|ASIA|"
    r"AIza|ya29\.|hf_|npm_|pypi-|dop_v1_|sq0atp-|shpat_)",
)
"""Prefixes of well-known token formats (OpenAI, Stripe, GitHub, GitLab, Slack, AWS, Google,
Hugging Face, npm, PyPI, DigitalOcean, Square, Shopify)."""
STRICT_MIN_LENGTH = 32
"""Below this, a value with no known prefix is never refused in clear (strict)."""
LOOSE_MIN_LENGTH = 8
"""Below this, a value with no known prefix is never masked (loose)."""


def is_credential_name(name: str) -> bool:
    """True for names like ``GITHUB_TOKEN``, ``DB_PASSWORD``, ``x-api-key``, ``client_secret``."""
    return CREDENTIAL_NAME.search(name) is not None


def looks_like_token(value: str, *, strict: bool) -> bool:
    """A value no credential name vouches for that still looks like one.

    ``strict=False`` (redaction): a known prefix, or ``LOOSE_MIN_LENGTH`` characters or more
    mixing letters and digits with no space; a plain word such as ``server`` or
    ``application/json`` is left alone, so it is not masked in every message.
    ``strict=True`` (refusing settings): a known prefix, or ``STRICT_MIN_LENGTH`` characters or
    more of lower case, upper case and digits together, with no path or dotted shape.
    """
    value = value.strip()
    if TOKEN_PREFIX.match(value):
        return True
    if not strict:
        if len(value) < LOOSE_MIN_LENGTH or " " in value:
            return False
        return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    if len(value) < STRICT_MIN_LENGTH or not re.fullmatch(r"[A-Za-z0-9_\-+/=.]+", value):
        return False
    kinds = sum(bool(re.search(p, value)) for p in ("[a-z]", "[A-Z]", "[0-9]"))
    return kinds >= 3 and "/" not in value and "." not in value


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
