"""Find local OpenAI-compatible model servers, and list an endpoint's models.

With no API key and no base URL configured, ``chat`` looks for a server on this machine:
Ollama (11434), llama.cpp (8080), LM Studio (1234) and vLLM (8000), each at
``http://127.0.0.1:<port>/v1/models``, all at once, within :data:`BUDGET_SECONDS` in total.
A closed port answers at once on loopback, so the budget is spent only on a port that is open
but slow. Only the standard library is used (``openai`` costs a second to import).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from codebot_mcp.core import jsonutil
from codebot_mcp.core.errors import ModelError

if TYPE_CHECKING:
    from codebot_mcp.core.model.config import ModelConfig

BUDGET_SECONDS = 0.3
"""The whole probe, every candidate in parallel: chat's start-up must not wait for it."""
LOCAL_LOOKUP_SECONDS = 2.0
"""A named model's window from this machine's endpoint: best effort, never a wait."""
SETTLE_TIMEOUT_SECONDS = 10.0
"""Asking an endpoint for its models when none was named (a local server answers at once)."""
LIST_TIMEOUT_SECONDS = 10.0
"""``codebot models`` against a configured endpoint (remote APIs can be slow to answer)."""
MAX_BODY = 4 * 1024 * 1024
"""A model list larger than this is not a model list."""


class UnreachableError(ModelError):
    """Nothing answered at the endpoint (refused, unknown host, no route, timed out)."""

    def __init__(self, message: str, *, hint: str, reason: str) -> None:
        super().__init__(message, hint=hint)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Candidate:
    """A well-known local server."""

    name: str
    port: int

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


CANDIDATES: tuple[Candidate, ...] = (
    Candidate("Ollama", 11434),
    Candidate("llama.cpp", 8080),
    Candidate("LM Studio", 1234),
    Candidate("vLLM", 8000),
)


@dataclass(frozen=True, slots=True)
class Found:
    """A server that answered ``/v1/models``, with the model ids it lists."""

    name: str
    base_url: str
    models: tuple[str, ...]


def probe(
    candidates: tuple[Candidate, ...] | None = None, budget: float | None = None
) -> list[Found]:
    """The candidates (default :data:`CANDIDATES`) that answer like an OpenAI-compatible
    server within ``budget`` seconds (default :data:`BUDGET_SECONDS`), in candidate order."""
    candidates = CANDIDATES if candidates is None else candidates
    budget = BUDGET_SECONDS if budget is None else budget
    pool = ThreadPoolExecutor(max_workers=max(1, len(candidates)), thread_name_prefix="probe")
    futures = [pool.submit(_try, c, budget) for c in candidates]
    wait(futures, timeout=budget)
    pool.shutdown(wait=False, cancel_futures=True)
    found: list[Found] = []
    for future in futures:
        if future.done() and not future.cancelled() and future.exception() is None:
            result = future.result()
            if result is not None:
                found.append(result)
    return found


def _try(candidate: Candidate, timeout: float) -> Found | None:
    try:
        models = list_models(candidate.base_url, None, timeout=timeout, proxies=False)
    except ModelError:
        return None
    return Found(candidate.name, candidate.base_url, tuple(models))


def _origin(url: str) -> tuple[str, str, int | None]:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme.lower())
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


def _redirects() -> Any:
    """A redirect handler (urllib is imported on use: it is slow to import)."""
    import urllib.request

    class SameOriginRedirects(urllib.request.HTTPRedirectHandler):
        """Follows redirects as urllib does, carrying the key only to the same origin (scheme,
        host and port), as browsers and httpx do: a redirect never hands it to a stranger."""

        def redirect_request(  # type: ignore[override]
            self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str
        ) -> Any:
            new = super().redirect_request(req, fp, code, msg, headers, newurl)
            key = req.unredirected_hdrs.get("Authorization")
            if new is not None and key and _origin(newurl) == _origin(req.full_url):
                new.add_unredirected_header("Authorization", key)
            return new

    return SameOriginRedirects()


def list_models(
    base_url: str,
    api_key: str | None,
    *,
    timeout: float = LIST_TIMEOUT_SECONDS,
    proxies: bool = True,
) -> list[str]:
    """The model ids ``GET <base_url>/models`` lists.

    Raises:
        ModelError: as :func:`model_entries`.
    """
    return [
        str(e["id"]) for e in model_entries(base_url, api_key, timeout=timeout, proxies=proxies)
    ]


_WINDOW_KEYS = ("max_model_len", "context_length", "max_context_length", "context_window", "n_ctx")
"""Where servers put a model's window in ``/models``: vLLM, OpenRouter, LM Studio, others;
llama.cpp's server under ``meta`` (``n_ctx``, else the trained ``n_ctx_train``)."""


