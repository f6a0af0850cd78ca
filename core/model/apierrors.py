"""How model API failures are understood: retries, overflows, dropped streams, messages.

Kept apart from :mod:`core.model` (the request itself) so each stays readable. ``openai`` is
imported inside functions only, as there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from codebot_mcp.core.errors import ModelError
from codebot_mcp.core.model.config import DEFAULT_KEY_ENV, PLACEHOLDER_KEY, TIMEOUT_ENV

if TYPE_CHECKING:
    from codebot_mcp.core.model.config import ModelConfig
    from codebot_mcp.core.model.responses import ResponsesAccumulator
    from codebot_mcp.core.model.stream import StreamAccumulator

RETRY_BASE_SECONDS = 1.0
RETRY_MAX_SECONDS = 20.0
"""Backoff doubles from the base up to this (a server's Retry-After wins when shorter)."""


def retryable(exc: Exception) -> bool:
    import openai

    if isinstance(exc, openai.APIStatusError):
        header = exc.response.headers.get("x-should-retry", "")
        if header.lower() == "false":
            return False
        if header.lower() == "true":
            return True
        return exc.status_code in (408, 409, 429) or exc.status_code >= 500
    return isinstance(exc, openai.APIConnectionError)  # includes APITimeoutError


def retry_delay(exc: Exception, attempt: int) -> float:
    delay = float(min(RETRY_MAX_SECONDS, RETRY_BASE_SECONDS * 2 ** (attempt - 1)))
    response = getattr(exc, "response", None)
    if response is not None:
        try:
            after = float(response.headers.get("retry-after", ""))
        except ValueError:
            after = -1.0
        if 0 <= after <= RETRY_MAX_SECONDS:
            delay = after
    return delay


class ContextOverflowError(ModelError):
    """The request is longer than the model's context window (the agent compacts, retries)."""

    def __init__(self, message: str, *, hint: str | None = None, window: int | None = None):
        super().__init__(message, hint=hint)
        self.window = window
        """The window the server named in its error, when it named one."""


class StreamDroppedError(ModelError):
    """The answer's stream broke off; ``partial`` holds the text that arrived."""

    def __init__(self, message: str, *, hint: str | None = None, partial: str = ""):
        super().__init__(message, hint=hint)
        self.partial = partial

    @classmethod
    def from_partial(
        cls,
        config: ModelConfig,
        acc: StreamAccumulator | ResponsesAccumulator,
        cause: Exception | None,
    ) -> StreamDroppedError:
        """The error for a stream that ended after ``acc.chunks`` chunks without finishing."""
        partial = acc.reply().text
        got = "nothing" if acc.chunks == 0 else f"{acc.chunks} chunk(s)"
        hint = (
            "The partial answer was kept; ask again to continue. If it keeps happening, "
            "the server or a proxy cuts long responses (check its timeouts and logs)."
        )
        if cause is not None and "Timeout" in type(cause).__name__:  # openai's or httpx's
            what = (
                f"the model API at {config.url} did not answer in time (nothing received for "
                f"{config.timeout:g} s) in the middle of its answer, after {got}"
            )
            hint = (
                "The partial answer was kept. The server may be overloaded; allow more time "
                f"with {TIMEOUT_ENV}=<seconds>."
            )
        else:
            why = f": {_redact(str(cause), config.api_key)}" if cause is not None else ""
            what = (
                f"the connection to the model API at {config.url} dropped mid-answer "
                f"(got {got} and no finish reason){why}"
            )
        if partial.strip():  # whatever the view showed, the words say it is not the whole
            what = f"the answer above is incomplete: {what}"
        return cls(what, hint=hint, partial=partial)


_OVERFLOW_TEXT = re.compile(
    r"context[ _]length|context[ _]window|maximum context|too many tokens|prompt is too long|"
    r"reduce the length|exceeds? the (?:model'?s? )?(?:maximum |available )?"
    r"(?:context|token limit)",
    re.IGNORECASE,
)
_WINDOW_NUMBER = re.compile(
    r"(?:maximum context length is|context window of|context length of|n_ctx\D{0,5}|"
    r"context window is|limit of)\s*(\d{3,8})",
    re.IGNORECASE,
)


def _error_code(exc: Exception) -> str | None:
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        data = cast(Mapping[str, Any], body)
        inner = data.get("error")
        code = inner.get("code") if isinstance(inner, Mapping) else data.get("code")
        if isinstance(code, str):
            return code
    code = getattr(exc, "code", None)
    return code if isinstance(code, str) else None


def overflow_window(exc: Exception) -> tuple[bool, int | None]:
    """Whether ``exc`` says the context window overflowed, and the window it names if any."""
    message = server_message(exc)
    status = getattr(exc, "status_code", None)
    inner = _error_object(exc)
    overflow = (
        _error_code(exc) == "context_length_exceeded"
        or inner.get("type") == "exceed_context_size_error"  # llama.cpp's llama-server
        or (status in (400, 413, 422) and bool(_OVERFLOW_TEXT.search(message)))
    )
    if not overflow:
        return False, None
    n_ctx = inner.get("n_ctx")
    if isinstance(n_ctx, int) and not isinstance(n_ctx, bool) and n_ctx > 0:
        return True, n_ctx
    found = _WINDOW_NUMBER.search(message)
    return True, int(found.group(1)) if found else None


def _error_object(exc: Exception) -> Mapping[str, Any]:
    """The ``error`` object of the response body (empty when there is none)."""
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        data = cast(Mapping[str, Any], body)
        inner = data.get("error", data)
        if isinstance(inner, Mapping):
            return cast(Mapping[str, Any], inner)
    return {}


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc``, what it was raised from, and the members of exception groups, breadth first."""
    seen: list[BaseException] = []
    todo = [exc]
    while todo and len(seen) < 50:
        current = todo.pop(0)
        if any(current is s for s in seen):
            continue
        seen.append(current)
        if isinstance(current, BaseExceptionGroup):
            todo.extend(current.exceptions)
        for linked in (current.__cause__, current.__context__):
            if linked is not None:
                todo.append(linked)
    return seen


def hung_up(exc: BaseException) -> bool:
    """Whether the server took the connection and closed it without any response: no status
    line, not a byte (llama-cpp-python's function-calling server, to a streamed request with
    tools). A refused connection (nothing listening) or a timeout is not that."""
    import httpx2
    import openai

    from codebot_mcp.core.httpcap import AnswerTooLargeError

    if not isinstance(exc, openai.APIConnectionError) or isinstance(exc, openai.APITimeoutError):
        return False
    chain = _chain(exc)
    refused = httpx2.ConnectError | httpx2.TimeoutException | AnswerTooLargeError
    if any(isinstance(one, refused) for one in chain):  # not a hang-up: said so elsewhere
        return False
    return any(isinstance(one, httpx2.RemoteProtocolError | httpx2.ReadError) for one in chain)


def failed_response(failure: Mapping[str, Any], config: ModelConfig) -> ModelError:
    """The error for a response the Responses API reports failed (``response.failed``, or an
    ``error`` event): an overflow of the window is a :class:`ContextOverflowError`, so the
    agent compacts as it does for a 400."""
    message = _redact(str(failure.get("message") or "the response failed"), config.api_key)
    code = failure.get("code")
    named = f" ({code})" if isinstance(code, str) and code else ""
    if code == "context_length_exceeded" or _OVERFLOW_TEXT.search(message):
        found = _WINDOW_NUMBER.search(message)
        return ContextOverflowError(
            f"the request is longer than the context window of model '{config.model}' at "
            f"{config.url}: {message}",
            hint="codebot compacts and retries once by itself; if this persists, run /compact "
            "or start a new conversation (/clear).",
            window=int(found.group(1)) if found else None,
        )
    return ModelError(
        f"the model API at {config.url} failed the response{named}: {message}",
        hint="Retry the request; if it keeps failing, check the model and the request "
        "(--model, 'api' and 'reasoning_effort' in settings.json).",
    )


def unreadable_answer(exc: BaseException, config: ModelConfig) -> ModelError | None:
    """The error for an answer codebot will not read (over the size cap, or nested too deeply
    to parse), whatever wrapped it; None for any other failure. Such an answer is never
    retried: the same request would get the same answer."""
    from codebot_mcp.core.httpcap import AnswerTooLargeError
    from codebot_mcp.core.jsonutil import JSONTooDeepError
    from codebot_mcp.core.model.cap import MAX_ANSWER_BYTES

    for one in _chain(exc):
        if isinstance(one, AnswerTooLargeError):
            return ModelError(
                f"the model server at {config.url} sent more than "
                f"{MAX_ANSWER_BYTES // 2**20} MB in one answer ({one}); it was dropped",
                hint="An endless stream or a runaway answer: lower 'max_tokens' in settings, "
                "or check the server (--base-url).",
            )
        if isinstance(one, RecursionError | JSONTooDeepError):
            return ModelError(
                f"the model server at {config.url} sent an answer nested too deeply to read "
                "(over about 1,000 levels)",
                hint="That is not an OpenAI-compatible answer; check --base-url (or "
                "'base_url' in settings.json) and the server.",
            )
    return None


def map_error(exc: Exception, config: ModelConfig) -> ModelError:
    """Turn an ``openai`` exception into a :class:`ModelError` that says what to do."""
    import openai

    url, model = config.url, config.model
    detail = _redact(server_message(exc), config.api_key)
    status = getattr(exc, "status_code", None)
    where = f"--base-url, OPENAI_BASE_URL or 'base_url' in settings.json (now {url})"
    overflow, window = overflow_window(exc)
    if overflow:
        named = f" ({window} tokens)" if window else ""
        return ContextOverflowError(
            f"the request is longer than the context window{named} of model '{model}' "
            f"at {url}: {detail}",
            hint="codebot compacts and retries once by itself; if this persists, run /compact, "
            "start a new conversation (/clear), or set 'context_window' in settings.json to "
            "the server's real window so codebot compacts earlier.",
            window=window,
        )
    if isinstance(exc, openai.AuthenticationError):
        hint = (
            f"Check that {config.key_env} holds a valid key for {url}."
            if config.key_env
            else f"The server wants a key: export {DEFAULT_KEY_ENV} (or set 'api_key_env')."
        )
        return ModelError(f"the model API at {url} rejected the API key (401): {detail}", hint=hint)
    if isinstance(exc, openai.PermissionDeniedError):
        return ModelError(
            f"the API key may not use model '{model}' at {url} (403): {detail}",
            hint="Use a model your key has access to (--model or CODEBOT_MODEL).",
        )
    if isinstance(exc, openai.NotFoundError) and config.responses:
        return ModelError(
            f"the model API at {url} has no Responses API or no model '{model}' (404): {detail}",
            hint="Check the model name (--model) and the base URL; a server that speaks only "
            'Chat Completions needs "api": "chat_completions" in settings.json (or --api '
            "chat_completions).",
        )
    if isinstance(exc, openai.NotFoundError):
        return ModelError(
            f"model '{model}' not found at {url} (404): {detail}",
            hint=f"Check the model name (--model, CODEBOT_MODEL or 'model' in settings.json) "
            f"and the base URL ({where}); it usually ends in /v1.",
        )
    if isinstance(exc, openai.RateLimitError):
        return ModelError(
            f"rate limited by the model API at {url} (429): {detail}",
            hint="Wait a moment and retry; if it persists, check your quota and billing.",
        )
    if isinstance(exc, openai.APIStatusError) and status is not None and status >= 500:
        return ModelError(
            f"the model server at {url} failed ({status}): {detail}",
            hint="The problem is on the server's side; retry later or check its logs.",
        )
    if isinstance(exc, openai.APIStatusError):
        api = "the Responses API" if config.responses else "chat completions"
        return ModelError(
            f"the model API at {url} rejected the request ({status}): {detail}",
            hint=f"Check that model '{model}' supports {api} and tool calls.",
        )
    if isinstance(exc, openai.APITimeoutError):
        return ModelError(
            f"the model API at {url} did not answer in time "
            f"(nothing received for {config.timeout:g} s)",
            hint="The server may be overloaded or the model still loading; retry, or allow "
            f"more time with {TIMEOUT_ENV}=<seconds>.",
        )
    if hung_up(exc):
        cause = _redact(str(exc.__cause__ or exc), config.api_key)
        return ModelError(
            f"the model server at {url} closed the connection without any response ({cause})",
            hint="The server is running but dropped the request: check its log (a crash, or "
            "a request it cannot handle), or try another model or server.",
        )
    if isinstance(exc, openai.APIConnectionError):
        cause = _redact(str(exc.__cause__ or exc), config.api_key)
        return ModelError(
            f"cannot connect to the model API at {url}: {cause}",
            hint=f"Is the server running and reachable? Set the URL with {where}.",
        )
    return ModelError(f"the model API at {url} failed: {detail}", hint="Retry the request.")


def server_message(exc: Exception) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        data = cast(Mapping[str, Any], body)
        inner = data.get("error")
        message = inner.get("message") if isinstance(inner, Mapping) else data.get("message")
        if isinstance(message, str) and message:
            return message
    return getattr(exc, "message", None) or str(exc) or type(exc).__name__


def _redact(text: str, secret: str) -> str:
    if len(secret) >= 8 and secret != PLACEHOLDER_KEY:
        text = text.replace(secret, "***")
    return text
