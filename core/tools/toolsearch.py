"""Tool search: large MCP catalogs stay out of the request until the model asks for them.

When it is on, the request carries the built-ins, the ``search_tools`` tool and the MCP tools
loaded so far; every other MCP tool is *deferred* and appears only by name, in a sorted
one-line-per-server catalog in the system prompt. ``search_tools`` ranks deferred tools with
BM25 over their names, descriptions and parameter names (written here: a few dozen lines, and
no ranking library is among our dependencies); what it returns joins the tool list from the
next model turn and stays for the session, in load order, so requests stay byte-stable.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from codebot_mcp.core.tools.base import Capability, Origin, Permission, Tool, ToolInfo, ToolResult

SEARCH_TOOL_NAME = "search_tools"
DEFAULT_RESULTS = 5
MAX_RESULTS = 20
AUTO_SHARE = 0.10
"""``"auto"`` turns tool search on when MCP tool schemas would pass this share of the window."""
NAME_WEIGHT = 3
"""Name tokens count this many times: a query naming the tool should find it first."""
K1, B = 1.2, 0.75

_WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|[a-z]+|\d+")


def tokens(text: str) -> list[str]:
    """Lower-case words of ``text``; ``snake_case``, ``kebab-case`` and ``camelCase`` split."""
    return [w.lower() for w in _WORD.findall(text)]


def short_name(tool: Tool) -> str:
    """The tool's name without its ``mcp__<server>__`` prefix (for the catalog)."""
    original = tool.info.original_name
    if original:
        return original
    parts = tool.name.split("__", 2)
    return parts[2] if len(parts) == 3 else tool.name


def _param_names(tool: Tool) -> list[str]:
    try:
        properties = tool.schema().get("properties") or {}
    except Exception:  # boundary: a stranger's schema must not break the search
        return []
    return [str(k) for k in properties] if isinstance(properties, Mapping) else []


def wanted(setting: str | bool, mcp_tokens: int, window: int, *, has_mcp: bool = True) -> bool:
    """Whether tool search is on: ``setting`` is ``tool_search``, ``mcp_tokens`` the MCP tool
    schemas' estimated size, ``window`` the model's context window."""
    if not has_mcp or setting is False:
        return False
    return setting is True or mcp_tokens > AUTO_SHARE * window


class ToolIndex:
    """BM25 over a fixed set of tools (rebuilt when the MCP tool set changes)."""

    def __init__(self, tools: Sequence[Tool]) -> None:
        self.tools = list(tools)
        self._docs: list[Counter[str]] = []
        self._lengths: list[int] = []
        frequency: Counter[str] = Counter()
        for tool in self.tools:
            words = tokens(tool.name) * NAME_WEIGHT
            words += tokens(tool.description) + tokens(" ".join(_param_names(tool)))
            doc = Counter(words)
            self._docs.append(doc)
            self._lengths.append(len(words))
            frequency.update(doc.keys())
        count = max(1, len(self.tools))
        self._average = sum(self._lengths) / count if self.tools else 0.0
        self._idf = {w: math.log(1 + (count - n + 0.5) / (n + 0.5)) for w, n in frequency.items()}

    def search(self, query: str, limit: int) -> list[Tool]:
        """The best ``limit`` tools for ``query`` (exact names first), best first."""
        wanted = [q for q in re.split(r"[\s,]+", query.strip()) if q]
        exact = [t for t in self.tools if t.name in wanted or short_name(t) in wanted]
        named = {t.name for t in exact} | {short_name(t) for t in exact}
        if exact and all(w in named for w in wanted):  # only exact names: just those
            return exact[:limit]
        words = tokens(query)
        scored: list[tuple[float, int]] = []
        for i, doc in enumerate(self._docs):
            score = 0.0
            norm = K1 * (1 - B + B * self._lengths[i] / (self._average or 1))
            for word in words:
                tf = doc.get(word, 0)
                if tf:
                    score += self._idf[word] * tf * (K1 + 1) / (tf + norm)
            if score > 0:
                scored.append((score, i))
        scored.sort(key=lambda pair: (-pair[0], self.tools[pair[1]].name))
        ranked = exact + [self.tools[i] for _, i in scored if self.tools[i] not in exact]
        return ranked[:limit]


