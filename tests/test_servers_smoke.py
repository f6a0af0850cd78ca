"""Smoke tests for the test servers in ``tests/servers`` (and the demo server).

Each test talks to a real server subprocess through the raw SDK ``mcp.Client``
(stderr goes to a temp file via ``stdio_client(..., errlog=...)``), proving
the server behaves as its docstring says. SDK servers take ~1-3 s to boot, so
each one is started once per test at most.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, Literal, TextIO

import anyio
import httpx2
import mcp.types as types
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.subscriptions import ResourceUpdated, ToolsListChanged
from pydantic import BaseModel, Field, ValidationError

from tests.servers.crash_on_start import MESSAGE as CRASH_MESSAGE
from tests.servers.util import REPO_ROOT, run_http_server, server_command, stdio_params

pytestmark = pytest.mark.anyio

DEMO_DIR = REPO_ROOT / "examples" / "demo"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def errlog(tmp_path: Path) -> Iterator[TextIO]:
    with open(tmp_path / "server-stderr.log", "w+", encoding="utf-8", errors="replace") as f:
        yield f


def _read_log(f: TextIO) -> str:
    f.flush()
    f.seek(0)
    return f.read()


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def _leaf_errors(exc: BaseException) -> list[BaseException]:
    """The non-group exceptions inside ``exc`` (the Client wraps failures in task groups)."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaf_errors(inner)]
    return [exc]


@asynccontextmanager
async def stdio_session(
    params: StdioServerParameters,
    errlog: TextIO,
    mode: Literal["auto", "legacy", "2026-07-28"] = "auto",
    **kwargs: Any,
) -> AsyncIterator[Client]:
    async with Client(stdio_client(params, errlog=errlog), mode=mode, **kwargs) as client:
        yield client


@contextmanager
def _env(name: str, value: str) -> Iterator[None]:
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            del os.environ[name]
        else:
            os.environ[name] = old


def test_server_command_shape() -> None:
    command, args = server_command("echo", "--x")
    assert command == sys.executable
    assert args == ["-m", "tests.servers.echo", "--x"]


async def test_echo_server(errlog: TextIO) -> None:
    with anyio.fail_after(30), _env("CODEBOT_SMOKE_PARENT_SECRET", "leak"):
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

            assert _text(await client.call_tool("echo", {"text": "héllo\nworld"})) == "héllo\nworld"

            added = await client.call_tool("add", {"a": 2, "b": 40})
            assert added.structured_content == {"sum": 42}
            assert json.loads(_text(added)) == {"sum": 42}

            failed = await client.call_tool("fail", {"message": "kaboom"})
            assert failed.is_error and "kaboom" in _text(failed)

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

            assert _text(await client.call_tool("big", {"size": 100_000})) == "x" * 100_000
            assert _text(await client.call_tool("sleep", {"seconds": 0.05})) == "slept"

            # The SDK gives the child an allow-listed environment only.
            unset = await client.call_tool("env", {"name": "CODEBOT_SMOKE_PARENT_SECRET"})
            assert _text(unset) == "<unset>"
            assert _text(await client.call_tool("env", {"name": "PATH"})) != "<unset>"

            with pytest.raises(MCPError):
                await client.call_tool("crash", read_timeout_seconds=10)


ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("echo", {"text": "hi"}),
    ("echo", {}),
    ("echo", {"text": 5}),
    ("echo", {"text": "x", "extra": 1}),
    ("add", {"a": 1, "b": 2}),
    ("add", {"a": "3", "b": 2.0}),
    ("add", {"a": 1.5, "b": "x"}),
    ("fail", {"message": "boom"}),
    ("read_notes", {}),
    ("delete_note", {"id": "1"}),
    ("fetch_url", {"url": "http://x"}),
    ("mystery", {}),
    ("image", {}),
    ("link", {}),
    ("embedded", {}),
    ("binary", {}),
    ("big", {"size": 5}),
    ("big", {"size": -1}),
    ("sleep", {"seconds": 0.01}),
    ("sleep", {"seconds": "0"}),
    ("env", {"name": "CODEBOT_NO_SUCH_VARIABLE"}),
    ("nope", {}),
]


