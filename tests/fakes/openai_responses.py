"""The Responses API's wire format for the loopback model server (``POST /v1/responses``).

The same scripted turns as Chat Completions (:mod:`tests.fakes.openai_turns`) answer in the
Responses shape: a JSON ``response`` object, or (``"stream": true``) SSE events, each
``event: <type>`` with its JSON, in OpenAI's order: ``response.created``,
``response.in_progress``, then per output item ``response.output_item.added``, its deltas
(``response.reasoning_summary_text.delta``, ``response.output_text.delta``,
``response.function_call_arguments.delta``) and ``.done`` events,
``response.output_item.done``, and last ``response.completed`` with the usage (input,
cached, output and reasoning tokens). No ``[DONE]``: the stream ends with the connection.

A request with ``store: false`` whose ``input`` names an item id (but for a reasoning item that
carries its encrypted content), or holds a reasoning item without its encrypted content, is
refused with 400, as OpenAI refuses it (:func:`rejects`).

What only this API has, set on a turn (:func:`tests.fakes.openai_turns.reasoned`):
``reasoning`` (the summary's parts), ``reasoning_tokens``; ``failed`` (a
``response.failed`` event with ``code``), ``error_event`` (an ``error`` event),
``incomplete`` (``response.incomplete`` for the reason given). A reasoning item carries
``encrypted_content`` only when the request asked for it (``include``), as OpenAI does: its
value names the turn (``enc:<n>``), so a test can check that it came back.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

Turn = dict[str, Any]
Ids = Callable[[str], str]
"""Hands out the next id with a prefix (``call`` → ``call_7``)."""

ENCRYPTED = "reasoning.encrypted_content"


def response_object(
    body: dict[str, Any],
    turn: Turn,
    output: list[dict[str, Any]],
    *,
    status: str = "completed",
    served: str | None = None,
) -> dict[str, Any]:
    """A ``response`` object as OpenAI sends it (every field the SDK requires)."""
    response: dict[str, Any] = {
        "id": "resp_fake",
        "object": "response",
        "created_at": 0,
        "model": served or turn.get("served_model") or body.get("model") or "fake-model",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": body.get("tool_choice") or "auto",
        "tools": [],
        "status": status,
        "store": body.get("store", True),
    }
    if status in ("completed", "incomplete") and not turn.get("no_usage"):
        response["usage"] = usage(turn)
    if status == "incomplete":
        response["incomplete_details"] = {"reason": turn.get("incomplete") or "max_output_tokens"}
    if status == "failed":
        response["error"] = {"code": turn.get("code") or "server_error", "message": turn["failed"]}
    return response


def usage(turn: Turn) -> dict[str, Any]:
    """Input tokens (some cached), output tokens and the reasoning among them."""
    prompt = int(turn.get("prompt_tokens") or 10)
    reasoning = int(turn.get("reasoning_tokens") or 0)
    output = 5 + reasoning
    return {
        "input_tokens": prompt,
        "input_tokens_details": {
            "cached_tokens": int(turn.get("cached_tokens") or 0),
            "cache_write_tokens": 0,
        },
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": prompt + output,
    }


def output_items(body: dict[str, Any], turn: Turn, ids: Ids) -> list[dict[str, Any]]:
    """The finished output items of a turn: reasoning, message, function calls."""
    items: list[dict[str, Any]] = []
    parts = summary_parts(turn)
    if parts is not None:
        item: dict[str, Any] = {
            "type": "reasoning",
            "id": ids("rs"),
            "summary": [{"type": "summary_text", "text": p} for p in parts],
        }
        if ENCRYPTED in (body.get("include") or ()):
            item["encrypted_content"] = turn.get("encrypted") or f"enc:{item['id']}"
        items.append(item)
    text = turn.get("text") or ""
    if text:
        items.append(
            {
                "type": "message",
                "id": ids("msg"),
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        )
    for call in turn.get("tool_calls", []):
        items.append(
            {
                "type": "function_call",
                "id": ids("fc"),
                "call_id": ids("call"),
                "name": call["name"],
                "arguments": arguments_text(call["arguments"]),
                "status": "completed",
            }
        )
    return items


def summary_parts(turn: Turn) -> list[str] | None:
    """The reasoning summary's parts (None: the turn has no reasoning item)."""
    reasoning = turn.get("reasoning")
    if reasoning is None:
        return None
    return [reasoning] if isinstance(reasoning, str) else [str(p) for p in reasoning]


def events(body: dict[str, Any], turn: Turn, ids: Ids) -> Iterator[dict[str, Any]]:
    """The SSE events of a streamed turn. ``hang``, ``drop`` and ``stream_error`` strike
    after the text's deltas (after every item when there is no text), as for chat; the
    ``__hang__``/``__drop__`` markers are the handler's."""
    output = output_items(body, turn, ids)
    emit = _Events(turn)
    yield emit("response.created", response=response_object(body, turn, [], status="in_progress"))
    yield emit(
        "response.in_progress", response=response_object(body, turn, [], status="in_progress")
    )
    has_text = any(item["type"] == "message" for item in output)
    for index, item in enumerate(output):
        if item["type"] == "reasoning":
            yield from emit.reasoning(index, item)
        elif item["type"] == "message":
            yield from emit.message_deltas(index, item)
            if emit.interrupted():
                yield from emit.interruption()
                return
            yield from emit.message_done(index, item)
        else:
            yield from emit.call(index, item)
        yield emit("response.output_item.done", output_index=index, item=item)
    if not has_text and emit.interrupted():
        yield from emit.interruption()
        return
    if "error_event" in turn:
        yield emit("error", code=turn.get("code"), message=turn["error_event"], param=None)
    elif "failed" in turn:
        yield emit("response.failed", response=response_object(body, turn, output, status="failed"))
    elif "incomplete" in turn:
        done = response_object(body, turn, output, status="incomplete")
        yield emit("response.incomplete", response=done)
    else:
        yield emit("response.completed", response=response_object(body, turn, output))


