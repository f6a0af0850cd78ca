"""The MCP Registry's read API (``/v0.1``): list servers a page at a time, get one version.

``GET /v0.1/servers`` takes ``search`` (a substring of the name), ``version=latest``,
``updated_since`` (RFC 3339), ``limit`` and the ``cursor`` of ``metadata.nextCursor``;
``GET /v0.1/servers/{name}/versions/{version}`` takes the name URL-encoded (its ``/`` as
``%2F``) and ``latest`` or an exact version. Paging stops at :data:`MAX_PAGES` or the
deadline, whichever comes first, and at a cursor that does not move.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

from codebot_mcp.core.errors import UsageError
from codebot_mcp.core.registry.http import NotFoundError, RegistryError, get_json
from codebot_mcp.core.registry.serverjson import ServerInfo, parse_server
from codebot_mcp.core.secrets.redact import printable

API = "/v0.1"
PAGE_LIMIT = 100
"""Servers per page: the official registry's maximum."""
MAX_PAGES = 100
"""Pages one listing may take (10,000 servers, above the official catalog): a registry that
always answers with a next cursor stops here."""

Fetch = Callable[[str], Any]
"""GET a URL, return its JSON (``http.get_json``; tests and callers may bound it further)."""


def servers_url(base: str, **params: str | int | None) -> str:
    """``{base}/v0.1/servers?...`` with the given parameters (None ones left out)."""
    query = urlencode({k: v for k, v in params.items() if v is not None})
    return f"{base}{API}/servers" + (f"?{query}" if query else "")


def version_url(base: str, name: str, version: str = "latest") -> str:
    """``{base}/v0.1/servers/{name}/versions/{version}``, both URL-encoded (``/`` too)."""
    return f"{base}{API}/servers/{quote(name, safe='')}/versions/{quote(version, safe='')}"


@dataclass(slots=True)
class Page:
    """One page of a listing: the servers as data, as sent, and where the next page starts."""

    servers: list[ServerInfo] = field(default_factory=list[ServerInfo])
    raw: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    next_cursor: str | None = None


def _page(base: str, body: Any, url: str) -> Page:
    if not isinstance(body, dict) or not isinstance(body.get("servers"), list):
        raise RegistryError(
            f"{printable(url, one_line=True)} did not answer a server list",
            hint="Check that registry_url is an MCP Registry's base URL (it serves /v0.1/servers).",
        )
    page = Page()
    for item in body["servers"]:
        server = parse_server(item, base)
        if server is not None:
            page.servers.append(server)
            page.raw.append(item)
    meta = body.get("metadata")
    cursor = meta.get("nextCursor") if isinstance(meta, dict) else None
    page.next_cursor = cursor if isinstance(cursor, str) and cursor else None
    return page


def pages(
    base: str,
    *,
    search: str | None = None,
    version: str | None = "latest",
    updated_since: str | None = None,
    cursor: str | None = None,
    max_pages: int = MAX_PAGES,
    deadline: float | None = None,
    fetch: Fetch = get_json,
) -> Iterator[Page]:
    """The pages of ``GET /v0.1/servers``, from ``cursor`` on, within ``max_pages`` and the
    ``deadline`` (``time.monotonic()``). The last page yielded has ``next_cursor`` set when
    the listing was cut short.

    Raises:
        RegistryError: a page could not be fetched or is not a server list.
    """
    for _ in range(max_pages):
        url = servers_url(
            base,
            search=search,
            version=version,
            updated_since=updated_since,
            limit=PAGE_LIMIT,
            cursor=cursor,
        )
        page = _page(base, fetch(url), url)
        yield page
        if page.next_cursor is None or page.next_cursor == cursor:
            page.next_cursor = None  # a cursor that does not move ends the listing
            return
        cursor = page.next_cursor
        if deadline is not None and time.monotonic() > deadline:
            return


def get_version(
    base: str, name: str, version: str = "latest", *, fetch: Fetch = get_json
) -> ServerInfo:
    """One version of one server (``latest`` or exact).

    Raises:
        NotFoundError: the registry has no such server or version.
        RegistryError: it cannot be reached, or answered something else.
    """
    url = version_url(base, name, version)
    server = parse_server(fetch(url), base)
    if server is None or server.name != name:
        raise RegistryError(
            f"{printable(url, one_line=True)} did not answer the server '{name}'",
            hint="Check registry_url: it should be an MCP Registry's base URL.",
        )
    return server


def find(
    registries: tuple[str, ...], name: str, version: str = "latest", *, fetch: Fetch = get_json
) -> ServerInfo:
    """The server from the first registry that has it (``registry_url`` is searched in order).

    Raises:
        UsageError: no registry has it.
        RegistryError: none could be asked.
    """
    failures: list[RegistryError] = []
    for base in registries:
        try:
            return get_version(base, name, version, fetch=fetch)
        except NotFoundError:
            continue
        except RegistryError as exc:
            failures.append(exc)
    if failures and len(failures) == len(registries):
        raise failures[0]
    what = f"'{printable(name, one_line=True)}'"
    if version != "latest":
        what += f" version {printable(version, one_line=True)}"
    unreachable = f" ({len(failures)} could not be reached)" if failures else ""
    raise UsageError(
        f"no server {what} in {', '.join(registries)}{unreachable}",
        hint="Find its exact name with `codebot mcp search WORD`.",
    )
