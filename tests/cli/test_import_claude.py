"""``codebot import claude`` (issue 31, item 6) on real files in Claude Code's formats
(``tests/fixtures/claude_setup``, written for these tests): what is copied, translated and
skipped; merging without clobbering; ``--dry-run``, ``--force``, ``--json``, the user scope
with ``CLAUDE_CONFIG_DIR``; and the imported setup at work in a real session with
``.claude/`` gone (hook scripts in Python and shell that branch on Claude Code's names, a
translated permission rule, a real stdio server).
"""

from __future__ import annotations

import json
import shutil
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run
from codebot_mcp.core.sandbox.confinement import support
from codebot_mcp.core.sandbox.sandboxsettings import of as sandbox_of
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import REPO_ROOT

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "claude_setup"
sandboxed = pytest.mark.skipif(
    not sys.platform.startswith("linux") or bool(support().missing(network=False)),
    reason="the sandbox is unavailable here",
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "user"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return path


@pytest.fixture
def repo(tmp_path: Path, home: Path) -> Path:
    path = tmp_path / "repo"
    shutil.copytree(FIXTURES / "project", path, symlinks=True)
    (path / ".git").mkdir()
    mcp = {
        "mcpServers": {
            "echo": {
                "command": sys.executable,
                "args": ["-m", "tests.servers.echo"],
                "env": {"PYTHONPATH": str(REPO_ROOT)},
            },
            "remote": {
                "type": "sse",
                "url": "https://mcp.example.com/sse",
                "headers": {"Authorization": "Bearer sk-live-abcdefghijklmnopqrstuvwx"},
            },
        }
    }
    (path / ".mcp.json").write_text(json.dumps(mcp))
    return path


def imported(
    capsys: pytest.CaptureFixture[str], root: Path, *extra: str
) -> tuple[int, dict[str, Any]]:
    code = run(["--cwd", str(root), "import", "claude", "--json", *extra])
    out = capsys.readouterr().out
    return code, json.loads(out)


def by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{i['kind']} {i['name']}": i for i in report["items"]}


def test_the_project_setup_is_copied_translated_and_every_item_reported(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = imported(capsys, repo)
    assert code == 0, report
    items = by_name(report)
    settings = json.loads((repo / ".codebot" / "settings.json").read_text())

    # hooks: kept in Claude Code's shape, the scripts copied out of .claude/ and pointed to
    hook = items['hook PreToolUse Bash: "$CLAUDE_PROJECT_DIR"/.claude/hooks/check.py']
    assert hook["action"] == "translate"
    assert any("statusMessage" in n for n in hook["notes"])
    [pre] = [g for g in settings["hooks"]["PreToolUse"] if g["matcher"] == "Bash"]
    assert pre["hooks"] == [
        {
            "type": "command",
            "command": '"$CLAUDE_PROJECT_DIR"/.codebot/hooks/check.py',
            "if": "Bash(git commit:*)",
        }
    ]
    copied = repo / ".codebot" / "hooks" / "check.py"
    assert copied.read_bytes() == (repo / ".claude" / "hooks" / "check.py").read_bytes()
    assert copied.stat().st_mode & stat.S_IXUSR  # still executable
    assert settings["hooks"]["PostToolUse"][0]["hooks"] == [
        {"type": "command", "command": "sh .codebot/hooks/format.sh", "timeout": 30}
    ]
    assert items["hook Stop *: " + settings["hooks"]["Stop"][0]["hooks"][0]["command"]]
    assert items["hook PostToolUse Edit|Write: prompt"]["action"] == "skip"
    assert "TeammateIdle" in items["hook TeammateIdle"]["reason"]

    # permissions: codebot rules, narrowed ones too (the gate reads Claude Code's patterns),
    # by the translator that reads .claude/ in place; Read(./.env) also hidden from bash
    assert settings["permissions"] == {
        "allow": ["bash(npm run test:*)", "read", "glob", "grep", "mcp__github__get_issue"],
        "deny": ["read(./.env)", "glob(./.env)", "grep(./.env)"],
        "ask": ["bash(git push:*)"],
    }
    assert settings["sandbox"] == {"deny_read": [".env"]}
    assert not [
        h for g in settings["hooks"]["PreToolUse"] for h in g["hooks"] if "printf" in h["command"]
    ]
    env = items["permission deny: Read(./.env)"]
    assert env["action"] == "translate" and "sandbox.deny_read" in env["notes"][0]
    assert items["permission ask: Bash(git push:*)"]["notes"] == ["→ bash(git push:*)"]
    assert items["permission deny: WebFetch"]["action"] == "skip"
    assert items["permission permissions.defaultMode"]["action"] == "skip"
    assert items["setting env"]["action"] == "skip" and items["setting model"]["reason"]

    # servers: translated as `mcp import` does, the secret never copied
    assert settings["mcp_servers"]["remote"] == {
        "type": "http",
        "url": "https://mcp.example.com/sse",
        "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"},
    }
    assert "sk-live" not in json.dumps(report) + json.dumps(settings)
    assert items["server echo"]["action"] == "copy"

    # agents and commands: written flat, front matter in codebot's names
    agent = (repo / ".codebot" / "agents" / "code-reviewer.md").read_text()
    assert "tools: read, grep, glob, bash\n" in agent
    assert "</example>\n" in agent and "model: sonnet\n" in agent  # the rest as written
    notes = " ".join(items["agent review/code-reviewer"]["notes"])
    assert "WebFetch dropped" in notes and "written flat" in notes and "sonnet" in notes
    plain = repo / ".codebot" / "agents" / "plain.md"
    assert plain.read_bytes() == (repo / ".claude" / "agents" / "plain.md").read_bytes()
    assert items["agent plain"]["action"] == "copy"
    command = (repo / ".codebot" / "commands" / "component.md").read_text()
    assert "allowed-tools: bash(git add:*), bash(git status:*), read\n" in command
    assert "argument-hint: [name]\n" in command and "!`git status`" in command
    assert items["command hello"]["action"] == "copy"

    # skills: the whole folder, a title as name → the folder's name
    skill = repo / ".codebot" / "skills" / "hook-dev"
    assert "name: hook-dev\n" in (skill / "SKILL.md").read_text()
    assert "allowed-tools: read, grep\n" in (skill / "SKILL.md").read_text()
    assert (skill / "scripts" / "lint.sh").read_text() == "echo lint\n"

    # memory: CLAUDE.md is read where it is
    assert items["memory CLAUDE.md"]["action"] == "kept"
    assert report["counts"]["clash"] == 0 and report["exit_code"] == 0


def test_a_second_run_is_idempotent_and_dry_run_writes_nothing(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, plan = imported(capsys, repo, "--dry-run")
    assert code == 0 and plan["written"] == [] and not (repo / ".codebot").exists()
    assert plan["counts"]["copy"] + plan["counts"]["translate"] > 10

    code, first = imported(capsys, repo)
    assert code == 0 and first["written"]
    files = sorted(p for p in (repo / ".codebot").rglob("*") if p.is_file())
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in files}
    code, second = imported(capsys, repo)
    assert code == 0 and second["written"] == []
    assert {i["action"] for i in second["items"]} <= {"same", "kept", "skip"}
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in files} == before
    assert [(i["kind"], i["name"]) for i in first["items"]] == [
        (i["kind"], i["name"]) for i in second["items"]
    ]


