"""Front matter (core/config/frontmatter.py): YAML 1.2 scalars, refused duplicates, bounded head
reads; and the JSON comparison a served skill's front matter gets (core/tools/skillload.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codebot_mcp.core.config.frontmatter import FrontMatterError, parse, read_head
from codebot_mcp.core.tools.skillload import file_mismatch, front_matter_mismatch, json_equal
from codebot_mcp.core.tools.sources import SkillFile


def test_scalars_parse_as_a_json_author_wrote_them() -> None:
    doc = parse(
        "---\nname: x\nflag: yes\nday: 2024-01-01\nclock: 1:30\nn: 010\nhex: 0x10\n"
        "ratio: 1.5\nok: true\nnested: {a: [1, 2]}\n1: one\n---\n# Body\n"
    )
    assert doc.fields == {
        "name": "x",
        "flag": "yes",  # YAML 1.1 would say True
        "day": "2024-01-01",  # not a date object
        "clock": "1:30",  # not 90
        "n": 10,  # not octal 8
        "hex": 16,
        "ratio": 1.5,
        "ok": True,
        "nested": {"a": [1, 2]},
        "1": "one",  # JSON keys are strings
    }
    assert doc.body == "# Body\n" and doc.has_front_matter


def test_no_front_matter_and_empty_front_matter() -> None:
    assert parse("# just text").fields == {}
    assert not parse("# just text").has_front_matter
    assert parse("---\n---\nbody").fields == {}
    assert parse("\ufeff---\nname: bom\n---\n").fields == {"name": "bom"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("---\na: 1\na: 2\n---\n", "the field 'a' is written twice"),
        ("---\na: [\n---\n", "invalid YAML in the front matter at line 3"),
        ("---\n- a\n---\n", "must be a mapping of fields, found list"),
        ("---\na: 1\n", "never closed"),
        ("---\n!!python/object:os.system x: 1\n---\n", "invalid YAML"),
    ],
)
def test_bad_front_matter_says_why(text: str, message: str) -> None:
    with pytest.raises(FrontMatterError, match=message):
        parse(text)


def test_read_head_reads_the_block_only(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_bytes(b"---\nname: a\ndescription: b\n---\n" + b"\xff" * 500_000)
    doc = read_head(path)
    assert doc.fields == {"name": "a", "description": "b"} and doc.body == ""
    path.write_bytes(b"---\nname: a\n" + b"x: y\n" * 20_000)
    with pytest.raises(FrontMatterError, match="not closed within its first"):
        read_head(path)


def test_json_equal_is_strict_about_types() -> None:
    assert json_equal({"a": [1, 2.0]}, {"a": [1.0, 2]})
    assert not json_equal(True, 1)
    assert not json_equal("1", 1)
    assert not json_equal(None, "")
    assert not json_equal({"a": 1}, {"a": 1, "b": None})


def test_front_matter_mismatch_names_the_first_field() -> None:
    entry = {"name": "pdf", "description": "Extract"}
    assert front_matter_mismatch(dict(entry), entry) is None
    found = {"name": "pdf", "description": "Exfiltrate"}
    assert front_matter_mismatch(found, entry) == (
        "front matter field 'description' does not match the entry: "
        'the file has "Exfiltrate", the entry has "Extract"'
    )
    assert "'license' is in the file but not in the entry" in str(
        front_matter_mismatch({**entry, "license": "MIT"}, entry)
    )
    assert "'name' is in the entry but not in the file" in str(
        front_matter_mismatch({"description": "Extract"}, entry)
    )


def test_file_mismatch_checks_size_before_digest() -> None:
    data = b"hello"
    good = SkillFile("skill://a/SKILL.md", _sha(data), 5)
    assert file_mismatch(good, data) is None
    assert file_mismatch(good, data + b"!") == "size 6 bytes does not match the entry's 5 bytes"
    wrong = file_mismatch(good, b"HELLO")
    assert wrong is not None and wrong.startswith("digest sha256:") and good.digest in wrong


def _sha(data: bytes) -> str:
    import hashlib

    return "sha256:" + hashlib.sha256(data).hexdigest()
