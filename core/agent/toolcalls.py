"""Tool-call plumbing of the agent loop: arguments parsed, results cut and turned into messages."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import anyio.to_thread

from codebot_mcp.core import jsonutil
from codebot_mcp.core.agent.session import Message
from codebot_mcp.core.media import images
from codebot_mcp.core.model.stream import ToolCall
from codebot_mcp.core.model.tokens import CHARS_PER_TOKEN
from codebot_mcp.core.tools.base import ToolResult

if TYPE_CHECKING:
    from codebot_mcp.core.agent.events import ToolRecord


def truncate(text: str, max_tokens: int) -> str:
    """Cut ``text`` to about ``max_tokens`` tokens, telling the model how much was cut."""
    limit = max_tokens * CHARS_PER_TOKEN
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    return (
        f"{text[:limit]}\n\n[codebot: this result was cut to the first {limit} of {len(text)} "
        f"characters; {cut} characters (about {cut // CHARS_PER_TOKEN} tokens) were cut. "
        "Ask for less at once (offset/limit, head, grep) to see the rest.]"
    )


def tool_message(call: ToolCall, result: ToolResult) -> Message:
    """The ``tool`` message that answers ``call`` (errors marked as such)."""
    text = result.text or "(no output)"
    if result.images:
        count = len(result.images)
        text += (
            f"\n[codebot: {'this image follows' if count == 1 else f'these {count} images follow'}"
            " in the next message]"
        )
    return {
        "role": "tool",
        "tool_call_id": call.id,
        "content": f"Error: {text}" if result.is_error else text,
    }


def images_message(records: list[ToolRecord]) -> Message:
    """The user message after a step's tool results that carries their images."""
    return images.tool_images_message(
        [(r.call.id, r.call.name, r.result.images) for r in records if r.result.images]
    )


async def fitted_images(result: ToolResult, max_bytes: int) -> ToolResult:
    """``result`` with each image under ``max_bytes`` (downscaled by Pillow in a thread);
    an image that cannot be is dropped, and the text says why."""
    kept: list[images.Image] = []
    notes: list[str] = []
    for image in result.images:
        try:
            kept.append(await anyio.to_thread.run_sync(images.fit, image, max_bytes))
        except images.ImageError as exc:
            notes.append(f"[codebot: an image was not sent: {exc}]")
    text = "\n".join([result.text, *notes]) if notes else result.text
    return ToolResult(text, result.is_error, result.data, tuple(kept))


def finished_elsewhere(call: ToolCall, result: ToolResult) -> list[Message]:
    """A call that ended outside any turn (a server-side task that ``--continue`` picked up
    again), as the two messages its turn would have added: the call, then its result."""
    request: Message = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
        ],
    }
    return [request, tool_message(call, result)]


def parse_arguments(call: ToolCall) -> dict[str, Any] | str:
    """The arguments as a dict, or the reason they are unusable."""
    try:
        value = jsonutil.loads(call.arguments) if call.arguments.strip() else {}
    except json.JSONDecodeError as exc:
        return f"the arguments are not valid JSON ({exc.msg} at position {exc.pos})"
    if not isinstance(value, dict):
        return f"the arguments must be a JSON object, got {type(value).__name__}"
    return value
