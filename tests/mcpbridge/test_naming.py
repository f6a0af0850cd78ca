"""Tool names the model sees: valid, unique, stable; calls routed by the map."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from codebot_mcp.mcpbridge.tools.naming import allocate
from tests.helpers import VALID_TOOL_NAME


def test_plain_names_are_kept() -> None:
    [name] = allocate([("github", "create_issue")])
    assert name.name == "mcp__github__create_issue"
    assert name.reason is None


def test_long_name_is_shortened_with_a_stable_hash() -> None:
    tool = "t" * 70
    [first] = allocate([("srv", tool)])
    [again] = allocate([("srv", tool)])
    assert len(first.name) == 64
    assert VALID_TOOL_NAME.match(first.name)
    assert first.reason == "shortened"
    assert first.name == again.name
    assert first.name.startswith("mcp__srv__ttt")


def test_invalid_characters_are_sanitized_and_do_not_steal_a_plain_name() -> None:
    names = allocate([("s", "a.b"), ("s", "a_b")])
    by_tool = {n.tool: n for n in names}
    assert by_tool["a_b"].name == "mcp__s__a_b"
    assert by_tool["a.b"].name != "mcp__s__a_b"
    assert by_tool["a.b"].reason == "sanitized"
    assert VALID_TOOL_NAME.match(by_tool["a.b"].name)


def test_duplicates_get_distinct_names() -> None:
    names = allocate([("s", "x"), ("s", "x")])
    assert len({n.name for n in names}) == 2
    assert names[1].reason == "duplicate"


def test_two_long_names_sharing_a_prefix_stay_distinct() -> None:
    prefix = "p" * 70
    names = allocate([("s", prefix + "one"), ("s", prefix + "two")])
    assert names[0].name != names[1].name
    assert all(len(n.name) <= 64 for n in names)


server_names = st.from_regex(r"[A-Za-z0-9-]{1,40}", fullmatch=True)
tool_names = st.text(min_size=1, max_size=100)


@given(st.lists(st.tuples(server_names, tool_names), min_size=1, max_size=30))
def test_any_names_give_valid_unique_stable_results(pairs: list[tuple[str, str]]) -> None:
    pairs = sorted(set(pairs))
    first = allocate(pairs)
    second = allocate(pairs)
    assert [n.name for n in first] == [n.name for n in second]
    assert len({n.name for n in first}) == len(pairs)
    assert all(VALID_TOOL_NAME.match(n.name) for n in first)
    assert [(n.server, n.tool) for n in first] == pairs  # each name stays with its tool
