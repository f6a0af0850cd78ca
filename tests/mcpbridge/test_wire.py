"""The SDK-free wire both paths share (:mod:`mcpbridge.transport.wire`), piece by piece:
the framing, the error answer, the era decision, the tool filter. The paths themselves are
compared on a real wire in ``test_lite_wire.py``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from codebot_mcp.mcpbridge.transport import wire


def test_lines_are_split_across_chunks_and_blank_lines_skipped() -> None:
    framer = wire.LineFramer()
    assert framer.feed(b'{"a":') == []
    assert framer.feed(b'1}\n\n  \n{"b":2}\n{"c"') == [b'{"a":1}', b'{"b":2}']
    assert framer.feed(b":3}\n") == [b'{"c":3}']


def test_an_oversized_line_is_dropped_once_with_the_id_it_answers() -> None:
    framer = wire.LineFramer()
    head = b'{"jsonrpc":"2.0","id":7,"result":{"text":"'
    out = framer.feed(head + b"x" * wire.MAX_MESSAGE_BYTES)
    assert out == [wire.Oversized(len(head) + wire.MAX_MESSAGE_BYTES, 7)]
    assert "larger than 32 MB" in out[0].message
    assert framer.feed(b"x" * 1024) == []  # the rest of it is skipped, not buffered
    assert framer.feed(b'"}}\n{"id":8}\n') == [b'{"id":8}']  # the next line is read again


def test_an_oversized_request_of_the_server_names_no_id() -> None:
    framer = wire.LineFramer()
    line = b'{"jsonrpc":"2.0","id":"s-1","method":"sampling/createMessage","params":"'
    [out] = framer.feed(line + b"x" * wire.MAX_MESSAGE_BYTES)
    assert isinstance(out, wire.Oversized) and out.request_id is None


@pytest.mark.parametrize(
    ("head", "found"),
    [
        (b'{"jsonrpc":"2.0","id":12,"result":', 12),
        (b'{"id" : "a\\"b", "result"', 'a"b'),
        (b'{"jsonrpc":"2.0","id":-3,"error":', -3),
        (b'{"jsonrpc":"2.0","method":"ping","id":1}', None),
        (b"not json at all", None),
    ],
)
def test_the_id_of_an_answer_is_read_from_its_start(head: bytes, found: Any) -> None:
    assert wire.answer_id(head) == found


def test_the_error_answer_fails_the_request_it_names() -> None:
    answer = wire.error_answer(4, wire.UNREADABLE)
    assert answer == {
        "jsonrpc": "2.0",
        "id": 4,
        "error": {"code": -32603, "message": wire.UNREADABLE},
    }


def test_a_server_that_answers_unknown_methods_is_waited_for() -> None:
    probe = wire.EraProbe()
    follow = probe.sent(1)
    assert [m["method"] for m in follow] == [wire.UNKNOWN_METHOD, "ping"]
    assert probe.seen(wire.UNKNOWN_ID) == "swallow"
    assert probe.seen(wire.SENTINEL_ID) == "swallow"  # its answer to the probe is coming
    assert probe.seen(1) == "pass"
    assert probe.seen(2) == "pass"


def test_a_server_that_drops_unknown_methods_gets_its_probe_answered() -> None:
    probe = wire.EraProbe()
    probe.sent(1)
    assert probe.seen(wire.SENTINEL_ID) == "answer_probe"
    assert probe.ignored_answer()["error"]["code"] == wire.METHOD_NOT_FOUND
    assert probe.ignored_answer()["id"] == 1
    assert probe.seen(1) == "drop"  # a late real answer: the client already moved on


def test_an_answer_before_the_ping_is_passed_on() -> None:
    probe = wire.EraProbe()
    probe.sent("d")
    assert probe.seen("d") == "pass"
    assert probe.seen(wire.SENTINEL_ID) == "swallow"


def tool(name: str, visibility: Any = None) -> dict[str, Any]:
    meta = {"ui": {"visibility": visibility}} if visibility is not None else None
    return {"name": name, "_meta": meta}


def test_the_tool_filter_splits_offered_app_only_and_hidden() -> None:
    tools = [
        tool("read_a"),
        tool("read_b", ["app"]),
        tool("write_c"),
        tool("read_d", ["model", "app"]),
        tool("read_e", "app"),
    ]
    split = wire.split_tools(
        tools,
        ["read_*"],
        ["read_d"],
        name=lambda t: str(t["name"]),
        meta=lambda t: t["_meta"],
    )
    assert [t["name"] for t in split.offered] == ["read_a"]
    assert [t["name"] for t in split.apps] == ["read_b", "read_e"]
    assert split.hidden == ("read_b", "write_c", "read_d", "read_e")


def test_no_include_list_selects_everything() -> None:
    split = wire.split_tools(
        [tool("a"), tool("b")], None, (), name=lambda t: t["name"], meta=lambda t: t["_meta"]
    )
    assert [t["name"] for t in split.offered] == ["a", "b"] and split.hidden == ()


def test_what_codebot_declares() -> None:
    envelope = wire.modern_envelope()
    assert envelope[wire.PROTOCOL_VERSION_KEY] == wire.MODERN_VERSION
    assert envelope[wire.CLIENT_INFO_KEY] == wire.client_info()
    caps = envelope[wire.CLIENT_CAPABILITIES_KEY]
    assert set(caps["extensions"]) == {wire.SKILLS, wire.TASKS}
    assert wire.TASKS not in wire.CLIENT_CAPABILITIES["extensions"]
    assert wire.UI not in json.dumps(caps)  # Apps are never declared
