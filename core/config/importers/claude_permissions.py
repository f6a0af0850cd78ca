"""Claude Code's ``permissions`` (``.claude/settings*.json``) as codebot settings, for
``codebot import claude`` (:mod:`.claude_setup`).

One translator: each rule goes through :func:`core.config.claudefiles.translate_rule`, the
function that reads the same files in place, so an imported rule means what the rule meant
while codebot read ``.claude/``:

- ``Bash`` → ``bash``; ``Bash(git push:*)`` → ``bash(git push:*)`` (codebot's gate reads
  Claude Code's pattern syntax against the call's command, :mod:`core.agent.permissions`);
  ``Edit(src/**)`` → ``edit(src/**)`` and ``write(src/**)``; ``Read(./.env)`` → ``read``,
  ``glob`` and ``grep`` with that path; ``mcp__server__tool`` as it is;
- a ``deny`` ``Read(...)`` rule naming a file or folder (:func:`.claudefiles.read_path`) also
  goes to ``sandbox.deny_read``, so a confined ``bash`` cannot read it either (as in place);
- ``additionalDirectories`` → ``roots`` (both relative to the project root, or home);
- a tool codebot does not have (``WebFetch``...) or a rule it cannot narrow is skipped with
  translate_rule's reason; ``defaultMode`` and other keys are skipped, saying why.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from codebot_mcp.core.config import claudefiles

Verdict = Literal["allow", "ask", "deny"]
LISTS: tuple[Verdict, ...] = ("allow", "ask", "deny")
KEY_REASONS = {
    "defaultMode": "codebot's modes are chosen per run (--yes, the sandbox)",
}
"""Why a key of ``permissions`` other than the rule lists is not imported."""


@dataclass(slots=True)
class Translated:
    """One Claude Code rule, translated."""

    rule: str
    verdict: Verdict
    rules: list[str] = field(default_factory=list[str])
    """codebot rules for ``permissions.<verdict>``."""
    hidden: str | None = None
    """A path for ``sandbox.deny_read`` (a ``deny`` ``Read(...)`` rule naming a file or
    folder), as the target settings file writes it."""
    skipped: str | None = None

    @property
    def how(self) -> str:
        """The translation in words (empty: kept as written)."""
        if self.rules == [self.rule]:
            return ""
        how = f"→ {', '.join(self.rules)}"
        if self.hidden is not None:
            how += f"; {self.hidden} added to sandbox.deny_read (hidden from bash too)"
        return how


def translate(rule: str, verdict: Verdict, root: Path | None = None) -> Translated:
    """``rule`` from Claude Code's ``permissions.<verdict>`` as codebot rules (``root``: the
    project's, None for your own ``~/.claude/settings.json``)."""
    out = Translated(rule, verdict)
    rules, why = claudefiles.translate_rule(rule)
    if not rules:
        out.skipped = why or "not a permission rule"
        return out
    out.rules = list(rules)
    if verdict == "deny":
        scope: claudefiles.Scope = "user" if root is None else "project"
        hidden = claudefiles.read_path(rule, scope, root)
        if hidden is not None:
            out.hidden = _written(hidden, None if "(~/" in rule else root)
    return out


def _written(path: Path, root: Path | None) -> str:
    """``path`` as a settings file of that scope writes it: relative to the project root,
    ``~/...`` below home, else absolute."""
    if root is not None and path.is_relative_to(root):
        return path.relative_to(root).as_posix()
    home = Path(os.path.normpath(Path.home()))
    if path.is_relative_to(home):
        return "~/" + path.relative_to(home).as_posix()
    return str(path)


def translate_section(
    section: Any, root: Path | None = None
) -> tuple[list[Translated], list[str], list[str]]:
    """Every rule of a Claude Code ``permissions`` object, its ``additionalDirectories`` (as
    written: codebot's ``roots`` read them from the same base), and the keys of it codebot
    does not use (``defaultMode``...)."""
    if not isinstance(section, dict):
        return [], [], []
    out: list[Translated] = []
    for verdict in LISTS:
        rules: Any = section.get(verdict)
        if isinstance(rules, list):
            out += [translate(str(r), verdict, root) for r in rules]
    extra: Any = section.get("additionalDirectories")
    directories = [str(d) for d in extra] if isinstance(extra, list) else []
    known = (*LISTS, "additionalDirectories")
    others = [str(k) for k in section if k not in known]
    return out, directories, others


@dataclass(slots=True)
class Planned:
    """What the import does with one rule or key of ``permissions`` (an item of the report)."""

    name: str
    action: str = "copy"
    notes: list[str] = field(default_factory=list[str])
    reason: str | None = None
    written: bool = True
    """It goes to the target settings file (False: a skipped key)."""


def plan_section(
    document: dict[str, Any], section: Any, root: Path | None, target: Path
) -> list[Planned]:
    """Merge every rule of ``section`` (a Claude Code ``permissions`` object) into the target
    settings ``document`` (of the file ``target``), deciding each."""
    rules, directories, others = translate_section(section, root)
    out = [
        Planned(f"permissions.{key}", "skip", [], KEY_REASONS.get(key, _NO_SUCH), written=False)
        for key in others
    ]
    table = document.setdefault("permissions", {})
    for rule in rules:
        item = Planned(f"{rule.verdict}: {rule.rule}")
        out.append(item)
        if rule.skipped:
            item.action, item.reason = "skip", rule.skipped
            continue
        if not isinstance(table, dict):
            item.action, item.reason = "skip", "'permissions' is not an object"
            continue
        if rule.how:
            item.notes.append(rule.how)
        item.action = "translate" if item.notes else "copy"
        listed = table.setdefault(rule.verdict, [])
        new = [r for r in rule.rules if r not in listed]
        listed.extend(new)
        hidden = rule.hidden is not None and _add_to(
            document, ("sandbox", "deny_read"), rule.hidden
        )
        if not new and not hidden:
            item.action, item.reason = "same", f"already in {target}"
    if table == {}:
        del document["permissions"]
    for directory in directories:
        item = Planned(f"additionalDirectories: {directory}", "translate")
        item.notes.append("→ roots (offered to servers, writable in the sandbox)")
        out.append(item)
        if not _add_to(document, ("roots",), directory):
            item.action, item.reason = "same", f"already in {target}"
    return out


_NO_SUCH = "codebot has no such permission setting"


def _add_to(document: dict[str, Any], keys: tuple[str, ...], value: str) -> bool:
    """Add ``value`` to the list at ``keys`` of the settings ``document`` (False: already
    there, or a value of another shape is in the way)."""
    node: Any = document
    for key in keys[:-1]:
        node = node.setdefault(key, {}) if isinstance(node, dict) else None
    if not isinstance(node, dict):
        return False
    listed: Any = node.setdefault(keys[-1], [])
    if not isinstance(listed, list) or value in listed:
        return False
    listed.append(value)
    return True
