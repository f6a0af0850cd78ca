"""Images for the model: recognised by their bytes, fitted to the size cap, and carried as
content parts of the one request shape (Chat Completions messages) the history keeps.

- :func:`sniff` tells PNG, JPEG, GIF and WebP apart by their magic bytes (never by the file's
  name) and reads the width and height from the header;
- :func:`fit` brings an image under ``images.max_bytes``: Pillow downscales it (a dependency,
  imported only then: a HiDPI screenshot is often over 5 MB, and without downscaling the most
  common image would be refused); where Pillow is missing (a distribution that left it out)
  an image over the cap is refused, saying how to fix it;
- :func:`user_message` and :func:`tool_images_message` put images in the history: Chat
  Completions takes images only in user messages, so the images a tool returned go in a user
  message right after the tool results, each labelled with the call it belongs to (marked
  with :data:`TOOL_IMAGES_KEY`, which is never sent);
- :func:`limit_request` keeps one request within ``images.max_per_request`` and
  ``images.max_request_bytes`` (the newest images are kept, the older ones become a text
  placeholder), and :func:`strip` turns every image into its placeholder (an endpoint that
  rejected images, the summary requests, token estimates).

Images stay in the history as data URLs (base64), so a saved session keeps them (each at
most ``images.max_bytes``) and a resumed one shows the model the same images.
"""

from __future__ import annotations

import base64
import binascii
import io
import math
import struct
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from codebot_mcp.core.media.imagelimits import ImageLimits

TOOL_IMAGES_KEY = "tool_images"
"""On the user message that carries tool results' images: the ids of those calls. Only
codebot reads it (the message is not the user's prompt); it is never sent."""
IMAGE_TOKENS = 1_000
"""Estimated prompt tokens of one image (OpenAI counts 85 + 170 per 512-px tile of the image
scaled to 768 px on its short side: at most about 1,100); the base64 itself is not text."""
SNIFF_BYTES = 64 * 1024
"""How far into an image its size is looked for (a JPEG's frame header follows its EXIF)."""
MAX_SOURCE_BYTES = 64 * 1024 * 1024
"""An image file larger than this is not read (not even to downscale it)."""
MAX_DOWNSCALE_STEPS = 8
FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp"})
"""Names that claim an image: such a file whose bytes are none of the four is refused."""
NO_IMAGES = "this model endpoint rejected images earlier in this session"
"""Why an image went as a placeholder after the endpoint refused images."""
REFUSALS = (
    "image",
    "content type",
    "content_type",
    "multimodal",
    "vision",
    "must be a string",
)
"""Words of an endpoint's 4xx that say it takes no images (OpenAI: "Invalid content type.
image_url is only supported by certain models."; llama.cpp and vLLM name the image, or want
string content)."""
_IMAGE_PARTS = ("image_url", "input_image")
_TEXT_PARTS = ("text", "input_text")


class ImageError(ValueError):
    """An image that cannot be sent: not an image, or too large (the message says which)."""

    def __init__(self, message: str, *, not_an_image: bool = False) -> None:
        super().__init__(message)
        self.not_an_image = not_an_image


@dataclass(frozen=True, slots=True)
class Image:
    """One image, ready for the model.

    Attributes:
        data: The bytes as sent.
        format: ``PNG``, ``JPEG``, ``GIF`` or ``WEBP`` (from the bytes).
        width: Pixels.
        height: Pixels.
        name: Where it came from (a file name, or ``image 1 of <tool>``).
        original_bytes: The size before downscaling (None: not downscaled).
    """

    data: bytes
    format: str
    width: int
    height: int
    name: str = "image"
    original_bytes: int | None = None

    @property
    def mime(self) -> str:
        """``image/png`` and so on."""
        return FORMATS[self.format]

    def describe(self) -> str:
        """``shot.png (PNG, 800×600, 41 KB)``, and what it was before downscaling."""
        was = (
            f", downscaled from {human_size(self.original_bytes)}"
            if self.original_bytes is not None
            else ""
        )
        size = human_size(len(self.data))
        return f"{self.name} ({self.format}, {self.width}×{self.height}, {size}{was})"

    def data_url(self) -> str:
        """``data:image/png;base64,...``."""
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"

    def part(self) -> dict[str, Any]:
        """The Chat Completions content part."""
        return {"type": "image_url", "image_url": {"url": self.data_url()}}


