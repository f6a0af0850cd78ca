"""Claude Code's ``permissions`` rules (``.claude/settings.json``) in codebot's terms, for
``codebot import claude`` (:mod:`.claude_setup`).

codebot's rules (``permissions.allow|ask|deny``) name whole tools: ``bash``, ``edit``,
``mcp__github__*``. Claude Code's may narrow a tool with a specifier in parentheses
(``Bash(git commit:*)``, ``Read(./.env)``, ``Edit(src/**)``). So:

- a rule without a specifier (``Bash``, ``Bash(*)``, ``Read``) becomes codebot's rule for the
  same tool (``Edit`` also covers ``write``: Claude Code's ``Edit`` rules cover every tool
  that edits files); an ``mcp__...`` rule is kept as written (same syntax);
- a rule with a specifier becomes a ``PreToolUse`` hook whose ``if`` is the rule itself
  (codebot evaluates ``if`` in Claude Code's rule syntax, :mod:`core.config.hookcontract`)
  and whose output is the rule's verdict (``permissionDecision`` ``allow``/``ask``/``deny``):
  the same calls get the same answer;
- a tool codebot does not have (``WebFetch``, ``WebSearch``, ``NotebookEdit``...) is skipped,
  saying so.

Another translator of the same rules (for reading ``.claude/settings.json`` in place) may
exist beside this one; this one writes codebot's own settings.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

Verdict = Literal["allow", "ask", "deny"]
LISTS: tuple[Verdict, ...] = ("allow", "ask", "deny")

_RULE = re.compile(r"^\s*([A-Za-z0-9_*.-]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)
COVERS = {
    "Edit": ("edit", "write"),
    "MultiEdit": ("edit", "write"),
    "Read": ("read", "glob", "grep"),
}
"""Claude Code's rule names that cover more than one of codebot's tools."""
SPECIFIER_NAMES = {"Edit": ("Edit", "Write"), "MultiEdit": ("Edit", "Write")}
"""The ``if`` conditions a narrowed rule becomes (one per codebot tool it covers)."""


@dataclass(slots=True)
class Translated:
    """One Claude Code rule, translated."""

    rule: str
    verdict: Verdict
    rules: list[str] = field(default_factory=list[str])
    """codebot rules for ``permissions.<verdict>``."""
    hooks: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    """``PreToolUse`` matcher groups carrying the verdict (for a narrowed rule)."""
    how: str = ""
    skipped: str | None = None


def translate(rule: str, verdict: Verdict) -> Translated:
    """``rule`` from Claude Code's ``permissions.<verdict>`` as codebot rules or hooks."""
    from codebot_mcp.core.config.hookcontract import CODEBOT_NAMES

    out = Translated(rule, verdict)
    found = _RULE.match(rule) if isinstance(rule, str) else None  # pyright: ignore[reportUnnecessaryIsInstance]
    if found is None:
        out.skipped = "not a permission rule (Tool or Tool(specifier))"
        return out
    name, spec = found.group(1), found.group(2)
    narrowed = spec is not None and spec.strip() not in ("", "*")
    if name.startswith("mcp__"):
        if narrowed:
            out.skipped = "an MCP rule takes no specifier in parentheses"
        else:
            out.rules = [name]
            out.how = "kept (same syntax)"
        return out
    tool = CODEBOT_NAMES.get(name)
    if tool is None:
        if name == name.lower():  # codebot's own name already
            tool = name
        else:
            out.skipped = f"codebot has no built-in tool like Claude Code's {name}"
            return out
    if not narrowed:
        out.rules = list(COVERS.get(name, (tool,)))
        out.how = f"→ {', '.join(out.rules)}"
        return out
    conditions = [f"{n}({spec})" for n in SPECIFIER_NAMES.get(name, (name,))]
    for condition in conditions:
        out.hooks.append(_hook(condition, verdict))
    out.how = (
        f'→ a PreToolUse hook with "if": {json.dumps(conditions[0])} that answers '
        f"{verdict} (codebot's rules name whole tools)"
    )
    return out


def _hook(condition: str, verdict: Verdict) -> dict[str, Any]:
    """A matcher group whose one hook answers ``verdict`` for calls ``condition`` covers."""
    from codebot_mcp.core.config.hookcontract import CODEBOT_NAMES

    name = condition.split("(", 1)[0]
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": verdict,
            "permissionDecisionReason": f"the rule {condition} (imported from Claude Code)",
        }
    }
    text = json.dumps(answer, separators=(",", ":")).replace("'", "\\u0027")
    return {
        "matcher": CODEBOT_NAMES.get(name, name),
        "hooks": [{"type": "command", "command": f"printf '%s\\n' '{text}'", "if": condition}],
    }


def translate_section(section: Any) -> tuple[list[Translated], list[str]]:
    """Every rule of a Claude Code ``permissions`` object, and the keys of it codebot does
    not use (``defaultMode``, ``additionalDirectories``...)."""
    if not isinstance(section, dict):
        return [], []
    out: list[Translated] = []
    for verdict in LISTS:
        rules: Any = section.get(verdict)  # pyright: ignore[reportUnknownMemberType]
        if isinstance(rules, list):
            out += [translate(str(r), verdict) for r in rules]  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    others = [str(k) for k in section if k not in LISTS]  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    return out, others
