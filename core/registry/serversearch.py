"""``codebot mcp search``: find servers in the configured registries, in order.

Each registry is asked twice: its own ``search`` (a substring of the name, fresh), and its
catalog (kept in the cache dir, synced first) for what the name does not say: every word of
the query must appear in the name, title or description. Only ``active`` servers are shown
unless deprecated ones are asked for; ``deleted`` never. A registry that cannot be reached
is answered from its catalog, with its age; one with no catalog either is reported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from codebot_mcp.core.registry import catalog as catalog_mod
from codebot_mcp.core.registry.http import RegistryError, get_json
from codebot_mcp.core.registry.readapi import Fetch, pages
from codebot_mcp.core.registry.serverjson import ServerInfo

SEARCH_PAGES = 10
"""Pages of name matches taken from the registry's own search (1,000 servers)."""


@dataclass(slots=True)
class Source:
    """How one registry answered a search."""

    registry: str
    fetched_at: float | None = None
    """When its catalog last heard from it (epoch seconds); None: never."""
    error: str | None = None
    """Why it could not be reached this time (its catalog answered instead), or None."""
    offline: bool = False
    """Asked not to use the network (``--offline``)."""
    complete: bool = True
    """Its catalog holds every server (False: a first crawl is still under way)."""

    @property
    def cached(self) -> bool:
        """The answer came from the cache alone."""
        return self.offline or self.error is not None


@dataclass(slots=True)
class SearchResult:
    """The servers found, best first within each registry, and how each registry answered."""

    servers: list[ServerInfo] = field(default_factory=list[ServerInfo])
    sources: list[Source] = field(default_factory=list[Source])
    hidden: int = 0
    """Deprecated servers that matched but are not shown (``--all`` shows them)."""


def score(query: str, server: ServerInfo) -> int:
    """How well ``server`` matches: 0 when some word of the query is nowhere in its name,
    title or description; higher for matches in the name, then the title."""
    words = query.lower().split()
    name = server.name.lower()
    title = (server.title or "").lower()
    text = f"{name} {title} {server.description.lower()}"
    if not all(w in text for w in words):
        return 0
    short = name.rsplit("/", 1)[-1]
    points = 1
    for word in words:
        points += 8 if word == short else 4 if word in name else 2 if word in title else 0
    return points


def search(
    registries: Sequence[str],
    query: str,
    *,
    include_deprecated: bool = False,
    offline: bool = False,
    fetch: Fetch = get_json,
    on_crawl: Callable[[str], None] | None = None,
) -> SearchResult:
    """Search every registry, in order.

    Raises:
        RegistryError: no registry could be reached and none has a catalog cached.
    """
    result = SearchResult()
    failures: list[RegistryError] = []
    for registry in registries:
        catalog = catalog_mod.load(registry)
        source = Source(registry, offline=offline)
        found: dict[str, ServerInfo] = {s.name: s for s in catalog.entries()}
        if not offline:
            try:
                try:
                    catalog.sync(fetch=fetch, on_crawl=on_crawl)
                finally:
                    catalog.save()  # what a failed sync fetched is kept
                found = {s.name: s for s in catalog.entries()}
                words = query.strip()
                if words:
                    for page in pages(registry, search=words, max_pages=SEARCH_PAGES, fetch=fetch):
                        found.update((s.name, s) for s in page.servers if s.is_latest)
            except RegistryError as exc:
                source.error = exc.message
                failures.append(exc)
                found.update((s.name, s) for s in catalog.entries())
        source.fetched_at = catalog.fetched_at
        source.complete = catalog.complete
        result.sources.append(source)
        if source.cached and catalog.fetched_at is None:
            continue  # nothing cached: reported through the source's error
        ranked = sorted(
            ((score(query, s), s) for s in found.values() if s.status != "deleted"),
            key=lambda pair: (-pair[0], pair[1].name),
        )
        for points, server in ranked:
            if points == 0:
                continue
            if server.status == "deprecated" and not include_deprecated:
                result.hidden += 1
                continue
            result.servers.append(server)
    if failures and all(s.cached and s.fetched_at is None for s in result.sources):
        raise RegistryError(
            failures[0].message,
            hint=(failures[0].hint or "Check your connection and the registry_url setting.")
            + " Nothing is cached yet to search offline.",
        )
    return result
