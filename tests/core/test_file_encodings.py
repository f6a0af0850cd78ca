"""``read`` and ``edit`` on files that are not UTF-8: the text shown is the file's own, the
encoding is named, and an edit of what ``read`` showed matches and is written in that
encoding, every other byte left as it was. Real files; the last test goes through `chat -p`
with the loopback model, as a model would use the two tools.
"""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from codebot_mcp.core.tools.builtin import EditTool, ReadTool
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI

pytestmark = pytest.mark.anyio

CASES = [
    # (file name, bytes, encoding read must name, text read must show, old, new)
    (
        "latin1.txt",
        "name = 'Müller'\nplace = 'Köln'\ncafé = 1\n".encode("latin-1"),
        "latin-1",
        "place = 'Köln'",
        "'Köln'",
        "'Zürich'",
    ),
    (
        "cp1252.txt",
        "price: 5€ – “quoted”\nnaïve line\n".encode("cp1252"),
        "cp1252",
        "price: 5€ – “quoted”",
        "5€",
        "7€",
    ),
    (
        "sjis.txt",
        "こんにちは、世界。これは日本語のテキストです。\n二行目です。\n".encode("shift_jis"),
        "cp932",
        "二行目です。",
        "二行目",
        "三行目",
    ),
    (
        "cyrillic.py",
        "# -*- coding: cp1251 -*-\nprint('Привет')\n".encode("cp1251"),
        "cp1251",
        "print('Привет')",
        "Привет",
        "Пока",
    ),
    (
        "utf16.txt",
        codecs.BOM_UTF16_BE + "first wörd\r\nsecond\r\n".encode("utf-16-be"),
        "utf-16-be with BOM",
        "first wörd",
        "wörd",
        "wört",
    ),
]


@pytest.mark.parametrize(("name", "data", "encoding", "shown", "old", "new"), CASES)
async def test_read_names_the_encoding_and_edit_keeps_it(
    tmp_path: Path, name: str, data: bytes, encoding: str, shown: str, old: str, new: str
) -> None:
    f = tmp_path / name
    f.write_bytes(data)
    read = await ReadTool(tmp_path).execute({"path": name})
    assert not read.is_error, read.text
    assert f"encoding: {encoding}" in read.text.splitlines()[0]
    assert shown in read.text and "\ufffd" not in read.text
    assert read.data["encoding"] == encoding

    edit = await EditTool(tmp_path).execute({"path": name, "old_string": old, "new_string": new})
    assert not edit.is_error, edit.text
    assert f"written as {encoding}" in edit.text
    codec = {"latin-1": "latin-1", "utf-16-be with BOM": "utf-16-be"}.get(encoding, encoding)
    body = data[2:] if encoding.endswith("BOM") else data
    expected = body.replace(old.encode(codec), new.encode(codec), 1)
    assert f.read_bytes() == data[: len(data) - len(body)] + expected


async def test_text_the_encoding_cannot_hold_is_refused_and_nothing_changes(
    tmp_path: Path,
) -> None:
    f = tmp_path / "l.txt"
    data = "café\nend\n".encode("latin-1")
    f.write_bytes(data)
    edit = await EditTool(tmp_path).execute(
        {"path": "l.txt", "old_string": "end", "new_string": "終わり"}
    )
    assert edit.is_error and "latin-1" in edit.text and "U+7D42" in edit.text
    assert f.read_bytes() == data


async def test_bytes_no_encoding_explains_survive_an_edit(tmp_path: Path) -> None:
    """Bytes that make sense in no encoding: read shows them losslessly (Latin-1), and an edit
    elsewhere in the file keeps every one of them."""
    f = tmp_path / "mixed.txt"
    junk = bytes([0x81, 0x8D, 0x8F, 0x90, 0x9D, 0xC3, 0x28, 0xFF, 0xFE, 0xA0])
    data = b"keep: " + junk + b"\nchange me\n" + junk + b"\n"
    f.write_bytes(data)
    read = await ReadTool(tmp_path).execute({"path": "mixed.txt"})
    assert not read.is_error and "encoding:" in read.text.splitlines()[0]
    edit = await EditTool(tmp_path).execute(
        {"path": "mixed.txt", "old_string": "change me", "new_string": "changed"}
    )
    assert not edit.is_error, edit.text
    assert f.read_bytes() == data.replace(b"change me", b"changed")


async def test_utf8_files_read_as_before(tmp_path: Path) -> None:
    (tmp_path / "u.txt").write_text("grüße\n", encoding="utf-8")
    read = await ReadTool(tmp_path).execute({"path": "u.txt"})
    assert read.text == "     1\tgrüße" and "encoding" not in read.data


def test_a_model_reads_then_edits_a_legacy_file(
    tmp_path: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "prices.txt"
    data = "Preis: 5€\nGrüße\n".encode("cp1252")
    f.write_bytes(data)
    fake.queue(
        fo.tool_calls(("read", {"path": "prices.txt"})),
        fo.tool_calls(("edit", {"path": "prices.txt", "old_string": "5€", "new_string": "7€"})),
        fo.text("done"),
    )
    code = run(["--cwd", str(tmp_path), "--base-url", fake.base_url, "chat", "-p", "x", "--yes"])
    assert code == 0, capsys.readouterr().err
    results = [m["content"] for m in fake.bodies[-1]["messages"] if m["role"] == "tool"]
    assert "encoding: cp1252" in results[0] and "Preis: 5€" in results[0]
    assert "Edited" in results[1], results[1]
    assert f.read_bytes() == "Preis: 7€\nGrüße\n".encode("cp1252")