class ToolSearch:
    """What is loaded and what is deferred, for one session."""

    def __init__(self) -> None:
        self.loaded: list[str] = []
        """Names in load order (kept when a tool disappears, so a return keeps its place)."""
        self.pending = False
        """Tools were loaded since the request was last built."""
        self._index = ToolIndex([])
        self._deferred: list[Tool] = []

    def set_deferred(self, tools: Sequence[Tool]) -> None:
        """The MCP tools not loaded, re-indexed only when the set changed."""
        if [t.name for t in tools] != [t.name for t in self._deferred] or any(
            a is not b for a, b in zip(tools, self._deferred, strict=True)
        ):
            self._deferred = list(tools)
            self._index = ToolIndex(self._deferred)

    @property
    def deferred(self) -> list[Tool]:
        """The deferred tools (sorted as the session's tool set is)."""
        return list(self._deferred)

    def load(self, tools: Sequence[Tool]) -> list[Tool]:
        """Mark ``tools`` loaded (from the next request); returns the newly loaded ones."""
        new = [t for t in tools if t.name not in self.loaded]
        self.loaded.extend(t.name for t in new)
        if new:
            self.pending = True
        return new

    def search(self, query: str, limit: int) -> list[Tool]:
        """Rank the deferred tools."""
        return self._index.search(query, limit)


def catalog(deferred: Sequence[Tool], server_of: Callable[[Tool], str]) -> str:
    """The deferred tools as one sorted line per server (byte-stable for the same set)."""
    by_server: dict[str, list[str]] = {}
    for tool in deferred:
        by_server.setdefault(server_of(tool), []).append(short_name(tool))
    if not by_server:
        return ""
    lines = [
        "# Deferred MCP tools",
        f"These tools exist but are not loaded. Call {SEARCH_TOOL_NAME} with keywords or exact "
        "names to load the ones you need; they can be called (as mcp__<server>__<name>) from "
        "the next turn on.",
    ]
    lines += [f"- {server}: {', '.join(sorted(by_server[server]))}" for server in sorted(by_server)]
    return "\n".join(lines)


class SearchToolsTool:
    """The ``search_tools`` built-in: find deferred MCP tools and load them."""

    name = SEARCH_TOOL_NAME
    description = (
        "Search the deferred MCP tools (listed by name in the system prompt) by keywords or "
        "exact names, and load the best matches: they can be called from your next turn on "
        f"and stay loaded. Returns up to limit tools (default {DEFAULT_RESULTS})."
    )

    def __init__(self, search: ToolSearch, describe: Callable[[Tool], str]) -> None:
        self._search = search
        self._describe = describe

    def schema(self) -> dict[str, Any]:
        """Arguments: ``query`` and optional ``limit``."""
        return {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "Keywords, or exact tool names separated by commas.",
                },
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS},
            },
            "required": ["query"],
        }

    @property
    def info(self) -> ToolInfo:
        """Searching changes nothing outside the session."""
        return ToolInfo(
            Origin.BUILTIN,
            Permission(Capability.READ, "built-in search_tools: only loads tool schemas"),
        )

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        """Rank, load and describe the matches."""
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            return ToolResult("search_tools: 'query' must be a non-empty string", is_error=True)
        limit = arguments.get("limit", DEFAULT_RESULTS)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            limit = DEFAULT_RESULTS
        found = self._search.search(query, min(limit, MAX_RESULTS))
        if not found:
            return ToolResult(
                f"No deferred tool matches {query!r}. Try other keywords, or the exact names "
                "from the deferred catalog.",
                data={"loaded": []},
            )
        self._search.load(found)
        lines = [f"Loaded {len(found)} tool(s); call them from your next turn:"]
        lines += [f"- {self._describe(t)}" for t in found]
        return ToolResult("\n".join(lines), data={"loaded": [t.name for t in found]})
