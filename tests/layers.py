"""The layers of cli/, core/ and mcpbridge/, in one table, and the check ``make lint`` runs.

Each top-level folder is a stack of sub-packages: a module may import its own layer and the
layers below it, never one above. ``core`` imports neither ``mcpbridge`` nor ``cli``;
``mcpbridge`` imports ``core`` but not ``cli``. The modules directly in a top-level folder form
its first layer (``cli``'s entry modules, ``app``, ``entry`` and ``__main__``, sit on top).

Two enforcements read this one table:
- ``python -m tests.layers --write`` writes each sub-package's ``ruff.toml`` (ruff's
  banned-api, so an editor flags an upward import as it is typed); ``--check`` (``make lint``)
  fails when a file differs from what the table says;
- ``--check`` also walks the real import graph, every import counted (in functions and under
  ``TYPE_CHECKING`` too), and fails on an upward import or an import circle. Ruff cannot see
  a circle, nor tell ``cli``'s entry modules from its shared ones.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

STACKS: dict[str, list[tuple[str, str]]] = {
    "core": [
        ("", "errors, envexpand, fsutil: plain helpers every layer may use"),
        ("proc", "child processes: spawn, descendants, /proc, command lookup, one-shot runs"),
        ("secrets", "secrets: redaction, the credential heuristic, stream scrubbing"),
        ("config", "paths, settings, keys, servers, trust, importers, definition files"),
        ("registry", "the MCP Registry: its /v0.1 API, the catalog cache, search, install"),
        ("plugins", "Claude Code plugins and marketplaces: fetch, install, update, remove"),
        ("security", "confinement: the file tools' boundary, the sandbox"),
        ("model", "the model API: configuration, client, errors, streams, tokens"),
        ("tools", "the Tool protocol, built-in tools, arguments, what servers offer and ask"),
        ("agent", "the loop, session, prompt, context, history, permissions, sampling"),
        ("telemetry", "OpenTelemetry export: settings over OTEL_*, spans and metrics of runs"),
    ],
    "mcpbridge": [
        ("", "the SDK's private parts (_sdk)"),
        ("transport", "SDK-free wire: processes, stdio, the HTTP cap, framing, probe, reaper"),
        ("tools", "SDK-free tool definitions: names, capability, argument checks, pins"),
        ("auth", "OAuth on the SDK's providers: flow, token store, loopback, revoke"),
        ("connection", "one connection (Client), the Manager, MCPTool, failures, requests"),
        ("calls", "one call from the shell, results, the hot path"),
        ("warm", "the warm holder and its client"),
        ("doctor", "doctor and its checks"),
        ("serve", "codebot's own tools as an MCP server: mcp serve"),
    ],
    "cli": [
        ("", "shared: rendering, the runtime, signals, login, answers, the warm client"),
        ("repl", "the interactive loop and its views"),
        ("acp", "the ACP agent: editors drive a chat runtime over stdio (codebot acp)"),
        ("commands", "one module per command group"),
    ],
}
CLI_ENTRY = {"codebot_mcp.cli.app", "codebot_mcp.cli.entry", "codebot_mcp.cli.__main__"}
"""``cli``'s entry modules: above every layer (they register the commands)."""

BARE = {
    name: f"the packages install under one top-level name: import codebot_mcp.{name}"
    for name in ("cli", "core", "mcpbridge")
}
EXTERNAL: dict[str, dict[str, str]] = {
    "core": {
        "mcp": "core never imports the MCP SDK: that is mcpbridge's job (ToolSource is the seam)",
        "mcp_types": "core never imports the MCP SDK: that is mcpbridge's job",
        "httpx2": "core never imports the MCP SDK's HTTP client: that is mcpbridge's job",
        "codebot_mcp.mcpbridge": "imports point one way: mcpbridge imports core, not back",
        "codebot_mcp.cli": "imports point one way: cli imports core, never the other way",
        "typer": "core never imports typer: commands live in cli/",
        "click": "core never imports click: commands live in cli/",
        "prompt_toolkit": "core never imports prompt_toolkit: the REPL lives in cli/",
        "acp": "core never imports the ACP library: the ACP agent lives in cli/acp/",
    },
    "mcpbridge": {
        "codebot_mcp.cli": "imports point one way: cli imports mcpbridge, never the other way",
        "typer": "mcpbridge never imports typer: commands live in cli/",
        "click": "mcpbridge never imports click: commands live in cli/",
        "prompt_toolkit": "mcpbridge never imports prompt_toolkit: the REPL lives in cli/",
        "openai": "mcpbridge never talks to the model: core does",
        "mcp.client._transport": "private SDK API: import it from codebot_mcp.mcpbridge._sdk",
        "mcp.shared._stream_protocols": "private SDK API: import it from mcpbridge._sdk",
    },
    "cli": {
        "mcp": "cli never imports the MCP SDK: everything that speaks MCP lives in mcpbridge/",
        "mcp_types": "cli never imports the MCP SDK: everything that speaks MCP is mcpbridge's",
        "httpx2": "cli never imports the MCP SDK's HTTP client: that is mcpbridge's job",
        "typer._click": "private Typer API: use it through codebot_mcp.cli._typer",
        "typer._coercion": "private Typer API: use it through codebot_mcp.cli._typer",
    },
}


