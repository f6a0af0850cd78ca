"""The model API: which endpoint, model and key to use, the client, and one request per turn.

``openai`` is imported inside functions only: importing it costs over a second, and
``codebot --help`` or ``codebot mcp list`` must not pay for it.

Works with OpenAI and with OpenAI-compatible servers as they are. llama.cpp's server, for one,
rejects ``content: null`` beside ``tool_calls`` (:meth:`core.stream.Reply.message` sends ``""``),
ignores tools unless ``tool_choice`` is ``"auto"`` (always sent with tools), and cannot stream a
turn that may call tools (the stream ends empty, without a finish reason); llama-cpp-python's
``chatml-function-calling`` answers such a request ``200 OK`` and closes the connection before
the first chunk, or (its function-calling server) hangs up on the streamed request without
any response at all: no status line, no byte. Each way the turn is redone once without
streaming (the retry is announced, naming what happened), and if that answers a turn with
tools, the session stops streaming requests that carry tools. An ordinary empty answer
(finished, no text) is not that quirk: it is returned as it is; nor is a refused connection
(no server listening), which fails as it did.

Two wire formats, one request shape: the history and the tools stay in the Chat Completions
shape, and ``config.api`` picks where they go: ``POST /chat/completions``, or
``POST /responses`` through :mod:`core.model.responses`. Everything above (retries, the
quirks, the caps) is the same for both; the agent loop never knows which API answers.

Size: one idea, one turn's request and its recoveries; the quirks above each need a few lines
of the same retry loop, so they stay together rather than in a module per endpoint.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from codebot_mcp.core import gcpause
from codebot_mcp.core.errors import ModelError
from codebot_mcp.core.media import images
from codebot_mcp.core.model.apierrors import (
    ContextOverflowError,
    StreamDroppedError,
    failed_response,
    hung_up,
    map_error,
    retry_delay,
    retryable,
    server_message,
    unreadable_answer,
)
from codebot_mcp.core.model.config import CONNECT_TIMEOUT, ModelConfig
from codebot_mcp.core.model.stream import (
    REASONING_KEY,
    ProgressCallback,
    Reply,
    StreamAccumulator,
    TextCallback,
    reply_from_completion,
)

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from codebot_mcp.core.model.responses import ResponsesAccumulator


TRACE_HEADERS: ContextVar[Mapping[str, str] | None] = ContextVar("trace_headers", default=None)
"""Headers every model request of this context carries: the W3C trace context
(``traceparent``, ``tracestate``) of the model request's span, set by ``core.telemetry`` only
when telemetry is on (so the endpoint, or a proxy in front of it, joins the trace)."""


class RunawayStreamError(ModelError):
    """The stream went on far past ``max_tokens`` (a server that ignores the cap)."""


def create_client(config: ModelConfig, *, max_retries: int = 0, **extra: Any) -> AsyncOpenAI:
    """Build the ``AsyncOpenAI`` client (imports ``openai`` on first use).

    The client's own retries are off: :class:`ChatModel` retries itself, visibly.
    """
    import openai

    from codebot_mcp.core.model import cap

    connect = min(CONNECT_TIMEOUT, config.timeout)
    extra.setdefault("timeout", openai.Timeout(config.timeout, connect=connect))
    extra.setdefault("http_client", cap.http_client())  # every answer capped (core.model.cap)
    return openai.AsyncOpenAI(
        api_key=config.api_key, base_url=config.url, max_retries=max_retries, **extra
    )


@dataclass(frozen=True, slots=True)
class Retry:
    """A failed request about to be sent again (shown to the user)."""

    attempt: int
    """1 for the first retry."""
    of: int
    reason: str
    delay: float


RetryCallback = Callable[[Retry], None]


class ChatModel:
    """Sends one turn to the model; remembers server quirks for the session."""

    def __init__(
        self,
        client: AsyncOpenAI,
        config: ModelConfig,
        *,
        response_format: dict[str, Any] | None = None,
    ) -> None:
        self.client = client
        self.config = config
        self.stream_with_tools = True
        """False once the server streamed an empty, unfinished turn that had tools (llama.cpp)
        and then answered the same request without streaming."""
        self.cap_param = "max_output_tokens" if config.responses else "max_tokens"
        """Becomes ``max_completion_tokens`` for servers that reject ``max_tokens``."""
        self.reasoning_extras = True
        """False once the server refused reasoning summaries or encrypted reasoning (the
        Responses API, for a model that has none): they are no longer asked for."""
        self.served_model: str | None = None
        """The model name the server reported in its last answer."""
        self.images = True
        """False once the endpoint rejected a request with images (a model without vision,
        a server that takes only string content): from then on every image goes as its text
        placeholder, for the rest of the session."""
        self.response_format = response_format
        """Structured output to ask for (``--output-schema``); None again once the endpoint
        rejected it (the answer is then validated all the same, by the caller)."""

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self.client.close()

    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] = (),
        on_text: TextCallback | None = None,
        *,
        on_retry: RetryCallback | None = None,
        max_tokens: int | None = None,
        on_progress: ProgressCallback | None = None,
        on_reasoning: TextCallback | None = None,
    ) -> Reply:
        """Request one assistant turn, streaming text to ``on_text`` as it arrives (the
        model's reasoning summaries to ``on_reasoning``, and the count of streamed pieces to
        ``on_progress``).

        Failed requests are retried ``config.retries`` times (each announced to
        ``on_retry``), except once the answer has started streaming.

        Raises:
            ContextOverflowError: the request does not fit the model's context window.
            StreamDroppedError: the connection dropped mid-answer (carries the partial text).
            ModelError: the API failed otherwise.
        """
        import openai

        gcpause.release()  # the work begins with the first request (core.gcpause)
        cap = max_tokens or self.config.max_tokens
        request = self._request(messages, tools, cap)
        callbacks = _Callbacks(on_text, on_retry, on_progress, on_reasoning)
        attempt = 0
        while True:
            try:
                reply = await self._attempt(request, tools, callbacks)
            except StreamDroppedError:
                raise
            except Exception as exc:  # boundary: an answer over the cap, or too deep to parse
                unreadable = unreadable_answer(exc, self.config)
                if unreadable is not None:
                    raise unreadable from None
                if not isinstance(exc, openai.OpenAIError):
                    raise
                if self._switch_cap_param(exc, request) or self._drop_extras(exc, request):
                    continue
                if self._drop_images(exc, request, on_retry):  # before: it names images
                    continue
                if self._drop_response_format(exc, request, on_retry):
                    continue
                error = map_error(exc, self.config)
                if attempt >= self.config.retries or not retryable(exc):
                    raise error from None
                attempt += 1
                delay = retry_delay(exc, attempt)
                if on_retry is not None:
                    on_retry(Retry(attempt, self.config.retries, error.message, delay))
                await anyio.sleep(delay)
                continue
            if reply.model:
                self.served_model = reply.model
            return reply

    def _request(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]], cap: int
    ) -> dict[str, Any]:
        """The request body for this API (without ``stream``)."""
        config = self.config
        if not self.images:
            messages = images.strip(messages, images.NO_IMAGES)
        if config.responses:
            from codebot_mcp.core.model.responses import request_body

            body = request_body(config, messages, tools, cap, extras=self.reasoning_extras)
            if self.response_format is not None:  # Responses: text.format, flattened
                shape = self.response_format.get("json_schema", {})
                body["text"] = {"format": {"type": "json_schema", **shape}}
            return body
        sent = [m if not _private(m) else _without_reasoning(m) for m in messages]
        request: dict[str, Any] = {"model": config.model, "messages": sent}
        if cap:
            request[self.cap_param] = cap
        if tools:
            request["tools"] = list(tools)
            request["tool_choice"] = "auto"  # llama.cpp ignores tools without it
        if config.reasoning_effort:
            request["reasoning_effort"] = config.reasoning_effort
        if self.response_format is not None:
            request["response_format"] = self.response_format
        return request

    async def _attempt(
        self, request: dict[str, Any], tools: Sequence[Mapping[str, Any]], callbacks: _Callbacks
    ) -> Reply:
        if tools and not self.stream_with_tools:
            return await self._once(request, callbacks)
        try:
            acc = await self._stream(request, callbacks)
        except _ClosedAtStartError as closed:
            what = (
                f"the model server at {self.config.url} closed the connection without any "
                "response to a streamed request (no status line, not a byte)"
                if closed.hung_up
                else f"the model server at {self.config.url} answered 200 and closed the "
                f"stream before its first chunk ({closed.reason})"
            )
            return await self._unstreamed(request, tools, callbacks, what)
        failure = getattr(acc, "failure", None)  # the Responses API's failed response
        partial = acc.reply()
        if failure is not None:
            error = failed_response(failure, self.config)
            if partial.text.strip() and not isinstance(error, ContextOverflowError):
                raise StreamDroppedError(  # what arrived is kept, as for a dropped stream
                    f"the answer above is incomplete: {error.message}",
                    hint=error.hint,
                    partial=partial.text,
                )
            raise error
        if partial.empty and acc.finish_reason is None and (tools or acc.chunks == 0):
            # llama.cpp's quirk: a turn that may call tools streams nothing and no finish
            # reason. Ask again without streaming; stop streaming only if that worked.
            what = (
                f"the model server at {self.config.url} answered 200 and ended the stream "
                "before its first chunk"
                if acc.chunks == 0
                else f"the model server at {self.config.url} streamed an empty, unfinished answer"
            )
            return await self._unstreamed(request, tools, callbacks, what)
        if acc.finish_reason is None:
            raise StreamDroppedError.from_partial(self.config, acc, None)
        return acc.result()

    async def _unstreamed(
        self,
        request: dict[str, Any],
        tools: Sequence[Mapping[str, Any]],
        callbacks: _Callbacks,
        what: str,
    ) -> Reply:
        """The same request once more without streaming, announced (``what`` happened)."""
        if callbacks.on_retry is not None:
            callbacks.on_retry(Retry(1, 1, f"{what}; asking again without streaming", 0.0))
        reply = await self._once(request, callbacks)
        if tools and not reply.empty:
            self.stream_with_tools = False
        return reply

    def _switch_cap_param(self, exc: Exception, request: dict[str, Any]) -> bool:
        """Newer OpenAI models reject ``max_tokens``: send ``max_completion_tokens`` instead."""
        text = server_message(exc)
        if self.cap_param == "max_tokens" and "max_completion_tokens" in text:
            request["max_completion_tokens"] = request.pop("max_tokens", None)
            self.cap_param = "max_completion_tokens"
            return True
        return False

    def _drop_response_format(
        self, exc: Exception, request: dict[str, Any], on_retry: RetryCallback | None
    ) -> bool:
        """An endpoint that rejects ``response_format`` (a 4xx other than auth and rate
        limits) is asked again without it, announced; structured output stays off."""
        import openai

        status = getattr(exc, "status_code", None)
        asked = "response_format" in request or "format" in request.get("text", {})
        if not asked or not isinstance(exc, openai.APIStatusError):
            return False
        if status is None or not 400 <= status < 500 or status in (401, 403, 408, 429):
            return False
        request.pop("response_format", None)
        request.get("text", {}).pop("format", None)
        if request.get("text") == {}:
            request.pop("text")
        self.response_format = None
        if on_retry is not None:
            why = server_message(exc)[:200] or f"status {status}"
            on_retry(
                Retry(
                    1,
                    1,
                    f"the model server at {self.config.url} rejected structured output "
                    f"(response_format: {why}); asking again without it (the answer is "
                    "still checked against the schema)",
                    0.0,
                )
            )
        return True

    def _drop_images(
        self, exc: Exception, request: dict[str, Any], on_retry: RetryCallback | None
    ) -> bool:
        """An endpoint that rejects the first request with images (a 400, 415 or 422 that
        names images or content types) gets it again with text placeholders, and no image
        for the rest of the session; announced once."""
        import openai

        key = "input" if self.config.responses else "messages"
        sent = request.get(key)
        if not self.images or not isinstance(exc, openai.APIStatusError):
            return False
        if exc.status_code not in (400, 415, 422) or not isinstance(sent, list):
            return False
        text = server_message(exc).lower()
        if not any(word in text for word in images.REFUSALS) or not images.has_images(sent):
            return False
        request[key] = images.strip(sent, images.NO_IMAGES)
        self.images = False
        if on_retry is not None:
            why = server_message(exc)[:200] or f"status {exc.status_code}"
            on_retry(
                Retry(
                    1,
                    1,
                    f"the model server at {self.config.url} rejected images ({why}); asking "
                    "again with a text placeholder for each, and sending no images for the "
                    "rest of this session",
                    0.0,
                )
            )
        return True

    def _drop_extras(self, exc: Exception, request: dict[str, Any]) -> bool:
        """A model without reasoning rejects the summary or the encrypted reasoning (400):
        ask without them, this turn and the rest of the session."""
        if not self.config.responses or getattr(exc, "status_code", None) != 400:
            return False
        text = server_message(exc).lower()
        if not any(word in text for word in ("reasoning", "encrypted", "include", "summary")):
            return False
        from codebot_mcp.core.model.responses import drop_extras

        if not drop_extras(request):
            return False
        self.reasoning_extras = False
        return True

    async def _stream(
        self, request: dict[str, Any], callbacks: _Callbacks
    ) -> StreamAccumulator | ResponsesAccumulator:
        from codebot_mcp.core.model.cap import chunk_limit

        acc: StreamAccumulator | ResponsesAccumulator
        if self.config.responses:
            from codebot_mcp.core.model.responses import ResponsesAccumulator

            acc = ResponsesAccumulator(
                callbacks.on_text, callbacks.on_progress, callbacks.on_reasoning
            )
            body = {**request, "stream": True}
        else:
            acc = StreamAccumulator(callbacks.on_text, callbacks.on_progress)
            body = {**request, "stream": True, "stream_options": {"include_usage": True}}
        cap = int(request.get(self.cap_param) or self.config.max_tokens)
        limit = chunk_limit(cap)
        try:
            stream = await self._post(body, stream=True)  # the status line has arrived: 200
        except Exception as exc:  # boundary: only a hang-up is handled here
            if hung_up(exc):
                raise _ClosedAtStartError(exc, hung_up=True) from exc
            raise
        try:
            async with stream:  # closes the response when cancelled mid-stream
                async for chunk in stream:
                    acc.add(chunk)
                    if acc.chunks > limit:
                        raise RunawayStreamError(
                            f"the model server at {self.config.url} kept streaming past "
                            f"max_tokens ({cap:,}): {acc.chunks:,} chunks; it was stopped",
                            hint="The server ignores max_tokens (an endless stream?); check "
                            "it, or use another endpoint.",
                        )
        except RunawayStreamError:
            raise
        except Exception as exc:  # boundary: httpx or openai errors once the answer began
            if unreadable_answer(exc, self.config) is not None:
                raise
            if acc.chunks == 0 and not _cancelled(exc):
                raise _ClosedAtStartError(exc) from exc
            raise StreamDroppedError.from_partial(self.config, acc, exc) from None
        return acc

    async def _once(self, request: dict[str, Any], callbacks: _Callbacks) -> Reply:
        answer = await self._post({**request, "stream": False}, stream=False)
        if not self.config.responses:
            return reply_from_completion(answer, callbacks.on_text)
        from codebot_mcp.core.model.responses import reply_from_response

        reply, failure = reply_from_response(answer, callbacks.on_text, callbacks.on_reasoning)
        if failure is not None:
            raise failed_response(failure, self.config)
        return reply

    async def _post(self, body: dict[str, Any], *, stream: bool) -> Any:
        """``POST /chat/completions`` (or ``/responses``) through the client's own ``post``
        (its documented way to any endpoint: same auth, retries, errors and stream type).
        ``chat.completions.create`` would walk the whole body (every message and tool
        schema) through its type-directed transform first, several ms a turn that grow with
        the history; ours is plain JSON."""
        from openai import AsyncStream

        options: Any = {"security": {"bearer_auth": True}}
        if (traced := TRACE_HEADERS.get()) is not None:
            options["headers"] = dict(traced)
        if self.config.responses:
            from openai.types.responses import Response, ResponseStreamEvent

            return await self.client.post(
                "/responses",
                body=body,
                cast_to=Response,
                options=options,
                stream=stream,
                stream_cls=AsyncStream[ResponseStreamEvent],
            )
        from openai.types.chat import ChatCompletion, ChatCompletionChunk

        return await self.client.post(
            "/chat/completions",
            body=body,
            cast_to=ChatCompletion,
            options=options,
            stream=stream,
            stream_cls=AsyncStream[ChatCompletionChunk],
        )


@dataclass(frozen=True, slots=True)
class _Callbacks:
    """Where one turn reports what arrives."""

    on_text: TextCallback | None
    on_retry: RetryCallback | None
    on_progress: ProgressCallback | None
    on_reasoning: TextCallback | None


_PRIVATE = (REASONING_KEY, images.TOOL_IMAGES_KEY)


def _private(message: Mapping[str, Any]) -> bool:
    return any(key in message for key in _PRIVATE)


def _without_reasoning(message: Mapping[str, Any]) -> dict[str, Any]:
    """A message without codebot's own keys: an assistant message's reasoning items (Chat
    Completions has no place for them: a session saved on the Responses API, resumed on
    Chat Completions), the mark on the message that carries tool results' images."""
    return {k: v for k, v in message.items() if k not in _PRIVATE}


class _ClosedAtStartError(Exception):
    """The server accepted a streamed request (200) and the stream broke before a chunk, or
    (``hung_up``) closed the connection without any response to it."""

    def __init__(self, cause: BaseException, *, hung_up: bool = False) -> None:
        super().__init__(str(cause))
        self.reason = str(getattr(cause, "__cause__", None) or cause) or type(cause).__name__
        self.hung_up = hung_up


def _cancelled(exc: BaseException) -> bool:
    """A timeout is not a closed stream: the server said nothing for ``timeout`` seconds."""
    return "Timeout" in type(exc).__name__


__all__ = [
    "ChatModel",
    "ContextOverflowError",
    "ModelConfig",
    "Retry",
    "StreamDroppedError",
    "create_client",
    "map_error",
]