def human_size(size: int) -> str:
    """``812 bytes``, ``41 KB``, ``7.2 MB`` (1024-based, as ``ls -h``)."""
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{round(size / 1024)} KB"
    return f"{size / 1024 / 1024:.1f} MB"


def sniff(data: bytes) -> tuple[str, int, int] | None:
    """``(format, width, height)`` when ``data`` begins as a PNG, JPEG, GIF or WebP file;
    None otherwise (a size that cannot be read is 0×0)."""
    if data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) >= 24:
        width, height = struct.unpack(">II", data[16:24])
        return "PNG", width, height
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        width, height = struct.unpack("<HH", data[6:10])
        return "GIF", width, height
    if data.startswith(b"\xff\xd8\xff"):
        return ("JPEG", *_jpeg_size(data))
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ("WEBP", *_webp_size(data))
    return None


def _jpeg_size(data: bytes) -> tuple[int, int]:
    at = 2
    while at + 9 < len(data):
        if data[at] != 0xFF:
            return 0, 0
        marker = data[at + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # no length
            at += 2
            continue
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):  # a frame header
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return width, height
        at += 2 + struct.unpack(">H", data[at + 2 : at + 4])[0]
    return 0, 0


def _webp_size(data: bytes) -> tuple[int, int]:
    chunk = data[12:16]
    if chunk == b"VP8 " and len(data) >= 30:
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(data) >= 30:
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    return 0, 0


def named_like_image(path: str | Path) -> bool:
    """The name ends in ``.png``, ``.jpg``, ``.jpeg``, ``.gif`` or ``.webp``."""
    return Path(path).suffix.lower() in SUFFIXES


def from_bytes(data: bytes, name: str, max_bytes: int) -> Image:
    """An image from its bytes, fitted under ``max_bytes``.

    Raises:
        ImageError: the bytes are none of PNG, JPEG, GIF, WebP; or too large to send.
    """
    found = sniff(data[:SNIFF_BYTES])
    if found is None:
        raise ImageError(
            f"{name} is not a PNG, JPEG, GIF or WebP image (checked by its content, not its name)",
            not_an_image=True,
        )
    image_format, width, height = found
    return fit(Image(data, image_format, width, height, name), max_bytes)


def load(path: Path, limits: ImageLimits) -> Image:
    """The image file at ``path`` (``--image``, an attached path), fitted to the limits.

    Raises:
        ImageError: missing, unreadable, not an image, or too large.
    """
    try:
        size = path.stat().st_size
        if size > limits.max_bytes and (size > MAX_SOURCE_BYTES or _pillow() is None):
            if size > MAX_SOURCE_BYTES:
                raise ImageError(
                    f"{path.name} is {human_size(size)}, more than the "
                    f"{human_size(MAX_SOURCE_BYTES)} codebot reads of an image"
                )
            raise ImageError(_too_large(path.name, size, limits.max_bytes))
        data = path.read_bytes()
    except FileNotFoundError:
        raise ImageError(f"{path} does not exist") from None
    except IsADirectoryError:
        raise ImageError(f"{path} is a directory, not an image") from None
    except OSError as exc:
        raise ImageError(f"cannot read {path}: {exc.strerror or exc}") from None
    return from_bytes(data, path.name, limits.max_bytes)


def _too_large(name: str, size: int, cap: int) -> str:
    return (
        f"{name} is {human_size(size)}, over images.max_bytes ({human_size(cap)}), and Pillow "
        "(a dependency of codebot) is not installed to downscale it; install it (pip install "
        "pillow) or raise 'images.max_bytes' in settings.json"
    )


def _pillow() -> Any:
    try:
        import PIL.Image
    except ImportError:
        return None
    return PIL.Image