def window_of(entry: dict[str, Any]) -> int | None:
    """The context window a ``/models`` entry reports, if it reports one."""
    meta = entry.get("meta")
    places: list[dict[str, Any]] = [entry, meta] if isinstance(meta, dict) else [entry]
    for place in places:
        for key in (*_WINDOW_KEYS, "n_ctx_train"):
            value = place.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return None


def model_entries(
    base_url: str,
    api_key: str | None,
    *,
    timeout: float = LIST_TIMEOUT_SECONDS,
    proxies: bool = True,
) -> list[dict[str, Any]]:
    """The model entries (each with an ``id``) ``GET <base_url>/models`` lists.

    Raises:
        ModelError: the endpoint cannot be reached, rejects the key, or does not answer with
            an OpenAI-style model list.
    """
    import urllib.error
    import urllib.request

    url = base_url.rstrip("/") + "/models"
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    if api_key:  # unredirected: only _redirects() carries it on, and only within its origin
        request.add_unredirected_header("Authorization", f"Bearer {api_key}")
    handlers: list[urllib.request.BaseHandler] = [_redirects()]
    if not proxies:
        handlers.append(urllib.request.ProxyHandler({}))
    opener = urllib.request.build_opener(*handlers)
    try:
        with opener.open(request, timeout=timeout) as response:
            body = response.read(MAX_BODY + 1)
    except urllib.error.HTTPError as exc:
        exc.close()  # its body holds the connection open
        hint = "Check the API key." if exc.code in (401, 403) else "Check the base URL."
        raise ModelError(
            f"the model server at {base_url} answered {exc.code} {exc.reason} to GET /models",
            hint=hint,
        ) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise UnreachableError(
            f"cannot reach the model server at {base_url}: {reason}",
            hint="Check that it is running and that the base URL ends in /v1.",
            reason=str(reason),
        ) from None
    try:
        data = jsonutil.loads(body) if len(body) <= MAX_BODY else None
    except ValueError:
        data = None
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ModelError(
            f"{url} did not answer with a model list (no 'data' array)",
            hint="Is this an OpenAI-compatible endpoint? Its base URL usually ends in /v1.",
        )
    return [e for e in entries if isinstance(e, dict) and "id" in e]


def settle_model(config: ModelConfig) -> tuple[ModelConfig, str | None]:
    """The model to use when none was named, its window where the endpoint says, and a note
    saying where the model came from.

    OpenAI's own API gets its default model. Any other endpoint is asked for its models
    (``GET /models``): the only one it serves is used; otherwise there is no telling which one
    is meant, and OpenAI's default would be a guess the endpoint most likely refuses. A named
    model on this machine's endpoint is looked up too (quickly, best effort) for its window.

    Raises:
        ModelError: no model is named, and the endpoint serves none or several, or does not
            list them.
    """
    from dataclasses import replace

    from codebot_mcp.core.model.config import OPENAI_URL, is_loopback

    url = config.url
    key = config.api_key if config.key_env else None
    if config.model_given:
        if url.rstrip("/") == OPENAI_URL or not is_loopback(url):
            return config, None
        try:  # a local server answers at once; its window sizes the output cap
            entries = model_entries(url, key, timeout=min(LOCAL_LOOKUP_SECONDS, config.timeout))
        except ModelError:
            return config, None
        found = [e for e in entries if str(e["id"]) == config.model]
        window = window_of(found[0]) if found else None
        return (replace(config, window=window) if window else config), None
    if url.rstrip("/") == OPENAI_URL:
        return config, None
    hint = (
        'Name the model: --model NAME, CODEBOT_MODEL, or "model" in settings.json '
        f"(`codebot models --base-url {url}` lists what it serves)."
    )
    try:
        entries = model_entries(url, key, timeout=min(SETTLE_TIMEOUT_SECONDS, config.timeout))
    except UnreachableError as exc:  # naming a model would not help: say what would
        raise ModelError(
            f"cannot connect to the model API at {url}: {exc.reason}",
            hint="Is the server running and reachable? Set the URL with --base-url, "
            "OPENAI_BASE_URL or 'base_url' in settings.json.",
        ) from None
    except ModelError as exc:
        raise ModelError(
            f"no model is named, and {exc.message[0].lower()}{exc.message[1:]}", hint=hint
        ) from None
    models = [str(e["id"]) for e in entries]
    if len(models) == 1:
        chosen = models[0]
        settled = config.with_model(chosen, model_given=True, window=window_of(entries[0]))
        return settled, f"model {chosen}: the only one {url} serves"
    if not models:
        raise ModelError(f"no model is named, and {url} serves none", hint=hint)
    shown = ", ".join(models[:5]) + (f", … ({len(models)} in all)" if len(models) > 5 else "")
    raise ModelError(f"no model is named, and {url} serves {len(models)}: {shown}", hint=hint)
