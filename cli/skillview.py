"""What ``codebot skills`` and ``/skills`` print: the catalog, and a loaded skill.

Every name, description and body comes from a folder or a server someone else wrote: it goes
through :func:`render.safe` (tables escape each cell), never raw to the terminal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from codebot_mcp.cli import render

if TYPE_CHECKING:
    from codebot_mcp.core.skills.skillcatalog import Skill, SkillCatalog
    from codebot_mcp.core.skills.skillload import LoadedSkill


def skill_view(skill: Skill) -> dict[str, Any]:
    """One skill of ``skills list --json``: its handle, name, description and origin."""
    view: dict[str, Any] = {
        "name": skill.handle,
        "skill_name": skill.name,
        "description": skill.description,
        "origin": skill.origin,
        "path": str(skill.local.directory) if skill.local is not None else None,
        "server": skill.server,
        "uri": skill.entry.uri if skill.entry is not None else None,
    }
    if skill.entry is not None:
        resources = skill.entry.resources
        view["dynamic"] = resources is None
        view["files"] = len(resources) if resources is not None else None
        view["size"] = sum(f.size for f in resources) if resources is not None else None
    return view


def catalog_view(catalog: SkillCatalog) -> dict[str, Any]:
    """``skills list --json``: the skills, those shadowed, those skipped, and failed servers."""
    local = catalog.local
    return {
        "skills": [skill_view(s) for s in catalog.skills()],
        "shadowed": [
            {"name": hidden.name, "path": str(hidden.directory), "by": str(winner.directory)}
            for hidden, winner in local.shadowed
        ],
        "skipped": [
            *({"path": str(i.path), "reason": i.message} for i in local.issues),
            *({"path": str(p), "reason": "the project is not trusted"} for p in local.untrusted),
        ],
        "invalid": list(catalog.listing.issues),
        "failed": dict(catalog.listing.failures),
    }


def _origin(skill: Skill) -> str:
    if skill.entry is not None:
        return f"{skill.entry.server} {skill.entry.uri}"
    assert skill.local is not None
    local = skill.local
    if local.folder.startswith(("~/.claude/", ".claude/")):  # Claude Code's, as users know it
        return f"{local.scope} {local.folder}/{local.directory.name}"
    return f"{local.scope} {local.directory}"


def catalog_text(catalog: SkillCatalog) -> str:
    """``skills list`` and ``/skills``: a table (name, origin, description), then what was
    left out and why."""
    skills = catalog.skills()
    lines: list[str] = []
    if skills:
        rows = [["NAME", "ORIGIN", "DESCRIPTION"]]
        rows += [[s.handle, _origin(s), render.first_line(s.description, 70)] for s in skills]
        lines.append(render.table(rows))
    else:
        lines.append("no skills")
    local = catalog.local
    notes = [
        f"shadowed: {hidden.directory} (the name '{hidden.name}' is {winner.directory}'s)"
        for hidden, winner in local.shadowed
    ]
    notes += [f"skipped: {issue.path}: {issue.message}" for issue in local.issues]
    notes += [f"note: {s.skill_file}: {s.note}" for s in local.skills if s.note]
    if local.untrusted:
        notes.append(
            f"skipped: {len(local.untrusted)} project skill(s) ("
            + ", ".join(p.name for p in local.untrusted)
            + "): the project is not trusted (`codebot trust`)"
        )
    notes += [f"invalid: {line}" for line in catalog.listing.issues]
    notes += [
        f"failed: server '{server}' could not list its skills: {why}"
        for server, why in catalog.listing.failures.items()
    ]
    lines += [render.safe(note, one_line=True) for note in notes]
    return "\n".join(lines)


def loaded_view(loaded: LoadedSkill, *, with_files: bool) -> dict[str, Any]:
    """``skills show --json``: the skill, its front matter and body, and its files (with
    their verified text when ``--files`` fetched them)."""
    view = skill_view(loaded.skill)
    view["front_matter"] = loaded.front_matter
    view["body"] = loaded.body
    files: list[dict[str, Any]] = []
    for ref in loaded.files:
        item: dict[str, Any] = {"path": ref.path, "size": ref.size, "uri": ref.uri}
        data = loaded.fetched.get(ref.path)
        if with_files and data is not None:
            item["verified"] = loaded.skill.entry is not None
            try:
                item["text"] = data.decode("utf-8")
            except UnicodeDecodeError:
                item["text"] = None
                item["binary"] = True
        files.append(item)
    view["files"] = files
    return view


def loaded_text(loaded: LoadedSkill, *, with_files: bool) -> str:
    """``skills show``: the body, then (``--files``) each file under a header line."""
    parts = [render.safe(loaded.body.strip("\n"))]
    for ref in loaded.files:
        data = loaded.fetched.get(ref.path)
        header = f"==> {render.safe(ref.path, one_line=True)} ({ref.size} bytes) <=="
        if not with_files:
            continue
        if data is None:
            parts.append(f"{header}\n(not fetched)")
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            parts.append(f"{header}\n(binary)")
            continue
        parts.append(f"{header}\n{render.safe(text.rstrip(chr(10)))}")
    return "\n\n".join(parts)


def loaded_header(loaded: LoadedSkill) -> str:
    """One line for stderr: which skill was loaded, from where, and its other files."""
    skill = loaded.skill
    count = len(loaded.files)
    verified = ", verified" if skill.entry is not None else ""
    return render.safe(
        f"skill {skill.handle} ({_origin(skill)}{verified}; {count} other file(s))",
        one_line=True,
    )
