"""HTTP for the registry: one bounded GET for JSON and one for downloads.

Every request has a deadline (a stalled registry must not hang a search), every body a size
cap (a hostile one must not fill memory or disk: the one HTTP answer cap, :mod:`core.httpcap`),
and a redirect may not leave https. httpx2's client does the work, with its own proxies from
the environment, as every HTTP client of codebot's.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

import httpx2

from codebot_mcp.core.errors import CodebotError, ExitCode
from codebot_mcp.core.httpcap import AnswerCap, AnswerTooLargeError, sync_client
from codebot_mcp.core.secrets.redact import printable, redact_url

REQUEST_TIMEOUT_SECONDS = 10.0
"""Per request, connection and every read together: a registry answers in well under a
second; one that stalls must not hang ``mcp search`` or ``mcp doctor``."""
DOWNLOAD_TIMEOUT_SECONDS = 300.0
"""A bundle is megabytes, on links slower than a registry's API."""
MAX_JSON_BYTES = 8 << 20
"""A page of 100 servers is a few hundred KB; a body past 8 MiB is not a registry's answer."""
MAX_DOWNLOAD_BYTES = 256 << 20
"""An MCP bundle (``.mcpb``) with its ``node_modules`` runs to tens of MB."""
MAX_REDIRECTS = 5
ERROR_DETAIL_BYTES = 4096
"""Of an error status's body, read for the registry's ``error`` text."""


class RegistryError(CodebotError):
    """A registry could not be reached, or answered something that is not a registry's answer."""

    exit_code = ExitCode.TOOL_ERROR


class NotFoundError(RegistryError):
    """The registry answered 404: it has no such server (or version)."""


def user_agent() -> str:
    """``codebot/<version>``."""
    from codebot_mcp.core import __version__

    return f"codebot/{__version__}"


class _DowngradeError(Exception):
    """A redirect from https to another scheme, refused."""


def _no_downgrade(response: httpx2.Response) -> None:
    """Refuse a redirect from https to anything else (a response hook: it runs before the
    client follows)."""
    location = response.headers.get("location")
    if (
        not response.has_redirect_location
        or location is None
        or response.request.url.scheme != "https"
    ):
        return
    target = response.request.url.join(location)
    if target.scheme != "https":
        response.close()
        raise _DowngradeError(f"refused a redirect from https to {redact_url(str(target))}")


@contextmanager
def _get(url: str, timeout: float, accept: str, limit: int) -> Iterator[httpx2.Response]:
    """The answer to a GET of ``url``, its body not yet read; an error status raises."""
    with (
        sync_client(
            AnswerCap(limit),
            timeout=timeout,
            follow_redirects=True,
            max_redirects=MAX_REDIRECTS,
            headers={"Accept": accept, "User-Agent": user_agent()},
            event_hooks={"response": [_no_downgrade]},
        ) as client,
        client.stream("GET", url) as response,
    ):
        if not 200 <= response.status_code < 300:
            raise _status_failure(url, response)
        yield response


def _read(response: httpx2.Response, sink: IO[bytes] | None, deadline: float, url: str) -> bytes:
    """The body, in chunks, within the deadline (into ``sink`` if given); the cap counts it."""
    length = response.headers.get("Content-Length")
    chunks: list[bytes] = []
    total = 0
    try:
        for chunk in response.iter_raw():  # what has arrived: a slow drip still meets the deadline
            if time.monotonic() > deadline:
                raise RegistryError(f"{_shown(url)} did not finish answering in time")
            total += len(chunk)
            if sink is None:
                chunks.append(chunk)
            else:
                sink.write(chunk)
    except httpx2.RemoteProtocolError:
        if length is not None and length.isdigit() and total < int(length):
            raise RegistryError(
                f"{_shown(url)} stopped answering after {total} of {length} bytes",
                hint="Try again; check your connection.",
            ) from None
        raise
    return b"".join(chunks)


def _shown(url: str) -> str:
    return printable(redact_url(url), one_line=True)


def _status_failure(url: str, response: httpx2.Response) -> RegistryError:
    """The error for an error status (404 becomes :class:`NotFoundError`), with the registry's
    ``error`` text when its body has one."""
    detail = ""
    try:
        head = b""
        for chunk in response.iter_raw():
            head += chunk
            if len(head) >= ERROR_DETAIL_BYTES:
                break
        body = json.loads(head[:ERROR_DETAIL_BYTES] or b"{}")
        if isinstance(body, dict) and isinstance(body.get("error"), str):
            detail = f": {printable(body['error'][:200], one_line=True)}"
    except (httpx2.HTTPError, ValueError):
        pass
    kind = NotFoundError if response.status_code == 404 else RegistryError
    return kind(f"{_shown(url)} answered HTTP {response.status_code}{detail}")


def _failure(url: str, exc: Exception, limit: int) -> RegistryError:
    """A registry error for an exception of the HTTP client (or the cap)."""
    if isinstance(exc, AnswerTooLargeError):
        if exc.declared is not None:
            what = f"answered {exc.declared} bytes, more than"
        else:
            what = "sent more than"
        return RegistryError(
            f"{_shown(url)} {what} the {limit >> 20} MiB codebot accepts",
            hint="A registry's answer is far smaller; check registry_url.",
        )
    return RegistryError(
        f"cannot reach {_shown(url)}: {printable(str(exc) or type(exc).__name__, one_line=True)}",
        hint="Check your connection and the registry_url setting.",
    )


def get_json(url: str, *, timeout: float = REQUEST_TIMEOUT_SECONDS) -> Any:
    """GET ``url`` and parse its JSON body, within the timeout and :data:`MAX_JSON_BYTES`.

    Raises:
        NotFoundError: the answer is 404.
        RegistryError: no answer in time, another error status, too big, or not JSON.
    """
    deadline = time.monotonic() + timeout
    try:
        with _get(url, timeout, "application/json", MAX_JSON_BYTES) as response:
            body = _read(response, None, deadline, url)
    except RegistryError:
        raise
    except (httpx2.HTTPError, httpx2.InvalidURL, _DowngradeError, OSError, ValueError) as exc:
        raise _failure(url, exc, MAX_JSON_BYTES) from None
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        raise RegistryError(
            f"{_shown(url)} did not answer JSON",
            hint="Check that registry_url is an MCP Registry's base URL (it serves /v0.1/servers).",
        ) from None


def download(url: str, sink: IO[bytes], *, timeout: float = DOWNLOAD_TIMEOUT_SECONDS) -> str:
    """GET ``url`` into ``sink`` (at most :data:`MAX_DOWNLOAD_BYTES`); returns its sha256 (hex).

    Raises:
        RegistryError: it cannot be fetched in time, or is too big.
    """
    deadline = time.monotonic() + timeout
    digest = hashlib.sha256()

    class _Hashing:
        def write(self, data: bytes) -> None:
            digest.update(data)
            sink.write(data)

    try:
        with _get(url, timeout, "*/*", MAX_DOWNLOAD_BYTES) as response:
            _read(response, _Hashing(), deadline, url)  # type: ignore[arg-type]
    except RegistryError:
        raise
    except (httpx2.HTTPError, httpx2.InvalidURL, _DowngradeError, OSError, ValueError) as exc:
        raise _failure(url, exc, MAX_DOWNLOAD_BYTES) from None
    return digest.hexdigest()
