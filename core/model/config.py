"""Which endpoint, model and key a session uses: flags, environment and settings combined.

Plain data and no I/O: the client (:mod:`core.model.client`) and the error mapping
(:mod:`core.model.apierrors`) both read it, and neither imports the other for it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from codebot_mcp.core.config.keys import MODEL_APIS, REASONING_EFFORTS
from codebot_mcp.core.config.settings import DEFAULT_MAX_TOKENS, Settings
from codebot_mcp.core.config.trust import DEFAULT_API_KEY_ENV
from codebot_mcp.core.errors import ModelError, SettingsError

DEFAULT_KEY_ENV = DEFAULT_API_KEY_ENV
PLACEHOLDER_KEY = "sk-no-key-required"
TIMEOUT_ENV = "CODEBOT_MODEL_TIMEOUT"

DEFAULT_MODEL = "gpt-4o-mini"
OPENAI_URL = "https://api.openai.com/v1"
CONNECT_TIMEOUT = 10.0
"""Seconds to establish the connection; a refused or unroutable host fails fast."""
READ_TIMEOUT = 600.0
"""Seconds between bytes; a local model on a CPU can think for minutes before its first token."""
REMOTE_RETRIES = 2
"""Retries of a failed request to a remote API (timeouts, 429, 5xx, connection errors)."""
CHAT_COMPLETIONS = "chat_completions"
RESPONSES = "responses"
_REASONING_MODEL = re.compile(r"(?:openai/)?(?:o[1-9][0-9]*(?:-|$)|gpt-5|codex-)")
"""OpenAI's reasoning models: the o-series (o1, o3-mini, o4-mini...), gpt-5 and its
variants (gpt-5-mini, gpt-5.1, gpt-5-codex), codex-mini."""


def is_reasoning_model(model: str) -> bool:
    """Whether ``model`` names one of OpenAI's reasoning models (by its name)."""
    return bool(_REASONING_MODEL.match(model.strip().lower()))


def default_api(url: str, model: str) -> str:
    """The API a session speaks when neither ``api`` nor ``--api`` says: the Responses API
    for a reasoning model at api.openai.com (only there does its reasoning survive tool
    calls), Chat Completions everywhere else (what OpenAI-compatible servers speak)."""
    from urllib.parse import urlsplit

    host = (urlsplit(url).hostname or "").lower()
    if host == "api.openai.com" and is_reasoning_model(model):
        return RESPONSES
    return CHAT_COMPLETIONS


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
    max_tokens: int = DEFAULT_MAX_TOKENS
    """Output cap per model turn (setting ``max_tokens``), sent with every request."""
    retries: int = 0
    """Visible retries of a failed request (setting ``model_retries``); 0 for loopback
    endpoints unless configured, since a local server handles one request at a time."""
    model_given: bool = True
    """False when no flag, variable or setting named the model: ``model`` is then OpenAI's
    default, which another endpoint rarely serves (:func:`core.model.localservers.settle_model`
    asks the endpoint instead)."""
    max_tokens_given: bool = True
    """False when ``max_tokens`` is the default: the agent then sizes the cap from the
    model's window when it is known (a small local model must not run 8k tokens a turn)."""
    window: int | None = None
    """The context window the endpoint reports for the model (``GET /models``), if any."""
    api: str = CHAT_COMPLETIONS
    """The wire format: ``chat_completions`` or ``responses`` (setting ``api``, ``--api``)."""
    api_given: bool = False
    """True when ``api`` or ``--api`` chose it; else it follows the model
    (:func:`default_api`), also when the model changes."""
    reasoning_effort: str | None = None
    """``low``, ``medium`` or ``high`` (setting ``reasoning_effort``, ``--effort``); None:
    not sent, the model's own default applies."""

    @property
    def url(self) -> str:
        """The base URL for messages (OpenAI's when none is configured)."""
        return self.base_url or OPENAI_URL

    @property
    def responses(self) -> bool:
        """Whether requests go to the Responses API (``POST /responses``)."""
        return self.api == RESPONSES

    @property
    def reasoning(self) -> bool:
        """Whether to ask for reasoning (summaries, encrypted items): a reasoning model, or
        an effort the user set."""
        return self.reasoning_effort is not None or is_reasoning_model(self.model)

    def with_model(self, model: str, **changes: object) -> ModelConfig:
        """This configuration for another model; a default ``api`` follows the model."""
        api = self.api if self.api_given else default_api(self.url, model)
        return replace(self, model=model, api=api, **changes)  # type: ignore[arg-type]


