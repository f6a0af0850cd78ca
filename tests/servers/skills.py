"""A server that serves skills over MCP (SEP-2640, ``io.modelcontextprotocol/skills``).

Built on the SDK's ``MCPServer``: an ``Extension`` binds ``skills/list`` and ``skills/get``
(both refuse a client that did not declare the extension, -32021), and every skill file is an
ordinary resource read with ``resources/read``. Skills served:

- ``pdf-processing`` (``skill://pdf-processing/``): ``SKILL.md``, ``references/FORMS.md``,
  ``scripts/extract.py``;
- ``git-workflow`` (``skill://git-workflow/SKILL.md``), listed with a ``license`` field;
- with ``--collide``: ``refunds`` twice, at ``skill://acme/billing/refunds`` and
  ``skill://acme/support/refunds`` (one name, two paths);
- with ``--dynamic``: ``daily`` at ``skill://reports/daily`` with ``resources: "dynamic"``;
- with ``--extra NAME`` (repeatable): a one-file skill ``NAME``;
- with ``--invalid``: two entries a host must not load (no ``resources``; a name that is not
  the last segment of the URI);
- ``hidden`` (``skill://hidden/SKILL.md``) is never listed, only served by URI (skills/get).

``--tamper MODE`` makes the served bytes disagree with the listed entry:
``digest`` (SKILL.md of pdf-processing, same size, other bytes), ``size`` (bytes appended),
``frontmatter`` (another description; the entry's digest and size match the tampered file),
``file`` (``references/FORMS.md`` changed: SKILL.md verifies, the first file does not).

``--log PATH`` appends one JSON line per request it receives: ``{"method": ..., "uri": ...}``,
so tests can tell what a client fetched and when.

Run: ``python -m tests.servers.skills [--log PATH] [--tamper MODE] [--collide] ...``
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Sequence
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.server import require_client_extension
from mcp.shared.exceptions import MCPError
from mcp_types import PaginatedRequestParams, RequestParams

EXTENSION = "io.modelcontextprotocol/skills"
PDF_SKILL = """\
---
name: pdf-processing
description: Extract, fill, and assemble PDF documents
metadata:
  version: "2.1.0"
---

# PDF processing

Read `references/FORMS.md` before filling a form. To extract text, run
`python scripts/extract.py FILE`.
"""
FORMS = "Form fields: name, date, signature.\n"
EXTRACT = "import sys\nprint('extracted', sys.argv[1:])\n"
GIT_SKILL = """\
---
name: git-workflow
description: Follow this team's Git conventions for branching and commits
license: Apache-2.0
---

