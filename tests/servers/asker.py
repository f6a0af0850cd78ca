"""A server that asks things of the client, on ``MCPServer``: server name "asker".

On a 2026-07-28 connection (its default in auto mode) the resolver-based tools answer with
an ``InputRequiredResult`` and resume from ``requestState`` (SEP-2322); on a handshake-era
connection (``"protocol": "legacy"``) the same tools send ``elicitation/create``,
``sampling/createMessage`` and ``roots/list`` mid-call.

Tools:
- ``ask_name()``: elicits ``{name (required), color (default "blue")}``; returns
  ``hello <name> (<color>)``, or ``declined``/``cancelled``;
- ``ask_color()``: elicits ``{color (default "blue"), count (default 3)}``; returns
  ``<count> x <color>``, or the action;
- ``visit(url?)``: URL-mode elicitation of ``url`` (default ``https://example.com/connect``;
  legacy only);
  returns the action;
- ``roots()``: the client's root URIs, one per line;
- ``summarize(text)``: samples the client's model; returns ``model said: <text>``;
- ``progress(steps, delay?)``: reports ``steps`` progress notifications (``delay`` seconds
  apart) with messages, logs at
  info and debug, returns ``done``;
- ``wait(seconds, marker)``: writes ``started`` to ``marker`` and sleeps; if cancelled,
  writes ``cancelled`` to it;
- ``touch(uri)``: says ``uri`` was updated (a listen-stream event at 2026-07-28,
  ``notifications/resources/updated`` before).

Resources: ``note://hello`` (text), ``bin://blob`` (bytes 0..255), template
``note://{name}`` (``name`` completes to alpha, beta). Prompts: ``greet(name, style?)`` with
completion of ``style``.

Run: ``python -m tests.servers.asker``
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated

import anyio
from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, ListRoots, Resolve, Sample
from mcp.types import (
    Completion,
    CreateMessageResult,
    ListRootsResult,
    PromptReference,
    ResourceTemplateReference,
    SamplingMessage,
    TextContent,
)
from pydantic import BaseModel, Field

mcp = MCPServer("asker", version="0.1.0")


class Person(BaseModel):
    name: str = Field(description="Your name")
    color: str = Field(default="blue", description="A favourite colour")


def _ask_person() -> Elicit[Person]:
    return Elicit("Who are you?", Person)


class Colour(BaseModel):
    color: str = Field(default="blue", description="A colour")
    count: int = Field(default=3, description="How many")


def _ask_colour() -> Elicit[Colour]:
    return Elicit("Which colour?", Colour)


def _roots() -> ListRoots:
    return ListRoots()


def _sample(text: str) -> Sample:
    return Sample(
        [SamplingMessage(role="user", content=TextContent(type="text", text=text))], max_tokens=50
    )


@mcp.tool()
async def ask_name(
    answer: Annotated[ElicitationResult[Person], Resolve(_ask_person)],
) -> str:
    """Ask the user for a name."""
    if answer.action == "accept":
        return f"hello {answer.data.name} ({answer.data.color})"  # type: ignore[union-attr]
    return f"{answer.action}d" if answer.action == "decline" else "cancelled"


@mcp.tool()
async def ask_color(
    answer: Annotated[ElicitationResult[Colour], Resolve(_ask_colour)],
) -> str:
    """Ask the user for a colour (every field has a default)."""
    if answer.action == "accept":
        return f"{answer.data.count} x {answer.data.color}"  # type: ignore[union-attr]
    return answer.action


@mcp.tool()
async def visit(ctx: Context, url: str = "https://example.com/connect") -> str:
    """Ask the user to open a URL."""
    result = await ctx.elicit_url("Connect your account", url, "e-1")
    return result.action


@mcp.tool()
async def roots(listing: Annotated[ListRootsResult, Resolve(_roots)]) -> str:
    """The client's roots."""
    return "\n".join(str(r.uri) for r in listing.roots) or "(none)"


@mcp.tool()
async def summarize(text: str, reply: Annotated[CreateMessageResult, Resolve(_sample)]) -> str:
    """Sample the client's model."""
    content = reply.content
    said = content.text if isinstance(content, TextContent) else str(content)
    return f"model said: {said}"


@mcp.tool()
async def progress(steps: int, ctx: Context, delay: float = 0.05) -> str:
    """Report progress."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i}")
        await anyio.sleep(delay)
    await ctx.info("progress finished")
    await ctx.debug("a debug line")
    return "done"


@mcp.tool()
async def wait(seconds: float, marker: str) -> str:
    """Sleep; ``marker`` says ``started`` once the call runs, ``cancelled`` if it is."""
    Path(marker).write_text("started")  # noqa: ASYNC240 - a test marker, once
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        Path(marker).write_text("cancelled")  # noqa: ASYNC240 - a test marker, once
        raise
    return "waited"


@mcp.tool()
async def touch(uri: str, ctx: Context) -> str:
    """Tell the client that ``uri`` changed."""
    await ctx.notify_resource_updated(uri)  # 2026-07-28: the listen streams that filter on it
    with contextlib.suppress(Exception):  # 2025-11-25: a notification on the session
        await ctx.session.send_resource_updated(uri)
    return "touched"


@mcp.resource("note://hello", mime_type="text/plain")
def hello() -> str:
    """A greeting."""
    return "hello resource"


@mcp.resource("bin://blob", mime_type="application/octet-stream")
def blob() -> bytes:
    """Every byte once."""
    return bytes(range(256))


@mcp.resource("note://{name}", mime_type="text/plain")
def note(name: str) -> str:
    """A note by name."""
    return f"note {name}"


@mcp.prompt()
def greet(name: str, style: str = "plain") -> str:
    """Greet someone."""
    return f"Greet {name} in a {style} style."


@mcp.completion()
async def complete(ref: object, argument: object, context: object) -> Completion | None:
    value = getattr(argument, "value", "")
    if isinstance(ref, PromptReference) and getattr(argument, "name", "") == "style":
        return Completion(values=[s for s in ("plain", "pirate", "poem") if s.startswith(value)])
    if isinstance(ref, ResourceTemplateReference) and getattr(argument, "name", "") == "name":
        return Completion(values=[n for n in ("alpha", "beta") if n.startswith(value)])
    return None


if __name__ == "__main__":
    mcp.run()
