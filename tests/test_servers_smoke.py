"""Smoke tests for the test servers in ``tests/servers`` (and the demo server).

Each test talks to a real server subprocess through the raw SDK ``mcp.Client``
(stderr goes to a temp file via ``stdio_client(..., errlog=...)``), proving
the server behaves as its docstring says. Those built on the raw base answer as their SDK
originals did: ``test_servers_raw.py``, ``test_servers_asker.py`` and
``test_servers_extensions.py``.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import anyio
import httpx2
import mcp.types as types
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.subscriptions import ToolsListChanged

from tests.servers.crash_on_start import MESSAGE as CRASH_MESSAGE
from tests.servers.talk import DEMO_DIR, env_set, leaf_errors, read_log, stdio_session, text_of
from tests.servers.util import run_http_server, server_command, stdio_params

pytestmark = pytest.mark.anyio


def test_server_command_shape() -> None:
    command, args = server_command("echo", "--x")
    assert command == sys.executable
    assert args == ["-m", "tests.servers.echo", "--x"]


async def test_echo_server(errlog: TextIO) -> None:
    with anyio.fail_after(30), env_set("CODEBOT_SMOKE_PARENT_SECRET", "leak"):
        async with stdio_session(stdio_params("echo"), errlog) as client:
            assert client.server_info is not None and client.server_info.name == "echo"
            assert client.instructions == "Use echo to repeat text."

            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert {
                "echo", "add", "fail", "read_notes", "delete_note", "fetch_url", "mystery",
                "image", "link", "embedded", "binary", "big", "sleep", "env", "crash",
            } <= set(tools)  # fmt: skip
            assert tools["read_notes"].annotations is not None
            assert tools["read_notes"].annotations.read_only_hint is True
            assert tools["delete_note"].annotations is not None
            assert tools["delete_note"].annotations.destructive_hint is True
            fetch = tools["fetch_url"].annotations
            assert (
                fetch is not None
                and fetch.open_world_hint is True
                and fetch.read_only_hint is False
            )
            assert tools["mystery"].annotations is None
            description = (tools["mystery"].description or "").lower()
            for word in ("read", "write", "delete", "fetch", "get", "list", "search"):
                assert word not in description
            assert tools["add"].output_schema is not None
            assert tools["echo"].output_schema is None

            assert (
                text_of(await client.call_tool("echo", {"text": "héllo\nworld"})) == "héllo\nworld"
            )

            added = await client.call_tool("add", {"a": 2, "b": 40})
            assert added.structured_content == {"sum": 42}
            assert json.loads(text_of(added)) == {"sum": 42}

            failed = await client.call_tool("fail", {"message": "kaboom"})
            assert failed.is_error and "kaboom" in text_of(failed)

            image = await client.call_tool("image")
            assert isinstance(image.content[0], types.ImageContent)
            assert image.content[0].mime_type == "image/png"
            assert base64.b64decode(image.content[0].data).startswith(b"\x89PNG\r\n\x1a\n")
            assert isinstance(image.content[1], types.TextContent)

            link = (await client.call_tool("link")).content[0]
            assert isinstance(link, types.ResourceLink) and link.uri == "file:///tmp/example.txt"

            embedded = (await client.call_tool("embedded")).content[0]
            assert isinstance(embedded, types.EmbeddedResource)
            assert isinstance(embedded.resource, types.TextResourceContents)
            assert embedded.resource.text == "embedded hello"

            binary = (await client.call_tool("binary")).content[0]
            assert isinstance(binary, types.EmbeddedResource)
            assert isinstance(binary.resource, types.BlobResourceContents)
            assert binary.resource.mime_type == "application/octet-stream"
            assert base64.b64decode(binary.resource.blob) == bytes(range(256))

            assert text_of(await client.call_tool("big", {"size": 100_000})) == "x" * 100_000
            assert text_of(await client.call_tool("sleep", {"seconds": 0.05})) == "slept"

            # The SDK gives the child an allow-listed environment only.
            unset = await client.call_tool("env", {"name": "CODEBOT_SMOKE_PARENT_SECRET"})
            assert text_of(unset) == "<unset>"
            assert text_of(await client.call_tool("env", {"name": "PATH"})) != "<unset>"

            with pytest.raises(MCPError):
                await client.call_tool("crash", read_timeout_seconds=10)


async def test_mutating_legacy_notifies_message_handler(errlog: TextIO) -> None:
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    with anyio.fail_after(30):
        async with stdio_session(
            stdio_params("mutating"), errlog, mode="legacy", message_handler=on_message
        ) as client:
            assert client.protocol_version == "2025-11-25"
            capabilities = client.server_capabilities
            assert capabilities is not None and capabilities.tools is not None
            assert capabilities.tools.list_changed is True
            names = [tool.name for tool in (await client.list_tools()).tools]
            assert names == ["add_tool", "remove_tool", "ping_tool", "listeners", "drop_listen"]

            assert text_of(await client.call_tool("add_tool", {"name": "fresh"})) == "added fresh"
            with anyio.fail_after(5):
                await changed.wait()
            names = [tool.name for tool in (await client.list_tools()).tools]
            assert "fresh" in names
            assert text_of(await client.call_tool("fresh")) == "fresh called"

            changed = anyio.Event()
            assert (
                text_of(await client.call_tool("remove_tool", {"name": "fresh"})) == "removed fresh"
            )
            with anyio.fail_after(5):
                await changed.wait()
            assert "fresh" not in [tool.name for tool in (await client.list_tools()).tools]


async def test_mutating_modern_notifies_listen_stream(errlog: TextIO) -> None:
    with anyio.fail_after(30):
        async with stdio_session(stdio_params("mutating"), errlog, mode="auto") as client:
            assert client.protocol_version == "2026-07-28"
            async with client.listen(tools_list_changed=True) as subscription:
                assert (
                    text_of(await client.call_tool("add_tool", {"name": "fresh"})) == "added fresh"
                )
                with anyio.fail_after(5):
                    event = await subscription.__anext__()
                assert isinstance(event, ToolsListChanged)
            assert "fresh" in [tool.name for tool in (await client.list_tools()).tools]
            assert text_of(await client.call_tool("ping_tool")) == "pong"


async def test_many_tools_paginates(errlog: TextIO) -> None:
    with anyio.fail_after(30):
        params = stdio_params("many_tools", "--count", "120", "--page-size", "50")
        async with stdio_session(params, errlog) as client:
            pages: list[list[str]] = []
            cursor: str | None = None
            while True:
                result = await client.list_tools(cursor=cursor)
                pages.append([tool.name for tool in result.tools])
                cursor = result.next_cursor
                if cursor is None:
                    break
            assert [len(page) for page in pages] == [50, 50, 20]
            names = [name for page in pages for name in page]
            assert names == [f"tool_{i:04d}" for i in range(120)]

            echoed = await client.call_tool("tool_0007", {"value": "v"})
            assert json.loads(text_of(echoed)) == {"tool": "tool_0007", "arguments": {"value": "v"}}

            with pytest.raises(MCPError):
                await client.list_tools(cursor="bogus")


async def test_many_tools_long_names(errlog: TextIO) -> None:
    with anyio.fail_after(30):
        params = stdio_params("many_tools", "--count", "3", "--long-names")
        async with stdio_session(params, errlog, mode="legacy") as client:
            result = await client.list_tools()
            assert result.next_cursor is None
            assert len(result.tools) == 3
            assert all(len(tool.name) == 80 for tool in result.tools)
            assert result.tools[0].name.startswith("tool_0000_")


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    """The SDK-built HTTP test server, shared by the module's tests: they only read it (each
    client is a session of its own), and a start costs about 1.4 s of CPU."""
    with run_http_server() as url:
        yield url


async def test_http_server_requires_token(http_url: str) -> None:
    url = http_url
    with anyio.fail_after(45):
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")

        for headers in ({}, {"Authorization": "Bearer wrong"}):
            with pytest.raises(BaseException) as caught:  # the Client wraps errors in groups
                async with (
                    httpx2.AsyncClient(headers=headers) as http,
                    Client(streamable_http_client(url, http_client=http), mode="legacy"),
                ):
                    pass
            leaves = leaf_errors(caught.value)
            assert any(isinstance(e, MCPError) and "Unauthorized" in e.message for e in leaves)

        auth = {"Authorization": "Bearer sekret-token"}
        for mode, version in (("legacy", "2025-11-25"), ("auto", "2026-07-28")):
            async with (
                httpx2.AsyncClient(headers=auth) as http,
                Client(streamable_http_client(url, http_client=http), mode=mode) as client,
            ):
                assert client.protocol_version == version
                assert text_of(await client.call_tool("whoami")) == "http"
                assert text_of(await client.call_tool("echo", {"text": "over http"})) == "over http"


def test_http_server_raw_modes(http_url: str) -> None:
    with pytest.raises(urllib.error.HTTPError) as denied:
        urllib.request.urlopen(http_url, timeout=10)
    with denied.value:
        assert denied.value.code == 401
        assert json.loads(denied.value.read())["error"]["message"].startswith("Unauthorized")
    with run_http_server("--html") as url, urllib.request.urlopen(url + "/x", timeout=10) as page:
        assert page.status == 200
        assert page.read() == b"<html>not mcp</html>"
    with run_http_server("--status", "503") as url:
        with pytest.raises(urllib.error.HTTPError) as status:
            urllib.request.urlopen(url, timeout=10)
        with status.value:
            assert status.value.code == 503


async def test_crash_on_start_fails_handshake(errlog: TextIO) -> None:
    with anyio.fail_after(20):
        with pytest.raises(BaseException) as caught:  # the Client wraps errors in groups
            async with stdio_session(stdio_params("crash_on_start"), errlog, mode="legacy"):
                pass
    assert any(isinstance(e, MCPError) for e in leaf_errors(caught.value))
    assert CRASH_MESSAGE in read_log(errlog)


async def test_hang_never_answers(errlog: TextIO) -> None:
    with anyio.fail_after(20):
        with anyio.move_on_after(1.0) as scope:
            async with stdio_session(stdio_params("hang"), errlog, mode="legacy"):
                pytest.fail("hang answered the handshake")
        assert scope.cancelled_caught


async def test_silent_discover_legacy(errlog: TextIO) -> None:
    with anyio.fail_after(20):
        async with stdio_session(stdio_params("silent_discover"), errlog, mode="legacy") as client:
            assert client.server_info is not None and client.server_info.name == "silent"
            assert client.protocol_version == "2025-11-25"
            assert [tool.name for tool in (await client.list_tools()).tools] == ["hello"]
            assert text_of(await client.call_tool("hello")) == "hello from silent"
    # Legacy mode never sends the server/discover probe this server would ignore.
    assert "ignored request" not in read_log(errlog)


async def test_silent_discover_ignores_the_probe_and_says_so(errlog: TextIO) -> None:
    with anyio.fail_after(20):
        # auto mode waits 10 s for the probe's answer; 3 s leaves a loaded machine time to
        # start the server and send the probe
        with anyio.move_on_after(3.0):
            async with stdio_session(stdio_params("silent_discover"), errlog, mode="auto"):
                pytest.fail("the SDK gave up on the probe within 3 s")
    assert "ignored request server/discover" in read_log(errlog)


async def test_garbage_stdout_still_serves(errlog: TextIO) -> None:
    problems: list[Exception] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):
            problems.append(message)

    with anyio.fail_after(20):
        params = stdio_params("garbage_stdout", "--interleave")
        async with stdio_session(params, errlog, message_handler=on_message) as client:
            assert client.protocol_version == "2025-11-25"  # answered server/discover with -32601
            assert text_of(await client.call_tool("echo", {"text": "still here"})) == "still here"
    assert problems  # the garbage lines were surfaced as parse errors


async def test_stderr_flood_keeps_serving(errlog: TextIO) -> None:
    with anyio.fail_after(40):
        async with stdio_session(stdio_params("stderr_flood"), errlog) as client:
            assert text_of(await client.call_tool("echo", {"text": "ok"})) == "ok"
            for _ in range(600):  # the flood thread finishes within seconds
                if os.fstat(errlog.fileno()).st_size >= 20 * 1024 * 1024:
                    break
                await anyio.sleep(0.05)
            assert os.fstat(errlog.fileno()).st_size >= 20 * 1024 * 1024
            assert text_of(await client.call_tool("echo", {"text": "after"})) == "after"


async def test_slow_start_barrier_holds_each_until_all_have_started(
    errlog: TextIO, tmp_path: Path
) -> None:
    barrier = ["--delay", "0", "--barrier", str(tmp_path / "b"), "--count", "2"]
    answers: list[str] = []

    async def one() -> None:
        async with stdio_session(stdio_params("slow_start", *barrier), errlog) as client:
            answers.append(text_of(await client.call_tool("hello")))

    with anyio.fail_after(30):
        with anyio.move_on_after(1.0) as alone:  # one alone never gets past the barrier
            await one()
        assert alone.cancelled_caught and answers == []
        async with anyio.create_task_group() as tg:  # the second one releases both
            tg.start_soon(one)
            tg.start_soon(one)
    assert answers == ["hello from slow_start"] * 2


async def test_demo_notes_server(errlog: TextIO) -> None:
    settings = json.loads((DEMO_DIR / ".codebot" / "settings.json").read_text())
    entry = settings["mcp_servers"]["notes"]
    assert (DEMO_DIR / Path(entry["args"][0])).is_file()
    # Same command line, but with this interpreter (which has the SDK) for python3.
    params = StdioServerParameters(command=sys.executable, args=entry["args"], cwd=DEMO_DIR)
    with anyio.fail_after(30):
        async with stdio_session(params, errlog) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert set(tools) == {"add_note", "list_notes", "roll_dice"}
            for name in ("list_notes", "roll_dice"):
                annotations = tools[name].annotations
                assert annotations is not None and annotations.read_only_hint is True
            assert text_of(await client.call_tool("list_notes")) == "(no notes yet)"
            assert (
                text_of(await client.call_tool("add_note", {"text": "buy milk"})) == "saved note #1"
            )
            assert text_of(await client.call_tool("list_notes")) == "1. buy milk"
            assert "(d20)" in text_of(await client.call_tool("roll_dice", {"sides": 20}))
