"""Which endpoint, model and key a session uses: flags, environment and settings combined.

Plain data and no I/O: the client (:mod:`core.model.client`) and the error mapping
(:mod:`core.model.errors`) both read it, and neither imports the other for it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from codebot_mcp.core.config.settings import DEFAULT_MAX_TOKENS as SETTINGS_DEFAULT_MAX_TOKENS
from codebot_mcp.core.config.settings import Settings
from codebot_mcp.core.errors import ModelError, SettingsError

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
PLACEHOLDER_KEY = "sk-no-key-required"
TIMEOUT_ENV = "CODEBOT_MODEL_TIMEOUT"

DEFAULT_MODEL = "gpt-4o-mini"
OPENAI_URL = "https://api.openai.com/v1"
CONNECT_TIMEOUT = 10.0
"""Seconds to establish the connection; a refused or unroutable host fails fast."""
READ_TIMEOUT = 600.0
"""Seconds between bytes; a local model on a CPU can think for minutes before its first token."""
DEFAULT_MAX_TOKENS = 8192
"""Output tokens per model turn: enough for a long file in a tool call, short of a runaway."""
REMOTE_RETRIES = 2
"""Retries of a failed request to a remote API (timeouts, 429, 5xx, connection errors)."""


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
    default, which another endpoint rarely serves (:func:`core.model.discovery.settle_model`
    asks the endpoint instead)."""
    max_tokens_given: bool = True
    """False when ``max_tokens`` is the default: the agent then sizes the cap from the
    model's window when it is known (a small local model must not run 8k tokens a turn)."""
    window: int | None = None
    """The context window the endpoint reports for the model (``GET /models``), if any."""

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
    cap_given = cap != SETTINGS_DEFAULT_MAX_TOKENS  # the default is sized to a known window
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