def test_an_existing_entry_of_the_same_name_is_kept_unless_force(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / ".codebot" / "agents").mkdir(parents=True)
    mine = "---\nname: plain\ndescription: mine\n---\nMine.\n"
    (repo / ".codebot" / "agents" / "plain.md").write_text(mine)
    theirs = {"command": "my-echo"}
    (repo / ".codebot" / "settings.json").write_text(
        json.dumps({"mcp_servers": {"echo": theirs}, "model": "gpt-4o"})
    )
    code, report = imported(capsys, repo)
    assert code == 0
    items = by_name(report)
    assert items["agent plain"]["action"] == "clash" and "--force" in items["agent plain"]["reason"]
    assert items["server echo"]["action"] == "clash"
    assert (repo / ".codebot" / "agents" / "plain.md").read_text() == mine
    settings = json.loads((repo / ".codebot" / "settings.json").read_text())
    assert settings["mcp_servers"]["echo"] == theirs and settings["model"] == "gpt-4o"
    assert "remote" in settings["mcp_servers"]  # the rest merged in

    code, report = imported(capsys, repo, "--force")
    assert code == 0
    items = by_name(report)
    assert items["agent plain"]["action"] == "replace"
    assert items["server echo"]["action"] == "replace"
    assert "You answer briefly." in (repo / ".codebot" / "agents" / "plain.md").read_text()
    settings = json.loads((repo / ".codebot" / "settings.json").read_text())
    assert settings["mcp_servers"]["echo"]["args"] == ["-m", "tests.servers.echo"]
    assert settings["model"] == "gpt-4o"  # what the import does not touch stays


