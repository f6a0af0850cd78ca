"""The scripted turns of the loopback model server (:mod:`tests.fakes.openai_server`).

A turn is a plain JSON-able dict, so a script file works too; each completion request pops one.
Tests build them here and queue them on the server::

    from tests.fakes import openai_turns as fo

    fake.queue(fo.tool_calls(("read", {"path": "a.txt"})), fo.text("done"))
"""

from __future__ import annotations

from typing import Any

Turn = dict[str, Any]


def text(content: str, *, chunks: int = 3, delay: float = 0.0) -> Turn:
    """A plain answer; streamed in ``chunks`` pieces."""
    return {"text": content, "chunks": chunks, "delay": delay}


def tool_calls(*calls: tuple[str, Any], content: str = "", delay: float = 0.0) -> Turn:
    """One assistant turn calling ``(name, arguments)`` pairs; a str argument is sent verbatim."""
    return {
        "tool_calls": [{"name": n, "arguments": a} for n, a in calls],
        "text": content,
        "delay": delay,
    }


def error(status: int, message: str = "scripted error", **headers: str) -> Turn:
    """An HTTP error status with an OpenAI-shaped error body."""
    return {"error": status, "message": message, "headers": headers}


def overflow(window: int = 8192) -> Turn:
    """A 400 ``context_length_exceeded``, worded like OpenAI's."""
    message = (
        f"This model's maximum context length is {window} tokens. However, your messages "
        "resulted in more tokens. Please reduce the length of the messages."
    )
    return {"error": 400, "message": message, "headers": {}, "code": "context_length_exceeded"}


def llama_cpp_overflow(n_ctx: int = 4096, n_prompt: int = 5000) -> Turn:
    """A 400 as llama.cpp's own server (``llama-server``) words it: its type and ``n_ctx``."""
    error = {
        "code": 400,
        "message": "the request exceeds the available context size, try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": n_prompt,
        "n_ctx": n_ctx,
    }
    return {"error": 400, "message": error["message"], "headers": {}, "body": {"error": error}}


def served_as(model: str, turn: Turn) -> Turn:
    """``turn``, but the server reports ``model`` as the one that answered."""
    return {**turn, "served_model": model}


def no_usage(turn: Turn) -> Turn:
    """``turn`` without a usage chunk or field (servers that ignore ``include_usage``)."""
    return {**turn, "no_usage": True}


def stream_error(message: str, *, after_text: str = "") -> Turn:
    """A stream that sends some text, then an in-band ``{"error": ...}`` event."""
    return {"stream_error": message, "text": after_text}


def drop(*, after_text: str = "partial") -> Turn:
    """A stream that sends some text, then closes the connection without finishing."""
    return {"drop": True, "text": after_text}


def raw_sse(*events: str) -> Turn:
    """Send exactly these SSE ``data:`` payloads (for malformed or unusual streams)."""
    return {"raw_sse": list(events)}


def endless() -> Turn:
    """A stream of small, valid text chunks that never finishes (until the client leaves)."""
    return {"endless": True}


def huge_body(size: int) -> Turn:
    """A non-streamed 200 answer of ``size`` bytes (a long string inside valid JSON)."""
    return {"huge_body": size}


def raw_body(body: str, *, stream: bool = False) -> Turn:
    """Exactly this body, as JSON (or, with ``stream``, as one SSE ``data:`` event)."""
    return {"raw_body": body, "raw_stream": stream}


def hang(seconds: float = 30.0) -> Turn:
    """Send the stream's first chunk and then nothing for ``seconds`` (cancellation tests)."""
    return {"hang": seconds}


def stall(seconds: float = 30.0) -> Turn:
    """Send nothing at all (not even headers) for ``seconds``, then a plain answer."""
    return {"stall": seconds, "text": "late"}


def closed_at_start(turn: Turn, *, chunked: bool = True) -> Turn:
    """A streamed request gets ``200 OK`` and the connection closes before the first chunk
    (llama-cpp-python's ``chatml-function-calling`` with tools): with ``chunked``, mid-way
    through a chunked body (the client reads a broken body), else a body that is simply empty.
    The request is not consumed: ``turn`` answers the next one (the client's unstreamed retry).
    """
    return {"closed_at_start": "chunked" if chunked else "empty", "then": turn}


def hang_up(turn: Turn) -> Turn:
    """A streamed request gets no response at all: the server closes the connection without
    a status line or a byte (llama-cpp-python's function-calling server, streamed with
    tools). The request is not consumed: ``turn`` answers the next one (the client's
    unstreamed retry)."""
    return {"hang_up": True, "then": turn}


def reasoned(
    turn: Turn,
    summary: str | list[str] = "Thinking it through.",
    *,
    tokens: int = 64,
    encrypted: str | None = None,
) -> Turn:
    """``turn`` with a reasoning item before it (the Responses API): its summary (one part, or
    several), ``tokens`` reasoning tokens in the usage, and, when the request asks for it,
    the encrypted reasoning (``encrypted``, else ``enc:<item id>``)."""
    extra: Turn = {"reasoning": summary, "reasoning_tokens": tokens}
    if encrypted is not None:
        extra["encrypted"] = encrypted
    return {**turn, **extra}


def failed(message: str, *, code: str = "server_error", after_text: str = "") -> Turn:
    """A Responses stream (or JSON answer) that ends in ``response.failed`` with ``code``."""
    return {"failed": message, "code": code, "text": after_text}


def incomplete(turn: Turn, reason: str = "max_output_tokens") -> Turn:
    """``turn`` ending in ``response.incomplete`` for ``reason`` (the Responses API)."""
    return {**turn, "incomplete": reason}
