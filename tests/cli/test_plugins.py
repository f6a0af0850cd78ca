"""Claude Code plugins and marketplaces (issue 31 item 5), through the real CLI: a git
repository made here (``git init`` + commits) serves the marketplace of
``tests/fixtures/claude_plugins`` over ``file://``; its plugins (written for these tests, in
Claude Code's format) are installed, listed, run in ``chat -p`` against the loopback model
server (a command with a ``!`cmd``` line, a shell hook and a Python hook that read
``CLAUDE_PLUGIN_ROOT``/``CLAUDE_PLUGIN_DATA`` and branch on Claude Code's tool names), their
MCP server listed by ``mcp list`` and checked by ``mcp doctor``; then disabled, enabled,
updated (asking again when a hook changed) and removed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import write_settings

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "claude_plugins"
REPO_ROOT = Path(__file__).resolve().parent.parent.parent


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.strip()


def make_repo(source: Path, target: Path) -> Path:
    """A git repository holding a copy of ``source``, one commit."""
    shutil.copytree(source, target)
    git(target, "init", "-q", "-b", "main")
    git(target, "add", "-A")
    git(target, "commit", "-qm", "first")
    return target


@pytest.fixture
def market(tmp_path: Path) -> Path:
    """The marketplace repository; the reviewer plugin's .mcp.json runs the echo test server."""
    root = tmp_path / "market-src"
    shutil.copytree(FIXTURE, root)
    mcp = {
        "mcpServers": {
            "echo": {
                "command": sys.executable,
                "args": ["${CLAUDE_PLUGIN_ROOT}/server/launch.py"],
                "env": {"PYTHONPATH": str(REPO_ROOT), "PLUGIN_DATA_SEEN": "${CLAUDE_PLUGIN_DATA}"},
            }
        }
    }
    (root / "plugins" / "reviewer" / ".mcp.json").write_text(json.dumps(mcp))
    repo = tmp_path / "market"
    make_repo(root, repo)
    shutil.rmtree(root)
    return repo


@pytest.fixture
def project(tmp_path: Path, fake: FakeOpenAI) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    write_settings(root, {"base_url": fake.base_url})
    return root


