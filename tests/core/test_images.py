"""``core.media.images``: formats told by their bytes, sizes read from headers, the request
limits, the placeholders, and what compaction and the token estimate make of images."""

from __future__ import annotations

import base64
import io
import struct
from typing import Any

import pytest

from codebot_mcp.core.agent.context import ContextBudget, cut_result, render_transcript
from codebot_mcp.core.errors import SettingsError
from codebot_mcp.core.media import images
from codebot_mcp.core.media.imagelimits import ImageLimits, parse_images
from codebot_mcp.core.media.images import Image, sniff
from codebot_mcp.core.model.responses import request_input
from tests.fakes.pngs import png, png_claiming


def jpeg(width: int, height: int) -> bytes:
    """A JPEG's start: SOI, an APP0 segment, then a baseline frame header (SOF0)."""
    app0 = (
        b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00" + b"\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    )
    sof0 = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + sof0 + b"\xff\xd9"


def webp_vp8x(width: int, height: int) -> bytes:
    body = b"VP8X" + struct.pack("<I", 10) + b"\x00\x00\x00\x00"
    body += (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return b"RIFF" + struct.pack("<I", len(body) + 4) + b"WEBP" + body


def test_formats_are_told_by_their_bytes_with_their_size() -> None:
    assert sniff(png(31, 17)) == ("PNG", 31, 17)
    assert sniff(jpeg(640, 480)) == ("JPEG", 640, 480)
    assert sniff(b"GIF89a" + struct.pack("<HH", 9, 4) + b"\x00" * 8) == ("GIF", 9, 4)
    assert sniff(webp_vp8x(1920, 1080)) == ("WEBP", 1920, 1080)
    assert sniff(b"<svg xmlns='http://www.w3.org/2000/svg'/>") is None
    assert sniff(b"\x89PNG") is None  # too short to be one
    assert sniff(b"") is None


def test_pillow_made_files_agree_with_the_sniffed_sizes() -> None:
    pil = pytest.importorskip("PIL.Image")
    for kind, fmt in (("JPEG", "JPEG"), ("GIF", "GIF"), ("WEBP", "WEBP"), ("PNG", "PNG")):
        buffer = io.BytesIO()
        pil.new("RGB", (37, 23), (10, 200, 30)).save(buffer, fmt)
        assert sniff(buffer.getvalue()) == (kind, 37, 23), kind


def test_a_small_image_is_sent_as_it_is_and_described() -> None:
    data = png(40, 30)
    image = images.from_bytes(data, "shot.png", 10_000)
    assert image.data == data
    assert image.describe() == f"shot.png (PNG, 40×30, {round(len(data) / 1024)} KB)"
    assert image.part()["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(
        data
    ).decode("ascii")
    with pytest.raises(images.ImageError, match="not a PNG, JPEG, GIF or WebP"):
        images.from_bytes(b"hello", "notes.png", 10_000)


def test_sizes_read_as_ls_h_does() -> None:
    assert images.human_size(812) == "812 bytes"
    assert images.human_size(41 * 1024) == "41 KB"
    assert images.human_size(int(7.2 * 1024 * 1024)) == "7.2 MB"


def picture(n: int) -> dict[str, Any]:
    return Image(png(2 + n, 2), "PNG", 2 + n, 2, f"p{n}").part()


def test_a_request_keeps_the_newest_images_within_the_limits() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": [{"type": "text", "text": "a"}, picture(1), picture(2)]},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": [{"type": "text", "text": "b"}, picture(3)]},
    ]
    same = images.limit_request(messages, ImageLimits())
    assert same == messages
    kept = images.limit_request(messages, ImageLimits(max_per_request=2))
    assert [sniff(_bytes(p))[1] for p in _parts(kept)] == [4, 5]  # picture 2 and 3
    assert "left out of this request" in kept[1]["content"][1]["text"]
    assert "PNG, 3×2" in kept[1]["content"][1]["text"]
    assert messages[1]["content"][1]["type"] == "image_url"  # the history is left alone
    none = images.limit_request(messages, ImageLimits(max_per_request=0))
    assert _parts(none) == [] and isinstance(none[3]["content"], str)
    by_bytes = images.limit_request(messages, ImageLimits(max_request_bytes=len(png(5, 2)) + 5))
    assert [sniff(_bytes(p))[1] for p in _parts(by_bytes)] == [5]


def _parts(messages: list[Any]) -> list[dict[str, Any]]:
    return [
        p
        for m in messages
        if isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "image_url"
    ]


def _bytes(part: dict[str, Any]) -> bytes:
    return base64.b64decode(part["image_url"]["url"].partition("base64,")[2])


