"""gzip and deflate, decoded in bounded pieces, so a size cap counts decoded bytes.

A "zip bomb" of 100 kB inflates to gigabytes; decoding piece by piece lets the caller stop at
its cap with bounded memory. Used by the one HTTP answer cap (``core.httpcap``). Written here
because ``zlib``'s decompressobj is the whole of it; httpx decodes a body whole.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

PIECE_BYTES = 65536
"""Decoded bytes produced at a time from a compressed body (memory stays bounded)."""
DECODED = frozenset({"gzip", "x-gzip", "deflate"})
"""The content encodings :class:`Inflater` decodes."""


class Inflater:
    """gzip or deflate, decoded in bounded pieces (a member after the first is decoded too)."""

    def __init__(self, encoding: str) -> None:
        self.wbits = 16 + zlib.MAX_WBITS if encoding in ("gzip", "x-gzip") else zlib.MAX_WBITS
        self.raw_fallback = encoding == "deflate"  # some servers send raw deflate
        self.decoder = zlib.decompressobj(self.wbits)

    def pieces(self, data: bytes) -> Iterator[bytes]:
        """The decoded pieces of ``data`` (each at most :data:`PIECE_BYTES`), one at a time:
        a caller that stops at its cap never inflates the rest.

        Raises:
            zlib.error: the data is corrupt.
        """
        while data:
            try:
                piece = self.decoder.decompress(data, PIECE_BYTES)
            except zlib.error:
                if not self.raw_fallback:
                    raise
                self.raw_fallback = False
                self.decoder = zlib.decompressobj(-zlib.MAX_WBITS)
                piece = self.decoder.decompress(data, PIECE_BYTES)
            self.raw_fallback = False
            if piece:
                yield piece
            data = self.decoder.unconsumed_tail
            if not data and self.decoder.eof and self.decoder.unused_data:
                data = self.decoder.unused_data
                self.decoder = zlib.decompressobj(self.wbits)
            if not piece and not data:
                break
