"""Load: 20 servers with 5,000 tools between them, listed in one `mcp list`."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import VALID_TOOL_NAME, run_measured, server_entry, write_settings


def test_mcp_list_with_20_servers_and_5000_tools(tmp_path: Path) -> None:
    servers = {}
    for i in range(20):
        servers[f"srv{i:02d}"] = server_entry("many_raw", "--count", "250", "--page-size", "60")
    write_settings(tmp_path, {"mcp_servers": servers})
    code, output, peak = run_measured(["--cwd", str(tmp_path), "mcp", "list", "--json"])
    assert code == 0, output
    listing = json.loads(output)["servers"]
    names = [t["name"] for s in listing for t in s["tools"]]
    assert len(listing) == 20 and all(s["status"] == "connected" for s in listing)
    assert len(names) == 5000
    assert len(set(names)) == 5000
    assert all(VALID_TOOL_NAME.match(n) for n in names)
    # Memory stays bounded: the whole process, SDK included, well under 400 MB.
    assert peak < 400 * 2**20, f"peak {peak / 2**20:.0f} MB"
