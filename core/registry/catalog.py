"""A registry's catalog, cached: the latest version of every server, kept in sync.

The registry's ``search`` matches names only, so to find a server by what its description
says codebot keeps the catalog (``version=latest``) in the cache dir, one file per registry.
The first sync lists every server; it is bounded in time, and a crawl cut short resumes from
its cursor the next time. Later syncs ask only for what changed (``updated_since``, with a
margin for clocks that disagree); a server whose latest version is ``deleted`` leaves the
catalog. When the registry cannot be reached the catalog is used as it is, and says how old
it is.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from codebot_mcp.core.config import paths
from codebot_mcp.core.fsutil import atomic_write
from codebot_mcp.core.registry.http import get_json
from codebot_mcp.core.registry.readapi import Fetch, pages
from codebot_mcp.core.registry.serverjson import ServerInfo, parse_server

CATALOG_FORMAT = 1
SYNC_BUDGET_SECONDS = 30.0
"""Time one sync may take: a first crawl of a large registry resumes on the next search."""
CLOCK_MARGIN = timedelta(minutes=10)
"""``updated_since`` is taken this much before the sync began (registries keep their own
clock)."""
MAX_SERVERS = 50_000
"""Servers one catalog keeps (the official registry lists a few thousand)."""


def _now_rfc3339(offset: timedelta = timedelta()) -> str:
    return (datetime.now(UTC) - offset).strftime("%Y-%m-%dT%H:%M:%SZ")


def catalog_path(registry: str) -> Path:
    """``<cache>/registry/<host>-<hash>.json``: one file per registry URL."""
    host = "".join(c if c.isalnum() or c in ".-" else "_" for c in urlsplit(registry).netloc)
    digest = hashlib.sha256(registry.encode()).hexdigest()[:12]
    return paths.cache_dir() / "registry" / f"{host or 'registry'}-{digest}.json"


@dataclass(slots=True)
class Catalog:
    """What codebot knows of one registry's servers (latest versions), and how fresh it is."""

    registry: str
    servers: dict[str, dict[str, Any]] = field(default_factory=dict[str, dict[str, Any]])
    """Server name → its ``ServerResponse`` as the registry sent it."""
    complete: bool = False
    """The whole catalog was listed once (later syncs fetch only changes)."""
    cursor: str | None = None
    """Where an unfinished first crawl resumes."""
    crawl_since: str | None = None
    """When the unfinished crawl began: ``since`` once it completes."""
    since: str | None = None
    """``updated_since`` for the next sync."""
    fetched_at: float | None = None
    """When the catalog last heard from the registry (epoch seconds); None: never."""

    def entries(self) -> list[ServerInfo]:
        """The cached servers as data (broken entries skipped)."""
        out = [parse_server(raw, self.registry) for raw in self.servers.values()]
        return [s for s in out if s is not None]

    def age(self, now: float | None = None) -> float | None:
        """Seconds since the last sync, or None when there was none."""
        if self.fetched_at is None:
            return None
        return max(0.0, (now or time.time()) - self.fetched_at)

    def apply(self, raw: list[dict[str, Any]], servers: list[ServerInfo]) -> None:
        """Take a page into the catalog: newer entries replace older, deleted ones leave."""
        for item, server in zip(raw, servers, strict=True):
            if server.status == "deleted":
                self.servers.pop(server.name, None)
            elif server.is_latest and (
                server.name in self.servers or len(self.servers) < MAX_SERVERS
            ):
                self.servers[server.name] = item

    def sync(
        self,
        *,
        budget: float = SYNC_BUDGET_SECONDS,
        fetch: Fetch = get_json,
        on_crawl: Callable[[str], None] | None = None,
    ) -> None:
        """Bring the catalog up to date (a first crawl, its resumption, or the changes).

        Raises:
            RegistryError: the registry could not be reached (the catalog keeps what it had,
                and what this sync fetched before the failure).
        """
        started = time.time()
        deadline = time.monotonic() + budget
        if not self.complete:
            if self.cursor is None:
                self.crawl_since = _now_rfc3339(CLOCK_MARGIN)
            if on_crawl is not None:
                on_crawl(self.registry)
            for page in pages(self.registry, cursor=self.cursor, deadline=deadline, fetch=fetch):
                self.apply(page.raw, page.servers)
                self.cursor = page.next_cursor
                self.fetched_at = started
            if self.cursor is None:
                self.complete, self.since = True, self.crawl_since
            return
        since = _now_rfc3339(CLOCK_MARGIN)
        finished = False
        for page in pages(self.registry, updated_since=self.since, deadline=deadline, fetch=fetch):
            self.apply(page.raw, page.servers)
            finished = page.next_cursor is None
        self.fetched_at = started
        if finished:
            self.since = since

    def save(self) -> None:
        """Write the catalog (0600 in a 0700 directory; best effort: a cache is a cache)."""
        path = catalog_path(self.registry)
        document = {
            "format": CATALOG_FORMAT,
            "registry": self.registry,
            "complete": self.complete,
            "cursor": self.cursor,
            "crawl_since": self.crawl_since,
            "since": self.since,
            "fetched_at": self.fetched_at,
            "servers": self.servers,
        }
        try:
            paths.private_dir(path.parent)
            atomic_write(path, json.dumps(document, ensure_ascii=False), mode=0o600)
        except OSError:  # boundary: a read-only cache dir costs the next search a full sync
            pass


def load(registry: str) -> Catalog:
    """The cached catalog of ``registry`` (empty when there is none, or it is unreadable)."""
    try:
        data = json.loads(catalog_path(registry).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return Catalog(registry)
    if (
        not isinstance(data, dict)
        or data.get("format") != CATALOG_FORMAT
        or data.get("registry") != registry
        or not isinstance(data.get("servers"), dict)
    ):
        return Catalog(registry)

    def text(key: str) -> str | None:
        value = data.get(key)
        return value if isinstance(value, str) else None

    fetched = data.get("fetched_at")
    return Catalog(
        registry,
        servers={str(k): v for k, v in data["servers"].items() if isinstance(v, dict)},
        complete=data.get("complete") is True,
        cursor=text("cursor"),
        crawl_since=text("crawl_since"),
        since=text("since"),
        fetched_at=float(fetched) if isinstance(fetched, int | float) else None,
    )
