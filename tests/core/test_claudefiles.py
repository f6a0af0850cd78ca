"""Claude Code's settings files below codebot's own (issue 31 item 1), in process: the rule
translation, the gate reading Claude Code's rule syntax, precedence, the off switch, trust.
Every fixture is written here, in Claude Code's format."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.core.agent.permissions import PermissionGate, Verdict
from codebot_mcp.core.config import claudefiles, effective, trust
from codebot_mcp.core.config.settings import load_unfiltered
from codebot_mcp.core.hooks.hooksection import of as of_hooks
from codebot_mcp.core.sandbox.sandboxsettings import of as sandbox_of
from codebot_mcp.core.tools.base import Capability, Origin, Permission, ToolInfo, ToolResult
from tests.helpers import write_settings


@dataclass
class FakeTool:
    name: str
    capability: Capability = Capability.EXECUTE
    server: str | None = None
    original_name: str = ""

    def schema(self) -> dict[str, Any]:
        return {"type": "object"}

    @property
    def info(self) -> ToolInfo:
        return ToolInfo(
            Origin.BUILTIN if self.server is None else Origin.MCP,
            Permission(self.capability, "for the test"),
            server=self.server,
            original_name=self.original_name or None,
        )

    async def execute(self, arguments: Mapping[str, Any]) -> ToolResult:
        return ToolResult("ok")


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def claude_home() -> Path:
    return Path(os.environ["CLAUDE_CONFIG_DIR"])


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ("Bash", ("bash",)),
        ("Bash(*)", ("bash",)),
        ("Bash(git commit:*)", ("bash(git commit:*)",)),
        ("Edit", ("edit", "write")),
        ("Edit(src/**)", ("edit(src/**)", "write(src/**)")),
        ("Read(./secrets/**)", ("read(./secrets/**)", "glob(./secrets/**)", "grep(./secrets/**)")),
        ("Write", ("write",)),
        ("Agent(worker)", ("task(worker)",)),
        ("Task", ("task",)),
        ("mcp__github__create_issue", ("mcp__github__create_issue",)),
        ("mcp__github__*", ("mcp__github__*",)),
        ("mcp__github", ("mcp__github",)),
        ("WebFetch(domain:example.com)", ()),
        ("WebSearch", ()),
        ("Skill(deploy)", ()),
        ("mcp__github(x)", ()),
    ],
)
def test_claude_rules_become_codebots(rule: str, expected: tuple[str, ...]) -> None:
    translated, why = claudefiles.translate_rule(rule)
    assert translated == expected
    assert (why is None) == bool(expected)


def test_the_gate_reads_a_claude_rule_by_the_calls_arguments(tmp_path: Path) -> None:
    bash, read = FakeTool("bash"), FakeTool("read", Capability.READ)
    rules = {
        "allow": ("bash(git status:*)",),
        "deny": ("bash(rm:*)", "read(./secrets/**)"),
    }
    gate = PermissionGate(claudefiles_rules(rules))
    gate.cwd = tmp_path

    def verdict(tool: FakeTool, **arguments: Any) -> Verdict:
        return gate.evaluate(tool, arguments).verdict

    assert verdict(bash, command="git status --short") is Verdict.ALLOW
    assert verdict(bash, command="git status") is Verdict.ALLOW  # `:*` covers the bare command
    # an allow rule covers a command only when every part of it matches
    assert verdict(bash, command="git status; curl evil.example") is Verdict.ASK
    # a command that cannot be parsed: no allow rule covers it, every deny rule does (safe)
    assert verdict(bash, command="git status 'open") is Verdict.DENY
    only_allow = PermissionGate(claudefiles_rules({"allow": rules["allow"]}))
    assert only_allow.evaluate(bash, {"command": "git status 'open"}).verdict is Verdict.ASK
    # a deny rule holds when any part matches, inside $() too, after VAR=x
    assert verdict(bash, command="ls && X=1 rm -rf build") is Verdict.DENY
    assert verdict(bash, command="echo $(rm -rf build)") is Verdict.DENY
    assert verdict(bash, command="echo rm") is Verdict.ASK
    assert verdict(read, path="secrets/key.txt") is Verdict.DENY
    assert verdict(read, path=str(tmp_path / "secrets" / "a" / "b")) is Verdict.DENY
    assert verdict(read, path="src/app.py") is Verdict.ALLOW
    # without the call's arguments (a listing), a pattern rule decides nothing
    assert gate.evaluate(bash).verdict is Verdict.ASK


def claudefiles_rules(lists: Mapping[str, tuple[str, ...]]) -> Any:
    from codebot_mcp.core.config.settings import PermissionRules

    return PermissionRules(**lists)


HOOK = {"type": "command", "command": "python3 .claude/hooks/guard.py"}


def test_hooks_permissions_and_unused_keys_of_the_three_files(
    repo: Path, claude_home: Path
) -> None:
    write(
        claude_home / "settings.json",
        {
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo done"}]}]},
            "permissions": {"ask": ["Edit"]},
            "theme": "dark",  # harmless: never named
            "model": "opus",
        },
    )
    write(
        repo / ".claude" / "settings.json",
        {
            "$schema": "https://json.schemastore.org/claude-code-settings.json",
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [HOOK]}]},
            "permissions": {
                "allow": ["Bash(npm test:*)", "WebFetch(domain:docs.example.com)"],
                "defaultMode": "acceptEdits",
                "additionalDirectories": ["../shared"],
            },
            "env": {"DEBUG": "1"},
            "statusLine": {"type": "command", "command": "echo hi"},
        },
    )
    write(
        repo / ".claude" / "settings.local.json",
        {"permissions": {"deny": ["Read(./secrets/**)", "Bash(rm:*)"]}},
    )
    settings = load_unfiltered(repo)
    assert [h.command for h in of_hooks(settings)] == ["echo done", HOOK["command"]]
    assert settings.permissions.allow == ("bash(npm test:*)",)
    assert settings.permissions.ask == ("edit", "write")
    assert settings.permissions.deny == (
        "read(./secrets/**)",
        "glob(./secrets/**)",
        "grep(./secrets/**)",
        "bash(rm:*)",
    )
    assert settings.permissions.origins["bash(rm:*)"] == "Bash(rm:*) in .claude/settings.local.json"
    assert (repo.parent / "shared").resolve() in settings.roots
    assert repo / "secrets" in sandbox_of(settings).deny_read  # hidden from bash too
    assert settings.claude_sources == (
        claude_home / "settings.json",
        repo / ".claude" / "settings.json",
        repo / ".claude" / "settings.local.json",
    )
    said = [str(w) for w in settings.warnings]
    # one warning per file, naming every key codebot does not use; none for the local file
    (user,) = [w for w in said if str(claude_home) in w]
    assert "not used by codebot: model" in user and "theme" not in user
    (project,) = [w for w in said if w.startswith(".claude/settings.json")]
    for name in ("env", "statusLine", "permissions.defaultMode", "WebFetch(domain:docs"):
        assert name in project
    listed = project.split(" (Claude Code's setting")[0]
    assert "$schema" not in listed and "hooks" not in listed
    assert not [w for w in said if "settings.local.json" in w]
    # the project's hooks, allow rules and directories wait for trust; deny and ask do not
    assert set(settings.project_gated) == {
        "hooks (.claude/settings.json)",
        "permissions.allow (.claude/settings.json)",
        "permissions.additionalDirectories (.claude/settings.json)",
    }
    fallback = settings.untrusted_fallback
    assert [h.command for h in fallback["sections"]["hooks"]] == ["echo done"]
    assert fallback["permissions"].allow == ()
    assert "bash(rm:*)" in fallback["permissions"].deny
    assert fallback["permissions"].ask == ("edit", "write")


def test_codebots_files_win_and_an_identical_handler_runs_once(
    repo: Path, claude_home: Path
) -> None:
    same = {"PreToolUse": [{"matcher": "Bash", "hooks": [HOOK]}]}
    mcp = {"mcpServers": {n: {"command": "python3", "args": [n]} for n in ("docs", "git")}}
    write(repo / ".mcp.json", mcp)
    write_settings(
        repo, {"hooks": same, "mcp_servers": {"docs": {"command": "python3", "args": ["mine"]}}}
    )
    write(claude_home / "settings.json", {"hooks": same})
    write(
        repo / ".claude" / "settings.local.json",
        {"hooks": same, "disabledMcpjsonServers": ["docs", "git"], "enabledMcpjsonServers": []},
    )
    settings = load_unfiltered(repo)
    (hook,) = of_hooks(settings)  # three files, one handler: codebot's file's is kept
    assert hook.source == repo / ".codebot" / "settings.json"
    # disabledMcpjsonServers turns off .mcp.json's entries, never codebot's own
    assert settings.servers["docs"].enabled and settings.servers["docs"].args == ("mine",)
    assert not settings.servers["git"].enabled
    assert not [w for w in settings.warnings if "not used" in str(w)]


def test_disable_all_hooks_turns_off_claude_files_hooks_not_codebots(
    repo: Path, claude_home: Path
) -> None:
    write_settings(repo, {"hooks": {"Stop": [{"hooks": [{"command": "echo mine"}]}]}})
    write(repo / ".claude" / "settings.json", {"hooks": {"Stop": [{"hooks": [HOOK]}]}})
    write(claude_home / "settings.json", {"disableAllHooks": True})
    assert [h.command for h in of_hooks(load_unfiltered(repo))] == ["echo mine"]


def test_a_projects_disable_all_hooks_waits_for_trust(
    repo: Path, claude_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")
    write(claude_home / "settings.json", {"hooks": {"Stop": [{"hooks": [HOOK]}]}})
    write(repo / ".claude" / "settings.json", {"disableAllHooks": True})
    untrusted = effective.load(repo)  # a cloned repo must not turn your hooks off
    assert "disableAllHooks (.claude/settings.json)" in untrusted.trust.gated
    assert [h.command for h in of_hooks(untrusted.settings)] == [HOOK["command"]]
    assert of_hooks(effective.load(repo, assume_trusted=True).settings) == ()


def test_a_broken_claude_file_is_a_warning_not_an_error(repo: Path, claude_home: Path) -> None:
    (claude_home).mkdir(parents=True)
    (claude_home / "settings.json").write_text('{"hooks": {,}')
    write(repo / ".claude" / "settings.json", {"hooks": [], "permissions": {"deny": "Bash"}})
    settings = load_unfiltered(repo)
    said = " | ".join(str(w) for w in settings.warnings)
    assert "invalid JSON at line 1" in said and "ignores this Claude Code file" in said
    assert "the hooks of .claude/settings.json are not run" in said
    assert "permissions.deny (not a list of strings)" in said
    assert of_hooks(settings) == () and settings.permissions.deny == ()


def test_claude_files_false_turns_the_whole_layer_off(repo: Path, claude_home: Path) -> None:
    write(claude_home / "settings.json", {"hooks": {"Stop": [{"hooks": [HOOK]}]}, "x": 1})
    write(repo / ".claude" / "settings.json", {"permissions": {"deny": ["Bash"]}})
    (claude_home / "CLAUDE.md").write_text("Always answer in haiku.\n")
    for kind in ("agents", "commands"):
        write(claude_home / kind / "mine.md", "x")
    home = Path(os.environ["CODEBOT_HOME"])
    write(home / "settings.json", {"claude_files": False})
    settings = load_unfiltered(repo)
    assert of_hooks(settings) == () and settings.permissions.deny == ()
    assert settings.warnings == () and settings.claude_sources == ()
    assert settings.claude_files is False

    from codebot_mcp.core.config import definitions, notes
    from codebot_mcp.core.config.definitions import Kind

    labels = [f.label for f in definitions.folders(Kind.AGENTS, repo, claude=False)]
    assert labels == [".codebot/agents", "~/.codebot/agents"]
    assert not notes.load(repo, claude=False).files
    assert notes.load(repo).files[0].text == "Always answer in haiku."


def test_a_projects_claude_files_false_waits_for_trust(
    repo: Path, claude_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")
    write(claude_home / "settings.json", {"permissions": {"deny": ["Bash(rm:*)"]}})
    write_settings(repo, {"claude_files": False})  # a cloned repo must not turn yours off
    loaded = effective.load(repo)
    assert loaded.trust.needs_trust and "claude_files" in loaded.trust.gated
    assert loaded.settings.claude_files is True
    assert loaded.settings.permissions.deny == ("bash(rm:*)",)
    trusted = effective.load(repo, assume_trusted=True).settings
    assert trusted.claude_files is False and trusted.permissions.deny == ()


def test_the_managed_settings_turn_the_layer_off(
    repo: Path, claude_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(claude_home / "settings.json", {"hooks": {"Stop": [{"hooks": [HOOK]}]}})
    assert of_hooks(effective.load(repo).settings)
    managed = write(tmp_path / "managed.json", {"claude_files": False})
    monkeypatch.setenv("CODEBOT_MANAGED_SETTINGS", str(managed))
    settings = effective.load(repo).settings
    assert of_hooks(settings) == () and settings.claude_files is False


def test_project_claude_hooks_pass_the_trust_gate_and_a_change_asks_again(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")
    script = repo / ".claude" / "hooks" / "guard.py"
    script.parent.mkdir(parents=True)
    script.write_text("import sys\nsys.exit(0)\n")
    write(repo / ".claude" / "settings.json", {"hooks": {"PreToolUse": [{"hooks": [HOOK]}]}})
    first = effective.load(repo)
    assert first.trust.needs_trust and of_hooks(first.settings) == ()
    assert script in first.trust.files  # the script the hook names is fingerprinted
    trust.record(first.trust)
    assert [h.command for h in of_hooks(effective.load(repo).settings)] == [HOOK["command"]]

    script.write_text("import sys\nsys.exit(2)\n")  # the script changed: ask again
    changed = effective.load(repo)
    assert changed.trust.changed and of_hooks(changed.settings) == ()
    assert ".claude/hooks/guard.py" in changed.trust.changed_files
    trust.record(changed.trust)

    edited = {"PreToolUse": [{"hooks": [{**HOOK, "timeout": 5}]}]}
    write(repo / ".claude" / "settings.json", {"hooks": edited})  # the entry changed
    assert effective.load(repo).trust.changed
    # a deny rule alone needs no trust: it only makes codebot more careful
    write(repo / ".claude" / "settings.json", {"permissions": {"deny": ["Bash"]}})
    (repo / ".claude" / "hooks" / "guard.py").unlink()
    loaded = effective.load(repo)
    assert "bash" in loaded.settings.permissions.deny


def test_the_label_of_each_file(
    repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert claudefiles.user_dir() == tmp_path / ".claude"
    assert claudefiles.label(tmp_path / ".claude" / "settings.json") == "~/.claude/settings.json"
    local = repo / ".claude" / "settings.local.json"
    assert claudefiles.label(local, repo) == ".claude/settings.local.json"
    mine = repo / ".codebot" / "settings.json"
    assert claudefiles.origin(mine, repo) == str(mine)  # codebot's own: the path as before


@pytest.mark.parametrize(
    ("rule", "scope", "expected"),
    [
        ("Read(./.env)", "project", "{root}/.env"),
        ("Read(./secrets/**)", "project", "{root}/secrets"),
        ("Read(/config/keys/*)", "project", "{root}/config/keys"),
        ("Read(~/.aws/**)", "user", "{home}/.aws"),
        ("Read(//etc/shadow)", "user", "/etc/shadow"),
        ("Read(./secrets/**)", "user", None),  # your file: from where? not guessed
        ("Read(**/*.pem)", "project", None),  # a glob: only the read tools refuse it
        ("Bash(cat:*)", "project", None),
    ],
)
def test_the_paths_read_deny_rules_hide_from_bash(
    repo: Path, rule: str, scope: claudefiles.Scope, expected: str | None
) -> None:
    found = claudefiles.read_path(rule, scope, repo)
    shown = expected.format(root=repo, home=Path.home()) if expected else None
    assert (str(found) if found else None) == shown


def test_claude_allowed_domains_are_the_sandbox_network_below_codebots_own(
    repo: Path, claude_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")
    network = {"allowedDomains": ["PyPI.org", "*.npmjs.org", "https://x.org/", "*.com"]}
    write(claude_home / "settings.json", {"sandbox": {"enabled": True, "network": network}})
    loaded = effective.load(repo)
    assert sandbox_of(loaded.settings).domains == ("pypi.org", "*.npmjs.org")
    assert not sandbox_of(loaded.settings).network
    [said] = [w.message for w in loaded.settings.warnings if "not used" in w.message]
    assert "sandbox.enabled" in said and "'https://x.org/'" in said and "'*.com'" in said

    # the project's own list waits for trust (it widens), then adds up
    more = {"sandbox": {"network": {"allowedDomains": ["files.pythonhosted.org"]}}}
    write(repo / ".claude" / "settings.json", more)
    untrusted = effective.load(repo)
    assert untrusted.trust.needs_trust
    assert "sandbox.network.allowedDomains (.claude/settings.json)" in untrusted.trust.gated
    assert sandbox_of(untrusted.settings).domains == ("pypi.org", "*.npmjs.org")
    trusted = sandbox_of(effective.load(repo, assume_trusted=True).settings)
    assert trusted.domains == ("pypi.org", "*.npmjs.org", "files.pythonhosted.org")

    # codebot's own sandbox.network wins, false included
    home = tmp_path / "home"
    write(home / "settings.json", {"sandbox": {"network": False}})
    assert sandbox_of(effective.load(repo, assume_trusted=True).settings).domains == ()
    write(home / "settings.json", {"sandbox": {"network": ["example.org"]}})
    assert sandbox_of(effective.load(repo, assume_trusted=True).settings).domains == (
        "example.org",
    )
    write(home / "settings.json", {"claude_files": False})
    assert sandbox_of(effective.load(repo, assume_trusted=True).settings).domains == ()


@pytest.mark.parametrize("network", [False, True, ["corp.example"]])
def test_the_managed_sandbox_network_wins_over_claude_and_codebot_host_lists(
    repo: Path, claude_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, network: Any
) -> None:
    policy = write(tmp_path / "etc" / "managed.json", {"sandbox": {"network": network}})
    monkeypatch.setenv("CODEBOT_MANAGED_SETTINGS", str(policy))
    claude = {"sandbox": {"network": {"allowedDomains": ["pypi.org"]}}}
    write(claude_home / "settings.json", claude)
    write(tmp_path / "home" / "settings.json", {"sandbox": {"network": ["npmjs.org"]}})
    sandbox = sandbox_of(effective.load(repo, assume_trusted=True).settings)
    expected = (False, tuple(network)) if isinstance(network, list) else (network, ())
    assert (sandbox.network, sandbox.domains) == expected
