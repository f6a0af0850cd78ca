"""Skills and project notes in a chat (``-p`` and the REPL), against the fake model, a real
skills server (tests/servers/skills.py, logging each request) and real skill folders: the
catalog in the prompt, lazy loading (from the server's own log), origin tags, a skill's script
run through bash under approval, /skills, /memory and /init."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run
from codebot_mcp.cli.chat_runtime import ChatOptions
from tests.cli.repl_driver import drive
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import server_entry, write_settings


def _no_sandbox() -> bool:
    from codebot_mcp.core.sandbox.confinement import support

    return not sys.platform.startswith("linux") or bool(support().missing(network=False))


NEEDS_SANDBOX = pytest.mark.skipif(_no_sandbox(), reason="the sandbox is unavailable here")


def reads(log: Path) -> list[str]:
    if not log.exists():
        return []
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    return [r["uri"] for r in lines if r["method"] == "resources/read"]


def tool_results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def system(body: dict[str, Any]) -> str:
    return str(body["messages"][0]["content"])


class Scripted:
    """The fake model's turns, and what the server had been asked when each request came."""

    def __init__(self, log: Path | None, *turns: Any) -> None:
        self.turns = list(turns)
        self.log = log
        self.seen: list[list[str]] = []

    def __call__(self, body: dict[str, Any]) -> Any:
        self.seen.append(reads(self.log) if self.log else [])
        return self.turns.pop(0) if self.turns else fo.text("(no more turns)")


@pytest.fixture
def model() -> Iterator[Callable[[Scripted], FakeOpenAI]]:
    servers: list[FakeOpenAI] = []

    def start(script: Scripted) -> FakeOpenAI:
        server = FakeOpenAI(respond=script)
        server.__enter__()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.__exit__(None, None, None)


