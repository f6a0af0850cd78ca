"""The ``images`` settings key: how large an image may be, and how many one request carries.

``images.max_bytes`` caps one image (a larger one is downscaled when Pillow is installed,
refused otherwise); ``images.max_per_request`` caps how many images one model request holds
(the oldest are then sent as a text placeholder); ``images.max_request_bytes`` caps their bytes
together the same way. The image code itself lives in :mod:`.images`. The section is
registered with the kernel's registry (``core.config.sections``); the loaded value is held in
``Settings.sections`` and read with :func:`of`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codebot_mcp.core.config.fieldcheck import check_section
from codebot_mcp.core.config.sections import Section, register, row

if TYPE_CHECKING:
    from pydantic import BaseModel

    from codebot_mcp.core.config.settings import Settings

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


def of(settings: Settings) -> ImageLimits:
    """The ``images`` of loaded settings (the defaults where none were loaded)."""
    return settings.section("images", ImageLimits)


def parse_images(path: Path, key: str, value: Any) -> ImageLimits:
    """``images``: an object of the three limits, checked by its model's fields (a limit left
    out keeps its default; an unknown field is an error, not a hint).

    Raises:
        SettingsError: not an object, an unknown field, or a value that is not a whole
            number in range (naming the file and ``images.<field>``).
    """
    return ImageLimits(**check_section(path, key, value, strict=True))


@cache
def section_model() -> type[BaseModel]:
    """The ``images`` section as a pydantic model (built on demand: see
    ``core.config.sections``)."""
    from pydantic import BaseModel, ConfigDict, Field

    class Images(BaseModel):
        model_config = ConfigDict(extra="forbid")
        max_bytes: int = Field(default=DEFAULT_MAX_BYTES, ge=1)
        max_per_request: int = Field(default=DEFAULT_MAX_PER_REQUEST, ge=0)  # 0: none sent
        max_request_bytes: int = Field(default=DEFAULT_MAX_REQUEST_BYTES, ge=1)

    class ImagesSection(BaseModel):
        model_config = ConfigDict(extra="forbid")
        images: Images = Field(
            default=Images(),
            description="Images sent to the model: max_bytes per image (larger ones are "
            "downscaled with Pillow, or refused), max_per_request and max_request_bytes per "
            "request (older images beyond them go as a text placeholder).",
            examples=[{"max_bytes": 2_000_000, "max_per_request": 4}],
        )

    return ImagesSection


register(
    Section(
        "images",
        (row("images", parse_images),),  # unknown fields are errors here, not hints
        section_model,
        order=20,
    )
)
