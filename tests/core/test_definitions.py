"""The definition-file reader shared by agents, commands and skills, on real folders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codebot_mcp.core.config import definitions, discovery
from codebot_mcp.core.config.definitions import FrontMatterError, Kind, Scope, find, parse


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_yaml_front_matter_and_body() -> None:
    front, body = parse(
        "---\nname: x\ndescription: >\n  folded\n  text\ntools:\n  - Read\n  - Grep\n"
        "metadata:\n  owner: team\n---\n\nThe body.\n"
    )
    assert front == {
        "name": "x",
        "description": "folded text\n",
        "tools": ["Read", "Grep"],
        "metadata": {"owner": "team"},
    }
    assert body == "The body."


def test_claude_code_files_that_are_not_strict_yaml_still_read() -> None:
    front, body = parse(
        "---\ndescription: Use when: the user asks for a review\nargument-hint: [pr] [focus]\n"
        "allowed-tools: Bash(git add:*), Read\n---\nBody\n"
    )
    assert front["description"] == "Use when: the user asks for a review"
    assert front["argument-hint"] == "[pr] [focus]"
    assert front["allowed-tools"] == "Bash(git add:*), Read" and body == "Body"
    front, _ = parse("---\nargument-hint: [message]\n---\nx")  # YAML: a list
    assert front["argument-hint"] == "[message]"


def test_scalars_read_as_json_would_and_a_key_twice_is_refused() -> None:
    front, _ = parse(
        "---\na: yes\nb: 2024-01-01\nc: 1:30\nd: true\ne: 12\nf: 1.5\ng: null\nh: off\n---\nx"
    )
    assert front == {
        "a": "yes",
        "b": "2024-01-01",
        "c": "1:30",
        "d": True,
        "e": 12,
        "f": 1.5,
        "g": None,
        "h": "off",
    }
    with pytest.raises(FrontMatterError, match="sets 'name' twice"):
        parse("---\nname: a\nname: b\n---\nx")


def test_no_front_matter_bom_and_crlf() -> None:
    assert parse("Just a prompt.\n") == ({}, "Just a prompt.")
    front, body = parse("\ufeff---\r\ndescription: d\r\n---\r\nbody\r\n")
    assert front == {"description": "d"} and body == "body"


def test_bad_front_matter_is_refused_with_a_reason() -> None:
    with pytest.raises(FrontMatterError, match="never closed"):
        parse("---\nname: x\nbody\n")
    with pytest.raises(FrontMatterError, match="not 'key: value' lines"):
        parse("---\n- a\n- b\n---\nbody")
    bomb = "---\na: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for level in "bcdefgh":
        bomb += f"{level}: &{level} [{', '.join(['*' + chr(ord(level) - 1)] * 10)}]\n"
    with pytest.raises(FrontMatterError, match="too complex"):
        parse(bomb + "---\nbody")
    with pytest.raises(FrontMatterError, match="too complex"):
        parse("---\na: &a [*a]\n---\nbody")


def test_precedence_shadowing_namespaces_and_problems(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("CODEBOT_HOME", str(home))
    root = tmp_path / "repo"
    write(root / ".codebot" / "commands" / "review.md", "mine")
    write(root / ".claude" / "commands" / "review.md", "claude's")
    write(root / ".claude" / "commands" / "frontend" / "ui" / "check.md", "deep")
    write(home / "commands" / "review.md", "yours")
    write(home / "commands" / "standup.md", "standup")
    write(root / ".codebot" / "commands" / "bad name.md", "x")
    write(root / ".codebot" / "commands" / "huge.md", "x" * (definitions.MAX_DEFINITION_BYTES + 1))
    found = find(Kind.COMMANDS, root)
    assert sorted(found.definitions) == ["frontend:ui:check", "review", "standup"]
    review = found.definitions["review"]
    assert review.body == "mine" and review.scope is Scope.PROJECT
    assert review.folder.label == ".codebot/commands"
    assert [d.body for d in found.shadowed] == ["claude's", "yours"]
    assert found.definitions["standup"].folder.label == "~/.codebot/commands"
    problems = sorted(str(p) for p in found.problems)
    assert "is not a usable name" in problems[0] and "over the" in problems[1]
    only_mine = find(Kind.COMMANDS, root, include_project=False)
    assert sorted(only_mine.definitions) == ["review", "standup"]
    assert only_mine.definitions["review"].body == "yours"


def test_a_project_symlink_out_of_the_project_is_not_read(tmp_path: Path) -> None:
    secret = write(tmp_path / "outside" / "credentials", "aws_secret=1")
    root = tmp_path / "repo"
    (root / ".claude" / "agents").mkdir(parents=True)
    os.symlink(secret, root / ".claude" / "agents" / "leak.md")
    found = find(Kind.AGENTS, root)
    assert "leak" not in found.definitions
    (problem,) = found.problems
    assert "symlink that leads out of the project" in str(problem)


def test_agents_take_their_name_from_front_matter(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root / ".codebot" / "agents" / "file-name.md", "---\nname: code-reviewer\n---\nx")
    write(root / ".codebot" / "agents" / "oops.md", "---\nname: two words\n---\nx")
    found = find(Kind.AGENTS, root)
    assert list(found.definitions) == ["code-reviewer"]
    assert "'name: two words' is not a usable name" in str(found.problems[0])


def test_skills_are_folders_with_a_skill_md(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root / ".codebot" / "skills" / "pdf" / "SKILL.md", "---\nname: pdf\n---\nUse it.")
    write(root / ".codebot" / "skills" / "pdf" / "scripts" / "fill.py", "print(1)")
    write(root / ".codebot" / "skills" / "empty" / "README.md", "no skill here")
    found = find(Kind.SKILLS, root)
    assert list(found.definitions) == ["pdf"] and found.definitions["pdf"].body == "Use it."
    files = [p.relative_to(root).as_posix() for p in discovery.definition_files(root)]
    assert ".codebot/skills/pdf/scripts/fill.py" in files  # the trust fingerprint covers it


def test_the_project_root_is_never_your_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "me"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CODEBOT_HOME", str(home / ".codebot"))
    (home / ".codebot").mkdir(parents=True)
    (home / ".claude").mkdir()
    work = home / "src" / "app"
    work.mkdir(parents=True)
    assert discovery.project_root(work) is None
    (home / "src" / ".claude").mkdir()
    assert discovery.project_root(work) == home / "src"
    assert discovery.project_root(work, settings_root=work) == work


def test_a_folder_planted_above_the_repository_or_in_a_shared_directory_is_no_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One walk (core.config.discovery) for settings, definitions and notes: it stops at the
    repository root, and never searches a directory others can write to (as /tmp)."""
    from codebot_mcp.core.config import notes

    monkeypatch.setenv("HOME", str(tmp_path / "me"))
    shared = tmp_path / "shared"
    (shared / ".claude" / "agents").mkdir(parents=True)
    (shared / "AGENTS.md").write_text("planted\n")
    repo = shared / "repo"
    work = repo / "src"
    work.mkdir(parents=True)
    shared.chmod(0o777)  # like /tmp: anyone could have put .claude there
    try:
        assert discovery.project_root(work) is None
        (repo / ".git").mkdir()
        assert discovery.project_root(work) == repo
        assert all("planted" not in n.text for n in notes.load(work, None).files)
        shared.chmod(0o755)
        (repo / ".git").rmdir()
        assert discovery.project_root(work) == shared  # a directory of ours: searched
    finally:
        shared.chmod(0o755)