def fit(image: Image, max_bytes: int) -> Image:
    """``image`` when it is within ``max_bytes``; else a downscaled copy (Pillow).

    Raises:
        ImageError: over the cap, and Pillow is missing or cannot bring it under.
    """
    if len(image.data) <= max_bytes:
        return image
    pil = _pillow()
    if pil is None:
        raise ImageError(_too_large(image.name, len(image.data), max_bytes))
    try:
        smaller = _downscale(pil, image, max_bytes)
    except Exception as exc:  # boundary: Pillow fails on a corrupt or hostile file
        raise ImageError(f"{image.name} could not be downscaled: {exc}") from None
    if smaller is None:
        raise ImageError(
            f"{image.name} ({human_size(len(image.data))}) stays over images.max_bytes "
            f"({human_size(max_bytes)}) even downscaled; raise 'images.max_bytes'"
        )
    return smaller


def _downscale(pil: Any, image: Image, max_bytes: int) -> Image | None:
    """Smaller and smaller copies until one fits (JPEG stays JPEG, the rest become PNG)."""
    with warnings.catch_warnings():  # a decompression bomb fails, it does not warn
        warnings.simplefilter("error", pil.DecompressionBombWarning)
        return _smaller(pil, image, max_bytes)


def _smaller(pil: Any, image: Image, max_bytes: int) -> Image | None:
    with pil.open(io.BytesIO(image.data)) as source:
        source.load()  # the first frame of an animation
        out_format = "JPEG" if image.format == "JPEG" else "PNG"
        frame = source.convert("RGB" if out_format == "JPEG" else "RGBA")
        scale = min(1.0, math.sqrt(max_bytes / len(image.data)))
        for _ in range(MAX_DOWNSCALE_STEPS):
            size = (max(1, int(frame.width * scale)), max(1, int(frame.height * scale)))
            buffer = io.BytesIO()
            frame.resize(size, pil.Resampling.LANCZOS).save(
                buffer, out_format, **({"quality": 85} if out_format == "JPEG" else {})
            )
            data = buffer.getvalue()
            if len(data) <= max_bytes:
                return Image(
                    data, out_format, size[0], size[1], image.name, original_bytes=len(image.data)
                )
            scale *= 0.7
    return None


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def user_message(prompt: str, images: Sequence[Image]) -> dict[str, Any]:
    """The user's prompt with its attached images (a plain string without any)."""
    if not images:
        return {"role": "user", "content": prompt}
    parts = [_text(prompt)]
    for image in images:
        parts += [_text(f"[attached image: {image.describe()}]"), image.part()]
    return {"role": "user", "content": parts}


def tool_images_message(calls: Sequence[tuple[str, str, Sequence[Image]]]) -> dict[str, Any]:
    """The user message, right after a step's tool results, that carries the images those
    results held: ``calls`` is ``(call id, tool name, images)`` in call order."""
    parts = [
        _text(
            "[codebot: the images returned by the tool calls above (a tool result cannot "
            "hold an image on this API, so they follow here); not a message from the user]"
        )
    ]
    for call_id, tool, images in calls:
        for index, image in enumerate(images, start=1):
            label = f"image {index} of {len(images)} returned by call {call_id} ({tool})"
            parts += [_text(f"[{label}: {image.describe()}]"), image.part()]
    return {"role": "user", "content": parts, TOOL_IMAGES_KEY: [c[0] for c in calls]}


def has_images(messages: Iterable[Mapping[str, Any]]) -> bool:
    """Whether any message holds an image part."""
    return any(_image_parts(m) for m in messages)


def _image_parts(message: Any) -> list[int]:
    # dict, not Mapping: an ABC check costs more than the rest of this scan, which runs over
    # the whole history for every request and every estimate
    content = message.get("content") if isinstance(message, dict) else None
    if content.__class__ is not list:
        return []
    return [
        i for i, p in enumerate(content) if isinstance(p, dict) and p.get("type") in _IMAGE_PARTS
    ]


def _url(part: Mapping[str, Any]) -> str:
    value = part.get("image_url")
    if isinstance(value, dict):
        value = cast(dict[str, Any], value).get("url")
    return value if isinstance(value, str) else ""


