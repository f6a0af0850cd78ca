"""Reading a Claude Code plugin folder and loading the enabled ones, in process: custom
component paths from plugin.json, inline hooks and servers, a marketplace entry with
``"strict": false``, what runs and what an update changes, and the loaded servers, hooks and
definitions (``core.config.plugins``, ``core.plugins.plugininstall``)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.core.config import settings as settings_module
from codebot_mcp.core.config.plugins import load, manifest
from codebot_mcp.core.config.plugins.manifest import PluginError
from codebot_mcp.core.hooks.hooksection import of as of_hooks
from codebot_mcp.core.plugins import plugininstall as install
from codebot_mcp.core.slashcommands.templates import load_commands
from codebot_mcp.core.subagents.delegation import load_agents


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def plugin_json(root: Path, data: dict[str, Any]) -> None:
    write(root / ".claude-plugin" / "plugin.json", json.dumps(data))


@pytest.fixture
def custom(tmp_path: Path) -> Path:
    """A plugin that moves every component (plugin.json paths, inline hooks and servers)."""
    root = tmp_path / "custom"
    plugin_json(
        root,
        {
            "name": "custom",
            "version": "2.0.0",
            "commands": ["./extra/one.md", "./more"],
            "agents": "./team",
            "skills": "./more-skills",
            "hooks": {
                "Stop": [{"hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/s.sh"}]}]
            },
            "mcpServers": {
                "db.main": {
                    "command": "${CLAUDE_PLUGIN_ROOT}/bin/db",
                    "args": ["--data", "${CLAUDE_PLUGIN_DATA}", "--in", "${CLAUDE_PROJECT_DIR}"],
                }
            },
        },
    )
    write(root / "extra" / "one.md", "---\ndescription: One\n---\nOne: !`date`\n")
    write(root / "extra" / "ignored.md", "Not named in plugin.json\n")
    write(root / "more" / "deep" / "two.md", "Two\n")
    write(root / "commands" / "default.md", "Replaced by the custom paths\n")
    write(
        root / "team" / "review" / "security.md", "---\nname: security\ndescription: Sec\n---\nX\n"
    )
    write(root / "skills" / "base" / "SKILL.md", "---\nname: base\ndescription: Base\n---\nB\n")
    write(root / "more-skills" / "extra" / "SKILL.md", "---\ndescription: Extra\n---\nE\n")
    write(root / "s.sh", "#!/bin/sh\necho stop\n")
    os.symlink("s.sh", root / "link.sh")
    return root


def test_plugin_json_paths_replace_or_add_to_the_default_folders(custom: Path) -> None:
    plugin = manifest.read(custom)
    assert plugin.name == "custom" and plugin.version == "2.0.0"
    assert plugin.commands == (custom / "extra" / "one.md", custom / "more")
    assert plugin.agents == (custom / "team",)
    assert plugin.skills == (custom / "skills", custom / "more-skills")  # skills add
    ((source, section),) = plugin.hooks
    assert source == custom / ".claude-plugin" / "plugin.json" and "Stop" in section["hooks"]
    runs = manifest.runs(plugin)
    assert runs["command line extra/one.md:4"] == "date"
    assert "command line extra/ignored.md:1" not in runs
    assert runs["link link.sh"] == "-> s.sh" and runs["script s.sh"].startswith("sha256 ")
    key = "server plugin_custom_db_main (.claude-plugin/plugin.json)"
    assert runs[key] == (
        "'${CLAUDE_PLUGIN_ROOT}/bin/db' --data '${CLAUDE_PLUGIN_DATA}' --in '${CLAUDE_PROJECT_DIR}'"
    )


def test_the_enabled_plugin_loads_servers_hooks_and_namespaced_definitions(
    custom: Path, tmp_path: Path
) -> None:
    prepared = install.prepare(str(custom), tmp_path)
    installed = install.commit(prepared)
    root = installed.path
    cwd = tmp_path / "work"
    cwd.mkdir()
    loaded = settings_module.load_unfiltered(cwd)
    server = loaded.servers["plugin_custom_db_main"]
    data = str(tmp_path / "home" / "data" / "plugins" / "data" / "custom")
    assert server.error is None, server.error
    assert server.command == f"{root}/bin/db"
    assert server.args == ("--data", data, "--in", str(cwd))
    assert server.env["CLAUDE_PLUGIN_ROOT"] == str(root)
    (hook,) = [h for h in of_hooks(loaded) if h.event == "Stop"]
    assert hook.command == f"{root}/s.sh" and dict(hook.env)["CLAUDE_PLUGIN_DATA"] == data
    commands = load_commands(None, include_project=False)
    assert sorted(commands.commands) == ["custom:deep:two", "custom:one"]
    assert commands.commands["custom:one"].origin == "plugin:custom/commands"
    assert commands.find("/one now") is not None  # the plain name, no other /one
    agents = load_agents(None, include_project=False)
    assert "custom:review:security" in agents.specs

    install.set_enabled("custom", False)
    assert "plugin_custom_db_main" not in settings_module.load_unfiltered(cwd).servers
    assert load_commands(None, include_project=False).commands == {}


def test_a_marketplace_entry_fills_in_and_strict_false_is_the_whole_manifest(
    tmp_path: Path,
) -> None:
    root = tmp_path / "p"
    plugin_json(root, {"name": "p", "description": "from plugin.json"})
    write(root / "cmds" / "a.md", "A\n")
    entry = {"name": "p", "source": "./p", "version": "1.2.3", "commands": "./cmds"}
    plugin = manifest.read(root, entry)
    assert plugin.version == "1.2.3" and plugin.description == "from plugin.json"
    assert plugin.commands == (root / "cmds",)
    loose = manifest.read(root, {**entry, "strict": False, "description": "entry"})
    assert loose.description == "entry"
    with pytest.raises(PluginError, match=r"'version' in .*market\.json must be a string"):
        manifest.read(tmp_path / "bare", {"version": 1}, entry_source=tmp_path / "market.json")


def test_what_an_update_changes_is_named_line_by_line() -> None:
    old = {"hook Stop (h)": "Stop *: a.sh", "script a.sh": "sha256 1", "server s (m)": "x"}
    new = {"hook Stop (h)": "Stop *: b.sh", "script a.sh": "sha256 1", "script b.sh": "sha256 2"}
    assert manifest.changes(old, new) == [
        "changed hook Stop (h): Stop *: a.sh -> Stop *: b.sh",
        "added script b.sh: sha256 2",
        "removed server s (m): x",
    ]
    assert manifest.digest(old) != manifest.digest(new)
    assert manifest.digest(old) == manifest.digest(dict(reversed(old.items())))


@pytest.mark.parametrize(
    ("plugin", "server", "name"),
    [
        ("a", "b", "plugin_a_b"),
        ("my-plugin", "db.main", "plugin_my-plugin_db_main"),
        ("a", "_x", "plugin_a_x"),
    ],
)
def test_server_names_are_claude_codes(plugin: str, server: str, name: str) -> None:
    assert load.server_name(plugin, server) == name


def test_a_plugin_without_plugin_json_keeps_its_marketplace_name_once_installed(
    tmp_path: Path,
) -> None:
    from codebot_mcp.core.plugins import marketplace

    market = tmp_path / "market"
    write(
        market / ".claude-plugin" / "marketplace.json",
        json.dumps(
            {
                "name": "m",
                "owner": {"name": "o"},
                "plugins": [
                    {"name": "bare", "source": "./plugins/bare", "version": "0.3.0"},
                    {"name": "loose", "source": "./", "strict": False, "skills": ["./s/one"]},
                ],
            }
        ),
    )
    write(market / "plugins" / "bare" / "commands" / "go.md", "Go\n")
    write(market / "s" / "one" / "SKILL.md", "---\ndescription: One\n---\nOne\n")
    write(market / "s" / "two" / "SKILL.md", "---\ndescription: Two\n---\nTwo\n")
    marketplace.add(str(market), tmp_path)
    for name in ("bare", "loose"):
        installed = install.commit(install.prepare(f"{name}@m", tmp_path))
    assert installed.path.name == "unversioned"
    commands = load_commands(None, include_project=False)
    assert list(commands.commands) == ["bare:go"]  # not "0.3.0:go" (its cache folder)
    specs = load.folders("skills", None)
    assert [s.only for s in specs if s.namespace == "loose"] == [(installed.path / "s" / "one",)]


def test_skills_listed_inside_the_default_folder_are_the_only_ones(tmp_path: Path) -> None:
    root = tmp_path / "p"
    for name in ("xlsx", "pdf", "art"):
        write(root / "skills" / name / "SKILL.md", f"---\ndescription: {name}\n---\n")
    write(root / "extra" / "more" / "SKILL.md", "---\ndescription: more\n---\n")
    picked = manifest.read(root, {"name": "p", "skills": ["./skills/xlsx", "./skills/pdf"]})
    assert picked.skills == (root / "skills" / "xlsx", root / "skills" / "pdf")
    added = manifest.read(root, {"name": "p", "skills": "./extra"})
    assert added.skills == (root / "skills", root / "extra")


def test_plugin_root_is_replaced_in_a_commands_lines_and_allowed_tools(tmp_path: Path) -> None:
    root = tmp_path / "loop"
    write(
        root / "commands" / "start.md",
        '---\nallowed-tools: ["Bash(${CLAUDE_PLUGIN_ROOT}/scripts/setup.sh:*)"]\n---\n'
        '```!\n"${CLAUDE_PLUGIN_ROOT}/scripts/setup.sh" $ARGUMENTS\n```\n'
        "State lives in $CLAUDE_PLUGIN_DATA.\n",
    )
    installed = install.commit(install.prepare(str(root), tmp_path))
    (command,) = load_commands(None, include_project=False).commands.values()
    data = tmp_path / "home" / "data" / "plugins" / "data" / "loop"
    assert f'"{installed.path}/scripts/setup.sh" $ARGUMENTS' in command.body
    assert f"State lives in {data}." in command.body
    assert command.shell_rules == (f"Bash({installed.path}/scripts/setup.sh:*)",)
