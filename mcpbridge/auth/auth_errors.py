"""Why a browserless grant or the DPoP binding failed, as data: what failed (naming the
server, the authorization server or identity provider, and what it answered) and the fix.

Never holds a token, an assertion or a secret: only the server's ``error`` code and a
bounded, single-line ``error_description``.
"""

from __future__ import annotations

import json

import httpx2

MAX_ANSWER_CHARS = 300
"""An error description is a sentence; more is a page the server sent by mistake."""


class GrantError(Exception):
    """A grant (``jwt_bearer``, ``identity_assertion``) or the DPoP binding failed."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def answer_of(response: httpx2.Response) -> str:
    """``HTTP 400: invalid_grant (JWT assertion is expired)``: the status and the OAuth error
    of a token endpoint's answer (RFC 6749 5.2), one bounded line."""
    try:
        data = json.loads(response.content or b"null")
    except ValueError:
        data = None
    text = f"HTTP {response.status_code}"
    if isinstance(data, dict):
        error = data.get("error")
        description = data.get("error_description")
        if isinstance(error, str) and error:
            text += f": {error}"
            if isinstance(description, str) and description:
                text += f" ({description})"
    return " ".join(text.split())[:MAX_ANSWER_CHARS]
