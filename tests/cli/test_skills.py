"""``codebot skills list|show`` against real skill folders and a real MCP server serving skills
(tests/servers/skills.py over stdio, which logs every request it gets): origins, collisions,
lazy retrieval, verification of size, digest and front matter, trust."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run
from codebot_mcp.core.config import paths
from tests.cli.entry_point import codebot
from tests.helpers import server_entry, write_settings


def skill(folder: Path, name: str, description: str, files: dict[str, str] | None = None) -> Path:
    directory = folder / name
    directory.mkdir(parents=True)
    (directory / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n\nLocal body of {name}.\n"
    )
    for rel, text in (files or {}).items():
        (directory / rel).parent.mkdir(parents=True, exist_ok=True)
        (directory / rel).write_text(text)
    return directory


def requests(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def reads(log: Path) -> list[str]:
    return [r["uri"] for r in requests(log) if r["method"] == "resources/read"]


def methods(log: Path) -> list[str]:
    return [r["method"] for r in requests(log)]


class Project:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.logs: dict[str, Path] = {}

    def servers(self, **servers: list[str]) -> None:
        """One skills server per name, each with its own request log and flags."""
        entries = {}
        for name, flags in servers.items():
            self.logs[name] = self.root.parent / f"{name}.log"
            entries[name] = server_entry("skills", "--log", str(self.logs[name]), *flags)
        write_settings(self.root, {"mcp_servers": entries})

    def cli(self, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
        code = run(["--cwd", str(self.root), *argv])
        out = capsys.readouterr()
        return code, out.out, out.err


@pytest.fixture
def project(tmp_path: Path) -> Project:
    root = tmp_path / "project"
    root.mkdir()
    return Project(root)


def test_list_shows_every_skill_with_its_origin_and_reads_no_file(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    project.servers(docs=["--collide", "--dynamic"], docs2=[])
    local = skill(project.root / ".codebot/skills", "pdf-processing", "Our own PDF rules")
    mine = skill(paths.codebot_home() / "skills", "notes", "My notes")
    code, out, err = project.cli(capsys, "skills", "list", "--json")
    assert code == 0, err
    view = json.loads(out)
    rows = {s["name"]: s for s in view["skills"]}
    assert sorted(rows) == [
        "docs2:git-workflow",
        "docs2:pdf-processing",
        "docs:acme/billing/refunds",
        "docs:acme/support/refunds",
        "docs:daily",
        "docs:git-workflow",
        "docs:pdf-processing",
        "notes",
        "pdf-processing",
    ]
    assert rows["pdf-processing"]["origin"] == "project"  # the local skill keeps its name
    assert rows["pdf-processing"]["path"] == str(local.resolve())
    assert rows["notes"] == {
        "name": "notes",
        "skill_name": "notes",
        "description": "My notes",
        "origin": "user",
        "path": str(mine.resolve()),
        "server": None,
        "uri": None,
    }
    served = rows["docs:pdf-processing"]
    assert (served["server"], served["uri"]) == ("docs", "skill://pdf-processing/SKILL.md")
    assert (served["files"], served["dynamic"], served["skill_name"]) == (
        3,
        False,
        "pdf-processing",
    )
    assert rows["docs:daily"]["dynamic"] is True
    assert rows["docs:acme/billing/refunds"]["skill_name"] == "refunds"
    for log in project.logs.values():  # listing is skills/list, and no file read
        assert "skills/list" in methods(log) and reads(log) == []
    code, out, _ = project.cli(capsys, "skills", "list")
    assert code == 0
    line = next(ln for ln in out.splitlines() if ln.startswith("docs:pdf-processing "))
    assert "docs skill://pdf-processing/SKILL.md" in line
    assert "Extract, fill, and assemble PDF documents" in line


def test_show_loads_as_the_model_would_and_files_only_with_files(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    project.servers(docs=[])
    log = project.logs["docs"]
    code, out, err = project.cli(capsys, "skills", "show", "pdf-processing")
    assert code == 0, err
    assert out.startswith("# PDF processing\n")
    assert "skill docs:pdf-processing (docs skill://pdf-processing/SKILL.md, verified" in err
    assert reads(log) == ["skill://pdf-processing/SKILL.md"]
    log.unlink()
    code, out, err = project.cli(
        capsys, "skills", "show", "docs:pdf-processing", "--files", "--json"
    )
    assert code == 0, err
    view = json.loads(out)
    assert view["front_matter"] == {
        "name": "pdf-processing",
        "description": "Extract, fill, and assemble PDF documents",
        "metadata": {"version": "2.1.0"},
    }
    assert [(f["path"], f["text"]) for f in view["files"]] == [
        ("references/FORMS.md", "Form fields: name, date, signature.\n"),
        ("scripts/extract.py", "import sys\nprint('extracted', sys.argv[1:])\n"),
    ]
    assert reads(log) == [
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/references/FORMS.md",
        "skill://pdf-processing/scripts/extract.py",
    ]


@pytest.mark.parametrize(
    ("mode", "file", "problem", "read"),
    [
        ("digest", "SKILL.md", "digest sha256:", 1),
        ("size", "SKILL.md", "does not match the entry's 237 bytes", 1),
        (
            "frontmatter",
            "SKILL.md",
            "front matter field 'description' does not match the entry: the file has "
            '"Exfiltrate credentials", the entry has "Extract, fill, and assemble PDF documents"',
            1,
        ),
        ("file", "references/FORMS.md", "size 19 bytes does not match the entry's 36 bytes", 2),
    ],
)
def test_a_file_that_does_not_match_its_entry_stops_the_load(
    mode: str,
    file: str,
    problem: str,
    read: int,
    project: Project,
    capsys: pytest.CaptureFixture[str],
) -> None:
    project.servers(docs=["--tamper", mode])
    code, out, err = project.cli(capsys, "skills", "show", "pdf-processing", "--files")
    assert code == 1
    assert out == ""  # nothing of the skill is used
    first = err.splitlines()[0]
    assert first.startswith(
        f"error: skill 'docs:pdf-processing' failed verification: skill://pdf-processing/{file}: "
    )
    assert problem in first
    assert "hint: The server's entry and the file it sent disagree" in err
    assert len(reads(project.logs["docs"])) == read  # nothing after the failure is fetched


def test_names_pick_among_duplicates_and_never_shadow_a_local_skill(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    project.servers(docs=["--collide"], docs2=[])
    skill(project.root / ".claude/skills", "git-workflow", "Our git rules")
    code, out, err = project.cli(capsys, "skills", "show", "git-workflow")
    assert code == 0, err
    assert out.strip() == "Local body of git-workflow."
    assert all(reads(log) == [] for log in project.logs.values())
    code, out, err = project.cli(capsys, "skills", "show", "pdf-processing")
    assert code == 2
    assert "skill 'pdf-processing' is ambiguous: docs2:pdf-processing, docs:pdf-processing" in err
    code, out, err = project.cli(capsys, "skills", "show", "docs:refunds")
    assert code == 2 and "docs:acme/billing/refunds, docs:acme/support/refunds" in err
    code, out, err = project.cli(capsys, "skills", "show", "docs:acme/support/refunds")
    assert code == 0 and "Do it well." in out
    code, out, err = project.cli(capsys, "skills", "show", "docs2:git-workflow")
    assert code == 0 and "Branch from main" in out


def test_a_skill_addressed_by_uri_is_got_then_verified(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    project.servers(docs=[])
    code, out, err = project.cli(capsys, "skills", "show", "docs:skill://hidden/SKILL.md")
    assert code == 0, err
    assert out.strip() == "Do it well."
    log = [(r["method"], r["uri"]) for r in requests(project.logs["docs"])]
    got = log.index(("skills/get", "skill://hidden/SKILL.md"))
    assert log[got + 1] == ("resources/read", "skill://hidden/SKILL.md")
    code, _, err = project.cli(capsys, "skills", "show", "docs:skill://nope/SKILL.md")
    assert code == 4
    assert "server 'docs' rejected skills/get skill://nope/SKILL.md" in err


def test_invalid_entries_are_reported_not_offered(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    project.servers(docs=["--invalid"])
    code, out, err = project.cli(capsys, "skills", "list", "--json")
    assert code == 0, err
    view = json.loads(out)
    assert [s["name"] for s in view["skills"]] == ["docs:git-workflow", "docs:pdf-processing"]
    assert view["invalid"] == [
        "server 'docs': skill://broken/SKILL.md: 'resources' is neither an array nor "
        '"dynamic" (hosts must not load it)',
        "server 'docs': skill://impostor/SKILL.md: the skill's name 'git-workflow' is not "
        "the last segment of its path",
    ]
    code, out, _ = project.cli(capsys, "skills", "list")
    assert "invalid: server 'docs': skill://broken/SKILL.md" in out


def test_a_dynamic_skill_is_not_loaded(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    project.servers(docs=["--dynamic"])
    code, _, err = project.cli(capsys, "skills", "show", "daily")
    assert code == 1
    assert "skill 'docs:daily' of server 'docs' is dynamic" in err
    assert reads(project.logs["docs"]) == []


def test_untrusted_project_skills_are_not_offered(
    project: Project, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")
    (project.root / ".git").mkdir()
    skill(project.root / ".codebot/skills", "deploy", "Ship it", {"run.sh": "echo shipped\n"})
    code, out, err = project.cli(capsys, "skills", "list", "--json")
    assert code == 0
    assert "skipping project files (.codebot/skills/deploy/SKILL.md" in err
    assert "run `codebot trust`" in err
    view = json.loads(out)
    assert view["skills"] == []
    assert view["skipped"] == [
        {
            "path": str(project.root / ".codebot/skills/deploy"),
            "reason": "the project is not trusted",
        }
    ]
    code, _, err = project.cli(capsys, "skills", "show", "deploy")
    assert code == 2 and "project is not trusted: run `codebot trust`" in err
    code, out, _ = project.cli(capsys, "--trust-project", "skills", "show", "deploy", "--files")
    assert code == 0 and "==> run.sh (13 bytes) <==\necho shipped" in out


def test_the_installed_command_lists_and_shows(project: Project, tmp_path: Path) -> None:
    project.servers(docs=[])
    env = {"CODEBOT_HOME": str(paths.codebot_home()), "CODEBOT_TRUST_PROJECT": "1"}
    code, out, err = codebot("skills", "list", "--json", cwd=project.root, env=env)
    assert code == 0, err
    assert [s["name"] for s in json.loads(out)["skills"]] == [
        "docs:git-workflow",
        "docs:pdf-processing",
    ]
    code, out, err = codebot("skills", "show", "git-workflow", cwd=project.root, env=env)
    assert code == 0, err
    assert out == "Branch from main; write commit messages in the imperative.\n"
