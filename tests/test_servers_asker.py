"""The raw ``asker`` lists, asks and answers as the SDK's ``MCPServer`` does for the same
tools, in both eras (input rounds and a sealed ``requestState`` in 2026-07-28, mid-call
requests in the handshake era)."""

from __future__ import annotations

import base64
from typing import Any, Literal, TextIO

import anyio
import mcp.types as types
import pytest
from mcp import Client, MCPError
from mcp.client.stdio import stdio_client
from mcp.shared.subscriptions import ResourceUpdated
from pydantic import BaseModel, Field, ValidationError

from tests.servers.talk import stdio_session, text_of
from tests.servers.util import stdio_params

pytestmark = pytest.mark.anyio

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
                assert result.structured_content == {"result": text_of(result)}, result
                return text_of(result)

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
            assert text_of(done) == "done"
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
            assert text_of(failed) == f"Error executing tool progress: {pydantic_says.value}"

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
            assert text_of(resumed) == "declined"