def test_the_estimate_counts_an_image_not_its_base64() -> None:
    big = Image(png(300, 300, noise=True), "PNG", 300, 300)
    with_image = [images.user_message("look", [big])]
    text_only = [{"role": "user", "content": "look"}]
    extra = ContextBudget.raw_estimate(with_image, []) - ContextBudget.raw_estimate(text_only, [])
    assert len(big.data) > 200_000
    assert images.IMAGE_TOKENS <= extra < images.IMAGE_TOKENS + 100


def test_compaction_cuts_old_images_to_their_placeholder() -> None:
    message = images.user_message("look", [Image(png(8, 6), "PNG", 8, 6, "a.png")])
    assert cut_result(message) > 0
    assert isinstance(message["content"], str)
    assert "[image not sent (PNG, 8×6, " in message["content"]
    assert "cut to save context" in message["content"]
    assert cut_result(message) == 0  # once


def test_summary_transcripts_name_images_without_their_data() -> None:
    message = images.user_message("look", [Image(png(8, 6), "PNG", 8, 6, "a.png")])
    text = render_transcript([message], 10_000)
    assert "[image: PNG, 8×6, " in text and "base64" not in text


def test_responses_input_carries_the_images_as_input_image() -> None:
    carrier = images.tool_images_message([("call_1", "read", [Image(png(), "PNG", 8, 6)])])
    _, items = request_input([{"role": "system", "content": "s"}, carrier])
    [item] = items
    assert item["role"] == "user" and images.TOOL_IMAGES_KEY not in item
    kinds = [p["type"] for p in item["content"]]
    assert kinds == ["input_text", "input_text", "input_image"]
    stripped = images.strip(items, images.NO_IMAGES)
    assert isinstance(stripped[0]["content"], str)
    assert "rejected images earlier" in stripped[0]["content"]


def test_without_pillow_an_image_over_the_cap_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(__import__("sys").modules, "PIL", None)
    monkeypatch.setitem(__import__("sys").modules, "PIL.Image", None)
    image = Image(png(64, 64, noise=True), "PNG", 64, 64, "big.png")
    assert images.fit(image, len(image.data)) is image
    with pytest.raises(images.ImageError, match=r"Pillow .* is not installed"):
        images.fit(image, 1000)


def test_pillow_downscales_jpeg_as_jpeg() -> None:
    pil = pytest.importorskip("PIL.Image")
    buffer = io.BytesIO()
    noise = pil.effect_noise((256, 256), 120).convert("RGB")
    noise.save(buffer, "JPEG", quality=95)
    image = Image(buffer.getvalue(), "JPEG", 256, 256, "photo.jpg")
    small = images.fit(image, len(image.data) // 3)
    assert small.format == "JPEG" and len(small.data) <= len(image.data) // 3
    assert small.width < 256 and small.original_bytes == len(image.data)
    assert "downscaled from" in small.describe()


def test_settings_check_the_images_section() -> None:
    from pathlib import Path

    where = Path("/p/settings.json")
    assert parse_images(where, "images", {"max_bytes": 10}) == ImageLimits(max_bytes=10)
    with pytest.raises(SettingsError, match=r"'images.max_bytes' in /p/settings.json must be"):
        parse_images(where, "images", {"max_bytes": 0})
    with pytest.raises(SettingsError, match=r"'images.max_byte' .* is not a setting"):
        parse_images(where, "images", {"max_byte": 10})
    with pytest.raises(SettingsError, match="must be an object"):
        parse_images(where, "images", 5)


@pytest.mark.anyio
async def test_the_current_turn_starts_at_the_prompt_not_at_the_tool_images(
    model: Any, tmp_path: Any
) -> None:
    from tests.core.test_agent import make_agent

    agent = make_agent(model, tmp_path)
    call = {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}
    agent.session.history[:] = [
        {"role": "user", "content": "look at the screenshot"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "[image: ...]"},
        images.tool_images_message([("c1", "read", [Image(png(), "PNG", 8, 6)])]),
        {"role": "assistant", "content": "", "tool_calls": [call | {"id": "c2"}]},
        {"role": "tool", "tool_call_id": "c2", "content": "more"},
    ]
    assert agent._current_turn(5) == 0  # compaction moved the prompt: it is found again


def test_a_decompression_bomb_is_refused_not_decoded() -> None:
    pytest.importorskip("PIL.Image")
    bomb = images.from_bytes(png_claiming(10_000, 10_000, 4000), "bomb.png", 10**9)
    assert (bomb.width, bomb.height) == (10_000, 10_000)
    with pytest.raises(images.ImageError, match=r"bomb\.png could not be downscaled"):
        images.fit(bomb, 1000)
