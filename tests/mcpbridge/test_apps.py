"""MCP Apps (SEP-1865), degraded correctly, against a real Apps server (tests/servers/apps.py):
app-only tools never reach the model, ``mcp list`` hides and counts them (``--all`` shows
them), ``ui://`` pages stay out of the model's resources and of ``@`` completion, doctor warns
about a server whose every tool is app-only, and codebot never advertises the extension."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run
from codebot_mcp.mcpbridge.tools.apps import app_only, visibility
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import server_entry, write_settings


def codebot(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = run(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(params=["lite", "sdk"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """``mcp list``/``mcp call`` have an SDK-free hot path and the SDK path: both filter."""
    if request.param == "sdk":
        monkeypatch.setenv("CODEBOT_SDK_PATH", "1")
    return str(request.param)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_settings(tmp_path, {"mcp_servers": {"apps": server_entry("apps")}})
    return tmp_path


def test_visibility_reading() -> None:
    assert app_only({"ui": {"visibility": ["app"]}})
    assert app_only({"ui": {"visibility": []}})
    assert app_only({"ui": {"visibility": "app"}})  # a lone string, read as one item
    assert not app_only({"ui": {"visibility": ["model", "app"]}})
    assert not app_only({"ui": {"resourceUri": "ui://x"}})  # unset: the default, both
    assert not app_only({"ui": {"visibility": {"model": False}}})  # not a list: unset
    assert not app_only(None)
    assert visibility({"ui": {"visibility": ["app", 3]}}) == ("app",)


def test_list_hides_app_only_tools_and_counts_them(
    project: Path, path: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = codebot(capsys, "--cwd", str(project), "mcp", "list")
    assert code == 0, err
    assert "mcp__apps__refresh_chart" not in out
    for visible in ("show_chart", "pick_colour", "plain"):
        assert f"mcp__apps__{visible}" in out
    assert "3 tools · 1 app-only hidden" in out
    assert "1 app-only tool hidden (MCP Apps: never offered to the model); --all shows them" in out

    code, out, err = codebot(capsys, "--cwd", str(project), "mcp", "list", "--all")
    assert code == 0, err
    line = next(ln for ln in out.splitlines() if "mcp__apps__refresh_chart" in ln)
    assert "(app-only)" in line
    assert "1 app-only shown" in out
    assert "--all shows them" not in out


def test_list_json_counts_and_marks_app_only_tools(
    project: Path, path: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = codebot(capsys, "--cwd", str(project), "mcp", "list", "--json")
    assert code == 0
    [server] = json.loads(out)["servers"]
    assert server["tool_count"] == 3
    assert server["app_only_count"] == 1
    assert {t["original_name"] for t in server["tools"]} == {"show_chart", "pick_colour", "plain"}
    assert not any(t["app_only"] for t in server["tools"])

    code, out, _ = codebot(capsys, "--cwd", str(project), "mcp", "list", "--json", "--all")
    [server] = json.loads(out)["servers"]
    shown = {t["original_name"]: t["app_only"] for t in server["tools"]}
    assert shown == {
        "show_chart": False,
        "pick_colour": False,
        "plain": False,
        "refresh_chart": True,
    }
    assert server["tool_count"] == 3  # what the model is offered


def test_the_user_may_call_an_app_only_tool(
    project: Path, path: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = codebot(capsys, "--cwd", str(project), "mcp", "call", "apps", "refresh_chart")
    assert code == 0, err
    assert out.strip() == "refreshed"


def test_the_model_never_sees_app_only_tools_nor_app_pages(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = json.loads((project / ".codebot" / "settings.json").read_text())
    write_settings(project, {**settings, "base_url": fake.base_url})
    fake.queue(
        fo.tool_calls(("list_mcp_resources", {})),
        fo.tool_calls(("mcp__apps__refresh_chart", {})),
        fo.text("done"),
    )
    code, out, err = codebot(capsys, "--cwd", str(project), "chat", "-p", "chart", "--yes")
    assert (code, out) == (0, "done\n"), err
    names = [t["function"]["name"] for t in fake.bodies[0]["tools"]]
    assert "mcp__apps__refresh_chart" not in names
    assert {"mcp__apps__show_chart", "mcp__apps__pick_colour", "mcp__apps__plain"} <= set(names)
    listing = _tool_results(fake.bodies[1])[-1]
    uris = [json.loads(line)["uri"] for line in listing.splitlines()]
    assert uris == ["note://hello"]  # the ui:// page is left out
    # Even named by a model that guessed it, the app-only tool does not run.
    refused = _tool_results(fake.bodies[2])[-1]
    assert "there is no tool named 'mcp__apps__refresh_chart'" in refused


def _tool_results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def test_codebot_does_not_advertise_the_ui_extension(
    tmp_path: Path, path: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The capabilities codebot declares, as the server records them (both eras, both paths),
    hold no ``io.modelcontextprotocol/ui``: the server falls back to text for us."""
    log = tmp_path / "caps.jsonl"
    write_settings(
        tmp_path,
        {
            "mcp_servers": {
                "modern": server_entry("apps", "--record", str(log)),
                "legacy": server_entry("apps", "--record", str(log), protocol="legacy"),
            }
        },
    )
    for server in ("modern", "legacy"):
        argv = ("--cwd", str(tmp_path), "mcp", "call", server, "plain", "text=x")
        code, out, err = codebot(capsys, *argv)
        assert (code, out) == (0, "plain x\n"), err
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert sorted(s["protocol"] for s in seen) == ["2025-11-25", "2026-07-28"]
    for record in seen:
        caps = record["caps"]
        assert caps is not None and "elicitation" in caps  # what codebot does declare
        assert "io.modelcontextprotocol/ui" not in (caps.get("extensions") or {})


