"""The ``images`` settings key: how large an image may be, and how many one request carries.

``images.max_bytes`` caps one image (a larger one is downscaled when Pillow is installed,
refused otherwise); ``images.max_per_request`` caps how many images one model request holds
(the oldest are then sent as a text placeholder); ``images.max_request_bytes`` caps their bytes
together the same way. The image code itself lives in :mod:`core.media.images`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codebot_mcp.core.errors import SettingsError

DEFAULT_MAX_BYTES = 5 * 1024 * 1024
"""One image: 5 MiB, the smallest cap among the big hosted APIs (Anthropic's); OpenAI's is 20 MB."""
DEFAULT_MAX_PER_REQUEST = 10
"""Images in one request: every one is sent again with each later turn, so keep few."""
DEFAULT_MAX_REQUEST_BYTES = 20 * 1024 * 1024
"""All images of one request together (base64 adds a third on the wire)."""


@dataclass(frozen=True, slots=True)
class ImageLimits:
    """The ``images`` section of the settings."""

    max_bytes: int = DEFAULT_MAX_BYTES
    max_per_request: int = DEFAULT_MAX_PER_REQUEST
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "max_bytes": {"type": "integer", "minimum": 1, "default": DEFAULT_MAX_BYTES},
        "max_per_request": {"type": "integer", "minimum": 0, "default": DEFAULT_MAX_PER_REQUEST},
        "max_request_bytes": {
            "type": "integer",
            "minimum": 1,
            "default": DEFAULT_MAX_REQUEST_BYTES,
        },
    },
    "additionalProperties": False,
}


def parse_images(path: Path, key: str, value: Any) -> ImageLimits:
    """``images``: an object of the three limits; a limit left out keeps its default.

    Raises:
        SettingsError: not an object, an unknown field, or a value that is not a whole
            number in range (naming the file and ``images.<field>``).
    """
    example = '"images": {"max_bytes": 5242880, "max_per_request": 10}'
    if not isinstance(value, dict):
        raise SettingsError(
            f"'{key}' in {path} must be an object, found {json.dumps(value)}",
            hint=f"Write it as {example}.",
        )
    fields: dict[str, int] = {}
    for name, raw in value.items():  # pyright: ignore[reportUnknownVariableType]
        spec = SCHEMA["properties"].get(name)
        if spec is None:
            known = ", ".join(SCHEMA["properties"])
            raise SettingsError(
                f"'{key}.{name}' in {path} is not a setting", hint=f"Known fields: {known}."
            )
        least = spec["minimum"]
        if not isinstance(raw, int) or isinstance(raw, bool) or raw < least:
            raise SettingsError(
                f"'{key}.{name}' in {path} must be an integer >= {least}, found {json.dumps(raw)}",
                hint=f"Write it as {example}.",
            )
        fields[str(name)] = raw
    return ImageLimits(**fields)
