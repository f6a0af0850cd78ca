"""The text view of ``codebot mcp list`` (the JSON view is the views themselves)."""

from __future__ import annotations

from typing import Any

from codebot_mcp.cli import render


def print_servers(views: list[dict[str, Any]], schemas: bool) -> None:
    """The text of `mcp list`: each server, its failure if any, its tools (and schemas)."""
    if not views:
        render.warn("no MCP servers are configured")
        return
    marks = {"connected": ("✓", "32"), "disabled": ("-", "2"), "needs login": ("!", "33")}
    for i, v in enumerate(views):
        mark, color = marks.get(v["status"], ("✗", "31"))
        facts = [v["transport"], v["status"]]
        if v["protocol_version"]:
            facts.append(f"protocol {render.safe(v['protocol_version'], one_line=True)}")
        if v["status"] == "connected":
            facts.append(f"{v['tool_count']} tool{'s' if v['tool_count'] != 1 else ''}")
        apps = v.get("app_only_count") or 0
        shown = any(t.get("app_only") for t in v["tools"])
        if apps:
            facts.append(f"{apps} app-only {'shown' if shown else 'hidden'}")
        name = render.safe(v["name"], one_line=True)
        print(
            ("\n" if i else "") + f"{render.style(mark, color)} {render.style(name, '1')}"
            f"  {' · '.join(facts)}"
        )
        source = v["source"] + (f" (overrides {v['overrides']})" if v["overrides"] else "")
        source = _plugin_origin(v["source"]) + source
        print(f"  from {render.safe(source)}")
        if v["failure"]:
            _print_failure(v["failure"])
        if v.get("stale"):
            print(f"  stale (its tool list is out of date): {render.safe(v['stale']['message'])}")
        _print_tools(v, apps, shown)
        if schemas:
            import json

            for t in v["tools"]:
                print(f"\n  {t['name']} input schema:")
                for line in json.dumps(t["input_schema"], indent=2).splitlines():
                    print(f"    {line}")


def _print_failure(err: dict[str, Any]) -> None:
    """Why a server is not connected: the stage and message, the hint, its stderr's tail."""
    if err["stage"] == "lock":  # "held back: ..." (mcpbridge.tools.tool_pins)
        print(f"  {render.safe(err['message'])}")
    else:
        print(f"  {err['stage']} failed: {render.safe(err['message'])}")
    if err.get("hint"):
        print(f"  hint: {render.safe(err['hint'])}")
    if err.get("stderr_tail"):
        print("  server stderr (last lines):")
        for line in err["stderr_tail"].splitlines():
            print(f"    {render.safe(line)}")


def _print_tools(view: dict[str, Any], apps: int, shown: bool) -> None:
    """The tools of one server, app-only ones marked; a line for app-only ones left out."""
    rows = [
        [
            t["name"],
            t["original_name"] if t["name_reason"] else "",
            t["capability"] + (" (app-only)" if t.get("app_only") else ""),
            render.first_line(t["description"], 70),
        ]
        for t in view["tools"]
    ]
    if rows:
        print(render.table(rows, indent="  "))
    if apps and not shown:
        print(
            f"  {apps} app-only tool{'s' if apps != 1 else ''} hidden (MCP Apps: never "
            "offered to the model); --all shows them"
        )


def _plugin_origin(source: str) -> str:
    """``plugin NAME: `` for a server an installed plugin brings (``codebot plugin``)."""
    from pathlib import Path

    from codebot_mcp.core.config.plugins.load import plugin_of

    name = plugin_of(Path(source)) if source else None
    return f"plugin {name}: " if name else ""