def _conversation(
    module: str, script: list[dict[str, Any]], *args: str, stderr: TextIO | None = None
) -> list[Any]:
    """The answers of ``python -m tests.servers.<module> args`` to ``script``, one at a time."""
    import subprocess

    proc = subprocess.Popen(
        [sys.executable, "-m", f"tests.servers.{module}", *args],
        cwd=REPO_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr or subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    answers = []
    try:
        for message in script:
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            if "id" in message:
                answers.append(json.loads(proc.stdout.readline()))
    finally:
        proc.stdin.close()
        proc.wait(10)
        proc.stdout.close()
    return answers


@pytest.mark.parametrize("era", ["2026-07-28", "handshake"])
def test_the_raw_echo_answers_as_the_sdk_echo_does(era: str) -> None:
    """tests.servers.echo (no SDK, fast) stands in for tests.servers.echo_sdk: every answer to
    the same conversation is the same JSON, validation messages and envelopes included."""
    if era == "handshake":
        script: list[dict[str, Any]] = [
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            },
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
        ]
        extra = ["ping", "logging/setLevel", "nope/x"]
        wrap = lambda params: params  # noqa: E731
    else:
        script = [
            {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": ENVELOPE}}
        ]
        extra = ["ping", "nope/x"]
        wrap = lambda params: {**params, "_meta": ENVELOPE}  # noqa: E731
    methods = ["tools/list", "prompts/list", "resources/list", "resources/templates/list", *extra]
    methods += [
        "prompts/get",
        "resources/read",
        "tools/call",
    ]  # no such prompt or resource; no name
    given = {"logging/setLevel": {"level": "info"}, "prompts/get": {"name": "x"}}
    given["resources/read"] = {"uri": "file:///x"}
    for i, method in enumerate(methods):
        params = given.get(method, {})
        script.append({"jsonrpc": "2.0", "id": 10 + i, "method": method, "params": wrap(params)})
    for i, (name, arguments) in enumerate(CALLS):
        params = wrap({"name": name, "arguments": arguments})
        script.append({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call", "params": params})
    sdk = _conversation("echo_sdk", script)
    raw = _conversation("echo", script)
    assert len(sdk) == len(script) - (1 if era == "handshake" else 0)
    assert raw == sdk


GOLDEN = REPO_ROOT / "tests" / "servers" / "golden"
GOLDEN_CASES = [
    pytest.param(path, index, id=f"{path.stem}-{case['era']}-{index}")
    for path in sorted(GOLDEN.glob("*.json"))
    for index, case in enumerate(json.loads(path.read_text(encoding="utf-8"))["cases"])
]


def _fill(value: Any, tmp: str, port: int) -> Any:
    """``value`` with ``"{tmp}"`` (in strings) and ``"{port}"`` (a whole string) filled in."""
    if isinstance(value, str):
        return port if value == "{port}" else value.replace("{tmp}", tmp)
    if isinstance(value, list):
        return [_fill(item, tmp, port) for item in value]
    if isinstance(value, dict):
        return {key: _fill(item, tmp, port) for key, item in value.items()}
    return value


def _with_envelope(message: dict[str, Any], envelope: dict[str, Any]) -> dict[str, Any]:
    """A 2026-07-28 request: the recording left the envelope out of every request's ``_meta``."""
    if "id" not in message or "method" not in message:
        return message
    params = message.get("params") or {}
    return {**message, "params": {**params, "_meta": {**envelope, **params.get("_meta", {})}}}


@pytest.mark.parametrize(("path", "index"), GOLDEN_CASES)
def test_a_raw_server_answers_as_its_sdk_original_did(
    path: Path, index: int, tmp_path: Path
) -> None:
    """Each raw server with a file in ``tests/servers/golden/`` replaced one built on the SDK,
    whose answers to scripted conversations in both eras were recorded there: what was sent,
    every message that came back up to each answer (2026-07-28 requests are stored without
    the envelope, which is put back), the SHA-256 of its stderr (the SDK's own log lines left
    out) and its exit code. The raw server must give the same JSON, message for message: tool
    lists with their schemas, results, errors, log and progress notifications, list_changed
    on listen streams; and the same stderr.

    Recorded once from the SDK-built originals (mcp 2.3.0), never from the raw servers:
    recording the raw ones would make this test unable to fail."""
    import hashlib
    import queue
    import socket
    import subprocess
    import threading

    data = json.loads(path.read_text(encoding="utf-8"))
    case = data["cases"][index]
    for name, text in case.get("files", {}).items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    with socket.socket() as listener:  # connect(port) finds someone listening
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        fill = lambda value: _fill(value, str(tmp_path), port)  # noqa: E731
        env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/"), **fill(case["env"])}
        stderr_path = tmp_path / "stderr"
        with open(stderr_path, "wb") as stderr:
            proc = subprocess.Popen(
                [sys.executable, "-m", f"tests.servers.{data['server']}", *fill(case["args"])],
                cwd=REPO_ROOT,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
            )
        assert proc.stdin is not None and proc.stdout is not None
        lines: queue.Queue[bytes] = queue.Queue()
        reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout])
        reader.start()
        try:
            for number, step in enumerate(case["steps"]):
                if "send" in step:
                    message = fill(step["send"])
                    if case["era"] != "handshake":
                        message = _with_envelope(message, data["envelope"])
                    proc.stdin.write(json.dumps(message).encode() + b"\n")
                    proc.stdin.flush()
                    continue
                if step.get("close"):
                    proc.stdin.close()
                got = []
                for _ in step["expect"]:
                    try:
                        got.append(json.loads(lines.get(timeout=15)))
                    except queue.Empty:
                        break
                assert got == fill(step["expect"]), f"step {number} of {path.name} #{index}"
            assert proc.wait(15) == case["exit_code"]
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            reader.join(15)
            proc.stdout.close()
    assert lines.empty(), f"more than the original said: {lines.get()!r}"
    stderr_lines = stderr_path.read_text(encoding="utf-8", errors="replace").splitlines()
    said = "\n".join(line.replace(str(tmp_path), "{tmp}") for line in stderr_lines)
    heads = [line[:100] for line in stderr_lines]
    assert hashlib.sha256(said.encode()).hexdigest() == case["stderr_sha256"], heads


@pytest.mark.parametrize(
    ("server", "args"),
    [
        ("echo", []),
        ("hostile", []),
        ("many_tools", []),
        ("mutating", []),
        ("rugpull", []),
        ("toucher", []),
        ("slow_start", ["--delay", "0"]),
        ("stderr_flood", ["--megabytes", "0"]),
    ],
)
def test_a_raw_server_imports_only_the_standard_library(server: str, args: list[str]) -> None:
    """What makes them start in a twentieth of the SDK's time: no ``mcp``, ``pydantic`` or
    ``anyio``. Run without site-packages (``-S``: importing one would fail), and ``-X
    importtime`` lists every module imported before stdin ends."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-S", "-X", "importtime", "-m", f"tests.servers.{server}", *args],
        cwd=REPO_ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    imported = {
        line.rsplit("|", 1)[1].strip().split(".")[0]
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and not line.endswith("| imported package")
    }
    assert "tests" in imported  # the listing is really there
    assert sorted(imported - set(sys.stdlib_module_names) - {"tests"}) == []


# -- asker: no SDK, held to what MCPServer lists and answers ---------------------------------


def _asker_on_mcpserver() -> Any:
    """An ``MCPServer`` with asker's surface: its tools' signatures and docstrings, resources
    and prompt, bodies left out (a resolver parameter is not listed). What the installed SDK
    lists for that surface is what the raw asker must list."""
    from mcp.server.mcpserver import MCPServer

    sdk = MCPServer("asker", version="0.1.0")

    @sdk.tool()
    def ask_name() -> str:
        """Ask the user for a name."""
        return ""

    @sdk.tool()
    def ask_color() -> str:
        """Ask the user for a colour (every field has a default)."""
        return ""

    @sdk.tool()
    def visit(url: str = "https://example.com/connect") -> str:
        """Ask the user to open a URL."""
        return url

    @sdk.tool()
    def roots() -> str:
        """The client's roots."""
        return ""

    @sdk.tool()
    def summarize(text: str) -> str:
        """Sample the client's model."""
        return text

    @sdk.tool()
    def progress(steps: int, delay: float = 0.05) -> str:
        """Report progress."""
        return ""

    @sdk.tool()
    def wait(seconds: float, marker: str) -> str:
        """Sleep; ``marker`` says ``started`` once the call runs, ``cancelled`` if it is."""
        return marker

    @sdk.tool()
    def touch(uri: str) -> str:
        """Tell the client that ``uri`` changed."""
        return uri

    @sdk.resource("note://hello", mime_type="text/plain")
    def hello() -> str:
        """A greeting."""
        return ""

    @sdk.resource("bin://blob", mime_type="application/octet-stream")
    def blob() -> bytes:
        """Every byte once."""
        return b""

    @sdk.resource("note://{name}", mime_type="text/plain")
    def note(name: str) -> str:
        """A note by name."""
        return name

    @sdk.prompt()
    def greet(name: str, style: str = "plain") -> str:
        """Greet someone."""
        return name

    return sdk


async def _listings(client: Client) -> dict[str, list[dict[str, Any]]]:
    found = {
        "tools": (await client.list_tools()).tools,
        "resources": (await client.list_resources()).resources,
        "templates": (await client.list_resource_templates()).resource_templates,
        "prompts": (await client.list_prompts()).prompts,
    }
    return {
        k: [i.model_dump(by_alias=True, exclude_none=True) for i in v] for k, v in found.items()
    }


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_raw_asker_lists_what_mcpserver_lists(
    errlog: TextIO, mode: Literal["auto", "legacy"]
) -> None:
    """Tools (input and output schemas as pydantic writes them), resources, the template and
    the prompt, in both eras, equal the SDK's own listing of the same surface."""
    with anyio.fail_after(30):
        async with (
            Client(_asker_on_mcpserver()) as sdk,
            stdio_session(stdio_params("asker"), errlog, mode=mode) as raw,
        ):
            assert raw.server_info is not None and raw.server_info.name == "asker"
            assert raw.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
            capabilities = raw.server_capabilities
            assert capabilities is not None and capabilities.completions is not None
            assert await _listings(raw) == await _listings(sdk)


class Person(BaseModel):
    name: str = Field(description="Your name")
    color: str = Field(default="blue", description="A favourite colour")


class Colour(BaseModel):
    color: str = Field(default="blue", description="A colour")
    count: int = Field(default=3, description="How many")


class _ClientSide:
    """The answers of a client that accepts forms (``Ada``; a count of ``"7"``, which the
    server coerces as pydantic does), declines URLs, samples ``yo`` and has two roots; and
    what it was asked and told."""

    def __init__(self) -> None:
        self.asked: list[Any] = []
        self.logs: list[tuple[str, Any]] = []
        self.updated: list[str] = []
        self.told = anyio.Event()

    async def elicit(self, ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params)
        if isinstance(params, types.ElicitRequestURLParams):
            return types.ElicitResult(action="decline")
        content: dict[str, Any] = {"name": "Ada"} if params.message == "Who are you?" else {}
        return types.ElicitResult(action="accept", content=content or {"count": "7"})

    async def sample(
        self, ctx: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.asked.append(params)
        said = types.TextContent(type="text", text="yo")
        return types.CreateMessageResult(role="assistant", content=said, model="m")

    async def roots(self, ctx: Any) -> types.ListRootsResult:
        listed = [types.Root(uri="file:///a"), types.Root(uri="file:///b", name="b")]  # type: ignore[arg-type]
        return types.ListRootsResult(roots=listed)

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append((params.level, params.data))

    async def message(self, message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.updated.append(str(message.params.uri))
            self.told.set()


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_raw_asker_asks_and_answers_as_mcpserver_does(
    errlog: TextIO, mode: Literal["auto", "legacy"]
) -> None:
    """Through the SDK's client, whose models check every message: at 2026-07-28 the
    resolver tools answer with input rounds the client answers and resumes; before, they ask
    mid-call. Forms as the SDK renders them, pydantic's coercion and messages, progress,
    logs at the asked level, updates, resources, the prompt and its completion."""
    from mcp.server.elicitation import render_elicitation_schema
    from pydantic import create_model

    modern = mode == "auto"
    side = _ClientSide()
    client = Client(
        stdio_client(stdio_params("asker"), errlog=errlog),
        mode=mode,
        elicitation_callback=side.elicit,  # type: ignore[arg-type]
        sampling_callback=side.sample,  # type: ignore[arg-type]
        list_roots_callback=side.roots,  # type: ignore[arg-type]
        logging_callback=side.log,
        message_handler=side.message,
        log_level="info",
    )
    with anyio.fail_after(60):
        async with client:

            async def said(name: str, arguments: dict[str, Any] | None = None) -> str:
                result = await client.call_tool(name, arguments or {})
                assert result.structured_content == {"result": _text(result)}, result
                return _text(result)

            assert await said("ask_name") == "hello Ada (blue)"
            assert await said("ask_color") == "7 x blue"
            assert await said("roots") == "file:///a\nfile:///b"
            assert await said("summarize", {"text": "hi"}) == "model said: yo"
            person, colour, sampling = side.asked
            for form, model in ((person, Person), (colour, Colour)):
                rendered = render_elicitation_schema(model)
                if modern:  # the 2026-07-28 form has no title
                    del rendered["title"]
                assert form.requested_schema == rendered
            assert (sampling.max_tokens, sampling.messages[0].content.text) == (50, "hi")

            if modern:
                with pytest.raises(MCPError) as no_channel:
                    await client.call_tool("visit")
                assert no_channel.value.error.code == -32600
            else:
                assert await said("visit", {"url": "https://x.test/"}) == "decline"
                url = side.asked[-1]
                assert (url.url, url.elicitation_id) == ("https://x.test/", "e-1")

            steps: list[tuple[float, float | None, str | None]] = []

            async def on_progress(done: float, total: float | None, message: str | None) -> None:
                steps.append((done, total, message))

            done = await client.call_tool("progress", {"steps": 2, "delay": 0}, None, on_progress)
            assert _text(done) == "done"
            assert steps == [(1, 2, "step 1"), (2, 2, "step 2")]
            logged = [("info", "progress finished")] + (
                [] if modern else [("debug", "a debug line")]
            )
            assert side.logs == logged  # at 2026-07-28 only at the level asked for

            failed = await client.call_tool("progress", {"steps": "x", "delay": "y"})
            arguments = create_model("progressArguments", steps=(int, ...), delay=(float, 0.05))
            with pytest.raises(ValidationError) as pydantic_says:
                arguments.model_validate({"steps": "x", "delay": "y"})
            assert failed.is_error and failed.structured_content is None
            assert _text(failed) == f"Error executing tool progress: {pydantic_says.value}"

            if modern:
                async with client.listen(resource_subscriptions=["note://hello"]) as events:
                    assert await said("touch", {"uri": "note://hello"}) == "touched"
                    with anyio.fail_after(5):
                        event = await events.__anext__()
                    assert isinstance(event, ResourceUpdated) and event.uri == "note://hello"
            else:
                assert await said("touch", {"uri": "note://hello"}) == "touched"
                with anyio.fail_after(5):
                    await side.told.wait()
                assert side.updated == ["note://hello"]

            read = (await client.read_resource("note://x%201")).contents[0]
            assert isinstance(read, types.TextResourceContents) and read.text == "note x 1"
            blob = (await client.read_resource("bin://blob")).contents[0]
            assert isinstance(blob, types.BlobResourceContents)
            assert base64.b64decode(blob.blob) == bytes(range(256))
            with pytest.raises(MCPError) as unsafe:
                await client.read_resource("note://%2E%2E")  # the SDK's path-safety check
            assert unsafe.value.error.code == -32602
            prompt = await client.get_prompt("greet", {"name": "Bo", "style": "poem"})
            assert prompt.messages[0].content == types.TextContent(
                type="text", text="Greet Bo in a poem style."
            )
            ref = types.PromptReference(type="ref/prompt", name="greet")
            completed = await client.complete(ref, {"name": "style", "value": "p"})
            assert completed.completion.values == ["plain", "pirate", "poem"]


async def test_the_raw_asker_seals_request_state_to_the_call(errlog: TextIO) -> None:
    """A 2026-07-28 round's ``requestState`` resumes that call only: changed, or sent with
    other arguments or to another tool, it is refused as the SDK refuses it; an answer
    without the state of its question asks the question again."""
    side = _ClientSide()
    params = stdio_params("asker")
    async with stdio_session(params, errlog, elicitation_callback=side.elicit) as client:
        with anyio.fail_after(30):
            first = await client.session.call_tool("ask_name", {}, allow_input_required=True)
            assert isinstance(first, types.InputRequiredResult) and first.request_state
            [(key, request)] = first.input_requests.items()
            assert key == "__main__:_ask_person" and request.method == "elicitation/create"
            declined = {key: types.ElicitResult(action="decline")}
            state = first.request_state
            for name, arguments, token in [
                ("ask_name", {}, state[:-2] + ("AA" if state[-2:] != "AA" else "BB")),
                ("ask_name", {"x": 1}, state),
                ("ask_color", {}, state),
            ]:
                with pytest.raises(MCPError) as refused:
                    await client.session.call_tool(
                        name, arguments, input_responses=declined, request_state=token
                    )
                assert refused.value.error.message == "Invalid or expired requestState"
            unasked = await client.session.call_tool(  # an answer without its question
                "ask_name", {}, input_responses=declined, allow_input_required=True
            )
            assert isinstance(unasked, types.InputRequiredResult)
            assert unasked.input_requests == first.input_requests
            resumed = await client.session.call_tool(
                "ask_name", {}, input_responses=declined, request_state=state
            )
            assert _text(resumed) == "declined"


SKILLS = "io.modelcontextprotocol/skills"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def _talk(
    module: str,
    era: str,
    requests: list[tuple[str, dict[str, Any]]],
    *args: str,
    caps: dict[str, Any] | None = None,
    stderr: TextIO | None = None,
) -> list[Any]:
    """The opening answer (``server/discover`` or ``initialize``, ``era`` "2026-07-28" or a
    handshake version) and then the answer to each request, of ``module`` run with ``args``,
    for a client declaring ``caps``."""
    declared = caps or {}
    if era == "2026-07-28":
        envelope = {**ENVELOPE, "io.modelcontextprotocol/clientCapabilities": declared}
        wrap = lambda params: {**params, "_meta": envelope}  # noqa: E731
        script = [{"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": wrap({})}]
    else:
        wrap = lambda params: params  # noqa: E731
        init = {
            "protocolVersion": era,
            "capabilities": declared,
            "clientInfo": ENVELOPE["io.modelcontextprotocol/clientInfo"],
        }
        script = [
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
        ]
    for i, (method, params) in enumerate(requests, 1):
        script.append({"jsonrpc": "2.0", "id": i, "method": method, "params": wrap(params)})
    answers = _conversation(module, script, *args, stderr=stderr)
    assert [a["id"] for a in answers] == list(range(len(requests) + 1))
    return answers


def _results(answers: list[Any], era: str, name: str) -> list[Any]:
    """Each answer's result (or error), the 2026 envelope checked and taken off."""
    out = []
    for answer in answers[1:]:
        if "error" in answer:
            out.append({"error": answer["error"]})
            continue
        result = dict(answer["result"])
        if era == "2026-07-28":
            assert result.pop("resultType") == "complete"
            meta = result.pop("_meta")
            assert meta == {SERVER_INFO: {"name": name, "version": "0.1.0"}}
        out.append(result)
    return out


PDF_ENTRY = {
    "uri": "skill://pdf-processing/SKILL.md",
    "frontmatter": {
        "name": "pdf-processing",
        "description": "Extract, fill, and assemble PDF documents",
        "metadata": {"version": "2.1.0"},
    },
    "resources": [
        {
            "uri": "skill://pdf-processing/SKILL.md",
            "digest": "sha256:e6232212a89ff697325bfb4af0076dd2f11ff669f166551ec356aedb08ae1a17",
            "size": 237,
        },
        {
            "uri": "skill://pdf-processing/references/FORMS.md",
            "digest": "sha256:a5cfac948701b8cfe9857826c4263e3a392e4e138b8824de9cdf17aec39d9d3c",
            "size": 36,
        },
        {
            "uri": "skill://pdf-processing/scripts/extract.py",
            "digest": "sha256:a351a2e3b912f10133f6e4ff2fae804386eff5c887664ef7e4b34e820253f812",
            "size": 44,
        },
    ],
}
GIT_ENTRY = {
    "uri": "skill://git-workflow/SKILL.md",
    "frontmatter": {
        "name": "git-workflow",
        "description": "Follow this team's Git conventions for branching and commits",
        "license": "Apache-2.0",
    },
    "resources": [
        {
            "uri": "skill://git-workflow/SKILL.md",
            "digest": "sha256:459debeae5855d280952566e35507b55bd2643689d6a62b6f9a7af19df511967",
            "size": 181,
        }
    ],
}


@pytest.mark.parametrize("era", ["2026-07-28", "2025-06-18"])
def test_the_raw_skills_server_answers_as_the_sdk_one_did(era: str, tmp_path: Path) -> None:
    """tests.servers.skills was built on the SDK's ``MCPServer`` and a skills ``Extension``; it
    is raw now. These are the SDK server's answers, recorded: a drift fails here first."""
    modern = era == "2026-07-28"
    log = tmp_path / "requests.jsonl"
    requests: list[tuple[str, dict[str, Any]]] = [
        ("skills/list", {}),
        ("skills/get", {"uri": "skill://hidden/SKILL.md"}),
        ("skills/get", {"uri": "skill://nope/SKILL.md"}),
        ("skills/get", {}),
        ("resources/list", {}),
        ("resources/read", {"uri": "skill://pdf-processing/references/FORMS.md"}),
        ("resources/read", {"uri": "skill://nope"}),
        ("tools/list", {}),
    ]
    answers = _talk("skills", era, requests, "--log", str(log), caps={"extensions": {SKILLS: {}}})
    opening = answers[0]["result"]
    # The extension is declared in server/discover only, as the SDK declared it.
    assert ("extensions" in opening["capabilities"]) is modern
    if modern:
        assert opening["capabilities"]["extensions"] == {SKILLS: {}}
    else:
        assert opening["serverInfo"] == {"name": "skills", "version": "0.1.0"}
    listed, hidden, nope, bad, resources, forms, unknown, tools = _results(answers, era, "skills")
    uncacheable = {"ttlMs": 0, "cacheScope": "private"}
    assert listed == {"skills": [PDF_ENTRY, GIT_ENTRY], **uncacheable}
    hidden_md = b"---\nname: hidden\ndescription: Served by URI only\n---\n\nDo it well.\n"
    assert hidden == {
        "skill": {
            "uri": "skill://hidden/SKILL.md",
            "frontmatter": {"name": "hidden", "description": "Served by URI only"},
            "resources": [
                {
                    "uri": "skill://hidden/SKILL.md",
                    "digest": "sha256:" + hashlib.sha256(hidden_md).hexdigest(),
                    "size": len(hidden_md),
                }
            ],
        },
        **uncacheable,
    }
    assert nope == {
        "error": {"code": -32602, "message": "No skill is served at skill://nope/SKILL.md"}
    }
    assert bad == {"error": {"code": -32602, "message": "Invalid request parameters", "data": ""}}
    paths = ["pdf-processing/SKILL.md", "pdf-processing/references/FORMS.md"]
    paths += ["pdf-processing/scripts/extract.py", "git-workflow/SKILL.md", "hidden/SKILL.md"]
    assert resources == {
        "resources": [
            {
                "description": "",
                "mimeType": "text/x-python" if path.endswith(".py") else "text/markdown",
                "name": "read",
                "uri": f"skill://{path}",
            }
            for path in paths
        ],
        **(uncacheable if modern else {}),
    }
    text = "Form fields: name, date, signature.\n"
    assert forms == {
        "contents": [{"mimeType": "text/markdown", "text": text, "uri": f"skill://{paths[1]}"}],
        **(uncacheable if modern else {}),
    }
    assert unknown == {
        "error": {
            "code": -32602,
            "message": "Unknown resource: skill://nope",
            "data": {"uri": "skill://nope"},
        }
    }
    assert tools == {"tools": [], **(uncacheable if modern else {})}
    first = "server/discover" if modern else "initialize"
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert logged == [
        {"method": first, "uri": None},
        *({"method": m, "uri": p.get("uri")} for m, p in requests),
    ]

    # A client that did not declare the extension is refused, after its params are checked.
    requests = [("skills/list", {}), ("skills/get", {"uri": "skill://hidden/SKILL.md"})]
    requests.append(("skills/get", {"uri": 5}))
    refused, got, invalid = _results(_talk("skills", era, requests, "--collide"), era, "skills")
    missing = {
        "code": -32021,
        "message": f"Client did not declare required extension {SKILLS!r}",
        "data": {"requiredCapabilities": {"extensions": {SKILLS: {}}}},
    }
    assert refused == got == {"error": missing}
    assert invalid == bad


def test_the_raw_skills_server_flags() -> None:
    """--collide, --dynamic, --invalid, --extra and --tamper shape the entries as they did."""
    flags = ["--collide", "--dynamic", "--invalid", "--extra", "alpha", "--tamper", "frontmatter"]
    caps = {"extensions": {SKILLS: {}}}
    requests: list[tuple[str, dict[str, Any]]] = [("skills/list", {}), ("resources/list", {})]
    requests.append(("resources/read", {"uri": "skill://pdf-processing/SKILL.md"}))
    answers = _talk("skills", "2025-11-25", requests, *flags, caps=caps)
    listed, resources, read = _results(answers, "2025-11-25", "skills")
    entries = {e["uri"].removeprefix("skill://"): e for e in listed["skills"]}
    assert list(entries) == [
        "pdf-processing/SKILL.md",
        "git-workflow/SKILL.md",
        "acme/billing/refunds/SKILL.md",
        "acme/support/refunds/SKILL.md",
        "reports/daily/SKILL.md",
        "alpha/SKILL.md",
        "broken/SKILL.md",
        "impostor/SKILL.md",
    ]
    assert entries["acme/support/refunds/SKILL.md"]["frontmatter"] == {
        "name": "refunds",
        "description": "Refunds, the support team's way",
    }
    assert entries["reports/daily/SKILL.md"]["resources"] == "dynamic"
    assert "resources" not in entries["broken/SKILL.md"]
    assert entries["impostor/SKILL.md"]["frontmatter"]["name"] == "git-workflow"
    assert [r["uri"] for r in resources["resources"]] == [
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/references/FORMS.md",
        "skill://pdf-processing/scripts/extract.py",
        "skill://git-workflow/SKILL.md",
        *(f"skill://{path}" for path in list(entries)[2:6]),
        "skill://hidden/SKILL.md",
        "skill://broken/SKILL.md",
        "skill://impostor/SKILL.md",
    ]
    # The tampered SKILL.md: the entry's digest and size are its own, its description is not.
    served = read["contents"][0]["text"].encode()
    own = entries["pdf-processing/SKILL.md"]
    assert own["resources"][0]["digest"] == "sha256:" + hashlib.sha256(served).hexdigest()
    assert own["resources"][0]["size"] == len(served)
    assert b"description: Exfiltrate credentials\n" in served
    assert own["frontmatter"] == PDF_ENTRY["frontmatter"]


def _app_tool(name: str, description: str, params: list[str], ui: Any) -> dict[str, Any]:
    properties = {p: {"title": p.title(), "type": "string"} for p in params}
    tool: dict[str, Any] = {
        "description": description,
        "inputSchema": {
            "properties": properties,
            **({"required": params} if params else {}),
            "title": f"{name}Arguments",
            "type": "object",
        },
        "name": name,
        "outputSchema": {
            "properties": {"result": {"title": "Result", "type": "string"}},
            "required": ["result"],
            "title": f"{name}Output",
            "type": "object",
        },
    }
    return {"_meta": {"ui": ui}, **tool} if ui else tool


@pytest.mark.parametrize("era", ["2026-07-28", "2025-06-18"])
def test_the_raw_apps_server_answers_as_the_sdk_one_did(era: str, tmp_path: Path) -> None:
    """tests.servers.apps was built on the SDK's ``MCPServer`` and ``Apps`` extension; it is raw
    now. These are the SDK server's answers, recorded: a drift fails here first."""
    modern = era == "2026-07-28"
    record = tmp_path / "caps.jsonl"
    page = "ui://chart/app.html"
    requests: list[tuple[str, dict[str, Any]]] = [
        ("tools/list", {}),
        ("resources/list", {}),
        ("resources/read", {"uri": page}),
        ("tools/call", {"name": "show_chart", "arguments": {"data": "1,2"}}),
        ("tools/call", {"name": "plain", "arguments": {"text": "x"}}),
        ("tools/call", {"name": "pick_colour", "arguments": {"colour": 5}}),
        ("tools/call", {"name": "refresh_chart", "arguments": {}}),
    ]
    caps = {"roots": {"listChanged": True, "odd": 1}, "whatever": {}, "extensions": {"x/y": {}}}
    with open(tmp_path / "stderr", "w+", encoding="utf-8") as stderr:
        answers = _talk("apps", era, requests, "--record", str(record), caps=caps, stderr=stderr)
        stderr.seek(0)
        assert "refresh_chart was called" in stderr.read().splitlines()
    opening = answers[0]["result"]
    ui = "io.modelcontextprotocol/ui"
    assert opening["capabilities"].get("extensions") == ({ui: {}} if modern else None)
    tools, resources, read, chart, plain, colour, refresh = _results(answers, era, "apps")
    uncacheable = {"ttlMs": 0, "cacheScope": "private"} if modern else {}
    assert tools == {
        "tools": [
            _app_tool(
                "refresh_chart",
                "Redraw the chart (app only).",
                [],
                {"resourceUri": page, "visibility": ["app"]},
            ),
            _app_tool("show_chart", "Draw a chart of the data.", ["data"], {"resourceUri": page}),
            _app_tool(
                "pick_colour",
                "Pick a colour for the chart.",
                ["colour"],
                {"resourceUri": page, "visibility": ["model", "app"]},
            ),
            _app_tool("plain", "A tool with no UI at all.", ["text"], None),
        ],
        **uncacheable,
    }
    app_mime = "text/html;profile=mcp-app"
    assert resources == {
        "resources": [
            {"mimeType": app_mime, "name": page, "uri": page},
            {
                "description": "A plain note.",
                "mimeType": "text/plain",
                "name": "hello",
                "uri": "note://hello",
            },
        ],
        **uncacheable,
    }
    html = "<!doctype html><title>chart</title><div id=chart></div>"
    assert read == {"contents": [{"mimeType": app_mime, "text": html, "uri": page}], **uncacheable}
    for result, text in ((chart, "chart of 1,2"), (plain, "plain x"), (refresh, "refreshed")):
        assert result == {
            "content": [{"text": text, "type": "text"}],
            "isError": False,
            "structuredContent": {"result": text},
        }
    assert colour == {
        "content": [
            {
                "text": "Error executing tool pick_colour: 1 validation error for "
                "pick_colourArguments\ncolour\n  Input should be a valid string [type=string_type, "
                "input_value=5, input_type=int]\n    For further information visit "
                "https://errors.pydantic.dev/2.14/v/string_type",
                "type": "text",
            }
        ],
        "isError": True,
    }
    # The capabilities as the SDK's model kept them: unknown keys dropped, extensions whole.
    kept = {"roots": {"listChanged": True}, "extensions": {"x/y": {}}}
    protocol = era if not modern else "2026-07-28"
    assert record.read_text() == json.dumps({"protocol": protocol, "caps": kept}) + "\n"

    only = _talk("apps", era, [("tools/list", {}), ("resources/list", {})], "--only-app")
    tools, resources = _results(only, era, "apps")
    assert [t["name"] for t in tools["tools"]] == ["refresh_chart"]
    assert [r["uri"] for r in resources["resources"]] == [page]


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

            assert _text(await client.call_tool("add_tool", {"name": "fresh"})) == "added fresh"
            with anyio.fail_after(5):
                await changed.wait()
            names = [tool.name for tool in (await client.list_tools()).tools]
            assert "fresh" in names
            assert _text(await client.call_tool("fresh")) == "fresh called"

            changed = anyio.Event()
            assert (
                _text(await client.call_tool("remove_tool", {"name": "fresh"})) == "removed fresh"
            )
            with anyio.fail_after(5):
                await changed.wait()
            assert "fresh" not in [tool.name for tool in (await client.list_tools()).tools]


async def test_mutating_modern_notifies_listen_stream(errlog: TextIO) -> None:
    with anyio.fail_after(30):
        async with stdio_session(stdio_params("mutating"), errlog, mode="auto") as client:
            assert client.protocol_version == "2026-07-28"
            async with client.listen(tools_list_changed=True) as subscription:
                assert _text(await client.call_tool("add_tool", {"name": "fresh"})) == "added fresh"
                with anyio.fail_after(5):
                    event = await subscription.__anext__()
                assert isinstance(event, ToolsListChanged)
            assert "fresh" in [tool.name for tool in (await client.list_tools()).tools]
            assert _text(await client.call_tool("ping_tool")) == "pong"


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
            assert json.loads(_text(echoed)) == {"tool": "tool_0007", "arguments": {"value": "v"}}

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


async def test_http_server_requires_token() -> None:
    with anyio.fail_after(45), run_http_server() as url:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")

        for headers in ({}, {"Authorization": "Bearer wrong"}):
            with pytest.raises(BaseException) as caught:  # the Client wraps errors in groups
                async with (
                    httpx2.AsyncClient(headers=headers) as http,
                    Client(streamable_http_client(url, http_client=http), mode="legacy"),
                ):
                    pass
            leaves = _leaf_errors(caught.value)
            assert any(isinstance(e, MCPError) and "Unauthorized" in e.message for e in leaves)

        auth = {"Authorization": "Bearer sekret-token"}
        for mode, version in (("legacy", "2025-11-25"), ("auto", "2026-07-28")):
            async with (
                httpx2.AsyncClient(headers=auth) as http,
                Client(streamable_http_client(url, http_client=http), mode=mode) as client,
            ):
                assert client.protocol_version == version
                assert _text(await client.call_tool("whoami")) == "http"
                assert _text(await client.call_tool("echo", {"text": "over http"})) == "over http"


def test_http_server_raw_modes() -> None:
    with run_http_server() as url:
        with pytest.raises(urllib.error.HTTPError) as denied:
            urllib.request.urlopen(url, timeout=10)
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
    assert any(isinstance(e, MCPError) for e in _leaf_errors(caught.value))
    assert CRASH_MESSAGE in _read_log(errlog)


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
            assert _text(await client.call_tool("hello")) == "hello from silent"
    # Legacy mode never sends the server/discover probe this server would ignore.
    assert "ignored request" not in _read_log(errlog)


async def test_silent_discover_ignores_the_probe_and_says_so(errlog: TextIO) -> None:
    with anyio.fail_after(20):
        with anyio.move_on_after(1.0):  # auto mode waits 10 s for the probe's answer
            async with stdio_session(stdio_params("silent_discover"), errlog, mode="auto"):
                pytest.fail("the SDK gave up on the probe within a second")
    assert "ignored request server/discover" in _read_log(errlog)


async def test_garbage_stdout_still_serves(errlog: TextIO) -> None:
    problems: list[Exception] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):
            problems.append(message)

    with anyio.fail_after(20):
        params = stdio_params("garbage_stdout", "--interleave")
        async with stdio_session(params, errlog, message_handler=on_message) as client:
            assert client.protocol_version == "2025-11-25"  # answered server/discover with -32601
            assert _text(await client.call_tool("echo", {"text": "still here"})) == "still here"
    assert problems  # the garbage lines were surfaced as parse errors


async def test_stderr_flood_keeps_serving(errlog: TextIO) -> None:
    with anyio.fail_after(40):
        async with stdio_session(stdio_params("stderr_flood"), errlog) as client:
            assert _text(await client.call_tool("echo", {"text": "ok"})) == "ok"
            for _ in range(600):  # the flood thread finishes within seconds
                if os.fstat(errlog.fileno()).st_size >= 20 * 1024 * 1024:
                    break
                await anyio.sleep(0.05)
            assert os.fstat(errlog.fileno()).st_size >= 20 * 1024 * 1024
            assert _text(await client.call_tool("echo", {"text": "after"})) == "after"


async def test_slow_start_barrier_holds_each_until_all_have_started(
    errlog: TextIO, tmp_path: Path
) -> None:
    barrier = ["--delay", "0", "--barrier", str(tmp_path / "b"), "--count", "2"]
    answers: list[str] = []

    async def one() -> None:
        async with stdio_session(stdio_params("slow_start", *barrier), errlog) as client:
            answers.append(_text(await client.call_tool("hello")))

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
            assert _text(await client.call_tool("list_notes")) == "(no notes yet)"
            assert (
                _text(await client.call_tool("add_note", {"text": "buy milk"})) == "saved note #1"
            )
            assert _text(await client.call_tool("list_notes")) == "1. buy milk"
            assert "(d20)" in _text(await client.call_tool("roll_dice", {"sides": 20}))
