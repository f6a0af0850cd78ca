"""Which imported servers go where: clashes, duplicates, secrets, validation; then the write."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from codebot_mcp.core.config.importers import (
    FORMATS,
    Imported,
    ImportFormatError,
    Scope,
    Source,
    no_clear_secrets,
)
from codebot_mcp.core.errors import UsageError


def module(client: str) -> ModuleType:
    """The importer module of a client format name (``claude-code`` → ``claude_code``)."""
    return importlib.import_module(f"codebot_mcp.core.config.importers.{client.replace('-', '_')}")


@dataclass(slots=True)
class Planned:
    """One server and what the import does with it."""

    item: Imported
    target: Path | None
    action: str
    """"add", "same" (already there, identical), "clash", "duplicate" or "skip"."""
    reason: str | None = None


@dataclass(slots=True)
class ImportPlan:
    """Everything an import would do, before it does it."""

    looked: list[Source] = field(default_factory=list[Source])
    read: list[Source] = field(default_factory=list[Source])
    errors: list[str] = field(default_factory=list[str])
    """Config files that exist but could not be read (each names the file)."""
    servers: list[Planned] = field(default_factory=list[Planned])

    def count(self, action: str) -> int:
        return sum(1 for p in self.servers if p.action == action)


def discover(clients: list[str], cwd: Path, home: Path) -> ImportPlan:
    """Read every config file of ``clients`` that exists."""
    plan = ImportPlan()
    for client in clients:
        mod = module(client)
        for source in mod.sources(cwd, home):
            plan.looked.append(source)
            if not source.path.is_file():
                continue
            try:
                items: list[Imported] = mod.read(source)
            except ImportFormatError as exc:
                plan.errors.append(str(exc))
                continue
            if items or source.section is None:
                plan.read.append(source)
            plan.servers.extend(
                Planned(i, None, "skip" if i.skipped else "add", i.skipped) for i in items
            )
    return plan


def decide(plan: ImportPlan, scope: Scope | None, cwd: Path) -> None:
    """Set each server's target file and action: validation, secrets, clashes."""
    from codebot_mcp.core.config import managed
    from codebot_mcp.core.config import serveredit as settings_edit

    managed.load()  # a broken managed settings file stops the import (exit 3), not each entry
    documents: dict[Path, dict[str, Any]] = {}
    chosen: dict[tuple[Path, str], Planned] = {}
    for planned in plan.servers:
        if planned.action == "skip":
            continue
        item = planned.item
        target = settings_edit.settings_file(scope or item.source.scope, cwd)
        planned.target = target
        no_clear_secrets(item)
        try:
            settings_edit.validate_entry(item.name, item.entry, target)
        except (UsageError, managed.PolicyError) as exc:
            planned.action, planned.reason = "skip", exc.message
            continue
        if target not in documents:
            document = settings_edit.read_document(target)
            documents[target] = document.get(settings_edit.servers_key(document)) or {}
        existing = documents[target].get(item.name)
        first = chosen.get((target, item.name))
        if existing is not None:
            if existing == item.entry:
                planned.action, planned.reason = "same", f"already in {target}"
            else:
                planned.action = "clash"
                planned.reason = f"{target} already has a different '{item.name}' (kept)"
        elif first is not None:
            if first.item.entry == item.entry:
                planned.action, planned.reason = "same", f"same as in {first.item.source.path}"
            else:
                planned.action = "duplicate"
                planned.reason = (
                    f"{first.item.source.path} defines '{item.name}' differently; that one is "
                    "imported"
                )
        else:
            chosen[(target, item.name)] = planned
    _note_overrides(plan, documents, chosen, cwd)


def _note_overrides(
    plan: ImportPlan,
    documents: dict[Path, dict[str, Any]],
    chosen: dict[tuple[Path, str], Planned],
    cwd: Path,
) -> None:
    """A project entry that will hide a different global entry of the same name says so."""
    from codebot_mcp.core.config import serveredit as settings_edit

    global_file = settings_edit.settings_file("global", cwd)
    if global_file not in documents:
        document = settings_edit.read_document(global_file)
        documents[global_file] = document.get(settings_edit.servers_key(document)) or {}
    for planned in plan.servers:
        if planned.action not in ("add", "same") or planned.target in (None, global_file):
            continue
        name = planned.item.name
        ours = chosen.get((global_file, name))
        theirs = ours.item.entry if ours is not None else documents[global_file].get(name)
        if theirs is not None and theirs != planned.item.entry:
            where = ours.item.source.path if ours is not None else global_file
            planned.item.notes.append(
                f"in this project it overrides the global '{name}' (from {where}); "
                "rename one of them to keep both"
            )


def apply(plan: ImportPlan) -> list[Path]:
    """Write every "add" into its target file (one atomic write per file); the files written."""
    from codebot_mcp.core.config import projectfiles
    from codebot_mcp.core.config import serveredit as settings_edit

    by_target: dict[Path, list[Planned]] = {}
    for planned in plan.servers:
        if planned.action == "add" and planned.target is not None:
            by_target.setdefault(planned.target, []).append(planned)
    for target, items in by_target.items():
        document = settings_edit.read_document(target)
        entries = settings_edit.server_entries(document, target)
        for planned in items:
            entries[planned.item.name] = planned.item.entry
        private = projectfiles.is_global_settings(target)  # as named, never through a link
        settings_edit.write_document(target, document, private=private)
    return list(by_target)


__all__ = ["FORMATS", "ImportPlan", "Planned", "apply", "decide", "discover", "module"]