def test_model_aliases_translate_a_claude_model_name(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "home" / "settings.json").write_text(
        json.dumps({"model_aliases": {"sonnet": "gpt-4o-mini"}})
    )
    code, report = imported(capsys, repo)
    assert code == 0
    agent = (repo / ".codebot" / "agents" / "code-reviewer.md").read_text()
    assert "model: gpt-4o-mini\n" in agent
    notes = by_name(report)["agent review/code-reviewer"]["notes"]
    assert "model 'sonnet' → 'gpt-4o-mini' (model_aliases)" in notes


def test_the_text_report_lists_every_item(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["--cwd", str(repo), "import", "claude", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "~ agent review/code-reviewer → " in out
    assert "- permission deny: WebFetch" in out and "skip: codebot has no WebFetch tool" in out
    assert "translated: tools: WebFetch dropped (codebot has no such tool)" in out
    assert "= memory CLAUDE.md" in out
    assert "(dry run: nothing written)" in out


def test_the_user_setup_honours_claude_config_dir(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "claude-config"
    shutil.copytree(FIXTURES / "user" / ".claude", config)
    shutil.copy(FIXTURES / "user" / ".claude.json", config / ".claude.json")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    project = tmp_path / "elsewhere"
    project.mkdir()
    code, report = imported(capsys, project, "--user")
    assert code == 0, report
    codebot_home = tmp_path / "home"
    assert report["target"] == str(codebot_home)
    settings_path = codebot_home / "settings.json"
    settings = json.loads(settings_path.read_text())
    assert stat.S_IMODE(settings_path.stat().st_mode) == 0o600  # your global file: private
    assert settings["mcp_servers"]["memory"]["command"] == "npx"
    [start] = settings["hooks"]["SessionStart"][0]["hooks"]
    assert start["command"] == f"sh {codebot_home}/hooks/hello.sh"
    assert (codebot_home / "hooks" / "hello.sh").is_file()
    assert (codebot_home / "AGENTS.md").read_text() == "# My notes\nAnswer in English.\n"
    agent = (codebot_home / "agents" / "researcher.md").read_text()
    assert "tools: read, grep, task\n" in agent
    items = by_name(report)
    assert "codebot plugin install" in items["setting enabledPlugins"]["reason"]
    assert items["permission deny: Bash(rm -rf:*)"]["action"] == "translate"
    assert not (project / ".codebot").exists()  # nothing of the project's


def test_nothing_found_exits_1_and_an_unreadable_file_exits_3(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    (empty / ".git").mkdir(parents=True)
    assert run(["--cwd", str(empty), "import", "claude"]) == 1
    err = capsys.readouterr().err
    assert "no Claude Code setup found" in err and ".claude/settings.json" in err
    (empty / ".claude").mkdir()
    (empty / ".claude" / "settings.json").write_text("{ not json")
    (empty / ".claude" / "commands").mkdir()
    (empty / ".claude" / "commands" / "go.md").write_text("Go.\n")
    assert run(["--cwd", str(empty), "import", "claude"]) == 3
    out = capsys.readouterr()
    assert "invalid JSON in" in out.err and "settings.json" in out.err
    assert (empty / ".codebot" / "commands" / "go.md").read_text() == "Go.\n"  # the rest went in
    assert run(["--cwd", str(empty), "import", "claude", "--user", "--scope", "project"]) == 2


def test_other_clients_are_reached_the_same_way(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "cursor-repo"
    (repo / ".cursor").mkdir(parents=True)
    (repo / ".cursor" / "mcp.json").write_text(
        json.dumps({"mcpServers": {"files": {"command": "npx", "args": ["server-files"]}}})
    )
    assert run(["--cwd", str(repo), "import", "cursor", "--dry-run"]) == 0
    assert "would import 1 server" in capsys.readouterr().out
    assert run(["--cwd", str(repo), "mcp", "import", "--from", "cursor", "--dry-run"]) == 0
    assert "would import 1 server" in capsys.readouterr().out


@sandboxed
def test_the_imported_setup_works_with_claude_left_behind(
    repo: Path, fake: FakeOpenAI, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "home" / "settings.json").write_text(json.dumps({"base_url": fake.base_url}))
    assert run(["--cwd", str(repo), "import", "claude"]) == 0
    capsys.readouterr()
    shutil.rmtree(repo / ".claude")
    (repo / ".mcp.json").unlink()
    (repo / ".env").write_text("SECRET=1\n")
    assert run(["--cwd", str(repo), "trust", "--yes"]) == 0
    capsys.readouterr()

    fake.queue(
        fo.tool_calls(
            ("bash", {"command": "git commit -m wip"}),
            ("read", {"path": ".env"}),
            ("write", {"path": "notes.txt", "content": "hi\n"}),
        ),
        fo.tool_calls(("bash", {"command": "cat .env; echo read-done"})),
        fo.text("done"),
    )
    code = run(["--cwd", str(repo), "chat", "-p", "go", "--json", "--yes"])
    out = capsys.readouterr()
    assert code == 0, out.err
    listed = json.loads(out.out)["tool_calls"]
    calls = {c["name"]: c for c in listed[:3]}
    # ...and its path went to sandbox.deny_read: a confined cat finds it empty
    assert "read-done" in listed[3]["result"] and "SECRET" not in listed[3]["result"]
    # check.py (Python, copied to .codebot/hooks) saw Claude Code's "Bash" and denied
    assert calls["bash"]["denied"] and "check.py: no commits here" in calls["bash"]["result"]
    assert (repo / "check.log").read_text() == "git commit -m wip\n"
    # Claude Code's deny rule Read(./.env), now codebot's rule read(./.env), refuses the read
    assert calls["read"]["denied"] and "rule 'read(./.env)'" in calls["read"]["result"]
    # format.sh (shell) saw "Write" after the write; the local settings' Stop hook ran
    assert (repo / "format.log").read_text() == "write\n"
    assert (repo / "stop.log").read_text() == "stopped\n"

    assert run(["--cwd", str(repo), "mcp", "call", "echo", "echo", "text=hi"]) == 0
    assert "hi" in capsys.readouterr().out


def test_the_coming_from_claude_code_page_matches_the_code() -> None:
    import re

    from codebot_mcp.core.config.hookcontract import CLAUDE_NAMES
    from codebot_mcp.core.config.hooks import EVENTS

    page = (REPO_ROOT / "docs" / "claude-code.md").read_text()
    rows = dict(re.findall(r"^\| `([a-z_]+)` \| `([A-Za-z]+)`", page, re.MULTILINE))
    assert rows == CLAUDE_NAMES
    fired = page.split("**Events.**", 1)[1].split("Claude Code's other", 1)[0]
    assert set(re.findall(r"`([A-Za-z]+)`", fired)) == set(EVENTS)


@pytest.mark.parametrize(
    ("rule", "verdict", "rules", "hidden", "skipped"),
    [
        ("Bash", "allow", ["bash"], None, None),
        ("Bash(*)", "deny", ["bash"], None, None),
        ("Edit", "ask", ["edit", "write"], None, None),
        ("Read", "allow", ["read", "glob", "grep"], None, None),
        ("Task", "deny", ["task"], None, None),
        ("mcp__github__*", "allow", ["mcp__github__*"], None, None),
        ("mcp__github", "deny", ["mcp__github"], None, None),
        ("Bash(git push:*)", "ask", ["bash(git push:*)"], None, None),
        ("Edit(src/**)", "deny", ["edit(src/**)", "write(src/**)"], None, None),
        (
            "Read(./secrets/**)",
            "deny",
            ["read(./secrets/**)", "glob(./secrets/**)", "grep(./secrets/**)"],
            "secrets",
            None,
        ),
        (
            "Read(~/.aws/**)",
            "deny",
            ["read(~/.aws/**)", "glob(~/.aws/**)", "grep(~/.aws/**)"],
            "~/.aws",
            None,
        ),
        ("Read(./.env)", "allow", ["read(./.env)", "glob(./.env)", "grep(./.env)"], None, None),
        (
            "Read(**/*.pem)",
            "deny",
            ["read(**/*.pem)", "glob(**/*.pem)", "grep(**/*.pem)"],
            None,
            None,
        ),
        ("WebFetch(domain:example.com)", "allow", [], None, "WebFetch"),
        ("NotebookEdit", "deny", [], None, "NotebookEdit"),
        ("mcp__x__y(z)", "deny", [], None, "pattern"),
        ("not a rule!", "deny", [], None, "not a permission rule"),
    ],
)
def test_claude_permission_rules_translate_as_they_are_read_in_place(
    rule: str,
    verdict: Any,
    rules: list[str],
    hidden: str | None,
    skipped: str | None,
    home: Path,
    tmp_path: Path,
) -> None:
    from codebot_mcp.core.config.claudefiles import translate_rule
    from codebot_mcp.core.config.importers.claude_permissions import translate

    out = translate(rule, verdict, tmp_path)
    assert out.rules == rules
    assert tuple(out.rules) == translate_rule(rule)[0]  # one translator
    assert out.hidden == hidden
    if skipped is None:
        assert out.skipped is None
    else:
        assert out.skipped is not None and skipped in out.skipped


def test_hidden_paths_roots_and_disabled_hooks_are_imported_as_they_work_in_place(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / ".claude").mkdir()
    claude = {
        "permissions": {
            "deny": ["Read(./secrets/**)", "Read(~/.aws/**)", "Bash(curl:*)"],
            "additionalDirectories": ["../shared"],
        },
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo stop"}]}]},
        "theme": "dark",
        "sandbox": {"enabled": True, "network": {"allowedDomains": ["PyPI.org", "*.npmjs.org"]}},
    }
    (root / ".claude" / "settings.json").write_text(json.dumps(claude))
    (root / ".claude" / "settings.local.json").write_text(json.dumps({"disableAllHooks": True}))
    code, report = imported(capsys, root)
    assert code == 0, report
    settings = json.loads((root / ".codebot" / "settings.json").read_text())
    assert settings["permissions"]["deny"][-1] == "bash(curl:*)"
    assert settings["sandbox"] == {
        "deny_read": ["secrets", "~/.aws"],
        "network": ["pypi.org", "*.npmjs.org"],
    }
    assert settings["roots"] == ["../shared"]
    assert "hooks" not in settings  # disableAllHooks: they do not run in place either
    items = by_name(report)
    assert "disableAllHooks is true" in items["hook hooks"]["reason"]
    assert "looks or updates" in items["setting theme"]["reason"]
    assert items["permission additionalDirectories: ../shared"]["action"] == "translate"
    assert items["setting sandbox.network.allowedDomains"]["action"] == "translate"
    assert "sandbox is its own" in items["setting sandbox.enabled"]["reason"]

    again = imported(capsys, root)[1]  # a second run: nothing new
    assert {i["action"] for i in again["items"]} == {"same", "skip"} and not again["written"]

    # what codebot reads from the imported file is what it read from .claude/ in place
    from codebot_mcp.core.config import effective

    shutil.rmtree(root / ".claude")
    loaded = effective.load(root, assume_trusted=True)
    assert "bash(curl:*)" in loaded.settings.permissions.deny
    assert (root / "secrets") in sandbox_of(loaded.settings).deny_read
    assert (tmp_path / "shared").resolve() in loaded.settings.roots
    assert sandbox_of(loaded.settings).domains == ("pypi.org", "*.npmjs.org")
    assert imported(capsys, root)[0] == 1  # nothing left to import


def test_the_home_folder_is_not_a_project(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CODEBOT_HOME", str(home / ".codebot"))
    (home / ".claude" / "agents").mkdir(parents=True)
    (home / ".claude" / "agents" / "a.md").write_text("---\nname: a\ndescription: b\n---\nx\n")
    assert run(["--cwd", str(home), "import", "claude"]) == 2
    assert "codebot import claude --user" in capsys.readouterr().err
    assert run(["--cwd", str(home), "import", "claude", "--scope", "global"]) == 0
    assert (home / ".codebot" / "agents" / "a.md").is_file()


TRICKY = {
    "agents/listed.md": (
        "---\nname: listed\ndescription: Triggers include: review, audit\ntools:\n  - Read\n"
        "  - LS\n  - NotebookRead\n  - Task\nmodel: inherit\n---\nBody.\n"
    ),
    "agents/crlf.md": "---\r\nname: crlf\r\ndescription: d\r\ntools: Read, Edit\r\n---\r\nB.\r\n",
    "agents/bare.md": "No front matter at all.\n",
    "commands/git/commit.md": (
        '---\nallowed-tools: ["Bash(git add:*)", "Bash(git commit:*)", "mcp__gh__pr"]\n'
        'description: "Commit: staged changes"\n---\n!`git diff --cached`\nCommit.\n'
    ),
}


def test_translated_files_mean_to_codebot_what_the_originals_meant(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from codebot_mcp.core.config import definitions
    from codebot_mcp.core.subagents.delegation import agent_tools

    for name, text in TRICKY.items():
        path = repo / ".claude" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())
    code, report = imported(capsys, repo)
    assert code == 0, report
    pairs = [
        (Path(i["source"]), Path(i["target"]))
        for i in report["items"]
        if i["kind"] in ("agent", "command") and i["action"] in ("copy", "translate")
    ]
    assert len(pairs) == 8
    for source, target in pairs:
        before, _ = definitions.parse(source.read_text())
        after, body = definitions.parse(target.read_text())
        assert body == definitions.parse(source.read_text())[1], target
        for key in ("name", "description", "argument-hint", "color"):
            assert after.get(key) == before.get(key), (target, key)
        folder = definitions.Folder(definitions.Scope.PROJECT, "", target, target)
        old = definitions.Definition(definitions.Kind.AGENTS, "x", source, folder, before, "")
        new = definitions.Definition(definitions.Kind.AGENTS, "x", target, folder, after, "")
        for key in ("tools", "allowed-tools"):
            if old.names(key) is None:
                assert new.names(key) is None
                continue
            tools, _ = agent_tools(old.names(key))
            assert agent_tools(new.names(key)) == (tools, ()), (target, key)
    listed = (repo / ".codebot" / "agents" / "listed.md").read_text()
    assert "tools: read, glob, task\nmodel: inherit\n" in listed
    commit = (repo / ".codebot" / "commands" / "commit.md").read_text()
    assert "allowed-tools: bash(git add:*), bash(git commit:*), mcp__gh__pr\n" in commit
    crlf = (repo / ".codebot" / "agents" / "crlf.md").read_bytes()
    assert crlf == b"---\r\nname: crlf\r\ndescription: d\r\ntools: read, edit\r\n---\r\nB.\r\n"


def test_the_import_says_to_move_the_claude_folder_aside(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["--cwd", str(repo), "import", "claude"]) == 0
    assert "move it aside so its hooks do not run twice" in capsys.readouterr().err
    assert run(["--cwd", str(repo), "import", "claude"]) == 0  # nothing written: no hint
    assert "move it aside" not in capsys.readouterr().err


def test_servers_in_a_settings_file_are_imported_with_the_others(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mcp = json.loads((repo / ".mcp.json").read_text())["mcpServers"]
    local = {"mcpServers": {"echo": mcp["echo"], "other": {"command": "other-server"}}}
    (repo / ".claude" / "settings.local.json").write_text(json.dumps(local))
    code, report = imported(capsys, repo)
    assert code == 0
    servers = [i for i in report["items"] if i["kind"] == "server"]
    assert [(i["name"], i["action"]) for i in servers] == [
        ("echo", "copy"),
        ("remote", "translate"),
        ("echo", "same"),
        ("other", "copy"),
    ]
    settings = json.loads((repo / ".codebot" / "settings.json").read_text())
    assert settings["mcp_servers"]["other"] == {"command": "other-server"}


def test_a_broken_codebot_settings_file_stops_the_import_before_any_write(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / ".codebot").mkdir()
    (repo / ".codebot" / "settings.json").write_text("{broken")
    code = run(["--cwd", str(repo), "import", "claude", "--json"])
    out = capsys.readouterr()
    assert code == 3
    report = json.loads(out.out)
    assert report["exit_code"] == 3 and "settings.json" in report["errors"][0]
    assert "invalid JSON" in out.err
    assert sorted(p.name for p in (repo / ".codebot").iterdir()) == ["settings.json"]


def test_a_project_hook_keeps_pointing_at_your_own_claude_folder(tmp_path: Path) -> None:
    from codebot_mcp.core.config.importers.claude_setup import Item, Setup, _hook_scripts

    root = tmp_path / "p"
    (root / ".claude" / "hooks").mkdir(parents=True)
    (root / ".claude" / "hooks" / "x.sh").write_text("exit 0\n")
    setup = Setup("project", root / ".claude", root / ".codebot", root / ".codebot/s.json", root)
    item = Item("hook", "h", root)
    command = 'sh ~/.claude/hooks/x.sh; sh "$CLAUDE_PROJECT_DIR"/.claude/hooks/x.sh; sh .claude/x'
    command = command.replace(".claude/x", ".claude/hooks/x.sh")
    assert _hook_scripts(setup, command, item) == (
        'sh ~/.claude/hooks/x.sh; sh "$CLAUDE_PROJECT_DIR"/.codebot/hooks/x.sh; '
        "sh .codebot/hooks/x.sh"
    )
    assert len(item.notes) == 1 and [i.kind for i in setup.items] == ["file", "file"]
    assert [i.action for i in setup.items] == ["copy", "same"]
