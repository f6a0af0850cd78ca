"""The model API: which endpoint, model and key to use, the client, and one request per turn.

``openai`` is imported inside functions only: importing it costs over a second, and
``codebot --help`` or ``codebot mcp list`` must not pay for it.

Works with OpenAI and with OpenAI-compatible servers as they are. llama.cpp's server, for one,
rejects ``content: null`` beside ``tool_calls`` (:meth:`core.stream.Reply.message` sends ``""``),
ignores tools unless ``tool_choice`` is ``"auto"`` (always sent with tools), and cannot stream a
turn that may call tools (the stream ends empty): such a turn is redone without streaming, and
the session remembers to stop streaming requests that carry tools.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from core.errors import ModelError, SettingsError
from core.settings import Settings
from core.stream import Reply, StreamAccumulator, TextCallback, reply_from_completion

if TYPE_CHECKING:
    from openai import AsyncOpenAI

DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
OPENAI_URL = "https://api.openai.com/v1"
PLACEHOLDER_KEY = "sk-no-key-required"
"""Sent to a custom base URL when no key is set: local servers accept any non-empty key."""
CONNECT_TIMEOUT = 10.0
"""Seconds to establish the connection; a refused or unroutable host fails fast."""
READ_TIMEOUT = 600.0
"""Seconds between bytes; a local model on a CPU can think for minutes before its first token."""
TIMEOUT_ENV = "CODEBOT_MODEL_TIMEOUT"
"""Overrides :data:`READ_TIMEOUT` (seconds without a byte from the model before giving up)."""


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """Where requests go. ``api_key`` is never shown; ``key_env`` names where it came from."""

    model: str
    base_url: str | None
    api_key: str = field(repr=False)
    key_env: str | None
    """The variable the key was read from, or None when the placeholder key is used."""
    timeout: float = READ_TIMEOUT
    """Seconds without a byte from the server (before or during a stream) before giving up."""

    @property
    def url(self) -> str:
        """The base URL for messages (OpenAI's when none is configured)."""
        return self.base_url or OPENAI_URL


def resolve_config(
    settings: Settings,
    *,
    model: str | None = None,
    base_url: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> ModelConfig:
    """Combine flags, environment and settings (in that order of precedence).

    Args:
        settings: Loaded settings (``model``, ``base_url``, ``api_key_env``).
        model: ``--model``.
        base_url: ``--base-url``.
        environ: Defaults to ``os.environ``.

    Raises:
        ModelError: no API key is set and no base URL points at a local server.
        SettingsError: ``CODEBOT_MODEL_TIMEOUT`` is not a positive number.
    """
    env = os.environ if environ is None else environ
    timeout = _timeout(env.get(TIMEOUT_ENV))
    chosen_model = model or env.get("CODEBOT_MODEL") or settings.model or DEFAULT_MODEL
    url = base_url or env.get("OPENAI_BASE_URL") or settings.base_url or None
    names = [n for n in (settings.api_key_env, DEFAULT_KEY_ENV) if n]
    key_env = next((n for n in names if env.get(n)), None)
    if key_env is not None:
        return ModelConfig(chosen_model, url, env[key_env], key_env, timeout)
    if url is not None:
        return ModelConfig(chosen_model, url, PLACEHOLDER_KEY, None, timeout)
    wanted = settings.api_key_env or DEFAULT_KEY_ENV
    raise ModelError(
        f"no API key for the model API: {wanted} is not set and no base URL is configured",
        hint=f"Export {wanted}=<your key>, or point --base-url (or OPENAI_BASE_URL, or "
        "'base_url' in settings.json) at an OpenAI-compatible server such as "
        "http://localhost:11434/v1 (Ollama).",
    )


def _timeout(value: str | None) -> float:
    if value is None or not value.strip():
        return READ_TIMEOUT
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds > 0 or seconds == float("inf"):
        raise SettingsError(
            f"{TIMEOUT_ENV}={value!r} is not a positive number of seconds",
            hint=f"Set {TIMEOUT_ENV} to e.g. 120, or unset it for the default ({READ_TIMEOUT:g}).",
        )
    return seconds


def create_client(config: ModelConfig, *, max_retries: int = 2, **extra: Any) -> AsyncOpenAI:
    """Build the ``AsyncOpenAI`` client (imports ``openai`` on first use)."""
    import openai

    connect = min(CONNECT_TIMEOUT, config.timeout)
    extra.setdefault("timeout", openai.Timeout(config.timeout, connect=connect))
    return openai.AsyncOpenAI(
        api_key=config.api_key, base_url=config.url, max_retries=max_retries, **extra
    )


class ChatModel:
    """Sends one turn to the model; remembers server quirks for the session."""

    def __init__(self, client: AsyncOpenAI, config: ModelConfig) -> None:
        self.client = client
        self.config = config
        self.stream_with_tools = True
        """False once the server streamed an empty turn that had tools (llama.cpp)."""

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self.client.close()

    async def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] = (),
        on_text: TextCallback | None = None,
        *,
        max_tokens: int | None = None,
    ) -> Reply:
        """Request one assistant turn, streaming text to ``on_text`` as it arrives.

        Raises:
            ModelError: the API failed, or its stream ended early.
        """
        import openai

        request: dict[str, Any] = {"model": self.config.model, "messages": list(messages)}
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        if tools:
            request["tools"] = list(tools)
            request["tool_choice"] = "auto"  # llama.cpp ignores tools without it
        try:
            if tools and not self.stream_with_tools:
                return await self._once(request, on_text)
            acc = await self._stream(request, on_text)
            if acc.reply().empty and tools:
                self.stream_with_tools = False
                return await self._once(request, on_text)
            return acc.result()
        except openai.OpenAIError as exc:
            raise map_error(exc, self.config) from None

    async def _stream(
        self, request: dict[str, Any], on_text: TextCallback | None
    ) -> StreamAccumulator:
        acc = StreamAccumulator(on_text)
        stream = await self.client.chat.completions.create(
            **request, stream=True, stream_options={"include_usage": True}
        )
        async with stream:  # closes the response when cancelled mid-stream
            async for chunk in stream:
                acc.add(chunk)
        return acc

    async def _once(self, request: dict[str, Any], on_text: TextCallback | None) -> Reply:
        completion = await self.client.chat.completions.create(**request, stream=False)
        return reply_from_completion(completion, on_text)


def map_error(exc: Exception, config: ModelConfig) -> ModelError:
    """Turn an ``openai`` exception into a :class:`ModelError` that says what to do."""
    import openai

    url, model = config.url, config.model
    detail = _redact(_server_message(exc), config.api_key)
    status = getattr(exc, "status_code", None)
    where = f"--base-url, OPENAI_BASE_URL or 'base_url' in settings.json (now {url})"
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
        return ModelError(
            f"the model API at {url} rejected the request ({status}): {detail}",
            hint=f"Check that model '{model}' supports chat completions and tool calls.",
        )
    if isinstance(exc, openai.APITimeoutError):
        return ModelError(
            f"the model API at {url} did not answer in time "
            f"(nothing received for {config.timeout:g} s)",
            hint="The server may be overloaded or the model still loading; retry, or allow "
            f"more time with {TIMEOUT_ENV}=<seconds>.",
        )
    if isinstance(exc, openai.APIConnectionError):
        cause = _redact(str(exc.__cause__ or exc), config.api_key)
        return ModelError(
            f"cannot connect to the model API at {url}: {cause}",
            hint=f"Is the server running and reachable? Set the URL with {where}.",
        )
    return ModelError(f"the model API at {url} failed: {detail}", hint="Retry the request.")


def _server_message(exc: Exception) -> str:
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
