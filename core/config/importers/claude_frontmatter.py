"""Front matter of an agent, command or skill written for Claude Code, in codebot's terms,
for ``codebot import claude`` (:mod:`.claude_setup`): tool names in ``tools``,
``disallowedTools``, ``allowed-tools`` (``Bash(git add:*)`` → ``bash(git add:*)``; a tool
codebot lacks is dropped, named), ``model`` through ``model_aliases``, a skill's title-like
``name`` → its folder's name. Only the lines of the keys that change are rewritten: the rest
of the file (a multi-line ``description`` with ``<example>`` dialogue, which is not strict
YAML) stays byte for byte.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol


class Item(Protocol):
    """What is translated (:class:`.claude_setup.Item`): its notes say how, a skip why."""

    name: str
    source: Path
    action: str
    notes: list[str]
    reason: str | None


_FRONT = re.compile(r"\A(---[ \t]*\r?\n)(.*?)(\r?\n---[ \t]*(?:\r?\n|\Z))", re.DOTALL)
_KEY_LINE = re.compile(r"^([A-Za-z0-9_-]+)[ \t]*:(.*)$")
TOOL_KEYS = ("tools", "disallowedTools", "allowed-tools", "disallowed-tools")


def translate_text(
    data: bytes, kind: str, aliases: Mapping[str, str], item: Item, folder_name: str | None
) -> bytes | None:
    """The file with its front matter translated (tool names, model, a skill's name); None
    (and the item skipped) when its front matter cannot be read."""
    from codebot_mcp.core.config import definitions

    text = data.decode("utf-8", errors="replace")
    found = _FRONT.match(text)
    if found is None:
        return data
    try:
        front, _ = definitions.parse(text)
    except definitions.FrontMatterError as exc:
        item.action, item.reason = "skip", f"its front matter cannot be read: {exc}"
        return None
    replacements: dict[str, str] = {}
    holder = definitions.Definition(
        definitions.Kind(kind),
        item.name,
        item.source,
        definitions.Folder(definitions.Scope.PROJECT, "", item.source, item.source),
        front,
        "",
    )
    for key in TOOL_KEYS:
        names = holder.names(key)
        if names is None:
            continue
        value = _tools(list(names), key, item)
        if value is not None:
            replacements[key] = value
    model = holder.text("model")
    if model:
        from codebot_mcp.core.config import modelnames

        if model in aliases:
            replacements["model"] = aliases[model]
            item.notes.append(f"model '{model}' → '{aliases[model]}' (model_aliases)")
        elif modelnames.unmapped(model, aliases):
            item.notes.append(
                f"model '{model}' is a Claude model: kept; codebot uses your model for it "
                "until you map it in model_aliases"
            )
    if folder_name is not None:
        from codebot_mcp.core.config.skills import NAME

        name = holder.text("name")
        if name and not NAME.match(name) and NAME.match(folder_name):
            replacements["name"] = folder_name
            item.notes.append(f"name '{name}' is a title: written as '{folder_name}' (its folder)")
    if not replacements:
        return data
    block = _rewrite(found.group(2), replacements)
    return (found.group(1) + block + found.group(3) + text[found.end() :]).encode("utf-8")


def _tools(entries: list[str], key: str, item: Item) -> str | None:
    """A tool list in codebot's names (None: nothing to change)."""
    from codebot_mcp.core.config.definitions import codebot_tool_name

    out: list[str] = []
    changed = False
    for entry in entries:
        base, paren, rest = entry.partition("(")
        base = base.strip()
        name = codebot_tool_name(base)
        if name == base and (base.startswith("mcp__") or not base[:1].isupper()):
            if entry not in out:
                out.append(entry)
            continue
        changed = True
        if name == base:
            item.notes.append(f"{key}: {base} dropped (codebot has no such tool)")
            continue
        spec = rest[:-1] if rest.endswith(")") else rest
        keep = paren and key in ("allowed-tools", "disallowed-tools") and spec.strip()
        new = f"{name}({spec})" if keep else name
        if paren and not keep and spec.strip() not in ("", "*"):
            item.notes.append(f"{key}: {entry} → {name} (codebot does not narrow this list)")
        if new not in out:
            out.append(new)
    if not changed:
        return None
    item.notes.append(f"{key}: {', '.join(entries)} → {', '.join(out) or '(none)'}")
    return ", ".join(out) if out else "[]"


def _rewrite(block: str, replacements: Mapping[str, str]) -> str:
    """``block`` with each key of ``replacements`` given its new value on one line (a value
    written over several lines, a YAML list, is replaced whole)."""
    from codebot_mcp.core.config.definitions import FREE_TEXT, KNOWN_KEYS

    lines = block.splitlines()
    out: list[str] = []
    current: str | None = None
    skipping = False
    for line in lines:
        match = _KEY_LINE.match(line)
        opens = match is not None and not line[:1].isspace()
        if opens and current in FREE_TEXT and match is not None:
            text = "\n".join(out)
            in_example = text.count("<example>") > text.count("</example>")
            opens = match.group(1) in KNOWN_KEYS and not in_example
        if opens and match is not None:
            current = match.group(1)
            skipping = current in replacements
            if skipping:
                out.append(f"{current}: {_yaml_text(replacements[current])}")
                continue
        elif skipping:
            continue  # a continuation of a replaced value
        out.append(line)
    return ("\r\n" if "\r\n" in block else "\n").join(out)


def _yaml_text(value: str) -> str:
    if value == "[]" or re.fullmatch(r"[\w .,/@+-]*(\([^)]*\)[\w .,/@+-]*)*", value):
        return value
    return json.dumps(value)