@pytest.mark.anyio
async def test_app_pages_are_left_out_of_at_completion() -> None:
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from codebot_mcp.cli.repl.repl_completion import SLASH_COMMANDS, MCPCompleter
    from codebot_mcp.mcpbridge.connection.manager import Manager
    from tests.helpers import make_server

    async with Manager({"apps": make_server("apps", "apps")}) as manager:
        await manager.start_all()
        assert [r.uri for r in await manager.resources("apps")] == [
            "note://hello",
            "ui://chart/app.html",
        ]  # the server offers both; `codebot mcp resources` lists both
        completer = MCPCompleter(lambda: manager, SLASH_COMMANDS)

        async def complete(text: str) -> list[str]:
            found = completer.get_completions_async(Document(text), CompleteEvent())
            return [c.text async for c in found]

        assert await complete("look at @apps:") == ["note://hello"]
        assert await complete("look at @apps:ui") == []


def test_doctor_warns_when_every_tool_is_app_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(
        tmp_path,
        {
            "mcp_servers": {
                "charts": server_entry("apps", "--only-app"),
                "apps": server_entry("apps"),
            }
        },
    )
    code, out, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "doctor", "--format", "json")
    assert code == 0, err  # warnings only
    report = json.loads(out)
    found = {(f["server"], f["check"]): f for f in report["findings"]}
    warning = found[("charts", "tools.app_only")]
    assert warning["severity"] == "warning"
    assert "all of its 1 tool ('refresh_chart') are app-only" in warning["message"]
    assert "codebot mcp disable charts" in warning["hint"]
    assert ("charts", "tools.empty") not in found  # one finding, the right one
    assert ("apps", "tools.app_only") not in found  # some of its tools reach the model
    views = {s["name"]: s for s in report["servers"]}
    assert (views["charts"]["tool_count"], views["charts"]["app_only_count"]) == (0, 1)
    assert (views["apps"]["tool_count"], views["apps"]["app_only_count"]) == (3, 1)