def _url_bytes(url: str) -> int:
    """The decoded size of a data URL's payload (its length otherwise)."""
    _, _, payload = url.partition("base64,")
    return len(payload) * 3 // 4 if payload else len(url)


def describe_url(url: str) -> str:
    """``PNG, 800×600, 41 KB`` for a data URL (``image`` for a remote URL)."""
    head, _, payload = url.partition("base64,")
    if not head.startswith("data:") or not payload:
        return "image"
    try:
        data = base64.b64decode(payload[: SNIFF_BYTES * 4 // 3 + 4], validate=False)
    except (binascii.Error, ValueError):
        return "image"
    found = sniff(data)
    size = human_size(_url_bytes(url))
    if found is None:
        return f"image, {size}"
    return f"{found[0]}, {found[1]}×{found[2]}, {size}"


def placeholder(part: Mapping[str, Any], reason: str) -> dict[str, Any]:
    """The text part that stands in for an image part: what it was and why it is not sent."""
    kind = "input_text" if part.get("type") == "input_image" else "text"
    return {"type": kind, "text": f"[image not sent ({describe_url(_url(part))}): {reason}]"}


def _replaced(message: Mapping[str, Any], drop: set[int], reason: str) -> dict[str, Any]:
    parts = cast(list[Any], message["content"])
    content = [placeholder(p, reason) if i in drop else p for i, p in enumerate(parts)]
    if all(isinstance(p, dict) and p.get("type") in _TEXT_PARTS for p in content):
        text = "\n".join(str(cast(dict[str, Any], p).get("text") or "") for p in content)
        return {**message, "content": text}
    return {**message, "content": content}


def strip(messages: Sequence[Mapping[str, Any]], reason: str) -> list[Any]:
    """The messages with every image part replaced by its placeholder (a message left with
    text alone gets a plain string, which every endpoint accepts). The same objects where
    there was no image."""
    out: list[Any] = []
    for message in messages:
        found = _image_parts(message)
        out.append(_replaced(message, set(found), reason) if found else message)
    return out


def limit_request(messages: Sequence[Mapping[str, Any]], limits: ImageLimits) -> list[Any]:
    """The messages of one request within ``images.max_per_request`` images and
    ``images.max_request_bytes`` bytes of them: the newest images are kept, older ones
    become placeholders. The same list when nothing had to go."""
    drop: dict[int, set[int]] = {}
    count = total = 0
    for m_index in range(len(messages) - 1, -1, -1):
        message = messages[m_index]
        for p_index in reversed(_image_parts(message)):
            size = _url_bytes(_url(cast(list[Any], message["content"])[p_index]))
            if count < limits.max_per_request and total + size <= limits.max_request_bytes:
                count, total = count + 1, total + size
            else:
                drop.setdefault(m_index, set()).add(p_index)
    if not drop:
        return list(messages)
    reason = (
        "left out of this request: newer images fill 'images.max_per_request' "
        f"({limits.max_per_request}) or 'images.max_request_bytes' "
        f"({human_size(limits.max_request_bytes)})"
    )
    return [_replaced(m, drop[i], reason) if i in drop else m for i, m in enumerate(messages)]


def for_estimate(messages: Sequence[Mapping[str, Any]]) -> tuple[Sequence[Any], int]:
    """The messages with each image's data left out, and how many images there were (each
    costs about :data:`IMAGE_TOKENS`)."""
    count = sum(len(_image_parts(m)) for m in messages)
    if not count:
        return messages, 0
    return strip(messages, "counted apart"), count


def text_of(content: Any) -> str:
    """The text of a message's content: a string, or its text parts joined, each image as a
    short ``[image: PNG, 800×600, 41 KB]``."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else str(content)
    out: list[str] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        part = cast(dict[str, Any], part)
        if part.get("type") in _IMAGE_PARTS:
            out.append(f"[image: {describe_url(_url(part))}]")
        else:
            out.append(str(part.get("text") or ""))
    return "\n".join(out)


def with_name(image: Image, name: str) -> Image:
    """The same image under another name."""
    return replace(image, name=name)
