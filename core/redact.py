"""Keep secrets out of everything codebot prints or writes.

Header values, env values and API keys are secrets by definition; URLs may carry them as
``user:pass@`` or as ``?token=`` style query parameters. :class:`Redactor` scrubs every known
secret value out of arbitrary text (error messages from servers included).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

MASK = "***"
_MIN_SECRET_LENGTH = 4  # shorter values would mask ordinary words
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)[^/@\s]+@", re.IGNORECASE)
_SECRET_QUERY = re.compile(
    r"(?P<key>[?&](?:[a-z0-9_-]*(?:token|key|secret|password|passwd|auth|sig|signature|"
    r"credential)[a-z0-9_-]*)=)[^&#\s]+",
    re.IGNORECASE,
)


def redact_url(text: str) -> str:
    """Remove ``user:pass@`` and secret-looking query values from URLs in ``text``."""
    text = _URL_CREDENTIALS.sub(rf"\g<scheme>{MASK}@", text)
    return _SECRET_QUERY.sub(rf"\g<key>{MASK}", text)


def redact_values(mapping: Mapping[str, str]) -> dict[str, str]:
    """The same keys with every value masked (an empty value stays empty)."""
    return {key: (MASK if value else "") for key, value in mapping.items()}


class Redactor:
    """Scrubs known secret values, and URL credentials, out of text."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: set[str] = set()
        self.add(secrets)

    def add(self, secrets: Iterable[str]) -> None:
        """Remember more secret values (short ones are ignored)."""
        for secret in secrets:
            if len(secret) >= _MIN_SECRET_LENGTH:
                self._secrets.add(secret)
                # "Bearer abc" leaks "abc" on its own too.
                for part in secret.split():
                    if len(part) >= 8:
                        self._secrets.add(part)

    def __call__(self, text: str) -> str:
        """``text`` with every secret replaced by ``***``."""
        for secret in sorted(self._secrets, key=len, reverse=True):
            if secret in text:
                text = text.replace(secret, MASK)
        return redact_url(text)
