"""core.config.locate: the line of each settings key, by its path."""

from __future__ import annotations

from pathlib import Path

from codebot_mcp.core.config.locate import entry_line, key_lines

TEXT = """{
  "model": "a \\" quoted, {brace} [bracket]",
  "mcp_servers": {
    "one": {"command": "x", "args": ["a", "b"]},
    "two\\nlines": {
      "url": "http://h"
    }
  },
  "permissions": {"allow": []}
}
"""


def test_every_key_has_its_line_and_strings_do_not_confuse_it() -> None:
    lines = key_lines(TEXT)
    assert lines[("model",)] == 2
    assert lines[("mcp_servers",)] == 3
    assert lines[("mcp_servers", "one")] == 4
    assert lines[("mcp_servers", "one", "args")] == 4
    assert lines[("mcp_servers", "two\nlines")] == 5
    assert lines[("mcp_servers", "two\nlines", "url")] == 6
    assert lines[("permissions", "allow")] == 9


def test_entry_line_takes_the_longest_path_found(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(TEXT)
    assert entry_line(path, "mcp_servers", "one") == 4
    assert entry_line(path, "mcp_servers", "gone") == 3
    assert entry_line(path, "nothing") is None
    assert entry_line(tmp_path / "missing.json", "mcp_servers") is None
    path.write_text('{"mcp_servers": {"a": {')  # cut short: what was found before the end
    assert entry_line(path, "mcp_servers", "a") == 1
