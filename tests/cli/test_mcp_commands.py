"""`codebot mcp list` and `codebot mcp call` through the real entry point, with real servers."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codebot_mcp.cli.app import run
from tests.helpers import EVERYTHING_BIN, children_of, server_entry, write_settings
from tests.servers.util import run_http_server


def echo_entry(**extra: Any) -> dict[str, Any]:
    return server_entry("echo", **extra)


def codebot(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = run(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_settings(tmp_path, {"mcp_servers": {"echo": echo_entry()}})
    return tmp_path


def test_list_shows_servers_and_tools(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = codebot(capsys, "--cwd", str(project), "mcp", "list")
    assert code == 0, err
    assert "✓ echo  stdio · connected · protocol 2026-07-28 ·" in out
    assert "mcp__echo__delete_note" in out
    line = next(ln for ln in out.splitlines() if "mcp__echo__delete_note" in ln)
    assert "write" in line


def test_list_json_with_schemas(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = codebot(capsys, "--cwd", str(project), "mcp", "list", "--json", "--schemas")
    assert code == 0
    [server] = json.loads(out)["servers"]
    assert server["status"] == "connected"
    assert server["source"] == str(project / ".codebot" / "settings.json")
    tools = {t["original_name"]: t for t in server["tools"]}
    assert tools["echo"]["input_schema"]["properties"]["text"]["type"] == "string"
    assert tools["fetch_url"]["capability"] == "network"
    assert tools["fetch_url"]["capability_reason"] == "annotation openWorldHint=true"
    assert server["tool_count"] == len(server["tools"])


def test_list_exits_4_when_a_server_fails_and_still_lists_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(
        tmp_path,
        {
            "mcp_servers": {
                "echo": echo_entry(),
                "crash": server_entry("crash_on_start"),
            }
        },
    )
    code, out, _ = codebot(capsys, "--cwd", str(tmp_path), "mcp", "list")
    assert code == 4
    assert "✓ echo" in out
    assert "✗ crash" in out
    assert "database connection refused" in out  # the tail of the server's stderr


def test_list_selects_servers_and_rejects_unknown_names(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = codebot(capsys, "--cwd", str(project), "mcp", "list", "--server", "nope")
    assert code == 2
    assert "unknown server 'nope' (configured: echo)" in err


def test_list_redacts_env_and_header_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CANARY", "canary-value-8a7f3")
    write_settings(
        tmp_path,
        {
            "mcp_servers": {
                "echo": echo_entry(env={"SECRET": "${CANARY}"}),
                "remote": {
                    "url": "http://user:${CANARY}@127.0.0.1:9/mcp?token=${CANARY}",
                    "headers": {"Authorization": "Bearer ${CANARY}"},
                    "timeout": 3,
                },
            }
        },
    )
    code, out, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "list", "--json")
    assert code == 4  # nothing listens on port 9
    assert "canary-value-8a7f3" not in out + err
    servers = {s["name"]: s for s in json.loads(out)["servers"]}
    assert servers["echo"]["env"] == {"SECRET": "***"}
    assert servers["remote"]["headers"] == {"Authorization": "***"}
    code, out, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "list")
    assert "canary-value-8a7f3" not in out + err


def test_call_prints_text_and_exit_codes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cwd = ["--cwd", str(project)]
    assert codebot(capsys, *cwd, "mcp", "call", "echo", "echo", "text=hello world")[:2] == (
        0,
        "hello world\n",
    )
    code, out, err = codebot(capsys, *cwd, "mcp", "call", "echo", "fail", '{"message": "boom"}')
    assert code == 1 and "boom" in out
    assert "error: tool 'fail' on server 'echo' reported an error" in err

    code, out, _ = codebot(capsys, *cwd, "mcp", "call", "echo", "add", "a=2", "b=40", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["structuredContent"] == {"sum": 42}
    assert result["isError"] is False


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["echo", "echo", "{bad"], "invalid JSON arguments"),
        (["echo", "echo", "novalue"], "is not key=value"),
        (["echo", "no_such_tool"], "has no tool 'no_such_tool'"),
        (["nope", "echo"], "unknown server 'nope'"),
        (["echo", "add", "a=x", "b=1"], "do not match its schema: a: 'x' is not of type 'integer'"),
        (["echo", "echo", "@missing.json"], "cannot read arguments file"),
        (["echo", "echo", "txet=hi"], "unknown argument 'txet' (did you mean 'text'?)"),
        (["echo", "add", "a=1", "zzz=2"], "unknown argument 'zzz' (it takes a, b)"),
    ],
)
def test_call_usage_errors_exit_2(
    project: Path, capsys: pytest.CaptureFixture[str], argv: list[str], fragment: str
) -> None:
    code, _, err = codebot(capsys, "--cwd", str(project), "mcp", "call", *argv)
    assert code == 2
    assert fragment in err
    assert "hint:" in err
    assert "Traceback" not in err


def test_call_arguments_from_file_and_stdin(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "args.json").write_text('{"text": "from file"}')
    code, out, _ = codebot(
        capsys, "--cwd", str(project), "mcp", "call", "echo", "echo", "@args.json"
    )
    assert (code, out) == (0, "from file\n")
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO('{"text": "from stdin"}'))
    code, out, _ = codebot(capsys, "--cwd", str(project), "mcp", "call", "echo", "echo", "-")
    assert (code, out) == (0, "from stdin\n")


def test_call_unreachable_server_exits_4(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(tmp_path, {"mcp_servers": {"gone": {"command": "definitely-not-installed-x"}}})
    code, _, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "call", "gone", "t")
    assert code == 4
    assert "command 'definitely-not-installed-x' not found" in err


def test_call_a_server_with_a_bad_entry_exits_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(
        tmp_path, {"mcp_servers": {"bad": {"command": "x", "env": {"A": "${UNSET_VAR_Q}"}}}}
    )
    code, _, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "call", "bad", "t")
    assert code == 3
    assert "${UNSET_VAR_Q}" in err and "'bad'" in err


def test_invalid_settings_json_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / ".codebot").mkdir()
    (tmp_path / ".codebot" / "settings.json").write_text('{"mcp_servers": }')
    code, _, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "list")
    assert code == 3
    assert "line 1, column 17" in err


def test_call_timeout(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = codebot(
        capsys,
        "--cwd",
        str(project),
        "mcp",
        "call",
        "echo",
        "sleep",
        "seconds=30",
        "--timeout",
        "5",
    )
    assert code == 4
    assert "no answer within 5 s" in err


# -- published servers -------------------------------------------------------------------


def test_everything_and_time_servers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    time_bin = shutil.which("mcp-server-time", path=str(Path(sys.executable).parent))
    assert time_bin, "mcp-server-time is missing: run `make install`"
    write_settings(
        tmp_path,
        {
            "mcp_servers": {
                "everything": {"command": str(EVERYTHING_BIN), "args": ["stdio"]},
                "time": {"command": time_bin},
            }
        },
    )
    code, out, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "list", "--json")
    assert code == 0, err
    servers = {s["name"]: s for s in json.loads(out)["servers"]}
    assert "mcp__everything__echo" in [t["name"] for t in servers["everything"]["tools"]]
    assert "mcp__time__get_current_time" in [t["name"] for t in servers["time"]["tools"]]
    assert servers["everything"]["protocol_version"] == "2025-11-25"

    code, out, _ = codebot(
        capsys, "--cwd", str(tmp_path), "mcp", "call", "everything", "echo", "message=hi there"
    )
    assert (code, out) == (0, "Echo: hi there\n")
    code, out, _ = codebot(
        capsys, "--cwd", str(tmp_path), "mcp", "call", "time", "get_current_time", "timezone=UTC"
    )
    assert code == 0 and json.loads(out)["timezone"] == "UTC"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def everything_http() -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen(
        ["node", str(EVERYTHING_BIN.resolve()), "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_everything_over_streamable_http(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], everything_http: str
) -> None:
    write_settings(tmp_path, {"mcp_servers": {"ev": {"type": "http", "url": everything_http}}})
    code, out, err = codebot(
        capsys, "--cwd", str(tmp_path), "mcp", "call", "ev", "echo", "message=over http"
    )
    assert (code, out) == (0, "Echo: over http\n"), err


def test_http_server_with_required_header(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with run_http_server("--token", "tok-123456") as url:
        write_settings(
            tmp_path,
            {
                "mcp_servers": {
                    "good": {"url": url, "headers": {"Authorization": "Bearer ${HTTP_TOKEN}"}},
                    "nokey": {"url": url, "timeout": 10},
                }
            },
        )
        monkeypatch.setenv("HTTP_TOKEN", "tok-123456")
        code, out, _ = codebot(capsys, "--cwd", str(tmp_path), "mcp", "call", "good", "whoami")
        assert (code, out) == (0, "http\n")
        code, _, err = codebot(capsys, "--cwd", str(tmp_path), "mcp", "call", "nokey", "whoami")
        assert code == 4
        assert "401" in err
        assert "headers" in err  # the hint says where to put credentials


def test_real_console_script_leaves_no_children(project: Path) -> None:
    script = Path(sys.executable).parent / "codebot"
    proc = subprocess.run(
        [str(script), "--cwd", str(project), "mcp", "call", "echo", "echo", "text=via script"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (proc.returncode, proc.stdout) == (0, "via script\n"), proc.stderr
    assert children_of(os.getpid()) == []


def test_batch_keeps_servers_connected_and_answers_each_line(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    requests = [
        {"server": "echo", "tool": "echo", "arguments": {"text": "one"}},
        {"server": "echo", "tool": "add", "arguments": {"a": 1, "b": "x"}},
        {"server": "nope", "tool": "echo"},
        {"server": "echo", "tool": "fail", "arguments": {"message": "bad"}},
        {"server": "echo", "tool": "env", "arguments": {"name": "CODEBOT_PID_PROBE"}},
    ]
    lines = "\n".join(json.dumps(r) for r in requests) + "\nnot json\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(lines))
    code, out, _ = codebot(capsys, "--cwd", str(project), "mcp", "call", "--batch")
    answers = [json.loads(line) for line in out.splitlines()]
    assert code == 1
    assert [a["line"] for a in answers] == [1, 2, 3, 4, 5, 6]
    assert answers[0]["content"][0]["text"] == "one"
    assert answers[1]["error"]["exit_code"] == 2
    assert "unknown server 'nope'" in answers[2]["error"]["message"]
    assert answers[3]["isError"] is True
    assert answers[4]["content"][0]["text"] == "<unset>"
    assert answers[5]["error"]["message"].startswith("invalid JSON")


def test_a_batch_from_a_file_starts_only_the_servers_its_requests_name(tmp_path: Path) -> None:
    """The servers a piped file's requests name launch early (while the SDK is imported); the
    others are never started, and junk or a too-deep line among the requests changes nothing."""
    started = tmp_path / "started"
    started.mkdir()

    def marking(name: str) -> dict[str, Any]:
        command, argv = sys.executable, ["-m", "tests.servers.echo"]
        script = f'touch "{started / name}"; exec "$0" "$@"'
        return {**echo_entry(), "command": "sh", "args": ["-c", script, command, *argv]}

    write_settings(tmp_path, {"mcp_servers": {"named": marking("named"), "idle": marking("idle")}})
    requests = tmp_path / "requests.jsonl"
    lines = [
        json.dumps({"server": "named", "tool": "echo", "arguments": {"text": "one"}}),
        "[" * 100_000,
        "not json",
        json.dumps({"server": "named", "tool": "echo", "arguments": {"text": "two"}}),
    ]
    requests.write_text("\n".join(lines) + "\n")
    codebot_bin = str(Path(sys.executable).with_name("codebot"))
    with requests.open() as stdin:
        done = subprocess.run(
            [codebot_bin, "--cwd", str(tmp_path), "mcp", "call", "--batch"],
            stdin=stdin,
            capture_output=True,
            text=True,
            timeout=60,
        )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["line"] for a in answers] == [1, 2, 3, 4], done.stderr
    assert answers[0]["content"][0]["text"] == "one"
    assert answers[3]["content"][0]["text"] == "two"
    assert "error" in answers[1] and "error" in answers[2]
    assert done.returncode == 1
    assert sorted(p.name for p in started.iterdir()) == ["named"]


def test_batch_all_ok_exits_0_and_rejects_positional_arguments(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    monkeypatch.setattr(
        sys, "stdin", io.StringIO('{"server":"echo","tool":"echo","arguments":{"text":"x"}}\n')
    )
    code, out, _ = codebot(capsys, "--cwd", str(project), "mcp", "call", "--batch")
    assert code == 0 and json.loads(out)["content"][0]["text"] == "x"
    code, _, err = codebot(capsys, "--cwd", str(project), "mcp", "call", "echo", "echo", "--batch")
    assert code == 2 and "--batch takes the requests on stdin" in err


def test_key_value_follows_the_tool_schema(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cwd = ["--cwd", str(project)]
    for value in ("123", "true", '{"a": 1}', "null"):
        code, out, err = codebot(capsys, *cwd, "mcp", "call", "echo", "echo", f"text={value}")
        assert (code, out) == (0, value + "\n"), err
    code, out, _ = codebot(capsys, *cwd, "mcp", "call", "echo", "add", "a=2", "b=40", "--json")
    assert json.loads(out)["structuredContent"] == {"sum": 42}


@pytest.mark.npm
def test_key_value_number_for_a_string_property_of_server_everything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.helpers import everything_entry

    write_settings(tmp_path, {"mcp_servers": {"everything": everything_entry()}})
    code, out, err = codebot(
        capsys, "--cwd", str(tmp_path), "mcp", "call", "everything", "echo", "message=123"
    )
    assert code == 0, err
    assert "123" in out
