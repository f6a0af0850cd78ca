"""`mcp resources|read|prompts|prompt` and servers' requests (elicitation, sampling, roots,
logging, cancellation, malformed results) through the real entry point and real servers.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run
from tests.fakes import openai_turns as fo
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.procs import wait_until
from tests.helpers import (
    everything_entry,
    marker_text,
    server_entry,
    server_logs,
    write_settings,
)
from tests.servers.util import REPO_ROOT


def codebot(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = run(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_settings(
        tmp_path,
        {
            "mcp_servers": {
                "ask": server_entry("asker", log_level="debug"),
                "askl": server_entry("asker", protocol="legacy", log_level="info"),
                "bad": server_entry("malformed"),
            },
            "roots": [str(tmp_path / "extra")],
        },
    )
    return tmp_path


def call(capsys: pytest.CaptureFixture[str], project: Path, *argv: str) -> tuple[int, str, str]:
    return codebot(capsys, "--cwd", str(project), "mcp", "call", *argv)


# --- resources and prompts ----------------------------------------------------------------


def test_everything_resources_templates_and_prompts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(tmp_path, {"mcp_servers": {"ev": everything_entry()}})
    code, out, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "resources", "--json")
    assert code == 0, err
    items = json.loads(out)["resources"]
    uris = {r.get("uri") for r in items if not r["template"]}
    templates = {r["uriTemplate"] for r in items if r["template"]}
    assert "demo://resource/static/document/architecture.md" in uris
    assert "demo://resource/dynamic/text/{resourceId}" in templates
    code, out, _ = codebot(capsys, "--cwd", str(tmp_path), "mcp", "resources", "ev")
    assert code == 0 and "template" in out and "architecture.md" in out
    code, out, _ = codebot(capsys, "--cwd", str(tmp_path), "mcp", "prompts", "ev", "--json")
    prompts = {p["name"]: p for p in json.loads(out)["prompts"]}
    assert prompts["args-prompt"]["command"] == "/mcp__ev__args-prompt"
    assert {"name": "city", "required": True} in [
        {"name": a["name"], "required": a["required"]} for a in prompts["args-prompt"]["arguments"]
    ]
    code, out, err = codebot(
        capsys, "--cwd", str(tmp_path), "mcp", "prompt", "ev", "args-prompt", "city=Paris"
    )
    assert code == 0, err
    assert "user:" in out and "Paris" in out
    code, _, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "prompt", "ev", "args-prompt")
    assert code == 2 and "needs 'city'" in err
    code, _, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "prompt", "ev", "args-promt")
    assert code == 2 and "Did you mean args-prompt" in err
    # server-everything offers its capability-gated tools, since codebot declares them
    code, out, _ = codebot(capsys, "--cwd", str(tmp_path), "mcp", "list", "--server", "ev")
    for tool in ("trigger-elicitation-request", "trigger-sampling-request", "get-roots-list"):
        assert f"mcp__ev__{tool}" in out


def test_read_text_binary_and_output_file(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = codebot(capsys, "--cwd", str(project), "mcp", "read", "ask", "note://hello")
    assert (code, out) == (0, "hello resource\n"), err
    code, out, err = codebot(capsys, "--cwd", str(project), "mcp", "read", "ask", "note://x1")
    assert (code, out) == (0, "note x1\n"), err  # a template, filled in
    code, out, err = codebot(capsys, "--cwd", str(project), "mcp", "read", "ask", "bin://blob")
    assert code == 2 and out == ""
    assert "is binary (application/octet-stream)" in err and "--output FILE" in err
    target = project / "blob.bin"
    code, _, err = codebot(
        capsys, "--cwd", str(project), "mcp", "read", "ask", "bin://blob", "--output", "blob.bin"
    )
    assert code == 0, err
    assert target.read_bytes() == bytes(range(256))
    code, out, _ = codebot(
        capsys, "--cwd", str(project), "mcp", "read", "ask", "bin://blob", "--json"
    )
    assert json.loads(out)["contents"][0]["mimeType"] == "application/octet-stream"


def test_pagination_follows_every_cursor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(tmp_path, {"mcp_servers": {"pg": server_entry("malformed", "--pages", "4")}})
    code, out, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "resources", "pg", "--json")
    assert code == 0, err
    assert [r["uri"] for r in json.loads(out)["resources"]] == [f"page://{i}" for i in range(1, 5)]


def test_prompt_with_completion_argument(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = codebot(
        capsys, "--cwd", str(project), "mcp", "prompt", "ask", "greet", "name=Bo", "style=poem"
    )
    assert code == 0, err
    assert "Greet Bo in a poem style." in out


# --- malformed results --------------------------------------------------------------------


def test_malformed_results_are_the_calls_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = call(capsys, project, "bad", "bad_content")
    assert code == 4 and out == ""
    assert "'bad_content' failed: server 'bad' sent a result that does not follow the MCP" in err
    assert "Traceback" not in err
    code, _, err = call(capsys, project, "bad", "no_content")
    assert code == 4 and "content: Field required" in err
    code, _, err = codebot(capsys, "--cwd", str(project), "mcp", "read", "bad", "note://a")
    assert code == 4 and "server 'bad' sent a malformed answer to reading note://a" in err
    code, _, err = codebot(capsys, "--cwd", str(project), "mcp", "prompt", "bad", "broken")
    assert code == 4 and "server 'bad' sent a malformed answer to prompt 'broken'" in err
    code, out, _ = call(capsys, project, "bad", "good")
    assert (code, out) == (0, "fine\n")  # the connection survived


def test_malformed_result_in_batch_is_that_lines_error(project: Path) -> None:
    lines = [
        {"server": "bad", "tool": "bad_content"},
        {"server": "bad", "tool": "good"},
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "codebot_mcp.cli", "--cwd", str(project), "mcp", "call", "--batch"],
        input="\n".join(json.dumps(line) for line in lines) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO_ROOT,
    )
    assert proc.returncode == 1, proc.stderr
    first, second = (json.loads(line) for line in proc.stdout.splitlines())
    assert "server 'bad' sent a result that does not follow" in first["error"]["message"]
    assert first["error"]["exit_code"] == 4
    assert second["content"][0]["text"] == "fine"
    assert "Traceback" not in proc.stderr


# --- elicitation ----------------------------------------------------------------------------


@pytest.mark.parametrize("server", ["ask", "askl"])  # 2026-07-28 (SEP-2322) and 2025-11-25
def test_elicit_policy(server: str, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = call(capsys, project, server, "ask_name")
    assert (code, out) == (0, "declined\n"), err  # the default is decline
    code, out, _ = call(capsys, project, server, "ask_name", "--elicit", "cancel")
    assert out == "cancelled\n"
    code, out, _ = call(capsys, project, server, "ask_name", "--elicit", "defaults")
    assert out == "declined\n"  # 'name' is required and has no default
    code, out, _ = call(capsys, project, server, "ask_color", "--elicit", "defaults")
    assert out == "3 x blue\n"


def test_url_elicitation_is_declined_without_a_person(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = call(capsys, project, "askl", "visit", "--elicit", "defaults")
    assert (code, out) == (0, "decline\n"), err


def test_bad_elicit_value_is_a_usage_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = call(capsys, project, "ask", "ask_name", "--elicit", "maybe")
    assert code == 2 and "decline, defaults, cancel" in err


# --- roots, sampling, logging ---------------------------------------------------------------


@pytest.mark.parametrize("server", ["ask", "askl"])
def test_roots_are_the_project_root_and_the_setting(
    server: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = call(capsys, project, server, "roots")
    assert code == 0, err
    assert out.splitlines() == [project.resolve().as_uri(), (project / "extra").resolve().as_uri()]


@pytest.mark.parametrize("server", ["ask", "askl"])
def test_sampling_refused_unless_allowed(
    server: str,
    project: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    code, _, err = call(capsys, project, server, "summarize", "text=hi")
    assert code == 1, err
    assert fake.bodies == []  # never silently: the model was not asked
    fake.queue(fo.text("a summary"))
    code, out, err = call(
        capsys, project, server, "summarize", "text=hi", "--allow-sampling", server
    )
    assert (code, out) == (0, "model said: a summary\n"), err
    [body] = fake.bodies
    assert body["max_tokens"] == 50
    assert body["messages"][-1] == {"role": "user", "content": "hi"}


@pytest.mark.parametrize(("server", "expected"), [("ask", True), ("askl", False)])
def test_server_log_messages_go_to_its_log_at_its_level(
    server: str, expected: bool, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = call(capsys, project, server, "progress", "steps=2")
    assert (code, out) == (0, "done\n"), err
    log = server_logs(server)
    assert "[info] progress finished" in log
    assert ("[debug] a debug line" in log) is expected  # askl: log_level info


def test_settings_reject_bad_log_level_and_roots(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(tmp_path, {"mcp_servers": {"a": server_entry("asker", log_level="loud")}})
    code, out, _ = codebot(capsys, "--cwd", str(tmp_path), "mcp", "list", "--json")
    [view] = json.loads(out)["servers"]
    assert code == 4 and 'unknown log_level "loud"' in view["failure"]["message"]
    write_settings(tmp_path, {"roots": "/tmp"})
    code, _, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "list")
    assert code == 3 and "'roots'" in err and "list of directory paths" in err


# --- cancellation -------------------------------------------------------------------------


@pytest.mark.parametrize("server", ["ask", "askl"])
def test_expired_tool_timeout_tells_the_server(
    server: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = project / f"{server}.cancelled"
    protocol = "legacy" if server == "askl" else "auto"
    write_settings(
        project, {"mcp_servers": {server: server_entry("asker", protocol=protocol, tool_timeout=3)}}
    )
    code, _, err = call(capsys, project, server, "wait", "seconds=30", f"marker={marker}")
    assert code == 4 and "gave no answer within 3 s" in err
    wait_until(lambda: marker_text(marker) == "cancelled", 5, "the server to be told")


def test_ctrl_c_during_a_call_tells_the_server(project: Path) -> None:
    marker = project / "sigint.cancelled"
    proc = subprocess.Popen(
        [
            *(
                sys.executable,
                "-m",
                "codebot_mcp.cli",
                "--cwd",
                str(project),
                "mcp",
                "call",
                "askl",
            ),
            *("wait", "seconds=60", f"marker={marker}"),
        ],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ},
    )
    try:  # the call runs once the server says so (it logs no line that would tell)
        wait_until(lambda: marker_text(marker) == "started", 30, "the call to reach the server")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    wait_until(lambda: marker_text(marker) == "cancelled", 5, "the server to be told")


def entries(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]
