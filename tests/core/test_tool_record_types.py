"""mypy holds the seam: a class without the tool record (``Tool.info``) is not a ``Tool``.

The gate reads ``tool.info`` and never probes with ``getattr``, so a tool that lacks the
record, or spells a field of it wrong, must fail ``make lint`` rather than lose a check at
run time. This runs mypy (strict, as ``make lint`` does) on a small module beside the real
``core/tools/base.py``.
"""

from __future__ import annotations

from pathlib import Path

from mypy import api

REPO = Path(__file__).resolve().parents[2]

SNIPPET = """\
from collections.abc import Mapping
from typing import Any

from codebot_mcp.core.tools.base import (
    Capability, Origin, Permission, Tool, ToolInfo, ToolResult,
)


class Recorded:
    name = "recorded"
    description = ""

    @property
    def info(self) -> ToolInfo:
        return ToolInfo(Origin.BUILTIN, Permission(Capability.READ, "has its record"))

    def schema(self) -> dict[str, Any]:
        return {"type": "object"}

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        return ToolResult("ok")


class Unrecorded:
    name = "unrecorded"
    description = ""
    reach = None  # the old probe's attribute: no longer what the gate reads

    def schema(self) -> dict[str, Any]:
        return {"type": "object"}

    def permission(self) -> Permission:
        return Permission(Capability.READ, "no record")

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        return ToolResult("ok")


good: Tool = Recorded()
bad: Tool = Unrecorded()
misspelled = ToolInfo(Origin.BUILTIN, Permission(Capability.READ, "x"), reaches=None)
"""


def test_a_tool_without_its_record_does_not_type_check(tmp_path: Path) -> None:
    root = tmp_path / "typecheck" / "codebot_mcp"
    root.mkdir(parents=True)
    (root / "core").symlink_to(REPO / "core")
    (tmp_path / "snippet.py").write_text(SNIPPET)
    config = tmp_path / "mypy.ini"
    config.write_text(f"[mypy]\nmypy_path = {tmp_path / 'typecheck'}\nstrict = True\n")
    out, err, status = api.run(
        [
            f"--config-file={config}",
            f"--cache-dir={tmp_path / 'cache'}",
            "--follow-imports=silent",
            str(tmp_path / "snippet.py"),
        ]
    )
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert status == 1, out + err
    lines = SNIPPET.splitlines()
    where = {int(e.split(":")[1]) for e in errors}
    assert where == {lines.index("bad: Tool = Unrecorded()") + 1, len(lines)}, out
    assert '"Unrecorded" is missing following "Tool" protocol member' in out
    assert 'Unexpected keyword argument "reaches" for "ToolInfo"' in out
