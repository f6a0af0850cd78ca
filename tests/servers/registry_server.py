"""A loopback MCP Registry for tests: the ``/v0.1`` read API over real HTTP on 127.0.0.1.

It serves the ``server.json`` documents in ``tests/fixtures/registry/`` (real documents in
the 2025-12-11 schema: npm, PyPI, OCI, NuGet and MCPB packages, remotes with URL variables and
headers, secrets, an SSE remote, a deprecated and a deleted server, an older version, a
hostile entry) plus generated filler servers, each wrapped in a ``ServerResponse`` with the
official ``_meta`` (status, ``isLatest``, ``updatedAt``), as the official registry does:

- ``GET /v0.1/servers``: ``search`` (substring of the name), ``version`` (``latest`` or
  exact), ``updated_since`` (RFC 3339; deleted entries included), ``include_deleted``,
  ``limit`` and ``cursor`` (``name:version``, ``metadata.nextCursor``);
- ``GET /v0.1/servers/{name}/versions[/{version}]``: the name URL-encoded (an unencoded
  ``/`` is a 404, as on the official registry);
- ``GET /files/<name>``: files such as the MCP bundle (``bundle_bytes()``), whose sha256
  the ``text-editor`` document carries (the ``tampered-editor`` one carries another).

Tests publish versions and change statuses while it runs; every request is recorded.
Run it alone with ``python -m tests.servers.registry_server`` (prints ``READY <url>``).
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import sys
import threading
import time
import zipfile
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "registry"
OFFICIAL = "io.modelcontextprotocol.registry/official"
STATUSES = {
    "io.example/old-weather": ("deprecated", "Use io.example/weather instead"),
    "io.example/gone-weather": ("deleted", "Removed by its publisher"),
}
BUNDLE_FILE = "text-editor-1.0.2.mcpb"

BUNDLE_SERVER = '''"""A bundled MCP server: one tool, hello, greeting with BUNDLE_GREETING."""
import os

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("bundled-editor", version="1.0.2")


@mcp.tool(structured_output=False)
def hello(name: str) -> str:
    """Greet someone."""
    return f"{os.environ.get('BUNDLE_GREETING', 'hello')}, {name}"


if __name__ == "__main__":
    mcp.run("stdio")
'''


def bundle_bytes() -> bytes:
    """An MCP bundle (``.mcpb``): a manifest and a Python server, built the same byte for
    byte every time (fixed timestamps), so its sha256 is stable."""
    manifest = {
        "manifest_version": "0.3",
        "name": "text-editor",
        "version": "1.0.2",
        "description": "A bundled test server",
        "author": {"name": "codebot tests"},
        "server": {
            "type": "python",
            "entry_point": "server/main.py",
            "mcp_config": {
                "command": "python",
                "args": ["${__dirname}/server/main.py"],
                "env": {"BUNDLE_GREETING": "${user_config.greeting}"},
            },
        },
        "user_config": {
            "greeting": {
                "type": "string",
                "title": "Greeting",
                "description": "How the server greets",
                "default": "hi",
            }
        },
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in (
            ("manifest.json", json.dumps(manifest, indent=2)),
            ("server/main.py", BUNDLE_SERVER),
        ):
            info = zipfile.ZipInfo(name, date_time=(2025, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            archive.writestr(info, text)
    return out.getvalue()


def _version_key(version: str) -> tuple[Any, ...]:
    parts = re.split(r"[.+-]", version)
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class RegistryServer:
    """The loopback registry; a context manager. ``url`` is its base URL."""

    def __init__(self, *, page_size: int = 10, fillers: int = 25, fixtures: bool = True) -> None:
        self.page_size = page_size
        self.lock = threading.Lock()
        self.versions: dict[str, list[dict[str, Any]]] = {}
        self.files: dict[str, bytes] = {BUNDLE_FILE: bundle_bytes()}
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.endless = False
        """Every page of a listing claims another one (a hostile registry)."""
        self.answer_status: int | None = None
        """Answer every request with this HTTP status."""
        self.body: bytes | None = None
        """Answer every request with this body instead."""
        registry = self

        class Handler(_Handler):
            server_state = registry

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        if fixtures:
            for path in sorted(FIXTURES.glob("*.json")):
                self.publish(self.document(path))
        for i in range(fillers):
            self.publish(
                {
                    "name": f"io.example.filler/tool-{i:02d}",
                    "description": f"Filler server number {i:02d}",
                    "version": "1.0.0",
                    "packages": [
                        {
                            "registryType": "npm",
                            "identifier": f"@filler/tool-{i:02d}",
                            "version": "1.0.0",
                            "transport": {"type": "stdio"},
                        }
                    ],
                }
            )

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def document(self, path: Path) -> dict[str, Any]:
        """A fixture ``server.json``, with ``{registry}`` and ``{sha256}`` filled in."""
        text = path.read_text(encoding="utf-8")
        sha = hashlib.sha256(self.files[BUNDLE_FILE]).hexdigest()
        return json.loads(text.replace("{registry}", self.url).replace("{sha256}", sha))

    def publish(self, detail: dict[str, Any]) -> None:
        """Add a version (its status from :data:`STATUSES`, else active)."""
        status, message = STATUSES.get(detail["name"], ("active", None))
        stamp = _now()
        record = {"detail": detail, "status": status, "message": message}
        record |= {"published": stamp, "updated": stamp}
        with self.lock:
            self.versions.setdefault(detail["name"], []).append(record)

    def backdate(self, hours: float) -> None:
        """Make every version as old as if published ``hours`` ago (codebot asks for what
        changed since a while before its last sync)."""
        from datetime import timedelta

        stamp = (datetime.now(UTC) - timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        with self.lock:
            for records in self.versions.values():
                for record in records:
                    record.update(published=stamp, updated=stamp)

    def set_status(self, name: str, status: str, message: str | None = None) -> None:
        """Change the status of every version of ``name``."""
        with self.lock:
            for record in self.versions[name]:
                record.update(status=status, message=message, updated=_now())

    def response(self, record: dict[str, Any]) -> dict[str, Any]:
        """One ``ServerResponse``."""
        name = record["detail"]["name"]
        live = [r for r in self.versions[name] if r["status"] != "deleted"]
        latest = max(live, key=lambda r: _version_key(r["detail"]["version"]), default=None)
        meta: dict[str, Any] = {
            "status": record["status"],
            "publishedAt": record["published"],
            "updatedAt": record["updated"],
            "statusChangedAt": record["updated"],
            "isLatest": record is latest,
        }
        if record["message"]:
            meta["statusMessage"] = record["message"]
        return {"server": record["detail"], "_meta": {OFFICIAL: meta}}

    def paths(self) -> list[str]:
        """The paths requested so far."""
        with self.lock:
            return [path for path, _ in self.requests]

    def __enter__(self) -> RegistryServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop serving and release the port."""
        self._httpd.shutdown()
        self._httpd.server_close()


