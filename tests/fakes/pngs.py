"""Real PNG files made with the standard library (zlib, struct): tests need image bytes that
every decoder accepts, without a binary fixture or Pillow."""

from __future__ import annotations

import struct
import zlib


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def png(width: int = 8, height: int = 6, *, noise: bool = False, seed: int = 1) -> bytes:
    """An RGB PNG of ``width``×``height``: a gradient, or (``noise``) pixels that barely
    compress, to make a large file."""
    rows = bytearray()
    state = seed
    for y in range(height):
        rows.append(0)  # filter: none
        for x in range(width):
            if noise:
                state = (state * 1103515245 + 12345) & 0x7FFFFFFF
                rows += state.to_bytes(4, "little")[:3]
            else:
                rows += bytes(
                    ((x * 255) // max(1, width - 1), (y * 255) // max(1, height - 1), 128)
                )
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(bytes(rows), 9))
        + _chunk(b"IEND", b"")
    )


def png_claiming(width: int, height: int, size: int) -> bytes:
    """A PNG header that claims ``width``×``height`` pixels (a decompression bomb's), padded
    with a junk chunk to ``size`` bytes."""
    header = _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    start = b"\x89PNG\r\n\x1a\n" + header
    return start + _chunk(b"tEXt", b"x" * max(0, size - len(start) - 12))
