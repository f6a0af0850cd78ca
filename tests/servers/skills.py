"""A server that serves skills over MCP (SEP-2640, ``io.modelcontextprotocol/skills``).

It answers as the SDK's ``MCPServer`` with a skills ``Extension`` did, in both protocol eras,
on the raw two-era base (:mod:`tests.servers._era`, standard library only: it starts in a
twentieth of the CPU). ``skills/list`` and ``skills/get`` refuse a client that did not declare
the extension (-32021, with ``requiredCapabilities``), after checking their params (-32602);
``server/discover`` declares the extension (``initialize`` does not, as the SDK's does not);
every skill file is an ordinary resource read with ``resources/read``. Skills served:

- ``pdf-processing`` (``skill://pdf-processing/``): ``SKILL.md``, ``references/FORMS.md``,
  ``scripts/extract.py``;
- ``git-workflow`` (``skill://git-workflow/SKILL.md``), listed with a ``license`` field;
- with ``--collide``: ``refunds`` twice, at ``skill://acme/billing/refunds`` and
  ``skill://acme/support/refunds`` (one name, two paths);
- with ``--dynamic``: ``daily`` at ``skill://reports/daily`` with ``resources: "dynamic"``;
- with ``--extra NAME`` (repeatable): a one-file skill ``NAME`` (its front matter names it
  ``NAME``, a string);
- with ``--invalid``: two entries a host must not load (no ``resources``; a name that is not
  the last segment of the URI);
- ``hidden`` (``skill://hidden/SKILL.md``) is never listed, only served by URI (skills/get).

``--tamper MODE`` makes the served bytes disagree with the listed entry:
``digest`` (SKILL.md of pdf-processing, same size, other bytes), ``size`` (bytes appended),
``frontmatter`` (another description; the entry's digest and size match the tampered file),
``file`` (``references/FORMS.md`` changed: SKILL.md verifies, the first file does not).

``--log PATH`` appends one JSON line per request it lets in: ``{"method": ..., "uri": ...}``,
so tests can tell what a client fetched and when. ``--name NAME`` names the server.

Run: ``python -m tests.servers.skills [--log PATH] [--tamper MODE] [--collide] ...``
"""

from __future__ import annotations

import argparse
import hashlib
import json
from typing import Any, ClassVar

from tests.servers._era import Call, EraServer, RpcError

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
PDF_FRONT = {
    "name": "pdf-processing",
    "description": "Extract, fill, and assemble PDF documents",
    "metadata": {"version": "2.1.0"},
}
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
GIT_FRONT = {
    "name": "git-workflow",
    "description": "Follow this team's Git conventions for branching and commits",
    "license": "Apache-2.0",
}
INVALID_PARAMS = (-32602, "Invalid request parameters", "")
"""The SDK's answer to params its model refuses (no ``uri``, a ``uri`` that is no string)."""


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def skill_md(
    name: str, description: str, body: str = "Do it well.\n"
) -> tuple[str, dict[str, Any]]:
    """A one-file skill's SKILL.md and its front matter (the two fields it has)."""
    text = f"---\nname: {name}\ndescription: {description}\n---\n\n{body}"
    return text, {"name": name, "description": description}