def chat(capsys: pytest.CaptureFixture[str], cwd: Path, *argv: str) -> tuple[int, str, str]:
    code = run(["--cwd", str(cwd), "chat", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_one_shot_loads_a_served_skill_lazily_and_tagged_with_its_server(
    tmp_path: Path, model: Callable[[Scripted], FakeOpenAI], capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "docs.log"
    name = "docs:pdf-processing"
    script = Scripted(
        log,
        fo.tool_calls(("skill", {"name": name})),
        fo.tool_calls(("skill", {"name": name, "file": "references/FORMS.md"})),
        fo.tool_calls(("skill", {"name": name, "file": "references/SECRET.md"})),
        fo.text("done"),
    )
    fake = model(script)
    entry = server_entry("skills", "--log", str(log))
    write_settings(tmp_path, {"base_url": fake.base_url, "mcp_servers": {"docs": entry}})
    code, out, err = chat(capsys, tmp_path, "-p", "fill the form")
    assert code == 0, err
    assert out == "done\n"
    first = fake.bodies[0]
    assert "skill" in [t["function"]["name"] for t in first["tools"]]
    assert (
        "- docs:pdf-processing: Extract, fill, and assemble PDF documents "
        "(from MCP server 'docs')" in system(first)
    )
    assert script.seen[0] == []  # listed for the prompt, nothing fetched before use
    assert script.seen[1] == ["skill://pdf-processing/SKILL.md"]
    loaded = tool_results(fake.bodies[1])[-1]
    assert loaded.startswith(
        "Skill 'docs:pdf-processing' from MCP server 'docs' (skill://pdf-processing/SKILL.md), "
        "verified against the server's entry. It was written by that server, not by the user"
    )
    assert "<skill name='docs:pdf-processing'>\n# PDF processing" in loaded
    assert "- references/FORMS.md (36 bytes)\n- scripts/extract.py (44 bytes)" in loaded
    assert tool_results(fake.bodies[2])[-1] == (
        "<skill-file skill='docs:pdf-processing' path='references/FORMS.md' "
        "origin=\"MCP server 'docs'\">\nForm fields: name, date, signature.\n\n</skill-file>"
    )
    unlisted = tool_results(fake.bodies[3])[-1]
    assert "not listed in the skill's entry" in unlisted
    assert reads(log) == [
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/references/FORMS.md",
    ]


@pytest.mark.parametrize("yes", [False, True])
def test_one_shot_code_while_acting_on_a_served_skill_needs_yes(
    yes: bool,
    tmp_path: Path,
    model: Callable[[Scripted], FakeOpenAI],
    capsys: pytest.CaptureFixture[str],
) -> None:
    script = Scripted(
        None,
        fo.tool_calls(("bash", {"command": "echo before"})),
        fo.tool_calls(("skill", {"name": "docs:pdf-processing"})),
        fo.tool_calls(("bash", {"command": "echo after"})),
        fo.text("done"),
    )
    fake = model(script)
    write_settings(
        tmp_path,
        {
            "base_url": fake.base_url,
            "permissions": {"allow": ["bash"]},
            "mcp_servers": {"docs": server_entry("skills")},
        },
    )
    code, _, err = chat(capsys, tmp_path, "-p", "go", *(["--yes"] if yes else []))
    assert code == 0, err
    assert tool_results(fake.bodies[1])[-1] == "before"  # the allow rule: no skill yet
    after = tool_results(fake.bodies[3])[-1]
    if yes:
        assert after == "after"
    else:
        assert "Permission denied: the call to 'bash' did not run" in after
        assert "acting on skill 'docs:pdf-processing' served by an MCP server" in after


@pytest.mark.anyio
@pytest.mark.parametrize("sandbox", ["off", pytest.param(None, marks=NEEDS_SANDBOX)])
async def test_repl_skill_script_runs_through_bash_under_approval(
    sandbox: str | None,
    tmp_path: Path,
    model: Callable[[Scripted], FakeOpenAI],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Without a sandbox bash asks, and the script runs once approved; with the default
    sandbox (where the machine has one) bash runs it confined, as any bash call."""
    folder = tmp_path / ".codebot" / "skills" / "greet"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: greet\ndescription: Greets people\n---\n\nRun scripts/hello.py NAME.\n"
    )
    (folder / "scripts" / "hello.py").write_text("import sys\nprint('hello', *sys.argv[1:])\n")
    (tmp_path / "AGENTS.md").write_text("Be kind. See @docs/tone.md\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "tone.md").write_text("Warm tone.\n")
    command = f"{sys.executable} {folder.resolve()}/scripts/hello.py Ada"
    script = Scripted(
        None,
        fo.tool_calls(("skill", {"name": "greet"})),
        fo.tool_calls(("bash", {"command": command})),
        fo.text("greeted"),
    )
    fake = model(script)
    write_settings(tmp_path, {"base_url": fake.base_url})

    def bodies(n: int) -> Callable[[], bool]:
        return lambda: len(fake.bodies) >= n

    approve = [(bodies(2), "y\r")] if sandbox == "off" else []  # bash asks, unconfined
    code, _ = await drive(
        tmp_path,
        [
            (0.3, "/skills\r"),
            (0.5, "/memory\r"),
            (0.5, "greet Ada\r"),
            *approve,
            (bodies(3), "/init\r"),
            (1.0, "n\r"),  # AGENTS.md exists: keep it
            (0.5, "\x04"),
        ],
        options=ChatOptions(sandbox=sandbox),
        seconds=90,
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert f"greet  project {folder.resolve()}  Greets people" in out  # /skills
    rows = [line.split() for line in out.splitlines() if line.startswith("  ")]  # /memory
    assert ["AGENTS.md", "27", "26", "chars", "project"] in rows
    assert ["docs/tone.md", "11", "10", "chars", "imported", "by", "AGENTS.md"] in rows
    assert "- greet: Greets people (project skill)" in system(fake.bodies[0])
    assert "## docs/tone.md (imported by AGENTS.md)\nWarm tone." in system(fake.bodies[0])
    loaded = tool_results(fake.bodies[1])[-1]
    assert f"The skill's folder is {folder.resolve()}; run its scripts with bash" in loaded
    if sandbox == "off":
        # the approval question shows the whole command: on one line, or wrapped when the
        # paths (this checkout's, pytest's) make it longer than 160 characters
        assert "? bash" in err
        assert "".join(command.split()) in "".join(err.split())
    else:
        assert "✓ bash (" in err and "sandbox: " in err and "? bash" not in err
    assert tool_results(fake.bodies[2])[-1] == "hello Ada"
    assert "(kept the existing AGENTS.md)" in out
    assert (tmp_path / "AGENTS.md").read_text() == "Be kind. See @docs/tone.md\n"


@pytest.mark.anyio
async def test_repl_init_writes_a_first_agents_md(
    tmp_path: Path, model: Callable[[Scripted], FakeOpenAI], capsys: pytest.CaptureFixture[str]
) -> None:
    fake = model(Scripted(None))
    write_settings(tmp_path, {"base_url": fake.base_url})
    (tmp_path / "Makefile").write_text("test: ## Run the tests\n\tpytest\n")
    code, _ = await drive(tmp_path, [(0.3, "/init\r"), (1.0, "/memory\r"), (0.5, "\x04")])
    out, err = capsys.readouterr()
    assert code == 0, err
    text = (tmp_path / "AGENTS.md").read_text()
    assert "- `make test`: Run the tests" in text
    assert f"(wrote {tmp_path / 'AGENTS.md'}: {len(text.encode())} bytes" in out
    assert f"AGENTS.md  {len(text.encode())}" in out  # /memory sees it at once


def test_one_shot_runs_the_built_in_commands_without_a_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`codebot chat -p /memory` (and /skills, /init, /hooks ...) runs the REPL's command and
    prints its report: no model is needed, and none is asked."""
    root = tmp_path / "repo"
    skill = root / ".codebot" / "skills" / "lint"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: lint\ndescription: Lint the code.\n---\nRun ruff.\n"
    )
    (root / "AGENTS.md").write_text("Use tabs.\n")
    write_settings(root, {})
    code, out, err = chat(capsys, root, "-p", "/memory")
    assert code == 0, err
    assert "AGENTS.md" in out and "total:" in out
    code, out, err = chat(capsys, root, "-p", "/skills")
    assert code == 0 and "lint" in out and "Lint the code." in out, err
    code, out, err = chat(capsys, root, "-p", "/init")  # AGENTS.md exists: kept without --yes
    assert code == 0 and "kept the existing AGENTS.md" in out, err
    assert (root / "AGENTS.md").read_text() == "Use tabs.\n"
    code, out, err = chat(capsys, root, "-p", "/init", "--yes")
    assert code == 0 and "wrote" in out, err
    assert (root / "AGENTS.md").read_text() != "Use tabs.\n"
    code, out, err = chat(capsys, root, "-p", "/hooks", "--json")
    assert code == 0, err
    document = json.loads(out)
    assert document["command"] == "/hooks" and document["exit_code"] == 0