class _Handler(BaseHTTPRequestHandler):
    server_state: RegistryServer

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read ``requests``."""

    def _send(self, status: int, body: Any) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        content = "application/octet-stream" if isinstance(body, bytes) else "application/json"
        self.send_header("Content-Type", content)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        state = self.server_state
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        with state.lock:
            state.requests.append((parts.path, query))
        if state.answer_status is not None:
            self._send(state.answer_status, {"error": "Service unavailable"})
            return
        if state.body is not None:
            self._send(200, state.body)
            return
        segments = parts.path.split("/")
        if segments[:2] == ["", "files"] and len(segments) == 3:
            data = state.files.get(unquote(segments[2]))
            self._send(200, data) if data is not None else self._send(404, {"error": "No file"})
            return
        if segments[:3] != ["", "v0.1", "servers"]:
            self._send(404, {"error": "Not found"})
            return
        with state.lock:
            if len(segments) == 3:
                self._send(200, self._list(state, query))
            elif len(segments) in (5, 6) and segments[4] == "versions":
                self._versions(state, unquote(segments[3]), segments, query)
            else:
                self._send(404, {"error": "Not found"})

    def _versions(
        self, state: RegistryServer, name: str, segments: list[str], query: dict[str, str]
    ) -> None:
        deleted = query.get("include_deleted") == "true"
        records = [r for r in state.versions.get(name, []) if deleted or r["status"] != "deleted"]
        if not records:
            self._send(404, {"error": "Server not found"})
            return
        if len(segments) == 5:
            ordered = sorted(records, key=lambda r: r["published"], reverse=True)
            servers = [state.response(r) for r in ordered]
            self._send(200, {"servers": servers, "metadata": {"count": len(servers)}})
            return
        version = unquote(segments[5])
        for record in records:
            response = state.response(record)
            if version == record["detail"]["version"] or (
                version == "latest" and response["_meta"][OFFICIAL]["isLatest"]
            ):
                self._send(200, response)
                return
        self._send(404, {"error": "Server version not found"})

    def _list(self, state: RegistryServer, query: dict[str, str]) -> dict[str, Any]:
        since = query.get("updated_since")
        deleted = since is not None or query.get("include_deleted") == "true"
        search = query.get("search", "").lower()
        version = query.get("version")
        items: list[tuple[str, dict[str, Any]]] = []
        for name in sorted(state.versions):
            if search and search not in name.lower():
                continue
            for record in state.versions[name]:
                response = state.response(record)
                meta = response["_meta"][OFFICIAL]
                if record["status"] == "deleted" and not deleted:
                    continue
                if version == "latest" and not meta["isLatest"] and record["status"] != "deleted":
                    continue
                if version not in (None, "latest") and record["detail"]["version"] != version:
                    continue
                if since is not None and record["updated"] <= since.replace("Z", ".000000Z"):
                    continue
                items.append((f"{name}:{record['detail']['version']}", response))
        cursor = query.get("cursor")
        if cursor is not None:
            items = [(key, r) for key, r in items if key > cursor]
        limit = min(int(query.get("limit", "30")), 100, state.page_size)
        page, rest = items[:limit], items[limit:]
        metadata: dict[str, Any] = {"count": len(page)}
        if rest or state.endless:
            metadata["nextCursor"] = page[-1][0] if page else f"{cursor or ''}~"
            if state.endless:
                metadata["nextCursor"] = f"endless-{time.monotonic_ns()}"
        return {"servers": [r for _, r in page], "metadata": metadata}


def main() -> int:
    """Serve the fixtures until killed; prints ``READY <url>``."""
    with RegistryServer() as registry:
        print(f"READY {registry.url}", flush=True)
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            return 0


if __name__ == "__main__":
    sys.exit(main())
