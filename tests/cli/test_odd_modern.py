"""A 2026-07-28 server whose results the SDK cannot parse (``tests/servers/odd_modern``):
a result without ``resultType`` is complete (SEP-2322); every other bad result is that call's
error, naming the server, in ``mcp call``, ``--batch``, ``mcp prompt|read`` and chat."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from codebot_mcp.cli.app import run
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.helpers import server_entry, write_settings
from tests.servers.util import REPO_ROOT


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_settings(tmp_path, {"mcp_servers": {"odd": server_entry("odd_modern")}})
    return tmp_path


def codebot(capsys: pytest.CaptureFixture[str], project: Path, *argv: str) -> tuple[int, str, str]:
    code = run(["--cwd", str(project), *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_result_without_result_type_is_complete(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = codebot(capsys, project, "mcp", "list", "--json")
    assert code == 0, err
    assert json.loads(out)["servers"][0]["protocol_version"] == "2026-07-28"
    assert codebot(capsys, project, "mcp", "call", "odd", "plain")[:2] == (0, "plain ok\n")
    code, out, err = codebot(capsys, project, "mcp", "prompt", "odd", "hello")
    assert (code, out) == (0, "user:\nhi there\n"), err
    code, out, err = codebot(capsys, project, "mcp", "read", "odd", "note://a")
    assert (code, out) == (0, "note a\n"), err


@pytest.mark.parametrize(
    ("tool", "message"),
    [
        (
            "bad_block",
            "'bad_block' failed: server 'odd' sent a result that does not follow the MCP",
        ),
        ("no_content", "server 'odd' sent a result that does not follow the MCP schema: "),
        ("odd_request", "server 'odd' sent a result that does not follow the MCP schema: "),
        (
            "endless",
            "'endless' on server 'odd' still asked for input after 10 rounds of answers; "
            "codebot gave up",
        ),
    ],
)
def test_results_the_sdk_rejects_are_the_calls_error(
    tool: str, message: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = codebot(capsys, project, "mcp", "call", "odd", tool)
    assert (code, out) == (4, "")
    assert message in err and "hint: " in err
    assert "Traceback" not in err


def test_batch_keeps_going_past_bad_results(project: Path) -> None:
    tools = ["bad_block", "plain", "endless", "no_content", "plain"]
    proc = subprocess.run(
        [sys.executable, "-m", "codebot_mcp.cli", "--cwd", str(project), "mcp", "call", "--batch"],
        input="".join(json.dumps({"server": "odd", "tool": t}) + "\n" for t in tools),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO_ROOT,
    )
    assert proc.returncode == 1, proc.stderr
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [a["line"] for a in answers] == [1, 2, 3, 4, 5]
    assert [("error" in a) for a in answers] == [True, False, True, True, False]
    assert answers[1]["content"][0]["text"] == "plain ok"
    assert "server 'odd'" in answers[0]["error"]["message"]
    assert "10 rounds" in answers[2]["error"]["message"]
    assert "Traceback" not in proc.stderr


def test_chat_gets_the_error_as_the_tool_result(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(
        project, {"base_url": fake.base_url, "mcp_servers": {"odd": server_entry("odd_modern")}}
    )
    fake.queue(
        fo.tool_calls(("mcp__odd__bad_block", {}), ("mcp__odd__endless", {})),
        fo.text("noted"),
    )
    code, out, err = codebot(capsys, project, "chat", "-p", "try them", "--yes")
    assert (code, out) == (0, "noted\n"), err
    results = [m["content"] for m in fake.bodies[1]["messages"] if m["role"] == "tool"]
    assert "server 'odd' sent a result that does not follow the MCP schema" in results[0]
    assert "'endless' on server 'odd' still asked for input after 10 rounds" in results[1]
    assert "Traceback" not in err