ALLOWED: dict[str, dict[str, str]] = {
    "core/model": {
        "httpx2": "openai's own HTTP client: the model client caps its answers on it (cap.py)"
    },
}
"""Bans of ``EXTERNAL`` lifted for one sub-package, each with its reason."""


def ruff_files() -> dict[Path, str]:
    """Every layer's ``ruff.toml``: the folder's external bans and the layers above it."""
    out: dict[Path, str] = {}
    for top, stack in STACKS.items():
        names = [sub for sub, _ in stack]
        for i, (sub, what) in enumerate(stack):
            if top == "cli" and sub == "":
                above: list[str] = []  # the entry modules share the folder: the graph checks it
            else:
                above = [s for s in names[i + 1 :] if s]
            bans = dict(EXTERNAL[top])
            for name in ALLOWED.get(f"{top}/{sub}", {}):
                bans.pop(name, None)
            for s in above:
                here = f"{top}/{sub}/" if sub else f"{top}/*.py"
                bans[f"codebot_mcp.{top}.{s}"] = f"{here} sits below {top}/{s}/ (tests/layers.py)"
            bans.update(BARE)
            folder = ROOT / top / sub if sub else ROOT / top
            lines = [
                f"# {top}/{sub + '/' if sub else ''}: {what}.",
                "# Generated by `make layers` from the table in tests/layers.py: edit it there.",
                "# Every ban is listed: a nested ruff config replaces the table, not merges.",
                f'extend = "{"../" * (2 if sub else 1)}pyproject.toml"',
                "",
                "[lint]",
                'extend-select = ["TID251"]',
                "",
                "[lint.flake8-tidy-imports.banned-api]",
                *(f'"{k}".msg = "{v}"' for k, v in bans.items()),
            ]
            out[folder / "ruff.toml"] = "\n".join(lines) + "\n"
    return out


def modules() -> dict[str, Path]:
    """Every module of the three folders, by its installed name."""
    found: dict[str, Path] = {}
    for top in STACKS:
        for path in (ROOT / top).rglob("*.py"):
            name = ".".join(("codebot_mcp", *path.relative_to(ROOT).with_suffix("").parts))
            found[name.removesuffix(".__init__")] = path
    return found


def imports(path: Path, known: set[str]) -> set[str]:
    """Our modules that ``path`` imports anywhere: in functions and under TYPE_CHECKING too."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {m for m in found if m in known}


def layer(name: str) -> tuple[str, int]:
    """(top-level folder, index in its stack) of a module."""
    parts = name.split(".")
    top = parts[1]
    if name in CLI_ENTRY:
        return top, len(STACKS[top])
    subs = [s for s, _ in STACKS[top]]
    if len(parts) > 3 and parts[2] in subs:
        return top, subs.index(parts[2])
    if len(parts) == 3 and parts[2] in subs:  # the sub-package itself
        return top, subs.index(parts[2])
    return top, 0


TOP_ORDER = {"core": 0, "mcpbridge": 1, "cli": 2}


def upward(graph: dict[str, set[str]]) -> list[str]:
    """Imports that point up a stack, or from core/mcpbridge into a folder above it."""
    bad = []
    for name, targets in graph.items():
        top, level = layer(name)
        for target in targets:
            ttop, tlevel = layer(target)
            if TOP_ORDER[ttop] > TOP_ORDER[top] or (ttop == top and tlevel > level):
                bad.append(f"{name} imports {target}")
    return sorted(bad)


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import circle (strongly connected groups of more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def graph() -> dict[str, set[str]]:
    """The import graph of the three folders (a package's ``__init__`` imports aside from the
    modules its own children import through it)."""
    mods = modules()
    known = set(mods)
    out = {}
    for name, path in mods.items():
        targets = imports(path, known) - {name}
        # ``from pkg import sub`` names the package too; the package is not a real edge when
        # the module lives inside it (its __init__ holds nothing they need)
        out[name] = {t for t in targets if not name.startswith(t + ".")}
    return out


def problems() -> list[str]:
    """Everything ``--check`` reports, one line each."""
    out = []
    for path, text in ruff_files().items():
        if not path.exists() or path.read_text() != text:
            out.append(f"{path.relative_to(ROOT)} differs from tests/layers.py: run make layers")
    g = graph()
    out += [f"upward import: {line}" for line in upward(g)]
    out += [f"import circle: {' -> '.join(group)}" for group in circles(g)]
    return out


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        for path, text in ruff_files().items():
            path.write_text(text)
        return 0
    found = problems()
    for line in found:
        print(line, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