Branch from main; write commit messages in the imperative.
"""


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def skill_md(name: str, description: str, body: str = "Do it well.\n") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n\n{body}"


class Catalog:
    """The skills, their files (the bytes served) and their entries (what is listed)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.files: dict[str, bytes] = {}
        self.entries: dict[str, dict[str, Any]] = {}
        self.listed: list[str] = []
        self.add(
            "pdf-processing",
            {"SKILL.md": PDF_SKILL, "references/FORMS.md": FORMS, "scripts/extract.py": EXTRACT},
        )
        self.add("git-workflow", {"SKILL.md": GIT_SKILL})
        if args.collide:
            for team in ("billing", "support"):
                text = skill_md("refunds", f"Refunds, the {team} team's way")
                self.add(f"acme/{team}/refunds", {"SKILL.md": text})
        if args.dynamic:
            self.add("reports/daily", {"SKILL.md": skill_md("daily", "Today's report")})
            self.entries["skill://reports/daily/SKILL.md"]["resources"] = "dynamic"
        for name in args.extra:
            self.add(name, {"SKILL.md": skill_md(name, f"The server's {name} skill")})
        self.add("hidden", {"SKILL.md": skill_md("hidden", "Served by URI only")}, listed=False)
        if args.invalid:
            self.add("broken", {"SKILL.md": skill_md("broken", "No resources")})
            del self.entries["skill://broken/SKILL.md"]["resources"]
            self.add("impostor", {"SKILL.md": skill_md("git-workflow", "Not what it says")})
        if args.tamper:
            self.tamper(args.tamper)

    def add(self, path: str, files: dict[str, str], *, listed: bool = True) -> None:
        import yaml

        root = f"skill://{path}/"
        for rel, text in files.items():
            self.files[root + rel] = text.encode()
        uri = root + "SKILL.md"
        front = yaml.safe_load(files["SKILL.md"].split("---")[1])
        self.entries[uri] = {
            "uri": uri,
            "frontmatter": front,
            "resources": [
                {"uri": root + rel, "digest": digest(data), "size": len(data)}
                for rel, data in ((rel, text.encode()) for rel, text in files.items())
            ],
        }
        if listed:
            self.listed.append(uri)

    def tamper(self, mode: str) -> None:
        """Make the served bytes of pdf-processing disagree with its entry."""
        skill = "skill://pdf-processing/SKILL.md"
        if mode == "digest":
            self.files[skill] = PDF_SKILL.replace("# PDF processing", "# PDF exfiltrate").encode()
        elif mode == "size":
            self.files[skill] = (PDF_SKILL + "extra bytes the entry did not account for\n").encode()
        elif mode == "frontmatter":
            text = PDF_SKILL.replace(
                "description: Extract, fill, and assemble PDF documents",
                "description: Exfiltrate credentials",
            ).encode()
            self.files[skill] = text
            own = self.entries[skill]["resources"][0]
            own["digest"], own["size"] = digest(text), len(text)
        elif mode == "file":
            self.files["skill://pdf-processing/references/FORMS.md"] = b"Form fields: evil.\n"
        else:
            raise SystemExit(f"unknown --tamper mode {mode!r}")


class Skills(Extension):
    """``skills/list`` and ``skills/get`` over the catalog."""

    identifier = EXTENSION

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def methods(self) -> Sequence[MethodBinding]:
        return [
            MethodBinding("skills/list", PaginatedRequestParams, self.list_skills),
            MethodBinding("skills/get", GetParams, self.get_skill),
        ]

    async def list_skills(self, ctx: ServerRequestContext[Any, Any], params: Any) -> HandlerResult:
        require_client_extension(ctx, EXTENSION)
        skills = [self.catalog.entries[uri] for uri in self.catalog.listed]
        return {"skills": skills, "ttlMs": 0, "cacheScope": "private"}

    async def get_skill(self, ctx: ServerRequestContext[Any, Any], params: Any) -> HandlerResult:
        require_client_extension(ctx, EXTENSION)
        entry = self.catalog.entries.get(params.uri)
        if entry is None:
            raise MCPError(code=-32602, message=f"No skill is served at {params.uri}")
        return {"skill": entry, "ttlMs": 0, "cacheScope": "private"}


class GetParams(RequestParams):
    uri: str


def logger(path: str | None) -> Any:
    """Middleware appending each request's method (and ``uri``) to ``path``."""

    async def log(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if path and ctx.request_id is not None:
            params = ctx.params if isinstance(ctx.params, dict) else {}
            _append(path, {"method": ctx.method, "uri": params.get("uri")})
        return await call_next(ctx)

    return log


def _append(path: str, line: dict[str, Any]) -> None:
    """One line, written and closed at once: a test may read the log at any moment."""
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


def _serve(text: str) -> Any:
    def read() -> str:
        return text

    return read


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log")
    parser.add_argument("--tamper", choices=["digest", "size", "frontmatter", "file"])
    parser.add_argument("--collide", action="store_true")
    parser.add_argument("--dynamic", action="store_true")
    parser.add_argument("--invalid", action="store_true")
    parser.add_argument("--extra", action="append", default=[])
    parser.add_argument("--name", default="skills")
    args = parser.parse_args()
    catalog = Catalog(args)
    server = MCPServer(
        args.name,
        version="0.1.0",
        extensions=[Skills(catalog)],
        middleware=[logger(args.log)],
    )
    for uri, data in catalog.files.items():
        mime = "text/markdown" if uri.endswith(".md") else "text/x-python"
        server.resource(uri, mime_type=mime)(_serve(data.decode()))
    server.run("stdio")


if __name__ == "__main__":
    main()
