"""A server whose tools are described by a file (server "described").

On the raw two-era base (:mod:`tests.servers._era`). ``--tools FILE`` names a JSON list of
``{"name", "description"}``; each becomes a tool with no arguments that answers
``<name> called``. Doctor's lint tests serve published servers' kinds of descriptions (and
attacks) through it.

Run: ``python -m tests.servers.described --tools FILE``
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from tests.servers._era import Call, EraServer, text_result, tool


class Described(EraServer):
    name = "described"

    def __init__(self, tools: list[dict[str, Any]]) -> None:
        super().__init__()
        self.tools = tools  # type: ignore[misc]  # the base's class default, per instance

    def call_tool(self, name: str, arguments: dict[str, Any], call: Call) -> dict[str, Any]:
        return text_result(f"{name} called")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", required=True, help="a JSON list of {name, description}")
    args = parser.parse_args()
    with open(args.tools, encoding="utf-8") as handle:
        listed = [tool(t["name"], t["description"]) for t in json.load(handle)]
    Described(listed).serve()


if __name__ == "__main__":
    main()
