"""Does a settings value look like a credential written in clear?

``mcp add`` refuses such values and ``mcp import`` turns them into ``${VAR}`` references: the
settings should name a variable and the secret stay in the environment. What counts is what
redaction masks (:func:`core.secrets.credentials.is_secret`, the one heuristic): a known token
shape (``sk-``, ``ghp_``, ``xoxb-``, ``AKIA`` …), ``Bearer <token>``, a long random-looking run,
a URL carrying credentials, or a credential-named key (``*_TOKEN``, ``*_KEY``, ``PASSWORD``)
holding something other than a path, a URL without credentials, a small number or a boolean.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from codebot_mcp.core.errors import UsageError
from codebot_mcp.core.secrets.credentials import (
    AUTH_SCHEME,
    TOKEN_PREFIX,
    is_secret,
    looks_like_token,
)

_VARIABLE = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}")


def looks_secret(key: str, value: str) -> bool:
    """Whether a value written under ``key`` is a credential in clear text: what
    :func:`core.secrets.credentials.is_secret` (the one heuristic) calls a secret. Beside a
    ``${VAR}`` reference, only literal text with a known token prefix counts."""
    if _VARIABLE.search(value):
        literal = _VARIABLE.sub("", value).strip()
        return bool(literal) and _strong(literal.split()[-1])
    return is_secret(key, value)


def _strong(value: str) -> bool:
    """Literal text beside a ``${VAR}``: refused only with a known token prefix."""
    return TOKEN_PREFIX.match(value) is not None


def refuse_secrets(name: str, entry: Mapping[str, Any]) -> None:
    """Raise when an env value, header, argument or URL of ``entry`` is a secret in clear.

    Raises:
        UsageError: naming the key and suggesting a ``${VAR}`` reference.
    """
    for section in ("env", "headers"):
        values = entry.get(section) or {}
        if not isinstance(values, dict):
            continue
        for key, value in values.items():
            if isinstance(value, str) and looks_secret(str(key), value):
                _refuse(name, f"{section}.{key}", str(key), value)
    args = entry.get("args") or []
    args = args if isinstance(args, list) else []
    for i, arg in enumerate(args):
        if isinstance(arg, str):
            flag, sep, value = arg.partition("=")
            candidate = value if sep and arg.startswith("-") else arg
            if looks_like_token(candidate):
                # Name the variable after the option it belongs to (--api-key → API_KEY).
                before = args[i - 1] if i else ""
                option = flag if sep and arg.startswith("-") else before
                key = (
                    option.lstrip("-") if isinstance(option, str) and option.startswith("-") else ""
                )
                variable = _variable(key or "TOKEN")
                shown = (
                    f"{flag}=${{{variable}}}" if sep and arg.startswith("-") else f"${{{variable}}}"
                )
                _refuse(name, f"args[{i}]", variable, candidate, f"'{shown}' as that argument")
    oauth = entry.get("oauth")
    if isinstance(oauth, dict):
        for key in OAUTH_SECRET_KEYS:
            value = oauth.get(key)
            if isinstance(value, str) and value.strip() and not _only_variables(value):
                variable = "CLIENT_SECRET" if key == "client_secret" else "PRIVATE_KEY_PEM"
                _refuse(name, f"oauth.{key}", variable, value, f'"{key}": "${{{variable}}}"')
    url = entry.get("url")
    if isinstance(url, str):
        from codebot_mcp.core.secrets.redact import MASK, redact_url

        if MASK in redact_url(url) and MASK not in url and not _VARIABLE.search(url):
            variable, fixed = _url_with_variable(url)
            _refuse(name, "url", variable, url, f"--url '{fixed}'")


OAUTH_SECRET_KEYS = ("client_secret", "private_key")
"""Values that are secrets whatever they look like: only a ``${VAR}`` may stand there."""


def _only_variables(value: str) -> bool:
    """``value`` is made of ``${VAR}`` references alone (spaces aside)."""
    return bool(_VARIABLE.search(value)) and not _VARIABLE.sub("", value).strip()


def _url_with_variable(url: str) -> tuple[str, str]:
    """The variable to hold a URL's credential, and the URL with it in its place."""
    from codebot_mcp.core.secrets.redact import MASK, redact_url

    masked = redact_url(url)
    query = re.search(r"[?&]([^=&#\s]+)=" + re.escape(MASK), masked)
    if query:
        variable = _variable(query.group(1))
        return variable, masked.replace(MASK, f"${{{variable}}}", 1).replace(MASK, "")
    user = re.match(r"[a-z][a-z0-9+.-]*://([^:/@\s]+)(?::[^/@\s]*)?@", url, re.IGNORECASE)
    userinfo = f"{user.group(1)}:${{PASSWORD}}" if user else "${PASSWORD}"
    return "PASSWORD", masked.replace(MASK, userinfo, 1).replace(MASK, "")


def _variable(key: str) -> str:
    variable = re.sub(r"[^A-Za-z0-9_]", "_", key).upper().strip("_") or "TOKEN"
    return "_" + variable if variable[0].isdigit() else variable


def _refuse(server: str, where: str, key: str, value: str, suggestion: str | None = None) -> None:
    variable = _variable(key)
    if suggestion is not None:
        pass
    elif where.startswith("headers.") and AUTH_SCHEME.match(value):
        scheme = value.split()[0]
        suggestion = f"'{key}: {scheme} ${{{variable}}}'"
    elif where.startswith("env."):
        suggestion = f"-e {key}='${{{variable}}}'"
    else:
        suggestion = f"'${{{variable}}}'"
    raise UsageError(
        f"server '{server}': '{where}' looks like a secret; codebot does not write secrets "
        "to settings in clear",
        hint=f"Export it as {variable} and write {suggestion} instead (single quotes keep "
        "your shell from expanding it); codebot expands ${VAR} when it starts the server.",
    )