def test_the_trust_walk_covers_every_definition_kind() -> None:
    """The trust fingerprint walks ``discovery.DEFINITION_KINDS``: a kind missing there would
    be loaded without asking for trust again after an edit."""
    assert tuple(kind.value for kind in Kind) == discovery.DEFINITION_KINDS


PLUGIN_AGENT = """\
---
name: code-checker
description: Use this agent when the user has written code and wants it checked. Examples:

<example>
Context: The user just wrote a parser.
user: "I added the parser, can you check it?"
assistant: "I'll use the code-checker agent to review it."
<commentary>
model: this line is dialogue, not a field
</commentary>
</example>

<example>
user: "Check this"
</example>
model: inherit
color: yellow
tools: ["Read", "Grep", "WebFetch"]
---

You check code.
"""


def test_a_plugin_agent_with_example_dialogue_reads_as_claude_code_reads_it(
    tmp_path: Path,
) -> None:
    front, body = parse(PLUGIN_AGENT)
    assert set(front) == {"name", "description", "model", "color", "tools"}
    description = front["description"]
    assert description.startswith("Use this agent when the user has written code")
    assert 'user: "I added the parser, can you check it?"' in description
    assert "model: this line is dialogue, not a field" in description
    assert description.endswith('user: "Check this"\n</example>')
    assert front["model"] == "inherit" and front["color"] == "yellow"
    path = write(tmp_path / "repo/.claude/agents/code-checker.md", PLUGIN_AGENT)
    (tmp_path / "repo/.git").mkdir()
    item = find(Kind.AGENTS, tmp_path / "repo").definitions["code-checker"]
    assert item.path == path and body == "You check code."
    assert item.names("tools") == ("Read", "Grep", "WebFetch")


@pytest.mark.parametrize(
    "written",
    [
        "tools: Read, Grep, Bash(git diff:*)",
        'tools: ["Read", "Grep", "Bash(git diff:*)"]',
        "tools: Read Grep Bash(git diff:*)",
        "tools:\n  - Read\n  - Grep\n  - Bash(git diff:*)",
        # not strict YAML anywhere else in the file: the lenient reader gives the same list
        "description: Use when: a\n<example>x: y</example>\n"
        "tools: ['Read', 'Grep', 'Bash(git diff:*)']",
        "description: Use when: a\ntools:\n  - Read\n  - Grep\n  - Bash(git diff:*)",
    ],
)
def test_lists_of_tools_in_every_form(tmp_path: Path, written: str) -> None:
    path = write(tmp_path / "a.md", f"---\n{written}\n---\nbody\n")
    front, body = parse(path.read_text())
    folder = definitions.Folder(Scope.USER, "x", tmp_path, tmp_path)
    item = definitions.Definition(Kind.AGENTS, "a", path, folder, front, body)
    assert item.names("tools") == ("Read", "Grep", "Bash(git diff:*)")
