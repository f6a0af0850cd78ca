"""Images attached to a prompt: ``--image PATH`` on ``chat``, and in the REPL a pasted or typed
path to an image file, or ``@./shot.png``.

A word of the prompt attaches its file when, once a leading ``@`` and the quotes or
backslash escapes a terminal adds to a dropped file are removed, it names an existing file
whose bytes are a PNG, JPEG, GIF or WebP image (a word with no ``/`` must also be named like
one, so a plain word is never looked up). The prompt keeps its words (the model reads the path
too). A word that names an existing file with an image's name (``.png``...) whose bytes are
not one stops the prompt with an error, as an unreadable ``@server:uri`` does, and so does
``@missing.png``; any other word is only text (``@notes.md`` mentions a file, as a custom
command's ``@path`` does).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import anyio.to_thread

from codebot_mcp.cli import render
from codebot_mcp.core.errors import CodebotError, UsageError
from codebot_mcp.core.media import imagelimits, images
from codebot_mcp.core.media.imagelimits import ImageLimits

if TYPE_CHECKING:
    from codebot_mcp.cli.chat_runtime import ChatRuntime

MAX_ATTACHED = 20
"""Images one prompt may attach (``images.max_per_request`` still bounds what is sent)."""
TRAILING = ".,;:!?)]}'\""
"""Punctuation that may end a sentence right after a path."""
_WORD = re.compile(r"""'[^']+'|"[^"]+"|(?:\\.|\S)+""")
"""A word: single- or double-quoted as a whole, or unquoted with backslash escapes."""


def load_images(paths: Sequence[str], cwd: Path, limits: ImageLimits) -> tuple[images.Image, ...]:
    """``--image PATH`` (repeatable), each loaded and fitted.

    Raises:
        UsageError: a file is missing, not an image, or too large (exit 2).
    """
    if len(paths) > MAX_ATTACHED:
        raise UsageError(f"at most {MAX_ATTACHED} images go with one prompt, {len(paths)} given")
    loaded: list[images.Image] = []
    for raw in paths:
        path = cwd / Path(raw).expanduser()
        try:
            loaded.append(images.load(path, limits))
        except images.ImageError as exc:
            hint = "Give a PNG, JPEG, GIF or WebP file." if exc.not_an_image else None
            raise UsageError(f"--image {raw}: {exc}", hint=hint) from None
    return tuple(loaded)


def _candidate(word: str) -> tuple[str, bool]:
    """The path a word may name, and whether it asks for an image (``@``, an image name)."""
    asked = word.startswith("@")
    word = word.removeprefix("@")
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "'\"":
        word = word[1:-1]
    else:
        word = re.sub(r"\\(.)", r"\1", word)
    if word.startswith("file://"):
        word = word.removeprefix("file://")
    return word, asked or images.named_like_image(word.rstrip(TRAILING))


def _existing(cwd: Path, text: str) -> Path | None:
    """The file a word names, also when a sentence's punctuation follows it (``shot.png?``)."""
    for candidate in dict.fromkeys((text, text.rstrip(TRAILING))):
        path = cwd / Path(candidate).expanduser()
        if candidate and path.is_file():
            return path
    return None


def attached_images(line: str, cwd: Path, limits: ImageLimits) -> tuple[images.Image, ...]:
    """The images the words of a REPL prompt attach, each announced on stderr.

    Raises:
        UsageError: a word asks for an image file that exists but cannot be sent.
    """
    found: list[images.Image] = []
    seen: set[Path] = set()
    for match in _WORD.finditer(line):
        text, asked = _candidate(match.group(0))
        if not text or not ("/" in text or asked):
            continue
        path = _existing(cwd, text)
        if (
            path is None
            and match.group(0)[0] == "@"
            and images.named_like_image(text.rstrip(TRAILING))
        ):
            raise UsageError(
                f"{text.rstrip(TRAILING)} does not exist; the prompt was not sent",
                hint="Check the path (relative to the working directory) of the image to attach.",
            )
        try:
            if path is None or path.resolve() in seen:
                continue
            with path.open("rb") as fh:
                head = fh.read(images.SNIFF_BYTES)
        except OSError:
            continue
        if images.sniff(head) is None:
            if images.named_like_image(path.name):  # `@notes.md` mentions a file: only text
                raise UsageError(
                    f"{path.name} is not a PNG, JPEG, GIF or WebP image (checked by its content, "
                    "not its name); the prompt was not sent",
                    hint="Attach an image file, or leave out the @ to mention the path only.",
                )
            continue
        if len(found) >= MAX_ATTACHED:
            raise UsageError(f"at most {MAX_ATTACHED} images go with one prompt")
        try:
            image = images.load(path, limits)
        except images.ImageError as exc:
            raise UsageError(f"{exc}; the prompt was not sent") from None
        seen.add(path.resolve())
        found.append(image)
        announce(image)
    return tuple(found)


def announce(image: images.Image) -> None:
    """``attached shot.png (PNG, 800×600, 41 KB)``, dimmed, on stderr."""
    line = render.safe(f"attached {image.describe()}")
    print(render.style(line, "2", sys.stderr), file=sys.stderr)


class Attachments:
    """The REPL's images: ``--image`` files wait for the first message; each prompt's own
    (typed paths, ``@./shot.png``) go with it."""

    def __init__(self) -> None:
        self.pending: tuple[images.Image, ...] = ()

    def load_flags(self, paths: Sequence[str], runtime: ChatRuntime) -> None:
        """``--image`` files, announced now (one that cannot be loaded is shown as an error,
        and left out)."""
        try:
            self.pending = load_images(paths, runtime.globals.cwd, imagelimits.of(runtime.settings))
        except CodebotError as exc:
            render.error(exc)
        for image in self.pending:
            announce(image)

    async def take(self, line: str, runtime: ChatRuntime) -> tuple[images.Image, ...] | None:
        """The images that go with this prompt; None when one failed (shown: the prompt is
        not sent, and the ``--image`` files wait for the next). In a thread: downscaling a
        4K screenshot takes seconds, and the MCP servers' connections live on this loop."""
        cwd, limits = runtime.globals.cwd, imagelimits.of(runtime.settings)
        try:
            found = await anyio.to_thread.run_sync(attached_images, line, cwd, limits)
        except CodebotError as exc:
            render.error(exc)
            return None
        pending, self.pending = self.pending, ()
        return pending + found