def resolve_config(
    settings: Settings,
    *,
    model: str | None = None,
    base_url: str | None = None,
    environ: Mapping[str, str] | None = None,
    api: str | None = None,
    effort: str | None = None,
) -> ModelConfig:
    """Combine flags, environment and settings (in that order of precedence).

    Args:
        settings: Loaded settings (``model``, ``base_url``, ``api_key_env``, ``api``,
            ``reasoning_effort``).
        model: ``--model``.
        base_url: ``--base-url``.
        environ: Defaults to ``os.environ``.
        api: ``--api``.
        effort: ``--effort``.

    Raises:
        ModelError: no API key is set and no base URL points at a local server.
        SettingsError: ``CODEBOT_MODEL_TIMEOUT`` is not a positive number.
        UsageError: ``api`` or ``effort`` is not one of the known values.
    """
    config = _resolve(settings, model=model, base_url=base_url, environ=environ)
    chosen_api = flag_value("--api", api, MODEL_APIS) or settings.api
    effort = flag_value("--effort", effort, REASONING_EFFORTS) or settings.reasoning_effort
    return replace(
        config,
        api=chosen_api or default_api(config.url, config.model),
        api_given=chosen_api is not None,
        reasoning_effort=effort,
    )


def flag_value(name: str, value: str | None, allowed: tuple[str, ...]) -> str | None:
    """``value`` of the flag ``name`` when it is one of ``allowed`` (or None).

    Raises:
        UsageError: it is not.
    """
    if value is None or value in allowed:
        return value
    from codebot_mcp.core.errors import UsageError

    raise UsageError(f"{name} {value}: unknown value", hint=f"Use one of {', '.join(allowed)}.")


def _resolve(
    settings: Settings,
    *,
    model: str | None,
    base_url: str | None,
    environ: Mapping[str, str] | None,
) -> ModelConfig:
    env = os.environ if environ is None else environ
    timeout = _timeout(env.get(TIMEOUT_ENV))
    named = model or env.get("CODEBOT_MODEL") or settings.model
    url = base_url or env.get("OPENAI_BASE_URL") or settings.base_url or None
    if "model" in settings.managed_locked:  # the managed settings win over flags and env
        named = settings.model
    if "base_url" in settings.managed_locked:
        url = settings.base_url or None
    chosen_model = named or DEFAULT_MODEL
    names = [n for n in (settings.api_key_env, DEFAULT_KEY_ENV) if n]
    key_env = next((n for n in names if env.get(n)), None)
    retries = settings.model_retries
    if retries is None:
        retries = 0 if url is not None and is_loopback(url) else REMOTE_RETRIES
    cap = settings.max_tokens
    given = bool(named)
    cap_given = cap != DEFAULT_MAX_TOKENS  # the default is sized to a known window
    if key_env is not None:
        key = env[key_env]
        return ModelConfig(chosen_model, url, key, key_env, timeout, cap, retries, given, cap_given)
    if url is not None:
        return ModelConfig(
            chosen_model, url, PLACEHOLDER_KEY, None, timeout, cap, retries, given, cap_given
        )
    wanted = settings.api_key_env or DEFAULT_KEY_ENV
    raise ModelError(
        f"no API key for the model API: {wanted} is not set and no base URL is configured",
        hint=f"Export {wanted}=<your key>, or point --base-url (or OPENAI_BASE_URL, or "
        "'base_url' in settings.json) at an OpenAI-compatible server such as "
        "http://localhost:11434/v1 (Ollama).",
    )


def is_loopback(url: str) -> bool:
    """True for ``localhost``, ``127.0.0.0/8`` and ``::1`` (a model on this machine)."""
    import ipaddress
    from urllib.parse import urlsplit

    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