class Catalog:
    """The skills, their files (the bytes served, each a resource) and their entries (what is
    listed)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.files: dict[str, bytes] = {}
        self.entries: dict[str, dict[str, Any]] = {}
        self.listed: list[str] = []
        self.add(
            "pdf-processing",
            {"SKILL.md": PDF_SKILL, "references/FORMS.md": FORMS, "scripts/extract.py": EXTRACT},
            PDF_FRONT,
        )
        self.add("git-workflow", {"SKILL.md": GIT_SKILL}, GIT_FRONT)
        if args.collide:
            for team in ("billing", "support"):
                self.add_one(f"acme/{team}/refunds", "refunds", f"Refunds, the {team} team's way")
        if args.dynamic:
            self.add_one("reports/daily", "daily", "Today's report")
            self.entries["skill://reports/daily/SKILL.md"]["resources"] = "dynamic"
        for name in args.extra:
            self.add_one(name, name, f"The server's {name} skill")
        self.add_one("hidden", "hidden", "Served by URI only", listed=False)
        if args.invalid:
            self.add_one("broken", "broken", "No resources")
            del self.entries["skill://broken/SKILL.md"]["resources"]
            self.add_one("impostor", "git-workflow", "Not what it says")
        if args.tamper:
            self.tamper(args.tamper)

    def add(
        self, path: str, files: dict[str, str], front: dict[str, Any], *, listed: bool = True
    ) -> None:
        root = f"skill://{path}/"
        for rel, text in files.items():
            self.files[root + rel] = text.encode()
        uri = root + "SKILL.md"
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

    def add_one(self, path: str, name: str, description: str, *, listed: bool = True) -> None:
        text, front = skill_md(name, description)
        self.add(path, {"SKILL.md": text}, front, listed=listed)

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


def mime_type(uri: str) -> str:
    return "text/markdown" if uri.endswith(".md") else "text/x-python"


class Skills(EraServer):
    """``skills/list``, ``skills/get`` and the skill files as resources, over a catalog."""

    version = "0.1.0"
    modern_capabilities: ClassVar[dict[str, Any]] = {
        **EraServer.modern_capabilities,
        "extensions": {EXTENSION: {}},
    }

    def __init__(self, name: str, catalog: Catalog, log: str | None) -> None:
        super().__init__()
        self.name = name
        self.catalog = catalog
        self.log = log

    def received(self, method: str, params: dict[str, Any]) -> None:
        if self.log:
            _append(self.log, {"method": method, "uri": params.get("uri")})

    def handle(self, method: str, call: Call) -> dict[str, Any]:
        if method == "resources/list":
            return {"resources": [self.resource(uri) for uri in self.catalog.files]}
        if method == "resources/read":
            return self.read(call)
        if method == "skills/list":
            self.require_extension(call)
            skills = [self.catalog.entries[uri] for uri in self.catalog.listed]
            return {"skills": skills, "ttlMs": 0, "cacheScope": "private"}
        if method == "skills/get":
            uri = call.params.get("uri")
            if not isinstance(uri, str):
                raise RpcError(*INVALID_PARAMS)
            self.require_extension(call)
            entry = self.catalog.entries.get(uri)
            if entry is None:
                raise RpcError(-32602, f"No skill is served at {uri}")
            return {"skill": entry, "ttlMs": 0, "cacheScope": "private"}
        return super().handle(method, call)

    @staticmethod
    def resource(uri: str) -> dict[str, Any]:
        """A file as the SDK listed it (named after the function that served it)."""
        return {"description": "", "mimeType": mime_type(uri), "name": "read", "uri": uri}

    def read(self, call: Call) -> dict[str, Any]:
        uri = call.params.get("uri")
        if not isinstance(uri, str):
            raise RpcError(*INVALID_PARAMS)
        if uri not in self.catalog.files:
            raise RpcError(-32602, f"Unknown resource: {uri}", {"uri": uri})
        text = self.catalog.files[uri].decode()
        result = {"contents": [{"mimeType": mime_type(uri), "text": text, "uri": uri}]}
        return self._cacheable(call, result)

    @staticmethod
    def require_extension(call: Call) -> None:
        """-32021 unless the client declared the extension (the SDK's
        ``require_client_extension``)."""
        declared = call.client_capabilities.get("extensions")
        if not isinstance(declared, dict) or EXTENSION not in declared:
            raise RpcError(
                -32021,
                f"Client did not declare required extension {EXTENSION!r}",
                {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
            )


def _append(path: str, line: dict[str, Any]) -> None:
    """One line, written and closed at once: a test may read the log at any moment."""
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


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
    Skills(args.name, Catalog(args), args.log).serve()


if __name__ == "__main__":
    main()
