"""A saved session as a document to take away: Markdown or JSON (``codebot export``, ``/export``).

The conversation as the session log holds it (``core.agent.history``): the prompts, the
answers, every tool call with its arguments and its result, and the todo list it ended with.
Every string goes through ``scrub`` (the CLI's, which knows every secret) again on the way
out, since secrets found after the session was saved are masked too. In Markdown, control
characters are shown escaped (:func:`core.secrets.redact.printable`), and tool output sits in
fences longer than any run of backticks it holds, so nothing in it can end the fence early.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from codebot_mcp.core.agent import history
from codebot_mcp.core.agent.history import SavedSession, scrubbed
from codebot_mcp.core.media import images
from codebot_mcp.core.secrets.redact import printable, printable_json
from codebot_mcp.core.tools.builtin.todo import ASCII_MARKS

FORMATS = ("markdown", "json")
EXPORT_VERSION = 1

Scrub = Callable[[str], str]
Message = dict[str, Any]


def document(saved: SavedSession, scrub: Scrub) -> dict[str, Any]:
    """The session as one JSON object: ``session`` (id, created, project, cwd, model),
    ``messages`` (Chat Completions messages, as saved), ``todos``; every string scrubbed."""
    head = history.header(saved.path)
    meta = {key: head.get(key) for key in ("id", "created", "project", "cwd", "model")}
    meta["id"] = saved.id
    data: dict[str, Any] = {
        "version": EXPORT_VERSION,
        "session": meta,
        "messages": history.replay(saved.path),
        "todos": history.todos(saved.path),
    }
    clean: dict[str, Any] = scrubbed(data, scrub)
    return clean


def as_json(saved: SavedSession, scrub: Scrub) -> str:
    """:func:`document` as indented JSON text, safe to show on a terminal."""
    text = json.dumps(document(saved, scrub), indent=2, ensure_ascii=False)
    return printable_json(text) + "\n"


def as_markdown(saved: SavedSession, scrub: Scrub) -> str:
    """The session as Markdown: a heading per message, tool calls and results fenced."""
    data = document(saved, scrub)
    meta = data["session"]
    out = [f"# codebot session {_line(meta['id'])}", ""]
    for key in ("created", "project", "cwd", "model"):
        if meta.get(key):
            out.append(f"- {key}: {_line(meta[key])}")
    names: dict[str, str] = {}
    for message in data["messages"]:
        out += ["", *_message(message, names)]
    if data["todos"]:
        out += ["", "## Todo list", ""]
        for item in data["todos"]:
            mark = ASCII_MARKS.get(str(item.get("status")), "[ ]")
            out.append(f"- {mark} {_line(item.get('content', ''))}")
    return "\n".join(out).rstrip() + "\n"


def render(saved: SavedSession, fmt: str, scrub: Scrub) -> str:
    """``fmt`` is ``markdown`` or ``json``."""
    return as_json(saved, scrub) if fmt == "json" else as_markdown(saved, scrub)


def default_name(saved: SavedSession) -> Path:
    """``codebot-<session>.md``, for ``/export`` without a file."""
    return Path(f"codebot-{saved.id}.md")


def _message(message: Message, names: dict[str, str]) -> list[str]:
    role = message.get("role")
    text = _text(message.get("content"))
    if role == "tool":
        call_id = str(message.get("tool_call_id", ""))
        name = names.get(call_id, "tool")
        return [f"### Result of `{_line(name)}` ({_line(call_id)})", "", *_fence(text)]
    out = [f"## {'User' if role == 'user' else 'Assistant' if role == 'assistant' else role}"]
    if text.strip():
        out += ["", printable(text.strip())]
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        name = str(function.get("name", "?"))
        names[str(call.get("id", ""))] = name
        out += ["", f"### Tool call `{_line(name)}` ({_line(call.get('id', ''))})", ""]
        out += _fence(_arguments(function.get("arguments", "")), "json")
    return out


def _text(content: Any) -> str:
    """A message's content: a string, or parts (text kept, an image named by its format,
    size and bytes: ``[image: PNG, 800×600, 41 KB]``)."""
    return images.text_of(content)


def _arguments(raw: Any) -> str:
    if isinstance(raw, str):
        try:
            return json.dumps(json.loads(raw), indent=2, ensure_ascii=False)
        except json.JSONDecodeError:
            return raw
    return json.dumps(raw, indent=2, ensure_ascii=False)


def _fence(text: str, lang: str = "") -> list[str]:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + lang, printable(text.rstrip("\n")), fence]


def _line(value: Any) -> str:
    return printable(str(value), one_line=True)
