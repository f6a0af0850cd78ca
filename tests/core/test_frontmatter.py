"""The strict front matter a served skill's SKILL.md is read with (definitions.parse_strict:
YAML 1.2 scalars, refused duplicates, no lenient fallback), and the JSON comparison with its
entry (core/skills/skillload.py)."""

from __future__ import annotations

import pytest

from codebot_mcp.core.config.definitions import FrontMatterError, parse_strict
from codebot_mcp.core.skills.skillload import file_mismatch, front_matter_mismatch, json_equal
from codebot_mcp.core.tools.sources import SkillFile


def test_scalars_parse_as_a_json_author_wrote_them() -> None:
    fields, body = parse_strict(
        "---\nname: x\nflag: yes\nday: 2024-01-01\nclock: 1:30\nn: 010\nhex: 0x10\n"
        "ratio: 1.5\nok: true\nnested: {a: [1, 2]}\n1: one\n---\n# Body\n"
    )
    assert fields == {
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
    assert body == "# Body"


def test_no_front_matter_and_empty_front_matter() -> None:
    assert parse_strict("# just text") == ({}, "# just text")
    assert parse_strict("---\n---\nbody") == ({}, "body")
    assert parse_strict("\ufeff---\nname: bom\n---\n")[0] == {"name": "bom"}
    # what a lenient reading would keep as text, strict reading keeps as YAML says
    assert parse_strict("---\nargument-hint: [file]\n---\n")[0] == {"argument-hint": ["file"]}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("---\na: 1\na: 2\n---\n", "sets 'a' twice"),
        ("---\na: [\n---\n", "invalid YAML in the front matter at line 3"),
        ("---\n- a\n---\n", "not a mapping of fields"),
        ("---\na: 1\n", "never closed"),
        ("---\ndescription: Use when: x\n---\n", "invalid YAML"),
        ("---\n!!python/object:os.system x: 1\n---\n", "invalid YAML"),
    ],
)
def test_bad_front_matter_says_why(text: str, message: str) -> None:
    with pytest.raises(FrontMatterError, match=message):
        parse_strict(text)


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
