"""A text file's encoding, found once for ``read`` and ``edit`` alike, and kept byte for byte.

The order: a byte-order mark (UTF-8, UTF-16, UTF-32) wins; then strict UTF-8; then an encoding
the file declares (a ``coding:`` cookie, an XML declaration, an HTML ``charset``) if it decodes
the bytes; then Windows-1252 (Latin-1's superset, the most common legacy encoding) when the
text it gives looks Western: its non-ASCII characters are letters within mostly-ASCII words,
or the usual punctuation (no statistics can tell "café" in 1252 from 1250 or 1257, so the
likeliest one is taken); then charset-normalizer's guess among the common encodings, ties
going to the likeliest of them.
Every choice is checked to decode and encode back to the very same bytes; when none is,
Latin-1 is used, which maps each byte to one character and back, so nothing is ever lost.

The ``edit`` tool writes in the file's own encoding (same byte-order mark, same line endings),
so the bytes it does not replace stay as they were; text the encoding cannot hold is refused.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # before UTF-16 LE: it starts with the same bytes
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_DECLARED = re.compile(
    rb"""(?:coding[:=]\s*|encoding\s*=\s*["']|charset\s*=\s*["']?)([-\w.]+)""", re.IGNORECASE
)
_WESTERN_MARKS = frozenset("€‚„…†‡‰‹›‘’“”•–—™¡¢£¥§©«¬\xa0\xad®°±µ¶·»¿×÷")
"""Non-letters that Western text in Windows-1252 uses."""
_LIKELY = (
    "cp1252", "cp932", "gb18030", "cp949", "big5", "euc_jp", "cp1251", "koi8_r", "cp1250",
    "cp1253", "cp1254", "cp1257", "cp1255", "cp1256", "cp874", "cp1258",
)  # fmt: skip
"""The encodings charset-normalizer chooses among, likeliest first (ties go to the first)."""
DETECT_BYTES = 64 * 1024
"""The guess looks at the start of the file (a large file is decided by its first 64 KiB,
then checked whole)."""


@dataclass(frozen=True, slots=True)
class Decoded:
    """A file's text (``\\n`` line endings when the file uses ``\\r\\n`` throughout) and how
    to turn text back into bytes the same way."""

    text: str
    encoding: str
    """The codec of the body (Python's name, e.g. ``utf-8``, ``cp1252``, ``shift_jis``)."""
    bom: bytes = b""
    crlf: bool = False

    @property
    def name(self) -> str:
        """The encoding as users know it (``latin-1``, ``UTF-16 LE with BOM``...)."""
        name = {"iso8859-1": "latin-1"}.get(self.encoding, self.encoding)
        return f"{name} with BOM" if self.bom else name

    @property
    def plain_utf8(self) -> bool:
        """UTF-8 without a byte-order mark: nothing worth saying about it."""
        return self.encoding == "utf-8" and not self.bom

    def encode(self, text: str) -> bytes:
        """``text`` as this file's bytes.

        Raises:
            UnencodableError: ``text`` has characters the file's encoding cannot hold.
        """
        if self.crlf:
            text = text.replace("\r\n", "\n").replace("\n", "\r\n")
        try:
            return self.bom + text.encode(self.encoding)
        except UnicodeEncodeError as exc:
            bad = "".join(dict.fromkeys(exc.object[exc.start : exc.end]))[:10]
            raise UnencodableError(self.name, bad) from None


class UnencodableError(ValueError):
    """Text with characters the file's encoding cannot hold (the file would lose them)."""

    def __init__(self, encoding: str, characters: str) -> None:
        shown = ", ".join(f"{c!r} (U+{ord(c):04X})" for c in characters)
        super().__init__(
            f"the file is {encoding}, which cannot hold {shown}; use characters it has, "
            "or convert the file to UTF-8 first (bash: iconv)"
        )
        self.encoding = encoding
        self.characters = characters


def _lossless(data: bytes, encoding: str, partial: bool = False) -> str | None:
    """``data`` decoded, when it decodes strictly and encodes back to the same bytes.

    ``partial``: ``data`` is the start of a longer file, perhaps cut inside a character; the
    few bytes of such a cut are left out rather than taken for a wrong encoding."""
    try:
        if not partial:
            text = data.decode(encoding)
            return text if text.encode(encoding) == data else None
        text = codecs.getincrementaldecoder(encoding)().decode(data, final=False)
        encoded = text.encode(encoding)
        return text if data.startswith(encoded) and len(data) - len(encoded) < 8 else None
    except (UnicodeError, LookupError):
        return None


def _declared(data: bytes) -> str | None:
    head = b"\n".join(data[:4096].splitlines()[:2]) + b" " + data[:1024]
    match = _DECLARED.search(head)
    if match is None:
        return None
    try:
        return codecs.lookup(match.group(1).decode("ascii")).name
    except (LookupError, UnicodeDecodeError):
        return None


def _western(data: bytes) -> str | None:
    """``cp1252`` when the text it gives looks like a Western language's."""
    try:
        text = data[:DETECT_BYTES].decode("cp1252")
    except UnicodeDecodeError:
        return None
    run = 0  # non-ASCII letters in a row: whole words of them are another script's
    for char in text:
        if char.isascii():
            run = 0
        elif char.isalpha():
            run += 1
            if run >= 3:
                return None
        elif char not in _WESTERN_MARKS:
            return None
    return "cp1252"


def _guess(data: bytes) -> str | None:
    import charset_normalizer  # deferred: only files that are not UTF-8 need a guess

    matches = list(charset_normalizer.from_bytes(data[:DETECT_BYTES], cp_isolation=list(_LIKELY)))
    if not matches:
        return None
    best = min((m.chaos, -m.coherence) for m in matches)
    tied = {
        name
        for m in matches
        if (m.chaos, -m.coherence) == best
        for name in (m.encoding, *m.could_be_from_charset)
    }
    return next((name for name in _LIKELY if name in tied), matches[0].encoding)


def _body_encoding(body: bytes, partial: bool) -> tuple[str, str]:
    """The codec for a file without a byte-order mark, and the text."""
    text = _lossless(body, "utf-8", partial)
    if text is not None:
        return "utf-8", text
    for candidate in (_declared(body), _western(body), _guess(body)):
        if candidate is None:
            continue
        name = codecs.lookup(candidate).name
        if name == "cp1252" and not any(0x80 <= b <= 0x9F for b in body):
            name = "iso8859-1"  # the same characters: call it what it is
        text = _lossless(body, name, partial)
        if text is not None:
            return name, text
    return "iso8859-1", body.decode("iso8859-1")  # one byte, one character: lossless


def decode(data: bytes, *, partial: bool = False) -> Decoded:
    """The text of ``data`` in its own encoding (see the module's docstring); ``partial``:
    ``data`` is only the start of the file."""
    for mark, encoding in _BOMS:
        if data.startswith(mark):
            text = _lossless(data[len(mark) :], encoding, partial)
            if text is not None:
                return _lines(text, encoding, mark)
    encoding, text = _body_encoding(data, partial)
    return _lines(text, encoding, b"")


def _lines(text: str, encoding: str, bom: bytes) -> Decoded:
    crlf = "\r\n" in text and text.count("\n") == text.count("\r\n")
    return Decoded(text.replace("\r\n", "\n") if crlf else text, encoding, bom, crlf)


def has_bom(data: bytes) -> bool:
    """True when ``data`` starts with a Unicode byte-order mark (UTF-16 and 32 hold NULs)."""
    return any(data.startswith(mark) for mark, _ in _BOMS)
