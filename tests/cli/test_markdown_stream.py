"""The REPL's Markdown stream: incremental block splitting agrees with the reference split,
however the text is chunked, and rendering sees each block once."""

from __future__ import annotations

import io
import random

from rich.console import Console

from codebot_mcp.cli.repl.markdown import FENCE, MarkdownStream, _Blocks, last_lines

SAMPLE = (
    "# Title\n\nA paragraph\nover two lines.\n\n- a list\n- of items\n\n"
    "```python\ndef f():\n\n    return 1\n```\n"
    "~~~\nraw ``` inside a tilde fence\n\n~~~\n\n"
    "    indented code\n\nTrailing words without a newline"
)


def split_complete(text: str) -> tuple[str, str]:
    """The reference split, the whole text at once: ``(complete blocks, open rest)``, cut
    after the last blank line or closing fence that is outside a code fence."""
    cut = 0
    fence: str | None = None
    position = 0
    for line in text.splitlines(keepends=True):
        position += len(line)
        if not line.endswith("\n"):
            break  # an unfinished line is never complete
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)[0] * 3
        elif fence is not None and match and match.group(1).startswith(fence):
            fence = None
            cut = position
        elif fence is None and not line.strip():
            cut = position
    return text[:cut], text[cut:]


def test_markdown_blocks_are_split_outside_code_fences() -> None:
    cases = {
        "para one\n\npara tw": ("para one\n\n", "para tw"),
        "```py\nx = 1\n\ny = 2\n": ("", "```py\nx = 1\n\ny = 2\n"),
        "```py\nx = 1\n```\nmore": ("```py\nx = 1\n```\n", "more"),
    }
    for text, expected in cases.items():
        assert split_complete(text) == expected  # the reference
        blocks = _Blocks()
        assert (blocks.add(text), blocks.text) == expected  # the stream's own


def _reference(text: str) -> list[str]:
    """Blocks as split_complete cuts them when the whole text is known up to each point."""
    blocks: list[str] = []
    pending = ""
    for char in text:
        pending += char
        done, rest = split_complete(pending)
        if done:
            blocks.append(done)
            pending = rest
    return [*blocks, pending]


def test_incremental_blocks_match_the_reference_for_any_chunking() -> None:
    expected = _reference(SAMPLE)
    rng = random.Random(13)
    for _ in range(200):
        blocks = _Blocks()
        found: list[str] = []
        position = 0
        while position < len(SAMPLE):
            step = rng.randint(1, 12)
            done = blocks.add(SAMPLE[position : position + step])
            position += step
            if done:
                found.append(done)
        found.append(blocks.take())
        assert "".join(found) == SAMPLE
        # Chunks may complete several blocks at once: compare the cut points.
        cuts = {sum(len(b) for b in found[: i + 1]) for i in range(len(found))}
        reference = {sum(len(b) for b in expected[: i + 1]) for i in range(len(expected))}
        assert cuts <= reference, (cuts - reference, found)


def test_last_lines() -> None:
    assert last_lines("a\nb\nc\n", 2) == "b\nc"
    assert last_lines("a\nb\nc", 2) == "b\nc"
    assert last_lines("only", 3) == "only"
    assert last_lines("", 3) == ""


def test_every_block_is_rendered_once_in_order() -> None:
    sink = io.StringIO()
    stream = MarkdownStream(Console(file=sink, width=80, color_system=None))
    for index in range(0, len(SAMPLE), 5):
        stream.feed(SAMPLE[index : index + 5])
    stream.close()
    out = sink.getvalue()
    for word in ("Title", "over two lines.", "of items", "return 1", "raw ``` inside", "Trailing"):
        assert out.count(word) == 1, (word, out)
    assert out.index("Title") < out.index("return 1") < out.index("Trailing")