class _Events:
    """Numbers the events of one stream and builds each kind."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn
        self.chunks = int(turn.get("chunks") or 3)
        self._seq = 0

    def __call__(self, kind: str, **fields: Any) -> dict[str, Any]:
        self._seq += 1
        return {"type": kind, "sequence_number": self._seq, **fields}

    def reasoning(self, index: int, item: dict[str, Any]) -> Iterator[dict[str, Any]]:
        from tests.fakes.openai_handler import split

        empty = {**item, "summary": [], "encrypted_content": None}
        yield self("response.output_item.added", output_index=index, item=empty)
        for n, part in enumerate(item["summary"]):
            at = {"item_id": item["id"], "output_index": index, "summary_index": n}
            blank = {"type": "summary_text", "text": ""}
            yield self("response.reasoning_summary_part.added", **at, part=blank)
            for piece in split(part["text"], self.chunks):
                yield self("response.reasoning_summary_text.delta", **at, delta=piece)
            yield self("response.reasoning_summary_text.done", **at, text=part["text"])
            yield self("response.reasoning_summary_part.done", **at, part=part)

    def message_deltas(self, index: int, item: dict[str, Any]) -> Iterator[dict[str, Any]]:
        from tests.fakes.openai_handler import split

        at = {"item_id": item["id"], "output_index": index, "content_index": 0}
        started = {**item, "status": "in_progress", "content": []}
        yield self("response.output_item.added", output_index=index, item=started)
        blank = {"type": "output_text", "text": "", "annotations": []}
        yield self("response.content_part.added", **at, part=blank)
        for piece in split(item["content"][0]["text"], self.chunks):
            yield self("response.output_text.delta", **at, delta=piece, logprobs=[])

    def message_done(self, index: int, item: dict[str, Any]) -> Iterator[dict[str, Any]]:
        at = {"item_id": item["id"], "output_index": index, "content_index": 0}
        part = item["content"][0]
        yield self("response.output_text.done", **at, text=part["text"], logprobs=[])
        yield self("response.content_part.done", **at, part=part)

    def call(self, index: int, item: dict[str, Any]) -> Iterator[dict[str, Any]]:
        from tests.fakes.openai_handler import split

        at = {"item_id": item["id"], "output_index": index}
        started = {**item, "arguments": "", "status": "in_progress"}
        yield self("response.output_item.added", output_index=index, item=started)
        for piece in split(item["arguments"], 2):
            yield self("response.function_call_arguments.delta", **at, delta=piece)
        arguments, name = item["arguments"], item["name"]
        yield self("response.function_call_arguments.done", **at, arguments=arguments, name=name)

    def interrupted(self) -> bool:
        return any(k in self.turn for k in ("hang", "drop", "stream_error"))

    def interruption(self) -> Iterator[dict[str, Any]]:
        """A hang (then the rest is not sent), a drop, or an ``error`` event mid-stream."""
        if "hang" in self.turn:
            yield {"__hang__": float(self.turn["hang"])}
        if "drop" in self.turn:
            yield {"__drop__": True}
        elif "stream_error" in self.turn:
            message = self.turn["stream_error"]
            yield self("error", code="server_error", message=message, param=None)


def json_answer(body: dict[str, Any], turn: Turn, ids: Ids) -> dict[str, Any]:
    """A non-streamed turn: the finished ``response`` object."""
    output = output_items(body, turn, ids)
    if "failed" in turn:
        return response_object(body, turn, output, status="failed")
    status = "incomplete" if "incomplete" in turn else "completed"
    return response_object(body, turn, output, status=status)


def sse_lines(event: dict[str, Any]) -> bytes:
    """One event as the Responses API frames it: ``event:`` and ``data:`` lines."""
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


def arguments_text(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def rejects(body: dict[str, Any]) -> str | None:
    """Why OpenAI would refuse this request's ``input`` (a 400), or None. With ``store:
    false`` nothing was kept, so an item that names an id is looked up and not found, unless
    it is a reasoning item that carries its encrypted content."""
    if body.get("store", True) is not False:
        return None
    for item in body.get("input") or ():
        if not isinstance(item, dict):
            continue
        carried = item.get("type") == "reasoning" and item.get("encrypted_content")
        if item.get("id") and not carried:
            return (
                f"Item with id '{item['id']}' not found. Items are not persisted when `store` "
                "is set to false. Try again with `store` set to true, or remove this item "
                "from your input."
            )
        if item.get("type") == "reasoning" and not item.get("encrypted_content"):
            return "Reasoning input items need encrypted_content when `store` is false."
    return None


def input_text(body: dict[str, Any]) -> str:
    """What the fake counts as a Responses request's length (instructions, input, tools)."""
    return str(body.get("instructions") or "") + json.dumps(body.get("input", []))