def cli(capsys: pytest.CaptureFixture[str], cwd: Path, *argv: str) -> tuple[int, str, str]:
    code = run(["--cwd", str(cwd), *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def installed(capsys: pytest.CaptureFixture[str], cwd: Path) -> dict[str, Any]:
    code, out, err = cli(capsys, cwd, "plugin", "list", "--json")
    assert code == 0, err
    return {p["name"]: p for p in json.loads(out)["plugins"]}


def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def test_a_git_marketplace_over_file_installs_and_every_part_of_the_plugin_loads(
    tmp_path: Path,
    market: Path,
    project: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = cli(capsys, project, "plugin", "marketplace", "add", market.as_uri())
    assert code == 0, err
    assert "added marketplace 'team-tools' (git); plugins: reviewer, notes" in out
    code, out, err = cli(capsys, project, "plugin", "marketplace", "list", "--json")
    (listed,) = json.loads(out)["marketplaces"]
    assert listed["name"] == "team-tools" and listed["source"] == market.as_uri()
    assert [p["name"] for p in listed["plugins"]] == ["reviewer", "notes"]

    code, out, err = cli(capsys, project, "plugin", "install", "reviewer@team-tools", "--yes")
    assert code == 0, err
    # everything it runs was shown: hooks, the server's command, the !`cmd` line, the scripts
    assert "commands: /reviewer:review" in out and "agents: reviewer:checker" in out
    assert "skills: style-guide" in out and "MCP servers: plugin_reviewer_echo" in out
    assert 'python3 "${CLAUDE_PLUGIN_ROOT}/hooks/guard.py"' in out
    assert 'sh "${CLAUDE_PLUGIN_ROOT}/hooks/on_prompt.sh"' in out
    assert "${CLAUDE_PLUGIN_ROOT}/server/launch.py" in out
    assert "command line commands/review.md:8: echo reviewed-by-plugin" in out
    assert "script hooks/guard.py: sha256 " in out and "script hooks/on_prompt.sh" in out
    commit = git(market, "rev-parse", "HEAD")
    record = installed(capsys, project)["reviewer"]
    assert record["version"] == "1.0.0" and record["marketplace"] == "team-tools"
    assert record["commit"] == commit and record["enabled"] and record["scope"] == "user"
    assert record["digest"].startswith("sha256:") and record["source"] == "reviewer@team-tools"
    cached = Path(record["path"])
    assert (
        cached
        == home(tmp_path) / "data" / "plugins" / "cache" / "reviewer" / f"1.0.0-{commit[:12]}"
    )
    shutil.rmtree(market)  # the copy is what runs: the source may go away

    # chat -p: the namespaced command, its !`cmd` line run, both hooks fire
    fake.queue(
        fo.tool_calls(("bash", {"command": "echo forbidden"})),
        fo.text("reviewed"),
    )
    code, out, err = cli(
        capsys,
        project,
        "chat",
        "-p",
        "/reviewer:review app.py",
        "--yes",
        "--json",
        "--sandbox",
        "off",
    )
    assert code == 0, err
    data = json.loads(out)
    sent = fake.bodies[0]["messages"]
    user = "\n".join(str(m["content"]) for m in sent if m["role"] == "user")
    assert "- Reviewer: reviewed-by-plugin" in user and "Review app.py and list" in user
    context = json.dumps(sent)
    assert f"reviewer plugin context v1 (root 1.0.0-{commit[:12]})" in context
    log = home(tmp_path) / "data" / "plugins" / "data" / "reviewer" / "prompts.log"
    assert "Review app.py" in log.read_text()  # CLAUDE_PLUGIN_DATA reached the shell hook
    (call,) = data["tool_calls"]
    assert call["denied"] and "the reviewer plugin forbids this command" in call["result"]
    # the plugin's server gives the model its tools under Claude Code's names
    tools = {t["function"]["name"] for t in fake.bodies[0].get("tools", [])}
    assert "mcp__plugin_reviewer_echo__echo" in tools

    # mcp list shows it with its origin; doctor checks it like any other
    code, out, err = cli(capsys, project, "mcp", "list")
    assert code == 0, err
    assert f"  from plugin reviewer: {cached / '.mcp.json'}" in out
    code, out, err = cli(capsys, project, "mcp", "doctor", "--offline")
    assert code == 0, out + err
    assert "✓ plugin_reviewer_echo  stdio · connected" in out and "15 tools" in out
    # ${CLAUDE_PLUGIN_DATA} expanded in the server's env
    code, out, err = cli(
        capsys,
        project,
        "mcp",
        "call",
        "plugin_reviewer_echo",
        "env",
        '{"name": "PLUGIN_DATA_SEEN"}',
    )
    assert code == 0, err
    assert str(home(tmp_path) / "data" / "plugins" / "data" / "reviewer") in out


def test_disable_enable_and_remove(
    tmp_path: Path,
    market: Path,
    project: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli(capsys, project, "plugin", "marketplace", "add", market.as_uri())[0] == 0
    assert cli(capsys, project, "plugin", "install", "reviewer@team-tools", "--yes")[0] == 0
    cached = Path(installed(capsys, project)["reviewer"]["path"])

    code, out, err = cli(capsys, project, "plugin", "disable", "reviewer")
    assert code == 0 and "disabled plugin 'reviewer'" in out
    assert not installed(capsys, project)["reviewer"]["enabled"]
    code, out, err = cli(capsys, project, "mcp", "list")
    assert "plugin_reviewer_echo" not in out + err
    fake.queue(fo.text("plain"))
    code, out, err = cli(capsys, project, "chat", "-p", "/reviewer:review x")
    assert code == 0, err
    sent = fake.bodies[-1]["messages"][-1]["content"]
    assert sent == "/reviewer:review x"  # not a command any more: sent as typed
    assert "reviewer plugin context" not in json.dumps(fake.bodies[-1])

    code, out, err = cli(capsys, project, "plugin", "enable", "reviewer")
    assert code == 0 and "enabled plugin 'reviewer'" in out
    code, out, err = cli(capsys, project, "mcp", "list")
    assert "plugin_reviewer_echo" in out

    code, out, err = cli(capsys, project, "plugin", "remove", "reviewer")
    assert code == 0 and "removed plugin 'reviewer'" in out
    assert installed(capsys, project) == {} and not cached.exists()
    code, out, err = cli(capsys, project, "plugin", "remove", "reviewer")
    assert code == 2 and "no plugin named 'reviewer' is installed" in err

    code, out, err = cli(capsys, project, "plugin", "marketplace", "remove", "team-tools")
    assert code == 0 and "removed marketplace 'team-tools'" in out
    assert not (home(tmp_path) / "data" / "plugins" / "marketplaces" / "team-tools").exists()
    code, out, err = cli(capsys, project, "plugin", "install", "reviewer@team-tools", "--yes")
    assert code == 2 and "no marketplace named 'team-tools'" in err


def test_without_a_terminal_install_refuses_unless_yes(
    tmp_path: Path, market: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(capsys, project, "plugin", "marketplace", "add", str(market))[0] == 0
    code, out, err = cli(capsys, project, "plugin", "marketplace", "add", market.as_uri())
    assert code == 2 and "a marketplace named 'team-tools' is already added" in err
    code, out, err = cli(capsys, project, "plugin", "install", "reviewer@team-tools")
    assert code == 2
    assert "not installing plugin 'reviewer' without confirmation: stdin is not a terminal" in err
    assert "--yes" in err
    assert 'python3 "${CLAUDE_PLUGIN_ROOT}/hooks/guard.py"' in out  # shown before refusing
    assert installed(capsys, project) == {}
    plugins = home(tmp_path) / "data" / "plugins"
    assert not (plugins / "cache").exists()
    assert not [p for p in plugins.iterdir() if p.name.startswith(".staging-")]


def test_an_update_that_changes_a_hook_asks_again_naming_the_change(
    tmp_path: Path, market: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(capsys, project, "plugin", "marketplace", "add", market.as_uri())[0] == 0
    assert cli(capsys, project, "plugin", "install", "reviewer@team-tools", "--yes")[0] == 0
    first = installed(capsys, project)["reviewer"]

    # a change that runs nothing new: no question, even without a terminal
    (market / "plugins" / "reviewer" / "README.md").write_text("Docs only.\n")
    git(market, "add", "-A")
    git(market, "commit", "-qm", "docs")
    code, out, err = cli(capsys, project, "plugin", "update", "reviewer")
    assert code == 0, err
    assert "What it runs is unchanged." in out and "updated plugin 'reviewer'" in out
    second = installed(capsys, project)["reviewer"]
    assert second["digest"] == first["digest"] and second["commit"] != first["commit"]

    # the hook's script changes: asked again, the change named; refused without a terminal
    hook = market / "plugins" / "reviewer" / "hooks" / "on_prompt.sh"
    hook.write_text(hook.read_text().replace("context v1", "context v2"))
    git(market, "commit", "-qam", "hook v2")
    code, out, err = cli(capsys, project, "plugin", "update", "reviewer")
    assert code == 2, out
    assert "This update changes what the plugin runs:" in out
    assert "changed script hooks/on_prompt.sh: sha256 " in out
    assert "not updating plugin 'reviewer' without confirmation" in err
    assert installed(capsys, project)["reviewer"]["digest"] == first["digest"]

    # the hook's command changes too; --yes takes it
    hooks = market / "plugins" / "reviewer" / "hooks" / "hooks.json"
    hooks.write_text(
        hooks.read_text()
        .replace('timeout": 30', 'timeout": 20')
        .replace(
            'sh \\"${CLAUDE_PLUGIN_ROOT}/hooks/on_prompt.sh\\"',
            'sh \\"${CLAUDE_PLUGIN_ROOT}/hooks/on_prompt.sh\\" --verbose',
        )
    )
    git(market, "commit", "-qam", "hook command")
    code, out, err = cli(capsys, project, "plugin", "install", "reviewer@team-tools", "--yes")
    assert code == 0, err  # install of an installed plugin: an update
    assert cli(capsys, project, "plugin", "marketplace", "update", "team-tools")[0] == 0
    code, out, err = cli(capsys, project, "plugin", "update", "reviewer", "--yes")
    assert code == 0, err
    assert "changed hook UserPromptSubmit" in out and 'on_prompt.sh" --verbose' in out
    third = installed(capsys, project)["reviewer"]
    assert third["digest"] != first["digest"] and third["commit"] == git(
        market, "rev-parse", "HEAD"
    )
    assert not Path(first["path"]).exists() and Path(third["path"]).is_dir()


def test_install_from_a_local_folder_and_from_a_git_url(
    tmp_path: Path, project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "notes"
    shutil.copytree(FIXTURE / "plugins" / "notes", folder)
    code, out, err = cli(capsys, project, "plugin", "install", str(folder), "--yes")
    assert code == 0, err
    assert "commands: /notes:jot, /notes:review" in out
    assert "It runs nothing" in out
    record = installed(capsys, project)["notes"]
    assert record["source"] == str(folder) and record["commit"] is None
    shutil.rmtree(folder)

    # a plain /jot reaches the plugin's command (no other command has that name)
    fake.queue(fo.text("noted"), fo.text("as typed"))
    code, out, err = cli(capsys, project, "chat", "-p", "/jot buy milk")
    assert code == 0, err
    assert fake.bodies[-1]["messages"][-1]["content"] == "Write a one-line note about: buy milk"
    assert cli(capsys, project, "plugin", "remove", "notes")[0] == 0

    # from a git URL (the reviewer is its repository's root)
    repo = make_repo(FIXTURE / "plugins" / "reviewer", tmp_path / "reviewer-repo")
    code, out, err = cli(capsys, project, "plugin", "install", repo.as_uri() + "#main", "--yes")
    assert code == 0, err
    record = installed(capsys, project)["reviewer"]
    assert record["commit"] == git(repo, "rev-parse", "HEAD")
    assert record["source"] == repo.as_uri() + "#main" and record["marketplace"] is None
    # the same name from another source asks again, even when what runs is the same
    clone = tmp_path / "reviewer-copy"
    shutil.copytree(FIXTURE / "plugins" / "reviewer", clone)
    code, out, err = cli(capsys, project, "plugin", "install", str(clone))
    assert (
        code == 2 and f"this replaces plugin 'reviewer' installed from {repo.as_uri()}#main" in err
    )
    assert installed(capsys, project)["reviewer"]["source"] == repo.as_uri() + "#main"
    # both plugins give /review: the plain name is ambiguous, the namespaced ones work
    notes = tmp_path / "notes2"
    shutil.copytree(FIXTURE / "plugins" / "notes", notes)
    assert cli(capsys, project, "plugin", "install", str(notes), "--yes")[0] == 0
    fake.queue(fo.text("as typed"))
    code, out, err = cli(capsys, project, "chat", "-p", "/review now")
    assert code == 0, err
    sent = fake.bodies[-1]["messages"][-1]["content"]
    assert sent.startswith("/review now\n") and "Review my notes" not in sent
    assert "reviewer plugin context v1" in sent  # the git-installed plugin's hook ran


@pytest.mark.parametrize(
    ("manifest", "key"),
    [
        ({"name": "bad", "version": 3}, "'version'"),
        ({"name": "Bad Name"}, "'name'"),
        ({"name": "bad", "commands": "cmds"}, "'commands'"),
        ({"name": "bad", "hooks": "./../outside.json"}, "'hooks'"),
    ],
)
def test_a_bad_plugin_json_names_the_file_and_the_key(
    tmp_path: Path,
    project: Path,
    capsys: pytest.CaptureFixture[str],
    manifest: dict[str, Any],
    key: str,
) -> None:
    folder = tmp_path / "bad"
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    code, _out, err = cli(capsys, project, "plugin", "install", str(folder), "--yes")
    assert code == 3, err
    assert key in err and "plugin.json" in err and "Traceback" not in err
    assert installed(capsys, project) == {}


def test_bad_json_and_a_bad_marketplace_name_their_files(
    tmp_path: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "broken"
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin" / "plugin.json").write_text('{"name": "broken",}')
    code, _, err = cli(capsys, project, "plugin", "install", str(folder), "--yes")
    assert code == 3 and "invalid JSON in" in err and "plugin.json at line 1" in err
    market = tmp_path / "market"
    (market / ".claude-plugin").mkdir(parents=True)
    (market / ".claude-plugin" / "marketplace.json").write_text(
        json.dumps({"name": "m", "owner": {"name": "x"}, "plugins": [{"name": "p"}]})
    )
    code, _out, err = cli(capsys, project, "plugin", "marketplace", "add", str(market))
    assert code == 3 and "'plugins[0].source'" in err and "marketplace.json" in err


def test_managed_settings_deny_a_plugins_server(
    tmp_path: Path,
    market: Path,
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert cli(capsys, project, "plugin", "marketplace", "add", market.as_uri())[0] == 0
    assert cli(capsys, project, "plugin", "install", "reviewer@team-tools", "--yes")[0] == 0
    policy = tmp_path / "managed.json"
    policy.write_text(json.dumps({"denied_mcp_servers": [{"name": "plugin_reviewer_echo"}]}))
    monkeypatch.setenv("CODEBOT_MANAGED_SETTINGS", str(policy))
    _code, out, err = cli(capsys, project, "mcp", "list")
    assert "server 'plugin_reviewer_echo' is left out by the managed settings" in err
    assert "mcp__plugin_reviewer_echo__echo" not in out


def test_the_reports_show_each_plugin_item_with_its_origin(
    tmp_path: Path, market: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = market / "plugins" / "reviewer"
    assert cli(capsys, project, "plugin", "install", str(folder), "--yes")[0] == 0
    cached = Path(installed(capsys, project)["reviewer"]["path"])
    code, out, err = cli(capsys, project, "chat", "-p", "/help")
    assert code == 0, err
    assert "/reviewer:review [files]  Review the given files  (plugin:reviewer/commands)" in out
    code, out, err = cli(capsys, project, "chat", "-p", "/agents")
    (row,) = [line for line in out.splitlines() if "reviewer:checker" in line]
    assert str(cached / "agents" / "checker.md") in row and "read, grep" in row
    code, out, err = cli(capsys, project, "chat", "-p", "/skills")
    (row,) = [line for line in out.splitlines() if line.startswith("style-guide")]
    assert str(cached / "skills" / "style-guide") in row
    code, out, err = cli(capsys, project, "skills", "show", "style-guide")
    assert code == 0, err
    assert f"The checklist is\n{cached}/skills/style-guide/checklist.md." in out
    code, out, err = cli(capsys, project, "chat", "-p", "/hooks")
    assert f'python3 "{cached}/hooks/guard.py"' in out
    assert str(cached / "hooks" / "hooks.json") + " (hooks.PreToolUse[0].hooks[0])" in out


def test_a_marketplace_json_by_url_with_git_sources_and_a_project_scope(
    tmp_path: Path, project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    import http.server
    import threading

    repo = make_repo(FIXTURE / "plugins" / "notes", tmp_path / "notes-repo")
    catalog = {
        "name": "remote-tools",
        "owner": {"name": "Remote"},
        "plugins": [
            {"name": "notes", "source": {"source": "url", "url": repo.as_uri(), "ref": "main"}},
            {"name": "local", "source": "./plugins/local"},
        ],
    }
    body = json.dumps(catalog).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/marketplace.json"
        code, out, err = cli(capsys, project, "plugin", "marketplace", "add", url)
        assert code == 0, err
        assert "added marketplace 'remote-tools' (url); plugins: notes, local" in out
    finally:
        server.shutdown()
        server.server_close()
    # a relative source needs the marketplace's folder, which a URL does not have
    code, out, err = cli(capsys, project, "plugin", "install", "local@remote-tools", "--yes")
    assert code == 3 and "'plugins[1].source'" in err and "git URL" in err
    code, out, err = cli(
        capsys, project, "plugin", "install", "notes@remote-tools", "--yes", "--scope", "project"
    )
    assert code == 0, err
    record = installed(capsys, project)["notes"]
    assert record["scope"] == "project" and record["project"] == str(project.resolve())
    assert record["commit"] == git(repo, "rev-parse", "HEAD")
    fake.queue(fo.text("noted"))
    code, out, err = cli(capsys, project, "chat", "-p", "/notes:jot milk")
    assert fake.bodies[-1]["messages"][-1]["content"] == "Write a one-line note about: milk"
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    write_settings(elsewhere, {"base_url": fake.base_url})
    fake.queue(fo.text("as typed"))
    code, out, err = cli(capsys, elsewhere, "chat", "-p", "/notes:jot milk")
    assert code == 0, err
    assert fake.bodies[-1]["messages"][-1]["content"] == "/notes:jot milk"  # not this project


@pytest.mark.anyio
async def test_an_enabled_plugin_loads_in_the_repl(
    tmp_path: Path,
    market: Path,
    project: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import anyio

    from tests.cli.repl_driver import drive, until

    folder = market / "plugins" / "reviewer"
    assert run(["--cwd", str(project), "plugin", "install", str(folder), "--yes"]) == 0
    capsys.readouterr()
    fake.queue(fo.text("reviewed in the repl"))

    async def steps(repl: Any, inp: Any) -> None:
        await until(lambda: repl.runtime is not None)
        inp.send_text("/reviewer:review repl.py\r")
        await until(lambda: len(fake.bodies) == 1)
        await anyio.sleep(0.3)
        inp.send_text("\x04")

    code, _ = await drive(project, steps, servers=1, seconds=30)
    assert code == 0
    sent = fake.bodies[0]["messages"][-1]["content"]
    assert "- Reviewer: reviewed-by-plugin" in sent and "Review repl.py" in sent
    assert "reviewer plugin context v1" in json.dumps(fake.bodies[0]["messages"])
    tools = {t["function"]["name"] for t in fake.bodies[0].get("tools", [])}
    assert "mcp__plugin_reviewer_echo__echo" in tools
